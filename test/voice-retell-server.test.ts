/**
 * The server with `VOICE=retell` end to end, against a local stand-in for Retell's API (the edge
 * of the world; the adapter's requests are checked against Retell's contract in
 * voice-retell.test.ts): voice agents sync on create and update (503 and nothing written when
 * Retell is down), agent calls are placed with our call id in metadata and stay QUEUED while
 * Retell is down, and `POST /carriers/retell/webhook` is verified (forged, stale and replayed
 * requests get 401 and change nothing; an unknown call is acknowledged).
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { retellSignature } from "../src/voice/retell";
import { eventually, orderNumber } from "./support/messaging";
import { startTestServer, type TestServer } from "./support/server";

// biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON answers
type Json = any;

const API_KEY = "test-api-key";

/** Retell's API as far as the server uses it; `down` makes every answer 503. */
class FakeRetell {
  down = false;
  readonly requests: { path: string; body: Json }[] = [];
  private seq = 0;
  readonly server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch: async (request) => {
      const path = new URL(request.url).pathname;
      const text = await request.text();
      const body = text ? JSON.parse(text) : null;
      this.requests.push({ path, body });
      if (this.down) return new Response("unavailable", { status: 503 });
      if (request.headers.get("authorization") !== `Bearer ${API_KEY}`)
        return new Response("no", { status: 401 });
      if (path === "/list-voices")
        return Response.json([
          {
            voice_id: "11labs-Adrian",
            voice_name: "Adrian",
            provider: "elevenlabs",
            accent: "American",
            gender: "male",
          },
        ]);
      if (path === "/create-retell-llm")
        return Response.json({ llm_id: `llm_${++this.seq}` }, { status: 201 });
      if (path === "/create-agent")
        return Response.json({ agent_id: `agent_${++this.seq}` }, { status: 201 });
      if (path.startsWith("/update-retell-llm/")) return Response.json({ llm_id: path.split("/").pop() });
      if (path.startsWith("/update-agent/")) return Response.json({ agent_id: path.split("/").pop() });
      if (path === "/v2/create-phone-call")
        return Response.json({ call_id: `rc_${++this.seq}`, call_status: "registered" }, { status: 201 });
      if (path === "/v2/list-calls") return Response.json([]);
      return new Response("not found", { status: 404 });
    },
  });
  get url() {
    return `http://127.0.0.1:${this.server.port}`;
  }
  sent(path: string) {
    return this.requests.filter((r) => r.path === path);
  }
}

let retell: FakeRetell;
let s: TestServer;
beforeAll(async () => {
  retell = new FakeRetell();
  s = await startTestServer({}, { VOICE: "retell", RETELL_API_KEY: API_KEY, RETELL_API_BASE: retell.url });
  await orderNumber(s, "+14155550100");
});
afterAll(async () => {
  await s.stop();
  retell.server.stop(true);
});

const agentBody = {
  name: "Adrian",
  system_prompt: "You confirm appointments.",
  channel: "voice",
  voice_id: "11labs-Adrian",
  greeting: "Hi, this is Adrian.",
  voice: { voicemail_message: "Please call us back." },
};

async function webhook(body: unknown, options: { at?: number; key?: string; signature?: string } = {}) {
  const raw = JSON.stringify(body);
  const at = options.at ?? Date.now();
  const signature = options.signature ?? `v=${at},d=${retellSignature(options.key ?? API_KEY, raw, at)}`;
  const res = await fetch(`${s.url}/carriers/retell/webhook`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-retell-signature": signature },
    body: raw,
  });
  return { status: res.status, body: await res.json() };
}

describe("VOICE=retell", () => {
  it("lists Retell's voices and syncs a voice agent on create and update", async () => {
    const voices = await s.api("GET", "/v1/voices");
    expect(voices.body.voices).toEqual([
      {
        voice_id: "11labs-Adrian",
        name: "Adrian",
        provider: "elevenlabs",
        language: "American",
        gender: "male",
      },
    ]);
    const created = await s.api("POST", "/v1/agents", agentBody);
    expect(created.status).toBe(200);
    const agent = created.body.agent;
    expect(agent.voice_sync).toMatchObject({ provider: "retell" });
    const llm = retell.sent("/create-retell-llm").at(-1)?.body;
    expect(llm.begin_message).toBe("Hi, this is Adrian.");
    expect(llm.general_prompt).toContain("You confirm appointments.");
    const remote = retell.sent("/create-agent").at(-1)?.body;
    expect(remote).toMatchObject({
      voice_id: "11labs-Adrian",
      response_engine: { type: "retell-llm", llm_id: agent.voice_sync.llm_id },
      voicemail_option: { action: { type: "static_text", text: "Please call us back." } },
    });
    const patched = await s.api("PATCH", `/v1/agents/${agent.id}`, { voice: { speed: 1.5 } });
    expect(patched.status).toBe(200);
    expect(retell.sent(`/update-agent/${agent.voice_sync.agent_id}`).at(-1)?.body.voice_speed).toBe(1.5);
    expect(patched.body.agent.voice_sync.agent_id).toBe(agent.voice_sync.agent_id);
    const unknown = await s.api("POST", "/v1/agents", { ...agentBody, voice_id: "sim-ava" });
    expect(unknown.body).toEqual({ ok: false, error: "voice_id is not a known voice" });
  });

  it("answers 503 and writes nothing when Retell is down at sync", async () => {
    const before = (await s.api("GET", "/v1/agents")).body.total;
    retell.down = true;
    try {
      const res = await s.api("POST", "/v1/agents", agentBody);
      expect(res.status).toBe(503);
      expect(res.body).toEqual({ ok: false, error: "Voice provider unavailable: try again later" });
      // The voices catalogue was fetched before: it is kept (10 minutes) and still answers.
      expect((await s.api("GET", "/v1/voices")).status).toBe(200);
    } finally {
      retell.down = false;
    }
    expect((await s.api("GET", "/v1/agents")).body.total).toBe(before);
    const agent = (await s.api("POST", "/v1/agents", agentBody)).body.agent;
    retell.down = true;
    try {
      const patch = await s.api("PATCH", `/v1/agents/${agent.id}`, { name: "Renamed" });
      expect(patch.status).toBe(503);
    } finally {
      retell.down = false;
    }
    expect((await s.api("GET", `/v1/agents/${agent.id}`)).body.agent.name).toBe("Adrian");
  });

  it("places an agent call with our id in metadata, then fills it from signed webhooks; forged, stale and replayed ones change nothing", async () => {
    const agent = (await s.api("POST", "/v1/agents", agentBody)).body.agent;
    const created = await s.api("POST", "/v1/calls", { to: "+14155550177", agent_id: agent.id });
    expect(created.status).toBe(200);
    const id = created.body.call.id;
    const ringing = await eventually(
      async () => await s.api("GET", `/v1/calls/${id}`),
      (res) => res.body.call.status === "RINGING",
    );
    expect(ringing.body.call.status).toBe("RINGING");
    const placed = retell.sent("/v2/create-phone-call").at(-1)?.body;
    expect(placed).toMatchObject({
      from_number: "+14155550100",
      to_number: "+14155550177",
      override_agent_id: agent.voice_sync.agent_id,
      metadata: { call_id: id },
    });

    const start = Date.now() - 60_000;
    const ended = {
      event: "call_ended",
      call: {
        call_id: "rc_remote",
        metadata: { call_id: id },
        call_status: "ended",
        start_timestamp: start,
        end_timestamp: start + 42_000,
        duration_ms: 42_000,
        disconnection_reason: "user_hangup",
        recording_url: "https://example.test/rec.wav",
        transcript_object: [
          { role: "agent", content: "Hi, this is Adrian.", words: [] },
          { role: "user", content: "Hello!", words: [] },
        ],
      },
    };
    // Forged (wrong key), stale (6 minutes old), malformed: 401, nothing changes.
    expect((await webhook(ended, { key: "wrong" })).status).toBe(401);
    expect((await webhook(ended, { at: Date.now() - 6 * 60_000 })).status).toBe(401);
    expect((await webhook(ended, { signature: "garbage" })).status).toBe(401);
    expect((await s.api("GET", `/v1/calls/${id}`)).body.call.status).toBe("RINGING");

    const at = Date.now();
    expect(await webhook(ended, { at })).toEqual({ status: 200, body: { ok: true } });
    // The same signed request again is a replay, however its signature header is spelled.
    const digest = retellSignature(API_KEY, JSON.stringify(ended), at);
    for (const signature of [
      `v=${at},d=${digest}`,
      `d=${digest},v=${at}`,
      `V=${at},D=${digest.toUpperCase()}`,
      ` v = ${at} , d = ${digest} `,
      `v=${at};d=${digest}`,
      `v=0${at},d=${digest}`,
      `v=${at},d=${digest},v=${at}`,
    ]) {
      const replayed = await webhook(ended, { at, signature });
      expect({ signature, status: replayed.status }).toEqual({ signature, status: 401 });
    }
    const call = (await s.api("GET", `/v1/calls/${id}`)).body.call;
    expect(call).toMatchObject({
      status: "COMPLETED",
      duration_sec: 42,
      ended_reason: "user_hangup",
      recording_url: "https://example.test/rec.wav",
    });
    expect(call.transcript.map((t: Json) => [t.role, t.text])).toEqual([
      ["agent", "Hi, this is Adrian."],
      ["contact", "Hello!"],
    ]);
    // call_analyzed afterwards adds the summary and sentiment; the thread entry says the summary.
    const analyzed = {
      ...ended,
      event: "call_analyzed",
      call: {
        ...ended.call,
        call_analysis: { call_summary: "Confirmed for Friday.", user_sentiment: "Positive" },
      },
    };
    expect((await webhook(analyzed)).status).toBe(200);
    const after = (await s.api("GET", `/v1/calls/${id}`)).body.call;
    expect(after).toMatchObject({
      summary: "Confirmed for Friday.",
      sentiment: "positive",
      status: "COMPLETED",
    });
    const thread = (await s.api("GET", `/v1/conversations/${after.conversation_id}`)).body.conversation
      .messages;
    expect(thread.filter((m: Json) => m.call_id === id).map((m: Json) => m.body)).toEqual([
      "Confirmed for Friday.",
    ]);
  });

  it("acknowledges a genuine webhook about an unknown call and changes nothing", async () => {
    const res = await webhook({
      event: "call_ended",
      call: { call_id: "rc_nobody", call_status: "ended", disconnection_reason: "user_hangup", metadata: {} },
    });
    expect(res).toEqual({ status: 200, body: { ok: true } });
  });

  it("keeps an agent call QUEUED while Retell is down, and places it once Retell is back", async () => {
    const agent = (await s.api("POST", "/v1/agents", agentBody)).body.agent;
    retell.down = true;
    const created = await s.api("POST", "/v1/calls", { to: "+14155550178", agent_id: agent.id });
    expect(created.status).toBe(200);
    try {
      await eventually(
        () => Promise.resolve(retell.requests.filter((r) => r.path === "/v2/create-phone-call").length),
        () =>
          retell.requests.some(
            (r) => r.path === "/v2/create-phone-call" && r.body?.metadata?.call_id === created.body.call.id,
          ),
      );
      expect((await s.api("GET", `/v1/calls/${created.body.call.id}`)).body.call.status).toBe("QUEUED");
    } finally {
      retell.down = false;
    }
  });
});
