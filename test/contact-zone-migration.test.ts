// migrations/NNNN_contact_zone_source.sql on a database written before it (API.md §7.1): stored zones
// equal to the area code's main zone return to the area code; flagged threads get an attention_reason.
import { Database } from "bun:sqlite";
import { describe, expect, it } from "bun:test";
import { migrate } from "../src/db/migrate";
import { embeddedMigrations } from "../src/db/migrations.generated";

// Found by its name, not its number: migrations are renumbered when branches merge.
const TAG = embeddedMigrations.find((m) => m.tag.endsWith("_contact_zone_source"))?.tag ?? "";

describe("migration NNNN_contact_zone_source", () => {
  it("marks stored main zones area_code (null), keeps given ones, and gives flagged threads a reason", () => {
    const sqlite = new Database(":memory:");
    const index = embeddedMigrations.findIndex((m) => m.tag === TAG);
    expect(index).toBeGreaterThan(0);
    migrate(sqlite, embeddedMigrations.slice(0, index));
    const contact = sqlite.prepare(
      "INSERT INTO contacts (id, workspace_id, phone_number, source, opted_in, timezone, fields, created_at, updated_at) VALUES (?, 'w', ?, 'api', 1, ?, '{}', 0, 0)",
    );
    // [phone, zone stored before, zone after (null: from the area code)]
    const rows: [string, string | null, string | null][] = [
      ["+18505550100", "America/New_York", null], // 850's main zone
      ["+18505550101", "America/Chicago", "America/Chicago"], // given (not the main zone)
      ["+14485550102", "America/Chicago", null], // 448's main zone before this change
      ["+14485550103", "America/New_York", null], // 448's main zone now
      ["+12125550104", "America/Chicago", "America/Chicago"],
      ["+12125550105", null, null],
      ["+442071234567", "Europe/London", "Europe/London"],
    ];
    rows.forEach(([phone, zone], i) => {
      contact.run(`c${i}`, phone, zone);
    });
    const thread = sqlite.prepare(
      "INSERT INTO conversations (id, workspace_id, contact_id, status, needs_attention, agent_id, agent_paused, draft_reply, created_at, updated_at) VALUES (?, 'w', 'c0', 'open', ?, ?, ?, ?, 0, 0)",
    );
    thread.run("t-plain", 1, null, 0, null);
    thread.run("t-handoff", 1, "agent", 1, null);
    thread.run("t-draft", 1, "agent", 0, "A draft");
    thread.run("t-calm", 0, null, 0, null);

    expect(migrate(sqlite, embeddedMigrations.slice(0, index + 1)).applied).toEqual([TAG]);
    const zones = sqlite.query<{ phone_number: string; timezone: string | null }, []>(
      "SELECT phone_number, timezone FROM contacts ORDER BY id",
    );
    expect(zones.all().map((r) => [r.phone_number, r.timezone])).toEqual(
      rows.map(([p, , after]) => [p, after]),
    );
    const reasons = sqlite.query<{ id: string; attention_reason: string | null }, []>(
      "SELECT id, attention_reason FROM conversations ORDER BY id",
    );
    expect(Object.fromEntries(reasons.all().map((r) => [r.id, r.attention_reason]))).toEqual({
      "t-calm": null,
      "t-draft": "agent_flagged",
      "t-handoff": "agent_handoff",
      "t-plain": "unanswered_message",
    });
  });
});
