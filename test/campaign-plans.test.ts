import { describe, expect, it } from "bun:test";
import { eq } from "drizzle-orm";
import { contacts } from "../src/db/schema";
import { audienceClasses } from "../src/domain/campaigns/preview";
import { planDatabase } from "./support/plans";

// The preview's totals count the audience by send class. Grouped by the class expression without
// its index, SQLite sorts every contact first (~1.1 s of a 1.8 s first preview at 1,000,000).
describe("query plan of the preview's class counts", () => {
  const db = planDatabase();

  it("walks contacts_workspace_send_class_idx in its order, without a temporary b-tree", () => {
    const query = audienceClasses(db.handle.db, eq(contacts.workspaceId, "w")).toSQL();
    expect(db.plan(query.sql, query.params)).toEqual([
      "SEARCH contacts USING COVERING INDEX contacts_workspace_send_class_idx (workspace_id=?)",
    ]);
  });
});

// Every send without `from` (one-off sends, campaigns without a pool) asks for the oldest active
// number; ordered by created_at then id, it sorted the workspace's numbers on every send.
describe("query plan of the default sender", () => {
  const db = planDatabase();

  it("reads the oldest active number along numbers_workspace_created_idx, without sorting", () => {
    expect(
      db.plan(
        `select * from "numbers" where ("numbers"."workspace_id" = ? and "numbers"."status" = 'active') order by "numbers"."created_at" asc, "numbers"."id" asc limit 1`,
        ["w"],
      ),
    ).toEqual(["SEARCH numbers USING INDEX numbers_workspace_created_idx (workspace_id=?)"]);
  });
});
