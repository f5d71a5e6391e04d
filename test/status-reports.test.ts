import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { eq, inArray } from "drizzle-orm";
import { recordStatuses } from "../src/db/message-statements";
import { settleRecipients } from "../src/db/recipient-outcomes";
import { campaignRecipients, messages } from "../src/db/schema";
import { applyStatusUpdates } from "../src/domain/messaging/status-updates";
import { newId } from "../src/lib/ids";
import { eventLog } from "./support/event-log";
import { eventually, orderNumber } from "./support/messaging";
import { testsRunOn } from "./support/postgres";
import { startTestServer, type TestServer } from "./support/server";

let s: TestServer;
beforeAll(async () => {
  // The simulated carrier reports nothing during these tests: the reports are the tests' own.
  s = await startTestServer({}, { SIMULATED_DELIVERY_MS: "600000" });
});
afterAll(async () => await s.stop());
const log = eventLog(() => s);

/** `n` one-off messages of a new workspace, handed off (SENT); answers their ids. */
async function sentMessages(n: number, name: string) {
  const ws = await s.newWorkspace(name);
  await log.watch(ws.key);
  await orderNumber(s, "+14155550180", { key: ws.key });
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const res = await s.api(
      "POST",
      "/v1/messages",
      { to: `+1415555${String(1900 + i)}`, body: "Hello" },
      { key: ws.key },
    );
    expect(res.status).toBe(200);
    ids.push(res.body.message.id);
  }
  const { db } = s.server.handle;
  await eventually(
    async () => await db.select().from(messages).where(inArray(messages.id, ids)).all(),
    (rows) => rows.every((row) => row.status === "SENT"),
  );
  return { ws, ids };
}

describe("carrier status reports in batches", () => {
  it("moves each message from the status it was read at only, and reports it once", async () => {
    const { ws, ids } = await sentMessages(3, "Batched reports");
    const [a, b, c] = ids;
    const { db } = s.server.handle;
    const now = Date.now();
    const moved = await db.transaction(
      async (tx) =>
        await recordStatuses(tx, [
          // a: from SENT, as it is; b: from QUEUED, which it is not any more.
          ...[a, b].map((id, i) => ({
            id,
            fromStatus: i === 0 ? "SENT" : "QUEUED",
            status: "DELIVERED",
            carrierMessageId: null,
            sentAt: now,
            deliveredAt: now,
            errorCode: null,
            errorMessage: null,
            now,
            learnt: false,
          })),
        ]),
    );
    expect([...moved]).toEqual([a]);
    const rows = new Map(
      (await db.select().from(messages).where(inArray(messages.id, ids)).all()).map((row) => [row.id, row]),
    );
    expect(rows.get(a)).toMatchObject({ status: "DELIVERED", deliveredAt: now });
    expect(rows.get(a)?.carrierMessageId).not.toBeNull();
    expect(rows.get(b)).toMatchObject({ status: "SENT", deliveredAt: null });

    // A batch with a repeat and a late lower report: b and c delivered, each with one event.
    await applyStatusUpdates(db, [
      { messageId: b, carrierMessageId: "", status: "DELIVERED" },
      { messageId: c, carrierMessageId: "", status: "DELIVERED" },
      { messageId: b, carrierMessageId: "", status: "DELIVERED" },
      { messageId: c, carrierMessageId: "", status: "SENT" },
      { messageId: "0193cccc-0000-7000-8000-000000000000", carrierMessageId: "", status: "DELIVERED" },
    ]);
    const after = await db
      .select()
      .from(messages)
      .where(inArray(messages.id, [b, c]))
      .all();
    expect(after.map((row) => row.status)).toEqual(["DELIVERED", "DELIVERED"]);
    const delivered = (await log.of("message.delivered", ws.workspaceId)).map(
      (event) => (event.data as { id: string }).id,
    );
    // a was moved by recordStatuses alone, which emits nothing (applyStatusUpdates does).
    expect(delivered.sort()).toEqual([b, c].sort());
  });
});

describe("campaign recipients following a batch of status events", () => {
  it.skipIf(!testsRunOn("postgres"))(
    "folds a recipient's events into one update that applies where any of them would",
    async () => {
      const ws = await s.newWorkspace("Settlements");
      const { db } = s.server.handle;
      const campaignId = newId();
      const now = Date.now();
      const start = { queued: "queued", sent: "sent", delivered: "delivered" } as const;
      const people = [
        { contactId: newId(), messageId: newId(), outcome: start.queued }, // sent, then delivered
        { contactId: newId(), messageId: newId(), outcome: start.sent }, // sent (no-op), then delivered
        { contactId: newId(), messageId: newId(), outcome: start.delivered }, // a late sent: stays
        { contactId: newId(), messageId: newId(), outcome: start.queued }, // sent only
      ];
      await db
        .insert(campaignRecipients)
        .values(
          people.map((p, i) => ({
            campaignId,
            contactId: p.contactId,
            workspaceId: ws.workspaceId,
            phoneNumber: `+1415555${2100 + i}`,
            outcome: p.outcome,
            dueAt: now,
            messageId: p.messageId,
            handedOffAt: p.outcome === "queued" ? null : now - 1000,
            createdAt: now,
          })),
        )
        .run();
      const settle = (i: number, outcome: "sent" | "delivered") => ({
        campaignId,
        contactId: people[i].contactId,
        messageId: people[i].messageId,
        outcome,
        reason: null,
        sentAt: now,
      });
      await db.transaction(
        async (tx) =>
          await settleRecipients(
            tx,
            [
              settle(0, "sent"),
              settle(1, "sent"),
              settle(2, "sent"),
              settle(3, "sent"),
              settle(0, "delivered"),
              settle(1, "delivered"),
            ],
            async () => {
              throw new Error("one statement on PostgreSQL, not one each");
            },
          ),
      );
      const rows = new Map(
        (
          await db
            .select()
            .from(campaignRecipients)
            .where(eq(campaignRecipients.campaignId, campaignId))
            .all()
        ).map((row) => [row.contactId, row]),
      );
      expect(people.map((p) => rows.get(p.contactId)?.outcome)).toEqual([
        "delivered",
        "delivered",
        "delivered",
        "sent",
      ]);
      expect(people.map((p) => rows.get(p.contactId)?.handedOffAt)).toEqual([
        now,
        now - 1000,
        now - 1000,
        now,
      ]);
    },
  );
});
