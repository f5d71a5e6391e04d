import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { and, eq } from "drizzle-orm";
import { jobs } from "../src/db/schema";
import { enqueueJob } from "../src/jobs/queue";
import { eventLog } from "./support/event-log";
import { eventually, handOffs } from "./support/messaging";
import { startTestServer, type TestServer } from "./support/server";
import { zoneAtLocalHour } from "./support/zones";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({}, { SIMULATED_DELIVERY_MS: "20" });
});
afterAll(async () => await s.stop());
const log = eventLog(() => s);

// biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON answers
type Json = any;

const DAY = zoneAtLocalHour(12);
const NIGHT = zoneAtLocalHour(3);

let phoneSeq = 1000;
const newPhone = () => `+1212555${String(phoneSeq++).padStart(4, "0")}`;

/** A fresh workspace with helpers bound to its key. */
async function workspace(name = "Campaigns") {
  const ws = await s.newWorkspace(name);
  const api = async (method: string, path: string, body?: unknown) =>
    await s.api(method, path, body, { key: ws.key });
  const contact = async (extra: Record<string, unknown> = {}) => {
    const res = await api("POST", "/v1/contacts", { phone_number: newPhone(), timezone: DAY, ...extra });
    expect(res.status).toBe(200);
    return res.body.contact as Json;
  };
  const list = async (contactIds: string[]) => {
    const res = await api("POST", "/v1/lists", { name: `List ${phoneSeq}` });
    await api("POST", `/v1/lists/${res.body.list.id}/contacts`, { contact_ids: contactIds });
    return res.body.list.id as string;
  };
  let numberSeq = 0;
  const number = async (extra: Record<string, unknown> = {}) => {
    const available = await api("GET", "/v1/numbers/available?area_code=212&limit=50");
    for (const candidate of available.body.numbers.slice(numberSeq)) {
      numberSeq++;
      const res = await api("POST", "/v1/numbers", { number: candidate.number, ...extra });
      if (res.body.added === 1) return res.body.ordered as Json;
    }
    throw new Error("no number available");
  };
  const outbox = async () =>
    handOffs((await api("GET", "/v1/sandbox/outbox?limit=200")).body.sends as Json[]);
  const campaign = async (body: Record<string, unknown>) => {
    const res = await api("POST", "/v1/campaigns", {
      name: "Spring",
      message: { body: "Hi {{first_name|there}}" },
      ...body,
    });
    expect(res.status).toBe(200);
    return res.body.campaign as Json;
  };
  /** The workspace's jobs of one kind (send jobs, send batches), as the database holds them. */
  const jobsOf = async (kind: string) =>
    await s.server.handle.db
      .select()
      .from(jobs)
      .where(and(eq(jobs.kind, kind), eq(jobs.workspaceId, ws.workspaceId)))
      .all();
  return { ...ws, api, contact, list, number, outbox, campaign, jobsOf };
}

const emptyStats = {
  recipients: 0,
  queued: 0,
  deferred: 0,
  sent: 0,
  delivered: 0,
  failed: 0,
  suppressed: 0,
  replied: 0,
  opted_out: 0,
  clicked: 0,
  conversions: 0,
  revenue: 0,
  variants: [],
};

describe("POST /v1/campaigns and GET /v1/campaigns/{id}", () => {
  it("creates a draft and answers it as the seed shows, with configuration and stats", async () => {
    const w = await workspace();
    const c = await w.contact();
    const listId = await w.list([c.id]);
    const created = await w.campaign({ audience: { list_ids: [listId] }, throttle_per_minute: 10 });
    const got = await w.api("GET", `/v1/campaigns/${created.id}`);
    expect(got.status).toBe(200);
    expect(got.body.ok).toBe(true);
    expect(got.body.campaign).toMatchObject({
      id: created.id,
      name: "Spring",
      campaign_type: "sms",
      status: "draft",
      audience: { list_ids: [listId], segment_ids: [], contact_ids: [], exclude_list_ids: [] },
      message: { body: "Hi {{first_name|there}}", variants: null },
      throttle_per_minute: 10,
      quiet_hours: null,
      launched_at: null,
      stats: emptyStats,
    });
    expect(got.body.campaign.created_at).toMatch(/Z$/);
  });

  it("lists newest first, filters by status and q, and hides other workspaces", async () => {
    const w = await workspace();
    const first = await w.campaign({ name: "Alpha sale" });
    const second = await w.campaign({ name: "Beta sale" });
    const all = await w.api("GET", "/v1/campaigns");
    expect(all.body.campaigns.map((c: Json) => c.id)).toEqual([second.id, first.id]);
    expect(all.body.total).toBe(2);
    expect((await w.api("GET", "/v1/campaigns?q=alpha")).body.campaigns.map((c: Json) => c.id)).toEqual([
      first.id,
    ]);
    expect((await w.api("GET", "/v1/campaigns?status=active")).body.total).toBe(0);
    expect((await w.api("GET", "/v1/campaigns?status=bogus")).status).toBe(422);
    const other = await workspace("Other");
    expect((await other.api("GET", "/v1/campaigns")).body.total).toBe(0);
    expect((await other.api("GET", `/v1/campaigns/${first.id}`)).status).toBe(404);
    expect((await other.api("PATCH", `/v1/campaigns/${first.id}`, { name: "x" })).status).toBe(404);
    expect((await other.api("POST", `/v1/campaigns/${first.id}/launch`)).status).toBe(404);
  });

  it("patches and deletes a draft", async () => {
    const w = await workspace();
    const c = await w.campaign({});
    const patched = await w.api("PATCH", `/v1/campaigns/${c.id}`, {
      name: "Renamed",
      quiet_hours: { start_hour: 20 },
    });
    expect(patched.status).toBe(200);
    expect(patched.body.campaign).toMatchObject({
      name: "Renamed",
      quiet_hours: { enabled: true, start_hour: 20, end_hour: 8 },
    });
    expect((await w.api("DELETE", `/v1/campaigns/${c.id}`)).body).toEqual({ ok: true, deleted: true });
    expect((await w.api("GET", `/v1/campaigns/${c.id}`)).status).toBe(404);
  });

  it("answers 422 naming the field for every bad input, and stores nothing", async () => {
    const w = await workspace();
    const other = await workspace("Foreign");
    const foreignContact = await other.contact();
    const foreignList = await other.list([foreignContact.id]);
    const emptyPool = (await w.api("POST", "/v1/pools", { name: "Empty" })).body.pool.id;
    const segmentRes = await other.api("POST", "/v1/segments", { name: "S", rules: { all: [] } });
    const cases: [Record<string, unknown>, string][] = [
      [{ name: undefined }, "name is required"],
      // Inside the nullable message object, the field that fails is named.
      [{ message: { body: "x".repeat(1601) } }, "message.body is too long (max 1600)"],
      [{ message: { body: 5 } }, "message.body must be a string"],
      [{ message: { variants: [{ name: "A", body: "a" }] } }, "message.variants[0].weight is required"],
      [
        { message: { variants: [{ name: "A", body: "a", weight: "1" }] } },
        "message.variants[0].weight must be a number",
      ],
      [{ message: "hi" }, "message must be an object"],
      [{ throttle_per_minute: "10" }, "throttle_per_minute must be an integer"],
      [{ audience: { list_ids: [foreignList] } }, "audience.list_ids[0] does not exist"],
      [{ audience: { list_ids: ["nope"] } }, "audience.list_ids[0] does not exist"],
      [{ audience: { segment_ids: [segmentRes.body.segment.id] } }, "audience.segment_ids[0] does not exist"],
      [{ audience: { contact_ids: [foreignContact.id] } }, "audience.contact_ids[0] does not exist"],
      [{ audience: { exclude_list_ids: [foreignList] } }, "audience.exclude_list_ids[0] does not exist"],
      [{ pool_id: "01936f8e-7c1a-7a3b-9f00-2d5e8c1b4a77" }, "pool_id does not exist"],
      [{ pool_id: emptyPool }, "pool_id has no active numbers"],
      [{ from: "+12125550000" }, "from is not a number of this workspace"],
      [{ from: "abc" }, "from must be a valid phone number"],
      [{ offer_id: "01936f8e-7c1a-7a3b-9f00-2d5e8c1b4a77" }, "offer_id does not exist"],
      [{ send_at: "tomorrow" }, "send_at must be an ISO 8601 timestamp (e.g. 2026-11-21T21:06:45Z)"],
      [
        { send_at: "2999-02-30T10:00:00Z" },
        "send_at must be an ISO 8601 timestamp (e.g. 2026-11-21T21:06:45Z)",
      ],
      [{ send_at: "2020-01-01T00:00:00Z" }, "send_at must be in the future"],
      [{ quiet_hours: { start_hour: 24 } }, "quiet_hours.start_hour must be an integer between 0 and 23"],
      [{ quiet_hours: { end_hour: -1 } }, "quiet_hours.end_hour must be an integer between 0 and 23"],
      [{ quiet_hours: { start_hour: 7.5 } }, "quiet_hours.start_hour must be an integer between 0 and 23"],
      [{ throttle_per_minute: -5 }, "throttle_per_minute must be between 1 and 1000000000"],
      [{ throttle_per_minute: 2147483648 }, "throttle_per_minute must be between 1 and 1000000000"],
      [{ throttle_per_minute: 1.5 }, "throttle_per_minute must be an integer"],
      [
        { message: { body: "Hi {{favourite_color}}" } },
        "message.body has an unknown merge field {{favourite_color}}",
      ],
      [
        { message: { body: "Go {{offer_url}}" } },
        "message.body uses {{offer_url}} but the campaign has no offer_id",
      ],
      [{ message: null }, "message.body is required"],
      [
        {
          message: {
            variants: [
              { name: "A", body: "a", weight: 1 },
              { name: "B", body: "b", weight: 0 },
            ],
          },
        },
        "message.variants[1].weight must be a positive number",
      ],
      [{ campaign_type: "voice", message: null }, "say or agent_id is required for a voice campaign"],
      [
        { campaign_type: "voice", agent_id: "01936f8e-7c1a-7a3b-9f00-2d5e8c1b4a77" },
        "agent_id does not exist",
      ],
      [{ campaign_type: "fax" }, "campaign_type must be one of sms, voice"],
    ];
    for (const [body, error] of cases) {
      const res = await w.api("POST", "/v1/campaigns", { name: "Bad", message: { body: "Hi" }, ...body });
      expect({ body, status: res.status, error: res.body.error }).toEqual({ body, status: 422, error });
    }
    expect((await w.api("GET", "/v1/campaigns")).body.total).toBe(0);
    const fine = await w.api("POST", "/v1/campaigns", {
      name: "Fields",
      message: { body: "{{first_name}} {{last_name|friend}} {{fields.plan}} {{ email }}" },
    });
    expect(fine.status).toBe(200);
  });
});

describe("POST /v1/campaigns/{id}/launch", () => {
  it("sends once per contact across lists and segments, skips suppressed and opted-out ones, defers the night-time one; the preview agrees", async () => {
    const w = await workspace();
    await log.watch(w.key);
    await w.number();
    await w.number();
    const pool = (await w.api("POST", "/v1/pools", { name: "P" })).body.pool.id;
    const numbers = (await w.api("GET", "/v1/numbers")).body.numbers as Json[];
    for (const n of numbers) await w.api("PATCH", `/v1/numbers/${n.id}`, { pool_id: pool });
    const ann = await w.contact({ first_name: "Ann" });
    const bob = await w.contact({ first_name: "Bob", fields: { plan: "pro" } });
    const dup = await w.contact({ first_name: "Dup" });
    const quiet = await w.contact({ first_name: "Zed" });
    const suppressed = await w.contact();
    const optedOut = await w.contact({ opted_in: false });
    const night = await w.contact({ first_name: "Nia", timezone: NIGHT });
    const excluded = await w.contact();
    // Florida (a capped state) with one marketing send already today, and Louisiana, paused.
    const florida = await w.contact({
      first_name: "Flo",
      phone_number: `+1305555${String(phoneSeq++).padStart(4, "0")}`,
    });
    const louisiana = await w.contact({
      first_name: "Lou",
      phone_number: `+1504555${String(phoneSeq++).padStart(4, "0")}`,
    });
    const earlier = await w.campaign({ name: "Earlier", audience: { contact_ids: [florida.id] } });
    await w.api("POST", `/v1/campaigns/${earlier.id}/launch`);
    await eventually(
      async () => (await w.api("GET", `/v1/campaigns/${earlier.id}`)).body.campaign.status,
      (status) => status === "completed",
    );
    const rules = await w.api("PATCH", "/v1/settings", {
      frequency_cap: { max_messages: 1 },
      paused_states: ["LA"],
    });
    expect(rules.status).toBe(200);
    await w.api("POST", "/v1/suppression", { phone_number: suppressed.phone_number, reason: "complaint" });
    const listA = await w.list([ann.id, dup.id, suppressed.id, excluded.id]);
    const listB = await w.list([dup.id, optedOut.id, night.id]);
    const exclude = await w.list([excluded.id]);
    const segment = (
      await w.api("POST", "/v1/segments", {
        name: "Pro",
        rules: { field: "fields.plan", op: "eq", value: "pro" },
      })
    ).body.segment.id;
    const c = await w.campaign({
      audience: {
        list_ids: [listA, listB],
        segment_ids: [segment],
        contact_ids: [quiet.id, florida.id, louisiana.id],
        exclude_list_ids: [exclude],
      },
      pool_id: pool,
    });

    const preview = (await w.api("GET", `/v1/campaigns/${c.id}/preview`)).body.preview;
    expect(preview).toMatchObject({
      recipients: 9,
      sendable: 4,
      deferred: 1,
      skipped: { suppressed: 1, opted_out: 1, frequency_cap: 1, state_paused: 1 },
    });
    expect(preview.warnings.map((x: Json) => x.code)).toEqual(["no_opt_out_language"]);
    expect(preview.contacts).toHaveLength(9);
    const byContact = new Map(preview.contacts.map((p: Json) => [p.contact_id, p]));
    expect(byContact.get(ann.id)).toMatchObject({ outcome: "send", body: "Hi Ann" });
    expect(byContact.get(night.id)).toMatchObject({ outcome: "defer", reason: "quiet_hours" });
    expect(byContact.get(suppressed.id)).toMatchObject({ outcome: "skip", reason: "suppressed" });
    expect(byContact.get(optedOut.id)).toMatchObject({ outcome: "skip", reason: "opted_out" });
    expect(byContact.get(florida.id)).toMatchObject({ outcome: "skip", reason: "frequency_cap" });
    expect(byContact.get(louisiana.id)).toMatchObject({ outcome: "skip", reason: "state_paused" });
    expect(byContact.has(excluded.id)).toBe(false);
    // The preview wrote nothing.
    expect((await w.api("GET", `/v1/campaigns/${c.id}`)).body.campaign.status).toBe("draft");

    const launched = await w.api("POST", `/v1/campaigns/${c.id}/launch`);
    expect(launched.status).toBe(200);
    expect(launched.body.campaign.status).toBe("active");
    const stats = await eventually(
      async () => (await w.api("GET", `/v1/campaigns/${c.id}`)).body.campaign.stats,
      (st) => st.delivered === 4,
    );
    expect(stats).toMatchObject({
      recipients: 9,
      sent: 4,
      delivered: 4,
      suppressed: 4,
      deferred: 1,
      queued: 0,
    });
    const sends = (await w.outbox()).filter(
      (x: Json) => x.to !== florida.phone_number || x.body === "Hi Flo",
    );
    expect(sends.map((x: Json) => x.to).sort()).toEqual(
      [ann, bob, dup, quiet, florida].map((x) => x.phone_number).sort(),
    );
    const campaignSends = sends.filter((x: Json) => x.to !== florida.phone_number);

    // Preview versus the real run: same outcome, body and sender per contact.
    const recipients = (await w.api("GET", `/v1/campaigns/${c.id}/recipients`)).body.recipients as Json[];
    expect(recipients).toHaveLength(9);
    const outcomeOf = { send: "delivered", defer: "deferred", skip: "skipped" } as Record<string, string>;
    for (const r of recipients) {
      const planned = byContact.get(r.contact_id) as Json;
      expect({ id: r.contact_id, outcome: r.outcome }).toEqual({
        id: r.contact_id,
        outcome: outcomeOf[planned.outcome],
      });
      const sent = campaignSends.find((x: Json) => x.to === r.phone_number);
      if (planned.outcome === "send")
        expect({ from: sent.from, body: sent.body }).toEqual({ from: planned.from, body: planned.body });
      else expect(sent).toBeUndefined();
    }
    const nightRow = recipients.find((r) => r.contact_id === night.id);
    expect(nightRow.reason).toBe("quiet_hours");
    expect(Date.parse(nightRow.send_at)).toBeGreaterThan(Date.now() + 3 * 3600_000);
    expect(nightRow.send_at).toBe((byContact.get(night.id) as Json).send_at);
    // The deferral is a QUEUED message with send_at (API.md §6.1), the recipient's message_id.
    const waiting = (await w.api("GET", `/v1/messages/${nightRow.message_id}`)).body.message;
    expect(waiting).toMatchObject({
      status: "QUEUED",
      send_at: nightRow.send_at,
      to: night.phone_number,
      body: "Hi Nia",
    });
    const listed = (await w.api("GET", `/v1/messages?campaign_id=${c.id}&status=QUEUED`)).body
      .messages as Json[];
    expect(listed.map((m) => m.id)).toEqual([nightRow.message_id]);
    expect((await w.api("GET", `/v1/campaigns/${c.id}/recipients?outcome=skipped`)).body.total).toBe(4);
    expect((await w.api("GET", `/v1/campaigns/${c.id}/recipients?outcome=nope`)).status).toBe(422);
    // Waiting for the night-time contact: still active.
    expect((await w.api("GET", `/v1/campaigns/${c.id}`)).body.campaign.status).toBe("active");
    const started = await log.of("campaign.started", w.workspaceId);
    expect(started.filter((e) => (e.data as Json).id === c.id)).toHaveLength(1);
  });

  it("completes with campaign.completed, counts replies, and splits variants by weight", async () => {
    const w = await workspace();
    await log.watch(w.key);
    const number = await w.number();
    const people = [];
    for (let i = 0; i < 6; i++) people.push(await w.contact({ first_name: `P${i}` }));
    const c = await w.campaign({
      message: {
        variants: [
          { name: "A", body: "A {{first_name}}", weight: 1 },
          { name: "B", body: "B {{first_name}}", weight: 1 },
        ],
      },
      audience: { contact_ids: people.map((p) => p.id) },
    });
    await w.api("POST", `/v1/campaigns/${c.id}/launch`);
    const done = await eventually(
      async () => (await w.api("GET", `/v1/campaigns/${c.id}`)).body.campaign,
      (x) => x.status === "completed" && x.stats.delivered === 6,
    );
    expect(done.completed_at).toMatch(/Z$/);
    const variants = done.stats.variants as Json[];
    expect(variants.map((v) => v.name)).toEqual(["A", "B"]);
    expect(variants[0].recipients + variants[1].recipients).toBe(6);
    const sends = await w.outbox();
    expect(sends).toHaveLength(6);
    const recipients = (await w.api("GET", `/v1/campaigns/${c.id}/recipients`)).body.recipients as Json[];
    for (const r of recipients) {
      const person = people.find((p) => p.id === r.contact_id);
      expect(sends.find((x: Json) => x.to === r.phone_number).body).toBe(`${r.variant} ${person.first_name}`);
    }
    await s.api(
      "POST",
      "/v1/sandbox/inbound",
      { from: people[0].phone_number, to: number.number, body: "thanks" },
      { key: w.key },
    );
    await s.api(
      "POST",
      "/v1/sandbox/inbound",
      { from: people[1].phone_number, to: number.number, body: "STOP" },
      { key: w.key },
    );
    const after = await eventually(
      async () => (await w.api("GET", `/v1/campaigns/${c.id}`)).body.campaign.stats,
      (st) => st.opted_out === 1,
    );
    expect(after).toMatchObject({ replied: 2, opted_out: 1 });
    const completed = await log.of("campaign.completed", w.workspaceId);
    expect(completed).toHaveLength(1);
    expect((completed[0].data as Json).id).toBe(c.id);
  });

  it("resolves a large audience in chunks and sends exactly one message per recipient", async () => {
    const w = await workspace();
    await w.number();
    const count = 2_050; // several resolution chunks (500 each)
    const people = Array.from({ length: count }, (_, i) => ({
      phone_number: `+1312555${String(i).padStart(4, "0")}`,
      timezone: DAY,
    }));
    const imported = await w.api("POST", "/v1/contacts/import", { contacts: people });
    expect(imported.body.created).toBe(count);
    const everyone = (await w.api("POST", "/v1/segments", { name: "All", rules: { all: [] } })).body.segment
      .id;
    const c = await w.campaign({ audience: { segment_ids: [everyone] } });
    await w.api("POST", `/v1/campaigns/${c.id}/launch`);
    const done = await eventually(
      async () => (await w.api("GET", `/v1/campaigns/${c.id}`)).body.campaign,
      (x) => x.status === "completed" && x.stats.sent === count,
      1200,
    );
    expect(done.stats).toMatchObject({ recipients: count, sent: count });
    expect((await w.api("GET", "/v1/sandbox/outbox?limit=1")).body.total).toBe(count);
  }, 30_000);

  it("hands a step's messages off in one batch job; a recipient the carrier cannot take gets a send job of its own", async () => {
    const w = await workspace();
    await w.number();
    const people = [];
    for (let i = 0; i < 3; i++) people.push(await w.contact());
    // The outage number's area code (500) has no state: with the state table on it gets every
    // state's rows at once (fail closed), whose hours depend on the hour of the run.
    expect((await w.api("PATCH", "/v1/settings", { state_rules: false })).status).toBe(200);
    const outage = (await w.api("POST", "/v1/contacts", { phone_number: "+15005550003", timezone: DAY })).body
      .contact;
    const c = await w.campaign({ audience: { contact_ids: [...people.map((p) => p.id), outage.id] } });
    await w.api("POST", `/v1/campaigns/${c.id}/launch`);
    const { db } = s.server.handle;
    const batches = await eventually(
      () => w.jobsOf("messages.send_batch"),
      (rows) => rows.length === 1 && rows[0].status === "done",
    );
    const ids = (batches[0].payload as { message_ids: string[] }).message_ids;
    expect(ids).toHaveLength(4);
    expect(
      await eventually(
        () => w.outbox(),
        (rows) => rows.length === 3,
      ),
    ).toHaveLength(3);
    // The outage recipient's message waits QUEUED with a send job of its own, retried later.
    const waiting = ((await w.api("GET", "/v1/messages")).body.messages as Json[]).filter(
      (m) => m.to === "+15005550003",
    );
    expect(waiting.map((m) => m.status)).toEqual(["QUEUED"]);
    const own = await w.jobsOf("messages.send");
    expect(own.map((j) => [(j.payload as { message_id: string }).message_id, j.status])).toEqual([
      [waiting[0].id, "queued"],
    ]);
    expect(own[0].runAt).toBeGreaterThan(Date.now());

    // The batch run again (as after a crash before its completion) sends nothing twice.
    await enqueueJob(db, "messages.send_batch", { message_ids: ids }, { workspaceId: w.workspaceId });
    await eventually(
      () => w.jobsOf("messages.send_batch"),
      (rows) => rows.length === 2 && rows.every((row) => row.status === "done"),
    );
    expect(await w.outbox()).toHaveLength(3);
  });

  it("asks the send-time rules again at a late hand-off: night now → held QUEUED with send_at; a paused state → failed", async () => {
    const w = await workspace();
    await w.number();
    // As above: no state table for the stateless outage number, so only the contact's clock counts.
    expect((await w.api("PATCH", "/v1/settings", { state_rules: false })).status).toBe(200);
    const outage = (await w.api("POST", "/v1/contacts", { phone_number: "+15005550003", timezone: DAY })).body
      .contact;
    const c = await w.campaign({ audience: { contact_ids: [outage.id] } });
    await w.api("POST", `/v1/campaigns/${c.id}/launch`);
    const { db } = s.server.handle;
    const sendJobs = () => w.jobsOf("messages.send");
    // The carrier could not take it: QUEUED, with a send job of its own for later.
    const [retry] = await eventually(sendJobs, (rows) => rows.length === 1);
    const messageId = (retry.payload as { message_id: string }).message_id;
    const message = async () => (await w.api("GET", `/v1/messages/${messageId}`)).body.message;
    expect((await message()).status).toBe("QUEUED");
    expect((await message()).send_at).toBeNull();

    // Meanwhile it became night where the contact is. The hand-off runs again (as after a
    // restart) and asks the rules first: the message waits for the window, and no send is tried.
    await w.api("PATCH", `/v1/contacts/${outage.id}`, { timezone: NIGHT });
    await enqueueJob(db, "messages.send_batch", { message_ids: [messageId] }, { workspaceId: w.workspaceId });
    const held = await eventually(message, (m) => m.send_at !== null);
    expect(held.status).toBe("QUEUED");
    const opens = Date.parse(held.send_at);
    expect(opens).toBeGreaterThan(Date.now() + 3_600_000);
    const later = await eventually(sendJobs, (rows) => rows.some((r) => r.runAt === opens));
    expect(later.filter((r) => r.status === "queued").length).toBeGreaterThan(0);

    // Its own send job, due now, is held the same way: rescheduled to when the window opens.
    await db.update(jobs).set({ runAt: Date.now() }).where(eq(jobs.id, retry.id)).run();
    await eventually(
      async () => await db.select().from(jobs).where(eq(jobs.id, retry.id)).get(),
      (row) => row?.runAt === opens && row.status === "queued",
    );

    // An operator pauses a state: the number's area code has no state, so it is held back for good.
    await w.api("PATCH", "/v1/settings", { paused_states: ["LA"] });
    await enqueueJob(db, "messages.send_batch", { message_ids: [messageId] }, { workspaceId: w.workspaceId });
    const failed = await eventually(message, (m) => m.status === "FAILED");
    expect(failed).toMatchObject({ status: "FAILED", error_code: "state_paused" });
    expect((await w.outbox()).filter((send) => send.to === "+15005550003")).toHaveLength(0);
  });

  describe("a batch's hand-off reads every message's checks at once, and each still decides its own", () => {
    /** A campaign message the carrier could not take: QUEUED, with a send job of its own for later. */
    async function waitingMessage() {
      const w = await workspace();
      await w.number();
      // No state table for the stateless outage number, so only the contact's clock counts.
      expect((await w.api("PATCH", "/v1/settings", { state_rules: false })).status).toBe(200);
      const outage = (await w.api("POST", "/v1/contacts", { phone_number: "+15005550003", timezone: DAY }))
        .body.contact;
      const bystander = await w.contact();
      const c = await w.campaign({ audience: { contact_ids: [outage.id, bystander.id] } });
      await w.api("POST", `/v1/campaigns/${c.id}/launch`);
      const { db } = s.server.handle;
      const [retry] = await eventually(
        () => w.jobsOf("messages.send"),
        (rows) => rows.length === 1,
      );
      const messageId = (retry.payload as { message_id: string }).message_id;
      // Its own send job (and its own reads) waits, so what follows is the batch's decision.
      await db
        .update(jobs)
        .set({ runAt: Date.now() + 3_600_000 })
        .where(eq(jobs.id, retry.id))
        .run();
      await eventually(
        () => w.outbox(),
        (rows) => rows.length === 1,
      );
      const message = async () => (await w.api("GET", `/v1/messages/${messageId}`)).body.message;
      // The batch again, with the bystander's message already sent among its messages; answers
      // the message once the batch is done (its outcomes are recorded before it completes).
      const rerun = async () => {
        const ids = ((await w.api("GET", "/v1/messages")).body.messages as Json[]).map((m) => m.id);
        expect(ids).toHaveLength(2);
        const jobId = await enqueueJob(
          db,
          "messages.send_batch",
          { message_ids: ids },
          { workspaceId: w.workspaceId },
        );
        await eventually(
          async () =>
            await db
              .select()
              .from(jobs)
              .where(eq(jobs.id, jobId as string))
              .get(),
          (row) => row?.status === "done",
        );
        return await message();
      };
      return { w, outage, rerun };
    }

    const blocked: [string, (w: Json, outage: Json) => Promise<unknown>, string][] = [
      [
        "the contact opted out",
        (w, o) => w.api("PATCH", `/v1/contacts/${o.id}`, { opted_in: false }),
        "opted_out",
      ],
      [
        "the number is suppressed",
        (w, o) => w.api("POST", "/v1/suppression", { phone_number: o.phone_number, reason: "complaint" }),
        "suppressed",
      ],
      [
        "the number is suppressed by an opt-out",
        (w, o) => w.api("POST", "/v1/suppression", { phone_number: o.phone_number, reason: "opt_out" }),
        "opted_out",
      ],
    ];
    for (const [name, block, code] of blocked)
      it(`fails the message when ${name} since it was written (${code})`, async () => {
        const { w, outage, rerun } = await waitingMessage();
        await block(w, outage);
        const failed = await rerun();
        expect({ name, status: failed.status, error_code: failed.error_code }).toEqual({
          name,
          status: "FAILED",
          error_code: code,
        });
      });

    it("reads the zone of the message's contact by its id when the contact's number changed since", async () => {
      const { w, outage, rerun } = await waitingMessage();
      // The contact's zone (day) lets it go: the carrier is asked (and cannot take it), where the
      // outage number's own area code, with no zone, would hold it.
      await w.api("PATCH", `/v1/contacts/${outage.id}`, { phone_number: newPhone() });
      expect(await rerun()).toMatchObject({ status: "QUEUED", send_at: null });
    });
  });

  it("previews what a pool's numbers can still send today: the sends beyond it wait", async () => {
    const w = await workspace();
    const pool = (await w.api("POST", "/v1/pools", { name: "Nearly used" })).body.pool.id;
    const a = await w.number({ daily_limit: 2, pool_id: pool });
    await w.number({ daily_limit: 2, pool_id: pool });
    // One of a's two sends today is used: the pool has three left.
    const sent = await w.api("POST", "/v1/messages", { to: newPhone(), body: "Hello", from: a.number });
    expect(sent.status).toBe(200);
    const people = [];
    for (let i = 0; i < 5; i++) people.push(await w.contact());
    const c = await w.campaign({ audience: { contact_ids: people.map((p) => p.id) }, pool_id: pool });
    const preview = (await w.api("GET", `/v1/campaigns/${c.id}/preview`)).body.preview;
    expect(preview).toMatchObject({ recipients: 5, sendable: 3, deferred: 2 });
  });

  it("never exceeds a pool number's daily_limit: capped sends wait", async () => {
    const w = await workspace();
    const n = await w.number({ daily_limit: 2 });
    const pool = (await w.api("POST", "/v1/pools", { name: "Capped" })).body.pool.id;
    await w.api("PATCH", `/v1/numbers/${n.id}`, { pool_id: pool });
    const people = [];
    for (let i = 0; i < 4; i++) people.push(await w.contact());
    const c = await w.campaign({ audience: { contact_ids: people.map((p) => p.id) }, pool_id: pool });
    await w.api("POST", `/v1/campaigns/${c.id}/launch`);
    const stats = await eventually(
      async () => (await w.api("GET", `/v1/campaigns/${c.id}`)).body.campaign.stats,
      (st) => st.delivered === 2 && st.deferred === 2,
    );
    expect(stats).toMatchObject({ recipients: 4, sent: 2, deferred: 2 });
    const deferred = (await w.api("GET", `/v1/campaigns/${c.id}/recipients?outcome=deferred`)).body
      .recipients;
    expect(deferred.map((r: Json) => r.reason)).toEqual(["daily_limit", "daily_limit"]);
    await Bun.sleep(300);
    expect(await w.outbox()).toHaveLength(2);
    expect((await w.api("GET", `/v1/numbers/${n.id}`)).body.number.sent_today).toBe(2);
  });

  it("a send held by daily_limit waits for the first allowed minute after the cap resets, not midnight", async () => {
    const w = await workspace();
    const n = await w.number({ daily_limit: 1 }); // a 212 number: New York's day
    const zone = "America/New_York";
    const local = (ms: number) =>
      Object.fromEntries(
        new Intl.DateTimeFormat("en-US", {
          timeZone: zone,
          hourCycle: "h23",
          year: "numeric",
          month: "2-digit",
          day: "2-digit",
          hour: "2-digit",
          minute: "2-digit",
        })
          .formatToParts(new Date(ms))
          .map((part) => [part.type, part.value]),
      );
    // Planned at noon in New York on a coming day (the preview plans a scheduled campaign at its send_at).
    let noon = Date.now() + 36 * 3_600_000;
    noon -= noon % 60_000;
    const at = local(noon);
    noon += ((12 - Number(at.hour)) * 60 - Number(at.minute)) * 60_000;
    const people = [await w.contact({ timezone: zone }), await w.contact({ timezone: zone })];
    const c = await w.campaign({
      audience: { contact_ids: people.map((p) => p.id) },
      from: n.number,
      send_at: new Date(noon).toISOString(),
    });
    const planned = (await w.api("GET", `/v1/campaigns/${c.id}/preview`)).body.preview.contacts as Json[];
    expect(planned.map((p) => p.outcome).sort()).toEqual(["defer", "send"]);
    const held = planned.find((p) => p.outcome === "defer") as Json;
    expect(held.reason).toBe("daily_limit");
    // The cap resets at New York's midnight, inside the 21:00–08:00 quiet hours: it goes at 08:00.
    const sendAt = Date.parse(held.send_at);
    expect(local(sendAt)).toMatchObject({ hour: "08", minute: "00" });
    expect(sendAt - noon).toBeGreaterThan(18 * 3_600_000);
    expect(sendAt - noon).toBeLessThan(22 * 3_600_000);
  });

  it("refuses an empty audience (422, draft unchanged), and wrong states (409)", async () => {
    const w = await workspace();
    await w.number();
    const emptyList = await w.list([]);
    const c = await w.campaign({ audience: { list_ids: [emptyList] } });
    const empty = await w.api("POST", `/v1/campaigns/${c.id}/launch`);
    expect(empty.status).toBe(422);
    expect(empty.body.error).toBe("audience is empty: no contact is in its lists, segments or contact_ids");
    expect((await w.api("GET", `/v1/campaigns/${c.id}`)).body.campaign.status).toBe("draft");
    expect((await w.api("POST", `/v1/campaigns/${c.id}/pause`)).body).toEqual({
      ok: false,
      error: "Campaign is draft: only an active campaign can be paused",
    });
    expect((await w.api("POST", `/v1/campaigns/${c.id}/resume`)).status).toBe(409);
    const canceled = await w.api("POST", `/v1/campaigns/${c.id}/cancel`);
    expect(canceled.body.campaign.status).toBe("canceled");
    expect((await w.api("POST", `/v1/campaigns/${c.id}/launch`)).body).toEqual({
      ok: false,
      error: "Campaign is canceled: only a draft can be launched",
    });
    expect((await w.api("POST", `/v1/campaigns/${c.id}/cancel`)).body.error).toBe(
      "Campaign is canceled: only a draft, scheduled, active or paused campaign can be canceled",
    );
    expect((await w.api("PATCH", `/v1/campaigns/${c.id}`, { name: "x" })).status).toBe(409);
    // A body naming ids that do not exist is refused as such first (422 before 409, API.md §1).
    const unknown = "01936f8e-7c1a-7a3b-9f00-2d5e8c1b4a77";
    for (const [body, error] of [
      [{ audience: { list_ids: [unknown] } }, "audience.list_ids[0] does not exist"],
      [{ offer_id: unknown }, "offer_id does not exist"],
      [{ pool_id: unknown }, "pool_id does not exist"],
    ] as const)
      expect((await w.api("PATCH", `/v1/campaigns/${c.id}`, body)).body).toEqual({ ok: false, error });
    expect((await w.api("DELETE", `/v1/campaigns/${c.id}`)).body.error).toBe(
      "Campaign is canceled: only a draft can be deleted",
    );
  });

  it("names the state in every action's 409: launch, pause, resume, cancel, edit and delete of a completed campaign, and the others", async () => {
    const w = await workspace();
    await w.number();
    const person = await w.contact();
    const completed = await w.campaign({ name: "Done", audience: { contact_ids: [person.id] } });
    await w.api("POST", `/v1/campaigns/${completed.id}/launch`);
    await eventually(
      async () => (await w.api("GET", `/v1/campaigns/${completed.id}`)).body.campaign.status,
      (status) => status === "completed",
    );
    const draft = await w.campaign({ name: "Draft", audience: { contact_ids: [person.id] } });
    const scheduled = await w.campaign({
      name: "Later",
      audience: { contact_ids: [person.id] },
      send_at: new Date(Date.now() + 86_400_000).toISOString(),
    });
    expect((await w.api("POST", `/v1/campaigns/${scheduled.id}/launch`)).body.campaign.status).toBe(
      "scheduled",
    );
    const cases: [string, string, string, unknown, string][] = [
      ["launch", completed.id, "POST", "/launch", "Campaign is completed: only a draft can be launched"],
      [
        "pause",
        completed.id,
        "POST",
        "/pause",
        "Campaign is completed: only an active campaign can be paused",
      ],
      [
        "resume",
        completed.id,
        "POST",
        "/resume",
        "Campaign is completed: only a paused campaign can be resumed",
      ],
      [
        "cancel",
        completed.id,
        "POST",
        "/cancel",
        "Campaign is completed: only a draft, scheduled, active or paused campaign can be canceled",
      ],
      [
        "edit",
        completed.id,
        "PATCH",
        "",
        "Campaign is completed: only a draft or scheduled campaign can be changed",
      ],
      ["delete", completed.id, "DELETE", "", "Campaign is completed: only a draft can be deleted"],
      [
        "resume a draft",
        draft.id,
        "POST",
        "/resume",
        "Campaign is draft: only a paused campaign can be resumed",
      ],
      [
        "launch a scheduled one",
        scheduled.id,
        "POST",
        "/launch",
        "Campaign is scheduled: only a draft can be launched",
      ],
      [
        "pause a scheduled one",
        scheduled.id,
        "POST",
        "/pause",
        "Campaign is scheduled: only an active campaign can be paused",
      ],
      [
        "delete a scheduled one",
        scheduled.id,
        "DELETE",
        "",
        "Campaign is scheduled: only a draft can be deleted",
      ],
    ];
    for (const [action, id, method, suffix, error] of cases) {
      const r = await w.api(
        method,
        `/v1/campaigns/${id}${suffix}`,
        method === "PATCH" ? { name: "x" } : undefined,
      );
      expect({ action, status: r.status, body: r.body }).toEqual({
        action,
        status: 409,
        body: { ok: false, error },
      });
    }
  });

  it("pauses, resumes and cancels: throttle_per_minute holds hand-offs, cancel stops for good", async () => {
    const w = await workspace();
    await w.number();
    const people = [];
    for (let i = 0; i < 3; i++) people.push(await w.contact());
    const c = await w.campaign({
      audience: { contact_ids: people.map((p) => p.id) },
      throttle_per_minute: 1,
    });
    await w.api("POST", `/v1/campaigns/${c.id}/launch`);
    await eventually(
      async () => (await w.outbox()).length,
      (n) => n === 1,
    );
    expect((await w.api("POST", `/v1/campaigns/${c.id}/pause`)).body.campaign.status).toBe("paused");
    expect((await w.api("POST", `/v1/campaigns/${c.id}/launch`)).status).toBe(409);
    expect((await w.api("POST", `/v1/campaigns/${c.id}/resume`)).body.campaign.status).toBe("active");
    expect((await w.api("POST", `/v1/campaigns/${c.id}/cancel`)).body.campaign.status).toBe("canceled");
    await Bun.sleep(400);
    expect(await w.outbox()).toHaveLength(1);
    const stats = (await w.api("GET", `/v1/campaigns/${c.id}`)).body.campaign.stats;
    expect(stats).toMatchObject({ recipients: 3, sent: 1, queued: 2 });
  });

  it("previews again at once after a setting, the audience or the suppression list changes", async () => {
    const w = await workspace();
    await w.number();
    const a = await w.contact({ first_name: "A" });
    // Virginia: hours only (8–21, local noon here), no Sunday or holiday rule, so both are
    // sendable whatever the day this runs on (Louisiana's Sundays deferred this one on a Sunday).
    const b = await w.contact({
      first_name: "B",
      phone_number: `+1804555${String(phoneSeq++).padStart(4, "0")}`,
    });
    const c = await w.campaign({ audience: { contact_ids: [a.id, b.id] } });
    const preview = async () => (await w.api("GET", `/v1/campaigns/${c.id}/preview`)).body.preview as Json;
    expect(await preview()).toMatchObject({ recipients: 2, sendable: 2, skipped: {} });
    await w.api("PATCH", "/v1/settings", { paused_states: ["VA"] });
    expect(await preview()).toMatchObject({ sendable: 1, skipped: { state_paused: 1 } });
    await w.api("POST", "/v1/suppression", { phone_number: a.phone_number, reason: "manual" });
    expect(await preview()).toMatchObject({ sendable: 0, skipped: { state_paused: 1, suppressed: 1 } });
    await w.api("PATCH", `/v1/contacts/${b.id}`, { opted_in: false });
    expect(await preview()).toMatchObject({ sendable: 0, skipped: { opted_out: 1, suppressed: 1 } });
  });

  it("counts the totals by class and the exceptions one by one: they equal the outcomes of every contact on the page", async () => {
    const w = await workspace();
    await w.number();
    const seq = () => String(phoneSeq++).padStart(4, "0");
    const people = [
      // One class (same zone, area and opted_in) with a suppressed, an opted-out-by-keyword and a
      // recently messaged member among plain ones.
      ...(await Promise.all([1, 2, 3, 4, 5].map(() => w.contact({ phone_number: `+1415555${seq()}` })))),
      await w.contact({ phone_number: `+1415555${seq()}`, opted_in: false }),
      await w.contact({ phone_number: `+1415555${seq()}`, timezone: NIGHT }),
      await w.contact({ phone_number: `+1305555${seq()}` }),
      await w.contact({ phone_number: `+1305555${seq()}` }),
      await w.contact({ phone_number: `+1504555${seq()}` }),
      await w.contact({ phone_number: `+1604555${seq()}` }),
      await w.contact({ phone_number: "+442079401260" }),
      await w.contact({ phone_number: "+33140125678" }),
    ];
    await w.api("POST", "/v1/suppression", { phone_number: people[0].phone_number, reason: "complaint" });
    await w.api("POST", "/v1/suppression", { phone_number: people[1].phone_number, reason: "opt_out" });
    const earlier = await w.campaign({
      name: "Earlier",
      audience: { contact_ids: [people[2].id, people[7].id] },
    });
    await w.api("POST", `/v1/campaigns/${earlier.id}/launch`);
    await eventually(
      async () => (await w.api("GET", `/v1/campaigns/${earlier.id}`)).body.campaign.status,
      (status) => status === "completed",
    );
    await w.api("PATCH", "/v1/settings", { frequency_cap: { max_messages: 1 }, paused_states: ["LA"] });
    const c = await w.campaign({ audience: { contact_ids: people.map((p) => p.id) } });

    const preview = (await w.api("GET", `/v1/campaigns/${c.id}/preview?limit=100`)).body.preview;
    expect(preview.contacts).toHaveLength(people.length);
    const tally = { sendable: 0, deferred: 0, skipped: {} as Record<string, number> };
    for (const p of preview.contacts as Json[]) {
      if (p.outcome === "send") tally.sendable++;
      else if (p.outcome === "defer") tally.deferred++;
      else tally.skipped[p.reason] = (tally.skipped[p.reason] ?? 0) + 1;
    }
    expect({ sendable: preview.sendable, deferred: preview.deferred, skipped: preview.skipped }).toEqual(
      tally,
    );
    expect(preview.recipients).toBe(people.length);
    // The recent send caps the Florida contact (a capped state), not the California one.
    expect(tally.skipped).toEqual({ suppressed: 1, opted_out: 2, frequency_cap: 1, state_paused: 1 });
    expect(tally.deferred).toBe(1);
  });

  it("cancel fails the waiting message of a deferred recipient (campaign_canceled); it never goes", async () => {
    const w = await workspace();
    await w.number();
    const night = await w.contact({ first_name: "Nia", timezone: NIGHT });
    const c = await w.campaign({ audience: { contact_ids: [night.id] } });
    await w.api("POST", `/v1/campaigns/${c.id}/launch`);
    const [row] = await eventually(
      async () => (await w.api("GET", `/v1/campaigns/${c.id}/recipients`)).body.recipients as Json[],
      (rows) => rows[0]?.outcome === "deferred",
    );
    expect((await w.api("GET", `/v1/messages/${row.message_id}`)).body.message.status).toBe("QUEUED");
    await w.api("POST", `/v1/campaigns/${c.id}/cancel`);
    expect((await w.api("GET", `/v1/messages/${row.message_id}`)).body.message).toMatchObject({
      status: "FAILED",
      error_code: "campaign_canceled",
    });
    // Its recipient follows the message, in the list and in the stats.
    expect((await w.api("GET", `/v1/campaigns/${c.id}/recipients`)).body.recipients[0]).toMatchObject({
      outcome: "failed",
      reason: "campaign_canceled",
      send_at: null,
      message_id: row.message_id,
    });
    expect((await w.api("GET", `/v1/campaigns/${c.id}`)).body.campaign.stats).toMatchObject({
      deferred: 0,
      failed: 1,
    });
    expect(await w.outbox()).toHaveLength(0);
  });

  it("schedules a campaign whose send_at is in the future and starts it then", async () => {
    const w = await workspace();
    await w.number();
    const person = await w.contact();
    const c = await w.campaign({
      audience: { contact_ids: [person.id] },
      send_at: new Date(Date.now() + 1500).toISOString(),
    });
    const launched = await w.api("POST", `/v1/campaigns/${c.id}/launch`);
    expect(launched.body.campaign.status).toBe("scheduled");
    expect((await w.api("PATCH", `/v1/campaigns/${c.id}`, { name: "Later" })).status).toBe(200);
    const done = await eventually(
      async () => (await w.api("GET", `/v1/campaigns/${c.id}`)).body.campaign,
      (x) => x.status === "completed",
    );
    expect(done.name).toBe("Later");
    // Completed means every recipient was handed to the send queue; the send itself follows.
    expect(
      await eventually(
        () => w.outbox(),
        (rows) => rows.length >= 1,
      ),
    ).toHaveLength(1);
  });
});

describe("GET /v1/campaigns/{id}/preview?contact_id=", () => {
  it("plans that contact alone, as it would get the message; none when it is not in the audience", async () => {
    const w = await workspace();
    await w.number();
    const ann = await w.contact({ first_name: "Ann" });
    const bob = await w.contact({ first_name: "Bob" });
    const night = await w.contact({ first_name: "Nia", timezone: NIGHT });
    const outsider = await w.contact({ first_name: "Out" });
    const c = await w.campaign({ audience: { contact_ids: [ann.id, bob.id, night.id] } });
    const preview = async (contactId: string) =>
      (await w.api("GET", `/v1/campaigns/${c.id}/preview?contact_id=${contactId}`)).body.preview as Json;
    const cases: [string, string, Json[]][] = [
      ["the second contact", bob.id, [{ contact_id: bob.id, outcome: "send", body: "Hi Bob" }]],
      ["a night-time contact", night.id, [{ contact_id: night.id, outcome: "defer", reason: "quiet_hours" }]],
      ["a contact outside the audience", outsider.id, []],
    ];
    for (const [name, id, expected] of cases) {
      const answer = await preview(id);
      // The fields the case names, of each entry.
      const got = answer.contacts.map((p: Json, i: number) =>
        Object.fromEntries(Object.keys(expected[i] ?? {}).map((k) => [k, p[k]])),
      );
      expect([name, got, answer.recipients]).toEqual([name, expected, 3]);
    }
  });

  it("answers 404 for another workspace's contact and an unknown id", async () => {
    const w = await workspace();
    const other = await workspace("Other");
    const foreign = await other.contact();
    const c = await w.campaign({ audience: { contact_ids: [(await w.contact()).id] } });
    const cases: [string, string][] = [
      ["another workspace's contact", foreign.id],
      ["an unknown id", "00000000-0000-4000-8000-000000000000"],
      ["not an id", "nope"],
    ];
    for (const [name, id] of cases) {
      const answer = await w.api("GET", `/v1/campaigns/${c.id}/preview?contact_id=${id}`);
      expect([name, answer.status, answer.body.error]).toEqual([name, 404, "Not found"]);
    }
  });
});
