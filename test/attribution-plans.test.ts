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

  it("finds the agent and the flow that last touched a contact from the contact's threads and runs", () => {
    expect(
      plan(
        'select "agent_threads"."agent_id" from "conversations" inner join "agent_threads" on "agent_threads"."conversation_id" = "conversations"."id" where ("conversations"."workspace_id" = ? and "conversations"."contact_id" = ? and "agent_threads"."last_agent_message_at" >= ?) order by "agent_threads"."last_agent_message_at" desc limit 1',
        "w",
        "c",
        0,
      ),
    ).toBe(
      "SEARCH conversations USING INDEX conversations_workspace_contact_idx (workspace_id=? AND contact_id=?); SEARCH agent_threads USING INDEX sqlite_autoindex_agent_threads_1 (conversation_id=?); USE TEMP B-TREE FOR ORDER BY",
    );
    expect(
      plan(
        'select "flow_runs"."flow_id" from "flow_runs" inner join "flow_steps" on "flow_steps"."run_id" = "flow_runs"."id" where ("flow_runs"."workspace_id" = ? and "flow_runs"."contact_id" = ? and ("flow_steps"."message_id" IS NOT NULL OR "flow_steps"."call_id" IS NOT NULL) and "flow_steps"."entered_at" >= ?) order by "flow_steps"."entered_at" desc limit 1',
        "w",
        "c",
        0,
      ),
    ).toBe(
      "SEARCH flow_runs USING INDEX flow_runs_workspace_contact_idx (workspace_id=? AND contact_id=?); SEARCH flow_steps USING INDEX flow_steps_run_idx (run_id=? AND entered_at>?); USE TEMP B-TREE FOR ORDER BY",
    );
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
