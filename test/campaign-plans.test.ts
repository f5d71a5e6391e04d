import { describe, expect, it } from "bun:test";
import { and, count, eq, isNull } from "drizzle-orm";
import { contacts, messages } from "../src/db/schema";
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

// Each dispatch step reads its recipients' suppression entries and recent marketing sends and calls
// in three prepared statements, the batch's numbers and contacts passed as one JSON list each.
describe("query plans of the recipients' facts", () => {
  const db = planDatabase();
  const facts = (text: string) => db.plan(text, ["w", 0, "c", "[]", 0].slice(0, text.split("?").length - 1));

  it("looks each contact up in its index through the JSON list", () => {
    expect(
      facts(
        `select contact_id, coalesce(sent_at, send_at, created_at) from messages where (workspace_id = ? and direction = 'outbound' and created_at > ? and (sender in ('campaign','flow') or followup = 1) and status <> 'FAILED' and campaign_id IS NOT ?) and contact_id IN (SELECT value FROM json_each(?)) and coalesce(sent_at, send_at, created_at) > ?`,
      )[0],
    ).toBe(
      "SEARCH messages USING INDEX messages_workspace_contact_idx (workspace_id=? AND contact_id=? AND direction=? AND created_at>?)",
    );
    expect(
      facts(
        `select contact_id, created_at from calls where (workspace_id = ? and direction = 'outbound' and created_at > ? and (campaign_id is not null or flow_id is not null) and status <> 'FAILED' and campaign_id IS NOT ?) and contact_id IN (SELECT value FROM json_each(?))`,
      )[0],
    ).toBe(
      "SEARCH calls USING INDEX calls_workspace_contact_idx (workspace_id=? AND contact_id=? AND created_at>?)",
    );
    expect(
      db.plan(
        "select phone_number, reason from suppressions where workspace_id = ? and phone_number IN (SELECT value FROM json_each(?))",
        ["w", "[]"],
      )[0],
    ).toBe(
      "SEARCH suppressions USING INDEX suppressions_workspace_phone_idx (workspace_id=? AND phone_number=?)",
    );
  });
});

// A campaign's messages are read through the unique (campaign_id, contact_id) index, partial on
// campaign_id IS NOT NULL, and a carrier's report finds its message through a carrier-id index
// partial on carrier_message_id IS NOT NULL: each with an equality the index's condition follows
// from, so neither needs an index of its own for the messages without one.
describe("query plans of a campaign's messages and of a carrier's id", () => {
  const db = planDatabase();
  const ofCampaign = and(
    eq(messages.workspaceId, "w"),
    isNull(messages.callId),
    eq(messages.campaignId, "c"),
  );

  it("counts a campaign's messages through messages_campaign_contact_idx", () => {
    const total = db.handle.db.select({ n: count() }).from(messages).where(ofCampaign).toSQL();
    expect(db.plan(total.sql, total.params)).toEqual([
      "SEARCH messages USING INDEX messages_campaign_contact_idx (campaign_id=?)",
    ]);
  });

  it("finds a message by its carrier id through messages_carrier_id_idx", () => {
    const query = db.handle.db
      .select()
      .from(messages)
      .where(eq(messages.carrierMessageId, "SM1"))
      .limit(1)
      .toSQL();
    expect(db.plan(query.sql, query.params)).toEqual([
      "SEARCH messages USING INDEX messages_carrier_id_idx (carrier_message_id=?)",
    ]);
  });
});
