// migrations/NNNN_campaign_sends_open_threads_unique.sql on a database written before it: the
// simulated ledger's duplicate rows of a message fold into its first row (handoffs counts them),
// and of a contact's several open threads the newest stays open, so the unique indexes can be made.
import { Database } from "bun:sqlite";
import { describe, expect, it } from "bun:test";
import { migrate } from "../src/db/migrate";
import { embeddedMigrations } from "../src/db/migrations.generated";

const TAG = embeddedMigrations.find((m) => m.tag.endsWith("_campaign_sends_open_threads_unique"))?.tag;

describe("migration campaign_sends_open_threads_unique (unique backstops)", () => {
  it("folds duplicate ledger rows into the first (handoffs) and leaves one open thread per contact", () => {
    const sqlite = new Database(":memory:");
    const index = embeddedMigrations.findIndex((m) => m.tag === TAG);
    expect(index).toBeGreaterThan(0);
    migrate(sqlite, embeddedMigrations.slice(0, index));
    const send = sqlite.prepare(
      "INSERT INTO sandbox_sends (id, workspace_id, message_id, from_number, to_number, body, carrier_message_id, accepted_at, deliver_at, outcome) VALUES (?, 'w', ?, '+1', '+2', 'x', ?, ?, 0, 'DELIVERED')",
    );
    send.run("s2", "m1", "SM-second", 20);
    send.run("s1", "m1", "SM-first", 10);
    send.run("s3", "m1", "SM-third", 30);
    send.run("s4", "m2", "SM-alone", 10);
    const thread = sqlite.prepare(
      "INSERT INTO conversations (id, workspace_id, contact_id, status, created_at, updated_at) VALUES (?, 'w', ?, ?, ?, 0)",
    );
    thread.run("t-old", "c1", "open", 1);
    thread.run("t-new", "c1", "open", 2);
    thread.run("t-closed", "c1", "closed", 3);
    thread.run("t-other", "c2", "open", 1);

    expect(migrate(sqlite, embeddedMigrations.slice(0, index + 1)).applied).toEqual([TAG as string]);
    const sends = sqlite
      .query<{ message_id: string; carrier_message_id: string; handoffs: number }, []>(
        "SELECT message_id, carrier_message_id, handoffs FROM sandbox_sends ORDER BY message_id",
      )
      .all();
    expect(sends).toEqual([
      { message_id: "m1", carrier_message_id: "SM-first", handoffs: 3 },
      { message_id: "m2", carrier_message_id: "SM-alone", handoffs: 1 },
    ]);
    const threads = sqlite
      .query<{ id: string; status: string }, []>("SELECT id, status FROM conversations ORDER BY id")
      .all();
    expect(Object.fromEntries(threads.map((t) => [t.id, t.status]))).toEqual({
      "t-closed": "closed",
      "t-new": "open",
      "t-old": "closed",
      "t-other": "open",
    });
    expect(() => send.run("s5", "m2", "SM-again", 40)).toThrow(/UNIQUE/);
  });

  it("refuses a second campaign message or call to one recipient, a second open thread, a second delivery of one event to one endpoint", () => {
    const sqlite = new Database(":memory:");
    migrate(sqlite);
    const message = sqlite.prepare(
      "INSERT INTO messages (id, workspace_id, direction, sender, from_number, to_number, body, status, segments, encoding, contact_id, campaign_id, created_at, updated_at) VALUES (?, 'w', 'outbound', ?, '+1', '+2', 'x', 'QUEUED', 1, 'GSM-7', 'c1', ?, 0, 0)",
    );
    message.run("m1", "campaign", "k1");
    expect(() => message.run("m2", "campaign", "k1")).toThrow(/UNIQUE/);
    message.run("m3", "campaign", "k2");
    // Messages of no campaign are not keyed.
    message.run("m4", "api", null);
    message.run("m5", "api", null);
    const call = sqlite.prepare(
      "INSERT INTO calls (id, workspace_id, direction, from_number, to_number, status, contact_id, campaign_id, via, transcript, created_at, updated_at) VALUES (?, 'w', 'outbound', '+1', '+2', 'QUEUED', 'c1', ?, 'voice', '[]', 0, 0)",
    );
    call.run("a1", "k1");
    expect(() => call.run("a2", "k1")).toThrow(/UNIQUE/);
    call.run("a3", null);
    call.run("a4", null);
    const thread = sqlite.prepare(
      "INSERT INTO conversations (id, workspace_id, contact_id, status, search_key, created_at, updated_at) VALUES (?, 'w', 'c1', ?, ?, 0, 0)",
    );
    thread.run("t1", "open", 1);
    expect(() => thread.run("t2", "open", 2)).toThrow(/UNIQUE/);
    thread.run("t3", "closed", 3);
    const delivery = sqlite.prepare(
      "INSERT INTO webhook_deliveries (id, workspace_id, webhook_id, message_id, event_type, payload, created_at, updated_at) VALUES (?, 'w', ?, ?, 'message.sent', '{}', 0, 0)",
    );
    delivery.run("d1", "h1", "e1");
    expect(() => delivery.run("d2", "h1", "e1")).toThrow(/UNIQUE/);
    delivery.run("d3", "h2", "e1");
  });
});
