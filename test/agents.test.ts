import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { orderNumber } from "./support/messaging";
import { startTestServer, type TestServer } from "./support/server";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => await s.stop());

const create = async (body: unknown) => await s.api("POST", "/v1/agents", body);
const base = { name: "Maya", system_prompt: "You are Maya, the front desk of Sunny Dental." };

describe("agents API", () => {
  it("creates an agent as the seed shows, with every default filled in", async () => {
    const answer = await create(base);
    expect(answer.status).toBe(200);
    const agent = answer.body.agent;
    expect(agent.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(agent.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(agent).toMatchObject({
      name: "Maya",
      system_prompt: base.system_prompt,
      channel: "sms",
      status: "active",
      goal: null,
      greeting: null,
      max_turns: null,
      handoff_keywords: [],
      voice_id: null,
      model_tier: "balanced",
      inbox: { mode: "auto", intent_threshold: "medium", suppress_keywords: [] },
    });
    expect(agent.sms).toEqual({
      tone: "friendly",
      creativity: "balanced",
      guardrails: [],
      max_length: 320,
      knowledge: "",
      handoff_on_low_confidence: false,
      handoff_after_turns: 0,
      handoff_on_negative: true,
      handoff_message: null,
      reply_delay_min_sec: 20,
      reply_delay_max_sec: 90,
      max_replies_per_day: 20,
      capture_fields: [],
      link_domain_id: null,
      conversion_keywords: [],
      conversion_on_agent_goal: false,
      followup_enabled: false,
      followup_count: 1,
      followup_delay_hours: 24,
      // The workspace's quiet hours (21 → 8) and zone.
      quiet_start_hour: 21,
      quiet_end_hour: 8,
      quiet_tz: "America/New_York",
    });
    expect(agent.voice).toMatchObject({ voice_id: null, language: "en-US", speed: 1, ambient_sound: "none" });
    const got = await s.api("GET", `/v1/agents/${agent.id}`);
    expect(got.body.agent).toEqual(agent);
  });

  it("ignores unknown fields inside sms, voice and inbox, on create and on PATCH (never stored)", async () => {
    const made = await create({
      ...base,
      sms: { tone: "direct", zzz: 2 },
      voice: { zzz: 1 },
      inbox: { zzz: 1 },
    });
    expect(made.status).toBe(200);
    const { agent } = made.body;
    expect(agent.sms.tone).toBe("direct");
    expect("zzz" in agent.sms || "zzz" in agent.voice || "zzz" in agent.inbox).toBe(false);
    const patched = await s.api("PATCH", `/v1/agents/${agent.id}`, { inbox: { zzz: 1, mode: "assist" } });
    expect(patched.status).toBe(200);
    expect(patched.body.agent.inbox.mode).toBe("assist");
    expect((await s.api("GET", `/v1/agents/${agent.id}`)).status).toBe(200);
    expect((await s.api("GET", "/v1/agents")).status).toBe(200);
  });

  it("PATCH merges nested objects field by field", async () => {
    const { agent } = (await create({ ...base, sms: { tone: "direct", knowledge: "We open at 9." } })).body;
    const patched = await s.api("PATCH", `/v1/agents/${agent.id}`, {
      sms: { max_length: 160 },
      inbox: { mode: "assist" },
      status: "paused",
    });
    expect(patched.status).toBe(200);
    expect(patched.body.agent.sms).toMatchObject({
      tone: "direct",
      knowledge: "We open at 9.",
      max_length: 160,
    });
    expect(patched.body.agent.inbox).toEqual({
      mode: "assist",
      intent_threshold: "medium",
      suppress_keywords: [],
    });
    expect(patched.body.agent.status).toBe("paused");
    expect(patched.body.agent.name).toBe("Maya");
  });

  it("voice agents need a known voice, top level or in voice", async () => {
    const voices = await s.api("GET", "/v1/voices");
    expect(voices.status).toBe(200);
    const voiceId = voices.body.voices[0].voice_id;
    expect(voices.body.voices[0]).toMatchObject({ provider: "simulated", language: expect.any(String) });
    expect((await create({ ...base, channel: "voice" })).body).toEqual({
      ok: false,
      error: "voice_id is required",
    });
    expect((await create({ ...base, channel: "voice", voice_id: "nope" })).body.error).toBe(
      "voice_id is not a known voice",
    );
    const top = await create({ ...base, channel: "voice", voice_id: voiceId });
    expect(top.status).toBe(200);
    expect(top.body.agent.voice.voice_id).toBe(voiceId);
    const nested = await create({
      ...base,
      channel: "voice",
      voice: { voice_id: voiceId, language: "en-GB" },
    });
    expect(nested.body.agent).toMatchObject({ voice_id: voiceId, language: "en-GB" });
  });

  const bad: [string, unknown, string][] = [
    ["no name", { system_prompt: "x" }, "name is required"],
    ["no system_prompt", { name: "x" }, "system_prompt is required"],
    [
      "system_prompt too long",
      { ...base, system_prompt: "x".repeat(20_001) },
      "system_prompt is too long (max 20000)",
    ],
    [
      "bad tone",
      { ...base, sms: { tone: "grumpy" } },
      "sms.tone must be one of friendly, professional, casual, empathetic, direct",
    ],
    [
      "bad creativity",
      { ...base, sms: { creativity: "wild" } },
      "sms.creativity must be one of low, balanced, high",
    ],
    ["bad mode", { ...base, inbox: { mode: "robot" } }, "inbox.mode must be one of auto, assist, manual"],
    [
      "bad threshold",
      { ...base, inbox: { intent_threshold: "max" } },
      "inbox.intent_threshold must be one of low, medium, high",
    ],
    ["bad tier", { ...base, model_tier: "huge" }, "model_tier must be one of fast, balanced, smart"],
    ["bad status", { ...base, status: "live" }, "status must be one of draft, active, paused"],
    ["bad channel", { ...base, channel: "fax" }, "channel must be one of sms, voice"],
    [
      "hour out of range",
      { ...base, sms: { quiet_start_hour: 24 } },
      "sms.quiet_start_hour must be between 0 and 23",
    ],
    [
      "negative count",
      { ...base, sms: { max_replies_per_day: -1 } },
      "sms.max_replies_per_day must be between 0 and 1000000",
    ],
    ["speed out of range", { ...base, voice: { speed: 3 } }, "voice.speed must be between 0.5 and 2"],
    [
      "model_temperature out of range",
      { ...base, voice: { model_temperature: 1.5 } },
      "voice.model_temperature must be between 0 and 1",
    ],
    [
      "bad ambient sound",
      { ...base, voice: { ambient_sound: "jungle" } },
      `voice.ambient_sound must be one of none, coffee-shop, convention-hall, summer-outdoor, mountain-outdoor, static-noise, call-center`,
    ],
    [
      "delays out of order",
      { ...base, sms: { reply_delay_min_sec: 60, reply_delay_max_sec: 10 } },
      "sms.reply_delay_min_sec must not be greater than sms.reply_delay_max_sec",
    ],
    [
      "unknown zone",
      { ...base, sms: { quiet_tz: "Mars/Olympus" } },
      "sms.quiet_tz must be a valid IANA time zone",
    ],
    // The runtime takes offsets and any case; an IANA name is spelled as the database spells it.
    [
      "an offset for a zone",
      { ...base, sms: { quiet_tz: "+05:00" } },
      "sms.quiet_tz must be a valid IANA time zone",
    ],
    [
      "a zone in lower case",
      { ...base, sms: { quiet_tz: "est" } },
      "sms.quiet_tz must be a valid IANA time zone",
    ],
    ["keywords not strings", { ...base, handoff_keywords: [1, 2] }, "handoff_keywords[0] must be a string"],
  ];
  for (const [name, body, error] of bad) {
    it(`refuses ${name} with 422 and writes nothing`, async () => {
      const before = (await s.api("GET", "/v1/agents")).body.total;
      const answer = await create(body);
      expect(answer.status).toBe(422);
      expect(answer.body).toEqual({ ok: false, error });
      expect((await s.api("GET", "/v1/agents")).body.total).toBe(before);
    });
  }

  it("refuses a PATCH that would break the rules and leaves the agent as it was", async () => {
    const { agent } = (await create(base)).body;
    const answer = await s.api("PATCH", `/v1/agents/${agent.id}`, { sms: { reply_delay_min_sec: 500 } });
    expect(answer.status).toBe(422);
    expect((await s.api("GET", `/v1/agents/${agent.id}`)).body.agent).toEqual(agent);
  });

  it("is scoped to the workspace: another workspace's agent is Not found, and cannot be attached", async () => {
    const { agent } = (await create(base)).body;
    const other = await s.newWorkspace("Other");
    expect((await s.api("GET", `/v1/agents/${agent.id}`, undefined, { key: other.key })).status).toBe(404);
    expect((await s.api("DELETE", `/v1/agents/${agent.id}`, undefined, { key: other.key })).status).toBe(404);
    const numberId = await orderNumber(s, "+14155550177", { key: other.key });
    const attach = await s.api(
      "PATCH",
      `/v1/numbers/${numberId}`,
      { agent_id: agent.id },
      { key: other.key },
    );
    expect(attach.status).toBe(422);
    expect(attach.body.error).toBe("agent_id does not exist");
  });

  it("attaching a voice agent to SMS is refused", async () => {
    const voiceId = (await s.api("GET", "/v1/voices")).body.voices[0].voice_id;
    const { agent } = (await create({ ...base, channel: "voice", voice_id: voiceId })).body;
    const numberId = await orderNumber(s, "+14155550178");
    const attach = await s.api("PATCH", `/v1/numbers/${numberId}`, { agent_id: agent.id });
    expect(attach.status).toBe(422);
    expect(attach.body.error).toBe("agent_id must be an SMS agent (this one is a voice agent)");
  });

  it("lists newest first with filters, and deletes", async () => {
    const { agent } = (await create({ ...base, name: "Filter me", status: "draft" })).body;
    const drafts = await s.api("GET", "/v1/agents?status=draft");
    expect(drafts.body.agents.map((a: { id: string }) => a.id)).toContain(agent.id);
    expect(drafts.body.agents.every((a: { status: string }) => a.status === "draft")).toBe(true);
    expect((await s.api("GET", "/v1/agents?status=nope")).status).toBe(422);
    expect((await s.api("DELETE", `/v1/agents/${agent.id}`)).body).toEqual({ ok: true, deleted: true });
    expect((await s.api("GET", `/v1/agents/${agent.id}`)).status).toBe(404);
  });
});

describe("GET /v1/voices", () => {
  it("lists the simulated provider's catalogue: at least 8 voices, each whole, ids unique, both genders", async () => {
    const r = await s.api("GET", "/v1/voices");
    expect(r.status).toBe(200);
    const voices = r.body.voices as Record<string, unknown>[];
    expect(voices.length).toBeGreaterThanOrEqual(8);
    for (const voice of voices)
      expect(voice).toEqual({
        voice_id: expect.stringMatching(/^sim-[a-z]+$/),
        name: expect.any(String),
        provider: "simulated",
        language: expect.stringMatching(/^[a-z]{2}-[A-Z]{2}$/),
        gender: expect.stringMatching(/^(female|male)$/),
      });
    expect(new Set(voices.map((v) => v.voice_id)).size).toBe(voices.length);
    expect(new Set(voices.map((v) => v.gender))).toEqual(new Set(["female", "male"]));
  });
});

describe("test chat", () => {
  it("answers from knowledge, writing and sending nothing, on a draft agent", async () => {
    const { agent } = (
      await create({
        ...base,
        status: "draft",
        sms: { knowledge: "We are open Monday to Friday from 9am to 5pm. A cleaning costs $120." },
      })
    ).body;
    const before = (await s.api("GET", "/v1/messages")).body.total;
    const answer = await s.api("POST", `/v1/agents/${agent.id}/test`, {
      messages: [{ role: "contact", text: "How much is a cleaning?" }],
    });
    expect(answer.status).toBe(200);
    expect(answer.body.reply.text).toContain("$120");
    expect(answer.body.reply).toMatchObject({ handoff: null, goal_reached: false });
    expect(["none", "low", "medium", "high"]).toContain(answer.body.reply.intent);
    expect((await s.api("GET", "/v1/messages")).body.total).toBe(before);
  });

  it("hands off on a handoff keyword, with the handoff message as the text", async () => {
    const { agent } = (
      await create({
        ...base,
        handoff_keywords: ["manager"],
        sms: { handoff_message: "Connecting you now." },
      })
    ).body;
    const answer = await s.api("POST", `/v1/agents/${agent.id}/test`, {
      messages: [{ role: "contact", text: "Let me talk to your MANAGER" }],
    });
    expect(answer.body.reply).toMatchObject({ text: "Connecting you now.", handoff: { reason: "keyword" } });
  });

  it("does not answer CTIA keywords, as the live loop does not (a STOP cancels an owed reply)", async () => {
    const { agent } = (await create(base)).body;
    for (const messages of [
      [{ role: "contact", text: "STOP" }],
      [{ role: "contact", text: "help" }],
      [
        { role: "contact", text: "How much is a cleaning?" },
        { role: "contact", text: "stop" },
      ],
    ]) {
      const answer = await s.api("POST", `/v1/agents/${agent.id}/test`, { messages });
      expect(answer.body.reply).toMatchObject({ text: "", handoff: null });
    }
    const asked = await s.api("POST", `/v1/agents/${agent.id}/test`, {
      messages: [{ role: "contact", text: "How much is a cleaning?" }],
    });
    expect(asked.body.reply.text).not.toBe("");
  });

  it("captures what the agent asks for", async () => {
    const { agent } = (await create({ ...base, sms: { capture_fields: ["email", "zip"] } })).body;
    const answer = await s.api("POST", `/v1/agents/${agent.id}/test`, {
      messages: [{ role: "contact", text: "Sure, it's jo@example.com and I live in 94110" }],
    });
    expect(answer.body.reply.captured).toEqual({ email: "jo@example.com", zip: "94110" });
  });

  const badChats: [string, unknown, string][] = [
    ["no messages", { messages: [] }, "messages must have at least 1 item"],
    [
      "a bad role",
      { messages: [{ role: "bot", text: "hi" }] },
      "messages[0].role must be one of contact, agent",
    ],
    ["no messages field", {}, "messages is required"],
  ];
  for (const [name, body, error] of badChats) {
    it(`refuses ${name}`, async () => {
      const { agent } = (await create(base)).body;
      const answer = await s.api("POST", `/v1/agents/${agent.id}/test`, body);
      expect(answer.status).toBe(422);
      expect(answer.body).toEqual({ ok: false, error });
    });
  }

  it("answers 404 for an unknown agent", async () => {
    const answer = await s.api("POST", "/v1/agents/0190a0a0-0000-7000-8000-000000000000/test", {
      messages: [{ role: "contact", text: "hi" }],
    });
    expect(answer.status).toBe(404);
  });
});
