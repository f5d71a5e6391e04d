import { describe, expect, it } from "bun:test";
import { planDatabase } from "./support/plans";

// The conversion lookups must search their own index: with `ORDER BY created_at` and an index
// without created_at, SQLite walked contacts_workspace_created_idx over the whole workspace
// instead (27–39 ms a conversion at 100,000 contacts).
describe("query plans of conversions and analytics", () => {
  const db = planDatabase();
  const plan = (text: string, ...params: (string | number)[]) =>
    db.plan(text, params.length ? params : ["w", "v"]).join("; ");

  it("matches external_id and email (case-insensitive) through their indexes, oldest first", () => {
    expect(
      plan(
        'select "id" from "contacts" where ("contacts"."workspace_id" = ? and "contacts"."external_id" = ?) order by "contacts"."created_at" limit 1',
      ),
    ).toBe("SEARCH contacts USING INDEX contacts_workspace_external_idx (workspace_id=? AND external_id=?)");
    expect(
      plan(
        'select "id" from "contacts" where ("contacts"."workspace_id" = ? and lower(email) = lower(?)) order by "contacts"."created_at" limit 1',
      ),
    ).toBe("SEARCH contacts USING INDEX contacts_workspace_email_lower_idx (workspace_id=? AND <expr>=?)");
  });

  it("counts analytics messages per status as a range of messages_workspace_status_idx, without sorting", () => {
    expect(
      plan(
        'select count(*) from "messages" where ("messages"."workspace_id" = ? and "messages"."status" = ? and "messages"."created_at" >= ? and "messages"."created_at" < ?)',
        "w",
        "SENT",
        0,
        1,
      ),
    ).toBe(
      "SEARCH messages USING COVERING INDEX messages_workspace_status_idx (workspace_id=? AND status=? AND created_at>? AND created_at<?)",
    );
  });
});
