/**
 * Calls end to end through the simulated voice provider and the simulated carrier (API.md §3 Calls,
 * §6.4): one-off agent and `say` calls, every simulated outcome, the thread entry and
 * `call.completed`, bad input, and voice campaigns with their stats and send-time windows.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { and, eq } from "drizzle-orm";
import { jobs } from "../src/db/schema";
import { eventLog } from "./support/event-log";
import { eventually } from "./support/messaging";
import { startTestServer, type TestServer } from "./support/server";
import { zoneAtLocalHour } from "./support/zones";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({}, { SIMULATED_CALL_MS: "60", SIMULATED_DELIVERY_MS: "20" });
});
afterAll(async () => await s.stop());

// biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON answers
type Json = any;

const DAY = zoneAtLocalHour(12);
const FINAL = ["COMPLETED", "BUSY", "NO_ANSWER", "FAILED", "VOICEMAIL"];
let phoneSeq = 3000;
const newPhone = () => `+1415555${String(phoneSeq++).padStart(4, "0")}`;

async function workspace(name = "Calls") {
  const ws = await s.newWorkspace(name);
  const api = async (method: string, path: string, body?: unknown) =>
    await s.api(method, path, body, { key: ws.key });
  let numberSeq = 0;
  const number = async (options: { endsWith?: string } = {}) => {
    const available = await api("GET", "/v1/numbers/available?area_code=415&limit=50");
    const candidates = (available.body.numbers as Json[]).slice(numberSeq);
    for (const candidate of candidates) {
      numberSeq++;
      const wanted = options.endsWith
        ? `${candidate.number.slice(0, -options.endsWith.length)}${options.endsWith}`
        : candidate.number;
      const res = await api("POST", "/v1/numbers", { number: wanted });
      if (res.body.added === 1) return res.body.ordered as Json;
    }
    throw new Error("no number available");
  };
  const voiceAgent = async (extra: Record<string, unknown> = {}) => {
    const res = await api("POST", "/v1/agents", {
      name: "Ava",
      system_prompt: "You call customers of a bakery.",
      channel: "voice",
      voice_id: "sim-ava",
      greeting: "Hi, this is Ava from Corner Bakery.",
      sms: { knowledge: "We are open 7am to 6pm every day. A loaf costs 5 dollars." },
      ...extra,
    });
    expect(res.status).toBe(200);
    return res.body.agent as Json;
  };
  const finished = (id: string) =>
    eventually(
      async () => await api("GET", `/v1/calls/${id}`),
      (res) => FINAL.includes(res.body.call?.status),
    ).then((res) => res.body.call as Json);
  return { ...ws, api, number, voiceAgent, finished };
}

const log = eventLog(() => s);
const callEvents = (workspaceId: string) => log.of("call.completed", workspaceId);

describe("POST /v1/calls", () => {
  it("places a say call through the carrier: QUEUED, then COMPLETED with the text, one thread entry and call.completed", async () => {
    const w = await workspace();
    await log.watch(w.key);
    const from = await w.number();
    const to = newPhone();
    const res = await w.api("POST", "/v1/calls", { to, say: "Your table is ready." });
    expect(res.status).toBe(200);
    expect(res.body.call).toMatchObject({
      status: "QUEUED",
      direction: "outbound",
      from: from.number,
      to,
      say: "Your table is ready.",
      agent_id: null,
      transcript: [],
    });
    const call = await w.finished(res.body.call.id);
    expect(call.status).toBe("COMPLETED");
    expect(call.transcript.map((t: Json) => [t.role, t.text])).toEqual([["agent", "Your table is ready."]]);
    expect(call.ended_at).not.toBeNull();
    expect(call.duration_sec).toBeGreaterThan(0);

    const conversation = (await w.api("GET", `/v1/conversations/${call.conversation_id}`)).body.conversation;
    const entries = conversation.messages.filter((m: Json) => m.call_id === call.id);
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ sender: "system", status: "CALL", body: call.summary });
    // The thread entry is not an SMS: GET /v1/messages does not list it.
    const listed = await w.api("GET", `/v1/messages?conversation_id=${call.conversation_id}`);
    expect(listed.body.total).toBe(0);
    expect((await w.api("GET", `/v1/messages/${entries[0].id}`)).status).toBe(404);

    const completed = await callEvents(w.workspaceId);
    expect(completed).toHaveLength(1);
    expect((completed[0].data as Json).id).toBe(call.id);
    expect((completed[0].data as Json).status).toBe("COMPLETED");

    const ledger = (await w.api("GET", "/v1/sandbox/calls")).body;
    expect(ledger.total).toBe(1);
    expect(ledger.calls[0]).toMatchObject({ call_id: call.id, line: "carrier", status: "COMPLETED" });
  });

  it("places an agent call through the voice provider with a transcript from the agent's greeting and knowledge", async () => {
    const w = await workspace();
    await w.number();
    const agent = await w.voiceAgent();
    const to = newPhone();
    const res = await w.api("POST", "/v1/calls", { to, agent_id: agent.id });
    expect(res.status).toBe(200);
    const call = await w.finished(res.body.call.id);
    expect(call.status).toBe("COMPLETED");
    expect(call.agent_id).toBe(agent.id);
    expect(call.transcript[0]).toMatchObject({ role: "agent", text: "Hi, this is Ava from Corner Bakery." });
    expect(call.transcript.some((t: Json) => t.role === "contact")).toBe(true);
    expect(call.summary).toContain("The agent spoke with the contact");
    expect(["positive", "neutral", "negative"]).toContain(call.sentiment);
    expect(call.recording_url).toMatch(/^https:\/\//);
    expect(call.ended_reason).toBe("user_hangup");
    // The lines fall within the call, which lasts as long as its duration says.
    const [started, ended] = [Date.parse(call.started_at), Date.parse(call.ended_at)];
    for (const line of call.transcript) expect(Date.parse(line.at)).toBeWithin(started, ended + 1);
    expect(call.duration_sec).toBe(Math.max(1, Math.round((ended - started) / 1000)));

    const conversation = (await w.api("GET", `/v1/conversations/${call.conversation_id}`)).body.conversation;
    const entry = conversation.messages.find((m: Json) => m.call_id === call.id);
    expect(entry).toMatchObject({ sender: "agent", status: "CALL", body: call.summary });
    const ledger = (await w.api("GET", "/v1/sandbox/calls")).body.calls;
    expect(ledger.map((c: Json) => [c.call_id, c.line])).toEqual([[call.id, "voice"]]);
    // The contact was created by the call.
    expect((await w.api("GET", `/v1/contacts/${call.contact_id}`)).body.contact.phone_number).toBe(to);
  });

  it("ends with each simulated outcome by the number called", async () => {
    const w = await workspace();
    await log.watch(w.key);
    await w.number();
    const agent = await w.voiceAgent({ voice: { voicemail_message: "Sorry we missed you, call us back." } });
    const cases: [string, string, string][] = [
      ["+15005550004", "BUSY", "Busy"],
      ["+15005550009", "NO_ANSWER", "No answer"],
      ["+15005550007", "VOICEMAIL", "Voicemail left."],
      ["+15005550001", "FAILED", "Call failed"],
    ];
    for (const [to, status, entryBody] of cases) {
      const res = await w.api("POST", "/v1/calls", { to, agent_id: agent.id });
      expect(res.status).toBe(200);
      const call = await w.finished(res.body.call.id);
      expect(call.status).toBe(status);
      if (status === "VOICEMAIL")
        expect(call.transcript.map((t: Json) => t.text)).toEqual(["Sorry we missed you, call us back."]);
      if (status === "FAILED") expect(call.ended_reason).toBe("invalid_number");
      const conversation = (await w.api("GET", `/v1/conversations/${call.conversation_id}`)).body
        .conversation;
      const entries = conversation.messages.filter((m: Json) => m.call_id === call.id);
      expect(entries.map((m: Json) => m.body)).toEqual([entryBody]);
    }
    expect((await callEvents(w.workspaceId)).map((e) => (e.data as Json).status).sort()).toEqual(
      ["BUSY", "FAILED", "NO_ANSWER", "VOICEMAIL"].sort(),
    );
    // The refused call never reached the line; the others did once each.
    expect((await w.api("GET", "/v1/sandbox/calls")).body.total).toBe(3);
  });

  it("keeps a call QUEUED while the provider is down (it is retried, never failed at once)", async () => {
    const w = await workspace();
    await w.number();
    const res = await w.api("POST", "/v1/calls", { to: "+15005550003", say: "Hello" });
    expect(res.status).toBe(200);
    await Bun.sleep(300);
    const call = (await w.api("GET", `/v1/calls/${res.body.call.id}`)).body.call;
    expect(call.status).toBe("QUEUED");
    expect((await w.api("GET", "/v1/sandbox/calls")).body.total).toBe(0);
  });

  it("fails a queued call whose contact opted out before it was placed", async () => {
    const w = await workspace();
    const from = await w.number();
    // Held by the outage number until we opt the contact out, then placed: the check is at placement.
    const to = newPhone();
    const res = await w.api("POST", "/v1/calls", { to, say: "Hello" });
    const contactId = res.body.call.contact_id;
    await w.api("PATCH", `/v1/contacts/${contactId}`, { opted_in: false });
    const call = await w.finished(res.body.call.id);
    // Either it was placed before the opt-out (COMPLETED) or refused after it (FAILED opted_out):
    // never placed after the opt-out.
    const ledger = (await w.api("GET", "/v1/sandbox/calls")).body.total;
    if (call.status === "FAILED") {
      expect(call.ended_reason).toBe("opted_out");
      expect(ledger).toBe(0);
    } else expect(ledger).toBe(1);
    expect(from.number).toBe(call.from);
  });

  const bad: [string, Record<string, unknown>, string][] = [
    ["neither agent_id nor say", {}, "agent_id or say is required"],
    [
      "both agent_id and say",
      { agent_id: "x", say: "Hi" },
      "agent_id and say cannot both be given: choose one",
    ],
    ["an empty say", { say: "   " }, "say must not be empty"],
    ["a say over 2,000 characters", { say: "a".repeat(2001) }, "say is too long (max 2000)"],
    ["an unknown agent", { agent_id: "01936f8e-7c1a-7a3b-9f00-2d5e8c1b4a77" }, "agent_id does not exist"],
    ["a bad to", { to: "12", say: "Hi" }, "to must be a valid phone number"],
    ["a bad from", { from: "nope", say: "Hi" }, "from must be a valid phone number"],
    [
      "a from the workspace does not own",
      { from: "+12125550199", say: "Hi" },
      "from is not a number of this workspace",
    ],
  ];
  for (const [what, body, error] of bad) {
    it(`answers 422 '${error}' for ${what}, recording nothing`, async () => {
      const w = await workspace();
      await w.number();
      const res = await w.api("POST", "/v1/calls", { to: newPhone(), ...body });
      expect(res.status).toBe(422);
      expect(res.body).toEqual({ ok: false, error });
      expect((await w.api("GET", "/v1/calls")).body.total).toBe(0);
      expect((await w.api("GET", "/v1/contacts")).body.total).toBe(0);
    });
  }

  it("answers 422 for an SMS agent, another workspace's agent, and a paused agent", async () => {
    const w = await workspace();
    await w.number();
    const sms = await w.api("POST", "/v1/agents", { name: "Sam", system_prompt: "x" });
    const smsCall = await w.api("POST", "/v1/calls", { to: newPhone(), agent_id: sms.body.agent.id });
    expect(smsCall.body).toEqual({
      ok: false,
      error: "agent_id must be a voice agent (this one is an SMS agent)",
    });
    const other = await workspace("Other");
    const foreign = await other.voiceAgent();
    const foreignCall = await w.api("POST", "/v1/calls", { to: newPhone(), agent_id: foreign.id });
    expect(foreignCall.body).toEqual({ ok: false, error: "agent_id does not exist" });
    const paused = await w.voiceAgent({ status: "paused" });
    const pausedCall = await w.api("POST", "/v1/calls", { to: newPhone(), agent_id: paused.id });
    expect(pausedCall.body).toEqual({ ok: false, error: "agent_id is paused" });
    expect((await w.api("GET", "/v1/calls")).body.total).toBe(0);
  });

  it("answers 422 for a from without voice capability and for a workspace without numbers", async () => {
    const w = await workspace();
    const none = await w.api("POST", "/v1/calls", { to: newPhone(), say: "Hi" });
    expect(none.body).toEqual({ ok: false, error: "No sending number: order one with POST /v1/numbers" });
    const smsOnly = await w.number({ endsWith: "9999" });
    const res = await w.api("POST", "/v1/calls", { to: newPhone(), from: smsOnly.number, say: "Hi" });
    expect(res.status).toBe(422);
    expect(res.body.error).toBe("from cannot place calls: the number has no voice capability");
    expect((await w.api("GET", "/v1/calls")).body.total).toBe(0);
  });

  it("answers 422 for a suppressed or opted-out number, like a message", async () => {
    const w = await workspace();
    await w.number();
    const suppressed = newPhone();
    await w.api("POST", "/v1/suppression", { phone_number: suppressed, reason: "manual" });
    const a = await w.api("POST", "/v1/calls", { to: suppressed, say: "Hi" });
    expect(a.body).toEqual({ ok: false, error: "Recipient is suppressed" });
    const contact = await w.api("POST", "/v1/contacts", { phone_number: newPhone(), opted_in: false });
    const b = await w.api("POST", "/v1/calls", { to: contact.body.contact.phone_number, say: "Hi" });
    expect(b.body).toEqual({ ok: false, error: "Recipient has opted out" });
    expect((await w.api("GET", "/v1/calls")).body.total).toBe(0);
  });
});

describe("GET /v1/analytics/overview calls", () => {
  it("counts the calls the provider took as placed and the answered ones as completed", async () => {
    const w = await workspace("Call analytics");
    await w.number();
    const empty = await w.api("GET", "/v1/analytics/overview");
    expect(empty.body.overview.calls).toEqual({ placed: 0, completed: 0 });
    const ids: string[] = [];
    // Answered, busy, and refused by the provider at placement (never placed).
    for (const to of [newPhone(), newPhone(), "+15005550004", "+15005550001"]) {
      const res = await w.api("POST", "/v1/calls", { to, say: "Hello" });
      expect(res.status).toBe(200);
      ids.push(res.body.call.id);
    }
    const ended = await Promise.all(ids.map((id) => w.finished(id)));
    expect(ended.map((call) => call.status)).toEqual(["COMPLETED", "COMPLETED", "BUSY", "FAILED"]);
    const r = await w.api("GET", "/v1/analytics/overview");
    expect(r.body.overview.calls).toEqual({ placed: 3, completed: 2 });
    const before = new Date(Date.now() - 86_400_000).toISOString();
    const earlier = await w.api("GET", `/v1/analytics/overview?from=${before}&to=${before}`);
    expect(earlier.body.overview.calls).toEqual({ placed: 0, completed: 0 });
  });
});

describe("GET /v1/calls", () => {
  it("lists newest first with filters, and never shows another workspace's calls", async () => {
    const w = await workspace();
    await w.number();
    const agent = await w.voiceAgent();
    const first = (await w.api("POST", "/v1/calls", { to: "+15005550004", say: "One" })).body.call;
    const second = (await w.api("POST", "/v1/calls", { to: newPhone(), agent_id: agent.id })).body.call;
    await w.finished(first.id);
    await w.finished(second.id);
    const all = (await w.api("GET", "/v1/calls")).body;
    expect(all.calls.map((c: Json) => c.id)).toEqual([second.id, first.id]);
    expect(all.total).toBe(2);
    expect((await w.api("GET", "/v1/calls?status=BUSY")).body.calls.map((c: Json) => c.id)).toEqual([
      first.id,
    ]);
    expect((await w.api("GET", `/v1/calls?agent_id=${agent.id}`)).body.calls.map((c: Json) => c.id)).toEqual([
      second.id,
    ]);
    expect((await w.api("GET", `/v1/calls?contact_id=${first.contact_id}`)).body.total).toBe(1);
    expect((await w.api("GET", "/v1/calls?contact_id=nope")).body.total).toBe(0);
    const badStatus = await w.api("GET", "/v1/calls?status=DONE");
    expect(badStatus.status).toBe(422);
    expect(badStatus.body.error).toStartWith("status must be one of QUEUED, RINGING");

    const other = await workspace("Other");
    expect((await other.api("GET", "/v1/calls")).body.total).toBe(0);
    expect((await other.api("GET", `/v1/calls/${first.id}`)).status).toBe(404);
    expect((await w.api("GET", "/v1/calls/not-an-id")).status).toBe(404);
  });
});

describe("voice agents", () => {
  it("keep the seed's whole voice object and show the provider sync state", async () => {
    const w = await workspace();
    const agent = await w.voiceAgent({ voice: { speed: 1.2, voicemail_message: "Call us back." } });
    expect(agent.voice).toMatchObject({
      voice_id: "sim-ava",
      speed: 1.2,
      voicemail_message: "Call us back.",
    });
    expect(agent.voice_sync).toMatchObject({
      provider: "simulated",
      llm_id: `sim_llm_${agent.id}`,
      agent_id: `sim_agent_${agent.id}`,
    });
    const patched = await w.api("PATCH", `/v1/agents/${agent.id}`, { voice: { volume: 1.5 } });
    expect(patched.body.agent.voice).toMatchObject({ speed: 1.2, volume: 1.5 });
    expect(patched.body.agent.voice_sync.agent_id).toBe(`sim_agent_${agent.id}`);
    const sms = await w.api("POST", "/v1/agents", { name: "Sam", system_prompt: "x" });
    expect(sms.body.agent.voice_sync).toBeNull();
  });
});

describe("voice campaigns", () => {
  async function audience(w: Awaited<ReturnType<typeof workspace>>, phones: string[], zone = DAY) {
    const ids: string[] = [];
    for (const phone of phones) {
      const res = await w.api("POST", "/v1/contacts", { phone_number: phone, timezone: zone });
      ids.push(res.body.contact.id);
    }
    return ids;
  }

  it("launches, places every call once, settles each recipient with its call and counts stats.calls", async () => {
    const w = await workspace();
    await w.number();
    // The magic numbers' 500 "area code" has no state: with state rules on they would wait (fail closed).
    expect((await w.api("PATCH", "/v1/settings", { state_rules: false })).status).toBe(200);
    const phones = [newPhone(), newPhone(), newPhone(), "+15005550004", "+15005550009"];
    const contactIds = await audience(w, phones);
    const optedOut = (await w.api("POST", "/v1/contacts", { phone_number: newPhone(), opted_in: false })).body
      .contact.id;
    const created = await w.api("POST", "/v1/campaigns", {
      name: "Reminder calls",
      campaign_type: "voice",
      say: "Your appointment is tomorrow.",
      audience: { contact_ids: [...contactIds, optedOut] },
      quiet_hours: { enabled: false },
      throttle_per_minute: 600,
    });
    expect(created.status).toBe(200);
    const launched = await w.api("POST", `/v1/campaigns/${created.body.campaign.id}/launch`);
    expect(launched.status).toBe(200);
    const id = created.body.campaign.id;
    const done = await eventually(
      () => w.api("GET", `/v1/campaigns/${id}`),
      (res) =>
        res.body.campaign.status === "completed" &&
        res.body.campaign.stats.calls.placed === 5 &&
        res.body.campaign.stats.delivered + res.body.campaign.stats.failed === 5,
    );
    const stats = done.body.campaign.stats;
    expect(stats).toMatchObject({ recipients: 6, suppressed: 1, sent: 5, delivered: 3, failed: 2 });
    expect(stats.calls).toEqual({ placed: 5, answered: 3, voicemail: 0, no_answer: 1, busy: 1, failed: 0 });
    const calls = (await w.api("GET", `/v1/calls?campaign_id=${id}`)).body;
    expect(calls.total).toBe(5);
    expect(new Set(calls.calls.map((c: Json) => c.to)).size).toBe(5);
    const recipients = (await w.api("GET", `/v1/campaigns/${id}/recipients?limit=50`)).body.recipients;
    const byCall = new Map(calls.calls.map((c: Json) => [c.id, c]));
    for (const r of recipients) {
      if (r.contact_id === optedOut) {
        expect(r).toMatchObject({ outcome: "skipped", call_id: null });
        continue;
      }
      expect(byCall.has(r.call_id)).toBe(true);
      expect(r.outcome).toBe(
        ["BUSY", "NO_ANSWER"].includes((byCall.get(r.call_id) as Json).status) ? "failed" : "delivered",
      );
    }
    const ledger = (await w.api("GET", "/v1/sandbox/calls?limit=50")).body;
    expect(ledger.total).toBe(5);
  });

  it("defers calls inside the recipient's quiet hours (preview says why) and places none of them", async () => {
    const w = await workspace();
    await w.number();
    const night = zoneAtLocalHour(3);
    const contactIds = await audience(w, [newPhone(), newPhone()], night);
    const created = await w.api("POST", "/v1/campaigns", {
      name: "Night calls",
      campaign_type: "voice",
      say: "Hello",
      audience: { contact_ids: contactIds },
    });
    const id = created.body.campaign.id;
    const preview = await w.api("GET", `/v1/campaigns/${id}/preview`);
    expect(preview.status).toBe(200);
    expect(preview.body.preview).toMatchObject({ recipients: 2, sendable: 0, deferred: 2 });
    expect(preview.body.preview.contacts.map((r: Json) => [r.outcome, r.reason])).toEqual([
      ["defer", "quiet_hours"],
      ["defer", "quiet_hours"],
    ]);
    await w.api("POST", `/v1/campaigns/${id}/launch`);
    const after = await eventually(
      () => w.api("GET", `/v1/campaigns/${id}`),
      (res) => res.body.campaign.stats.deferred === 2,
    );
    expect(after.body.campaign.stats.deferred).toBe(2);
    await Bun.sleep(200);
    expect((await w.api("GET", `/v1/calls?campaign_id=${id}`)).body.total).toBe(0);
    expect((await w.api("GET", "/v1/sandbox/calls")).body.total).toBe(0);
  });

  it("counts a campaign's calls toward the frequency cap of a later SMS campaign; one-off calls are not counted", async () => {
    const w = await workspace();
    await w.number();
    const capped = {
      frequency_cap: { enabled: true, max_messages: 1, window_hours: 24, apply_to_all: true },
    };
    expect((await w.api("PATCH", "/v1/settings", capped)).status).toBe(200);
    const [called, oneOff, fresh] = await audience(w, [newPhone(), newPhone(), newPhone()]);
    const contactPhone = async (id: string) =>
      (await w.api("GET", `/v1/contacts/${id}`)).body.contact.phone_number as string;
    const oneOffCall = await w.api("POST", "/v1/calls", {
      to: await contactPhone(oneOff),
      say: "Your order shipped.",
    });
    expect(oneOffCall.status).toBe(200);
    const voice = (
      await w.api("POST", "/v1/campaigns", {
        name: "Calls first",
        campaign_type: "voice",
        say: "Our sale starts today.",
        audience: { contact_ids: [called] },
        quiet_hours: { enabled: false },
      })
    ).body.campaign;
    await w.api("POST", `/v1/campaigns/${voice.id}/launch`);
    await eventually(
      () => w.api("GET", `/v1/campaigns/${voice.id}`),
      (res) => res.body.campaign.status === "completed" && res.body.campaign.stats.calls.placed === 1,
    );
    const sms = (
      await w.api("POST", "/v1/campaigns", {
        name: "Then a text",
        message: { body: "The sale ends tonight. Reply STOP to opt out." },
        audience: { contact_ids: [called, oneOff, fresh] },
        quiet_hours: { enabled: false },
      })
    ).body.campaign;
    const preview = (await w.api("GET", `/v1/campaigns/${sms.id}/preview`)).body.preview;
    expect(preview).toMatchObject({ recipients: 3, sendable: 2, skipped: { frequency_cap: 1 } });
    const outcomes = new Map(
      preview.contacts.map((c: Json) => [c.contact_id, [c.outcome, c.reason ?? null]]),
    );
    expect(outcomes.get(called)).toEqual(["skip", "frequency_cap"]);
    expect(outcomes.get(oneOff)).toEqual(["send", null]);
    expect(outcomes.get(fresh)).toEqual(["send", null]);
    // The voice campaign's own calls never count against itself: its preview still sends to the contact.
    const again = (await w.api("GET", `/v1/campaigns/${voice.id}/preview`)).body.preview;
    expect(again.skipped.frequency_cap ?? 0).toBe(0);
  });

  it("asks the send-time rules again when a campaign call's job runs late: night now → the call waits for the window", async () => {
    const w = await workspace();
    await w.number();
    expect((await w.api("PATCH", "/v1/settings", { state_rules: false })).status).toBe(200);
    const [outage] = await audience(w, ["+15005550003"]);
    const created = await w.api("POST", "/v1/campaigns", {
      name: "Late calls",
      campaign_type: "voice",
      say: "Hello",
      audience: { contact_ids: [outage] },
    });
    await w.api("POST", `/v1/campaigns/${created.body.campaign.id}/launch`);
    const { db } = s.server.handle;
    // The provider could not take it: the call stays QUEUED and its job waits to retry.
    const job = await eventually(
      async () =>
        await db
          .select()
          .from(jobs)
          .where(and(eq(jobs.kind, "calls.place"), eq(jobs.workspaceId, w.workspaceId)))
          .get(),
      (row) => row !== undefined && row.attempts > 0 && row.status === "queued",
    );
    if (!job) throw new Error("the call's job was not found");
    const callId = (job.payload as { call_id: string }).call_id;
    // Night where the contact is, and the retry comes due: it is held until the window opens.
    await w.api("PATCH", `/v1/contacts/${outage}`, { timezone: zoneAtLocalHour(3) });
    await db.update(jobs).set({ runAt: Date.now() }).where(eq(jobs.id, job.id)).run();
    const held = await eventually(
      async () =>
        await db
          .select()
          .from(jobs)
          .where(eq(jobs.id, job?.id as string))
          .get(),
      (row) => row !== undefined && row.runAt > Date.now() + 3_600_000,
    );
    expect(held?.status).toBe("queued");
    expect((await w.api("GET", `/v1/calls/${callId}`)).body.call.status).toBe("QUEUED");
  });

  it("refuses a voice campaign with both say and agent_id, an SMS agent, or an SMS-only from", async () => {
    const w = await workspace();
    await w.number();
    const smsOnly = await w.number({ endsWith: "9999" });
    const agent = await w.voiceAgent();
    const sms = (await w.api("POST", "/v1/agents", { name: "Sam", system_prompt: "x" })).body.agent;
    const contactIds = await audience(w, [newPhone()]);
    const base = { name: "V", campaign_type: "voice", audience: { contact_ids: contactIds } };
    const cases: [Record<string, unknown>, string][] = [
      [
        { say: "Hi", agent_id: agent.id },
        "say and agent_id cannot both be set for a voice campaign: choose one",
      ],
      [{ agent_id: sms.id }, "agent_id must be a voice agent"],
      [{ say: "Hi", from: smsOnly.number }, "from cannot place calls: the number has no voice capability"],
      [{ say: "a".repeat(2001) }, "say is too long (max 2000)"],
    ];
    for (const [body, error] of cases) {
      const res = await w.api("POST", "/v1/campaigns", { ...base, ...body });
      expect(res.status).toBe(422);
      expect(res.body.error).toBe(error);
    }
    expect((await w.api("GET", "/v1/campaigns")).body.total).toBe(0);
  });
});
