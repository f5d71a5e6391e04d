import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { eventLog } from "./support/event-log";
import { startLlmStub } from "./support/llm-stub";
import { eventually, handOffs, orderNumber } from "./support/messaging";
import { startTestServer, type TestServer } from "./support/server";

/**
 * The SMS agent's live loop, black-box through the sandbox carrier: inbound messages to a number an
 * agent answers, replies in the thread, handoffs, capture, conversions, assist mode, follow-ups.
 * Agents here reply after 0–1 s and have no quiet window, so nothing depends on the hour of the run;
 * the workspace's own quiet hours and state rules are off for the follow-ups.
 */
let s: TestServer;
const OURS = "+14155550300";
let numberId: string;
let phone = 4155557000;
const nextPhone = () => `+1${++phone}`;

const log = eventLog(() => s);
beforeAll(async () => {
  s = await startTestServer();
  await log.watch();
  numberId = await orderNumber(s, OURS);
  await s.api("PATCH", "/v1/settings", { quiet_hours: { enabled: false }, state_rules: false });
});
afterAll(async () => await s.stop());

const KNOWLEDGE =
  "Sunny Dental is open Monday to Friday from 9am to 5pm. A cleaning costs $120. We are at 12 Main Street.";

async function agentOnNumber(overrides: Record<string, unknown> = {}, sms: Record<string, unknown> = {}) {
  const answer = await s.api("POST", "/v1/agents", {
    name: "Maya",
    system_prompt: "You are Maya, the front desk of Sunny Dental.",
    goal: "book a cleaning appointment",
    ...overrides,
    sms: {
      knowledge: KNOWLEDGE,
      reply_delay_min_sec: 0,
      reply_delay_max_sec: 0,
      quiet_start_hour: 0,
      quiet_end_hour: 0,
      ...sms,
    },
  });
  if (answer.status !== 200) throw new Error(JSON.stringify(answer.body));
  const patched = await s.api("PATCH", `/v1/numbers/${numberId}`, { agent_id: answer.body.agent.id });
  expect(patched.status).toBe(200);
  return answer.body.agent as { id: string };
}

const inbound = async (from: string, body: string) =>
  await s.api("POST", "/v1/sandbox/inbound", { from, to: OURS, body });
const thread = async (conversationId: string) =>
  (await s.api("GET", `/v1/conversations/${conversationId}`)).body.conversation;
const agentMessages = (conversation: { messages: { sender: string; body: string }[] }) =>
  conversation.messages.filter((m) => m.sender === "agent");
const eventsOfType = (type: string) => log.of(type);

describe("the reply loop", () => {
  it("waits for the next local day once max_replies_per_day is spent, instead of dropping the reply", async () => {
    await agentOnNumber({}, { max_replies_per_day: 1, quiet_tz: "America/Los_Angeles" });
    const from = nextPhone();
    const first = (await inbound(from, "How much does a cleaning cost?")).body.message;
    await eventually(
      () => thread(first.conversation_id),
      (c) => agentMessages(c).length === 1,
    );
    await inbound(from, "And where are you?");
    const { jobs } = await import("../src/db/schema");
    const waiting = await eventually(
      async () =>
        (await s.server.handle.db.select().from(jobs).all()).filter(
          (j) =>
            j.kind === "agents.reply" &&
            (j.payload as { conversation_id: string }).conversation_id === first.conversation_id &&
            j.status === "queued",
        ),
      (rows) => rows.length === 1 && rows[0].runAt > Date.now() + 60_000,
    );
    // Owed, and due at the next midnight in the agent's zone (within a day), not answered now.
    expect(waiting).toHaveLength(1);
    expect(waiting[0].runAt).toBeLessThanOrEqual(Date.now() + 86_400_000);
    const conversation = await thread(first.conversation_id);
    expect(agentMessages(conversation)).toHaveLength(1);
  });

  it("answers an inbound message in the thread, from the number written to, and it is sent", async () => {
    await agentOnNumber();
    const from = nextPhone();
    const message = (await inbound(from, "How much does a cleaning cost?")).body.message;
    const conversation = await eventually(
      () => thread(message.conversation_id),
      (c) => agentMessages(c).length > 0,
    );
    const replies = agentMessages(conversation);
    expect(replies).toHaveLength(1);
    expect(replies[0].body).toContain("$120");
    // A price question is a medium intent: at the default threshold the thread is flagged for a person.
    expect(conversation).toMatchObject({ agent_active: true, intent: "medium", needs_attention: true });
    const outbox = await eventually(
      async () => await s.api("GET", "/v1/sandbox/outbox?limit=200"),
      (r) => r.body.sends.some((x: { to: string }) => x.to === from),
    );
    const sent = handOffs(outbox.body.sends).filter((x: { to: string }) => x.to === from);
    expect(sent).toHaveLength(1);
    expect(sent[0].from).toBe(OURS);
  });

  it("answers a burst of messages once", async () => {
    await agentOnNumber({}, { reply_delay_min_sec: 1, reply_delay_max_sec: 1 });
    const from = nextPhone();
    const first = (await inbound(from, "Hi there")).body.message;
    await inbound(from, "Are you open on Monday?");
    await inbound(from, "And where are you?");
    const conversation = await eventually(
      () => thread(first.conversation_id),
      (c) => agentMessages(c).length > 0,
    );
    await Bun.sleep(1500);
    const settled = await thread(first.conversation_id);
    expect(agentMessages(settled)).toHaveLength(1);
    expect(
      conversation.messages.filter((m: { direction: string }) => m.direction === "inbound"),
    ).toHaveLength(3);
  });

  for (const [word, reply] of [
    ["STOP", "the opt-out confirmation"],
    // YES from a contact already opted in too: a CTIA opt-in keyword, confirmed as START is.
    ["yes", "the opt-in confirmation"],
  ])
    it(`never answers a CTIA keyword: ${word} gets only ${reply}`, async () => {
      await agentOnNumber({}, { reply_delay_min_sec: 1, reply_delay_max_sec: 1 });
      const from = nextPhone();
      const message = (await inbound(from, word)).body.message;
      await Bun.sleep(1500);
      const conversation = await thread(message.conversation_id);
      expect(agentMessages(conversation)).toHaveLength(0);
      expect(conversation.messages.filter((m: { sender: string }) => m.sender === "system")).toHaveLength(1);
    });

  it("flags the thread when the agent is paused before the reply it owed was due", async () => {
    const agent = await agentOnNumber({}, { reply_delay_min_sec: 1, reply_delay_max_sec: 1 });
    const from = nextPhone();
    const message = (await inbound(from, "How much is a cleaning?")).body.message;
    expect((await s.api("PATCH", `/v1/agents/${agent.id}`, { status: "paused" })).status).toBe(200);
    const flagged = await eventually(
      () => thread(message.conversation_id),
      (c) => c.needs_attention === true,
    );
    expect(agentMessages(flagged)).toHaveLength(0);
  });

  it("hands off on a keyword: handoff message, needs_attention, agent inactive, agent.handoff", async () => {
    const agent = await agentOnNumber(
      { handoff_keywords: ["speak to a human"] },
      { handoff_message: "A teammate will text you shortly." },
    );
    const from = nextPhone();
    const message = (await inbound(from, "Can I speak to a human please")).body.message;
    const conversation = await thread(message.conversation_id);
    expect(conversation).toMatchObject({ needs_attention: true, agent_active: false, agent_id: agent.id });
    expect(agentMessages(conversation).map((m) => m.body)).toEqual(["A teammate will text you shortly."]);
    const handoff = (await eventsOfType("agent.handoff")).find(
      (e) => (e.data as { conversation_id: string }).conversation_id === message.conversation_id,
    );
    expect(handoff?.data).toEqual({
      conversation_id: message.conversation_id,
      agent_id: agent.id,
      contact_id: message.contact_id,
      reason: "keyword",
    });
    // The agent stays quiet on the thread afterwards.
    await inbound(from, "Hello?");
    await Bun.sleep(300);
    expect(agentMessages(await thread(message.conversation_id))).toHaveLength(1);
    const handled = await s.api("GET", "/v1/conversations?filter=agent&limit=200");
    expect(handled.body.conversations.map((c: { id: string }) => c.id)).not.toContain(
      message.conversation_id,
    );
  });

  it("hands off a negative contact (handoff_on_negative)", async () => {
    await agentOnNumber();
    const from = nextPhone();
    const message = (await inbound(from, "This is terrible, you are the worst, leave me alone")).body.message;
    const conversation = await eventually(
      () => thread(message.conversation_id),
      (c) => c.agent_active === false,
    );
    expect(conversation.needs_attention).toBe(true);
    const handoff = (await eventsOfType("agent.handoff")).find(
      (e) => (e.data as { conversation_id: string }).conversation_id === message.conversation_id,
    );
    expect((handoff?.data as { reason: string } | undefined)?.reason).toBe("negative");
  });

  it("a human reply pauses the agent on the thread", async () => {
    await agentOnNumber({}, { reply_delay_min_sec: 1, reply_delay_max_sec: 1 });
    const from = nextPhone();
    const message = (await inbound(from, "What are your hours?")).body.message;
    const reply = await s.api("POST", `/v1/conversations/${message.conversation_id}`, {
      body: "Hi, this is Sam from the desk.",
    });
    expect(reply.status).toBe(200);
    await Bun.sleep(1500);
    const conversation = await thread(message.conversation_id);
    expect(agentMessages(conversation)).toHaveLength(0);
    expect(conversation.agent_active).toBe(false);
  });

  it("captures fields onto the contact and records a keyword conversion attributed to the agent", async () => {
    const agent = await agentOnNumber(
      {},
      { capture_fields: ["email", "first_name", "zip"], conversion_keywords: ["book"] },
    );
    const from = nextPhone();
    const message = (
      await inbound(from, "My name is Dana, I want to book. Email dana@example.com, zip 94110")
    ).body.message;
    await eventually(
      () => thread(message.conversation_id),
      (c) => agentMessages(c).length > 0,
    );
    const contact = (await s.api("GET", `/v1/contacts/${message.contact_id}`)).body.contact;
    expect(contact).toMatchObject({ first_name: "Dana", email: "dana@example.com" });
    expect(contact.fields.zip).toBe("94110");
    const conversions = await s.api("GET", `/v1/conversions?contact_id=${message.contact_id}`);
    expect(conversions.body.conversions).toHaveLength(1);
    expect(conversions.body.conversions[0]).toMatchObject({
      event: "lead",
      txn: `agent:${message.conversation_id}:book`,
      agent_id: agent.id,
    });
    // Said again: still one conversion.
    await inbound(from, "yes book it");
    await eventually(
      () => thread(message.conversation_id),
      (c) => agentMessages(c).length > 1,
    );
    expect(
      (await s.api("GET", `/v1/conversions?contact_id=${message.contact_id}`)).body.conversions,
    ).toHaveLength(1);
    const analytics = await s.api("GET", "/v1/analytics/agents");
    expect(analytics.status).toBe(200);
    const row = analytics.body.agents.find((a: { agent_id: string }) => a.agent_id === agent.id);
    expect(row).toMatchObject({ conversions: 1, replies: 2, conversations: 1, handoffs: 0 });
  });

  it("records no keyword conversion while the workspace's conversion tracking is off", async () => {
    await agentOnNumber({}, { conversion_keywords: ["book"] });
    const from = nextPhone();
    await s.api("PATCH", "/v1/settings", { conversion_tracking_enabled: false });
    try {
      const message = (await inbound(from, "I want to book a cleaning")).body.message;
      await eventually(
        () => thread(message.conversation_id),
        (c) => agentMessages(c).length > 0,
      );
      const conversions = await s.api("GET", `/v1/conversions?contact_id=${message.contact_id}`);
      expect(conversions.body.conversions).toHaveLength(0);
    } finally {
      await s.api("PATCH", "/v1/settings", { conversion_tracking_enabled: true });
    }
  });

  it("credits a later purchase to the agent that last wrote to the contact, in analytics too", async () => {
    const agent = await agentOnNumber();
    const from = nextPhone();
    const message = (await inbound(from, "How much is a cleaning?")).body.message;
    await eventually(
      () => thread(message.conversation_id),
      (c) => agentMessages(c).length > 0,
    );
    const purchase = await s.api("POST", "/v1/conversion", { txn: `p-${from}`, phone: from, value: 120 });
    expect(purchase.status).toBe(200);
    const recorded = (await s.api("GET", `/v1/conversions?contact_id=${message.contact_id}`)).body
      .conversions;
    expect(recorded).toHaveLength(1);
    expect(recorded[0]).toMatchObject({ event: "purchase", agent_id: agent.id, flow_id: null, value: 120 });
    const row = (await s.api("GET", "/v1/analytics/agents")).body.agents.find(
      (a: { agent_id: string }) => a.agent_id === agent.id,
    );
    expect(row).toMatchObject({ conversations: 1, conversions: 1, revenue: 120 });
    // A contact the agent never wrote to is credited to no agent.
    const stranger = (await s.api("POST", "/v1/contacts", { phone_number: nextPhone() })).body.contact;
    await s.api("POST", "/v1/conversion", {
      txn: `p-${stranger.id}`,
      phone: stranger.phone_number,
      value: 1,
    });
    const theirs = (await s.api("GET", `/v1/conversions?contact_id=${stranger.id}`)).body.conversions;
    expect(theirs[0]).toMatchObject({ agent_id: null, flow_id: null });
  });

  it("assist mode writes a draft and flags the thread, sending nothing", async () => {
    await agentOnNumber({ inbox: { mode: "assist" } });
    const from = nextPhone();
    const message = (await inbound(from, "Which street are you on?")).body.message;
    const conversation = await eventually(
      () => thread(message.conversation_id),
      (c) => c.draft_reply !== null,
    );
    expect(conversation.draft_reply).toContain("Main Street");
    expect(conversation.needs_attention).toBe(true);
    expect(agentMessages(conversation)).toHaveLength(0);
  });

  it("follows up once when the contact goes quiet, and not again", async () => {
    await agentOnNumber({}, { followup_enabled: true, followup_count: 1, followup_delay_hours: 0 });
    const from = nextPhone();
    const message = (await inbound(from, "How much is a cleaning?")).body.message;
    const conversation = await eventually(
      () => thread(message.conversation_id),
      (c) => agentMessages(c).length >= 2,
    );
    await Bun.sleep(500);
    expect(agentMessages(await thread(message.conversation_id))).toHaveLength(2);
    expect(
      conversation.messages.filter((m: { direction: string }) => m.direction === "inbound"),
    ).toHaveLength(1);
  });

  it("sends no follow-up after a possible opt-out (a person decides, API.md §7.1)", async () => {
    await agentOnNumber({}, { followup_enabled: true, followup_count: 1, followup_delay_hours: 1 });
    const from = nextPhone();
    const message = (await inbound(from, "How much is a cleaning?")).body.message;
    await eventually(
      () => thread(message.conversation_id),
      (c) => agentMessages(c).length === 1,
    );
    await inbound(from, "I told you last week to stop sending me these offers!");
    const { jobs } = await import("../src/db/schema");
    const { eq } = await import("drizzle-orm");
    const db = s.server.handle.db;
    const followup = async () =>
      (await db.select().from(jobs).all()).find(
        (j) =>
          j.kind === "agents.followup" &&
          (j.payload as { conversation_id: string }).conversation_id === message.conversation_id,
      );
    // The follow-up comes due now instead of in an hour.
    const due = await eventually(followup, (job) => job?.status === "queued");
    await db.update(jobs).set({ runAt: Date.now() }).where(eq(jobs.id, due!.id)).run();
    await eventually(followup, (job) => job?.status !== "queued");
    await Bun.sleep(300);
    const conversation = await thread(message.conversation_id);
    expect({
      agent_messages: agentMessages(conversation).length,
      attention_reason: conversation.attention_reason,
    }).toEqual({ agent_messages: 1, attention_reason: "possible_opt_out" });
  });

  it("counts a follow-up as a marketing send for the frequency cap (API.md §6.1), a reply not", async () => {
    await agentOnNumber({}, { followup_enabled: true, followup_count: 1, followup_delay_hours: 0 });
    const from = nextPhone();
    const message = (await inbound(from, "How much is a cleaning?")).body.message;
    await eventually(
      () => thread(message.conversation_id),
      (c) => agentMessages(c).length >= 2,
    );
    await s.api("PATCH", "/v1/settings", {
      frequency_cap: { enabled: true, max_messages: 1, window_hours: 24, apply_to_all: true },
    });
    try {
      const campaign = (
        await s.api("POST", "/v1/campaigns", {
          name: "After the follow-up",
          message: { body: "Spring offer! Reply STOP to opt out." },
          audience: { contact_ids: [message.contact_id] },
          quiet_hours: { enabled: false },
        })
      ).body.campaign;
      const preview = (await s.api("GET", `/v1/campaigns/${campaign.id}/preview`)).body.preview;
      expect(preview.contacts[0]).toMatchObject({ outcome: "skip", reason: "frequency_cap" });
    } finally {
      await s.api("PATCH", "/v1/settings", {
        frequency_cap: { enabled: true, max_messages: 3, window_hours: 24, apply_to_all: false },
      });
    }
  });

  it("PATCH /v1/conversations/{id} gives a thread to an agent, and an unknown agent is refused", async () => {
    await s.api("PATCH", `/v1/numbers/${numberId}`, { agent_id: null });
    const from = nextPhone();
    const message = (await inbound(from, "Hello")).body.message;
    expect((await thread(message.conversation_id)).agent_id).toBeNull();
    const bad = await s.api("PATCH", `/v1/conversations/${message.conversation_id}`, {
      agent_id: "0190a0a0-0000-7000-8000-000000000000",
    });
    expect(bad.status).toBe(422);
    expect(bad.body.error).toBe("agent_id does not exist");
    const agent = (
      await s.api("POST", "/v1/agents", {
        name: "Late",
        system_prompt: "Helpful.",
        sms: {
          knowledge: KNOWLEDGE,
          reply_delay_min_sec: 0,
          reply_delay_max_sec: 0,
          quiet_start_hour: 0,
          quiet_end_hour: 0,
        },
      })
    ).body.agent;
    expect(
      (await s.api("PATCH", `/v1/conversations/${message.conversation_id}`, { agent_id: agent.id })).status,
    ).toBe(200);
    await inbound(from, "What time do you open?");
    const conversation = await eventually(
      () => thread(message.conversation_id),
      (c) => agentMessages(c).length > 0,
    );
    expect(agentMessages(conversation)[0].body).toContain("9am");
    expect(conversation.agent_id).toBe(agent.id);
  });
});

describe("with an OpenAI-compatible engine (LLM_BASE_URL → a local stub)", () => {
  let llm: Awaited<ReturnType<typeof startLlmStub>>;
  let t: TestServer;
  const THEIRS = "+14155550399";
  let agentId: string;
  const remoteLog = eventLog(() => t);
  beforeAll(async () => {
    llm = await startLlmStub();
    t = await startTestServer({}, { LLM_BASE_URL: llm.url, LLM_API_KEY: "sk-test", LLM_TIMEOUT_MS: "300" });
    await remoteLog.watch();
    const n = await orderNumber(t, THEIRS);
    agentId = (
      await t.api("POST", "/v1/agents", {
        name: "Remote",
        system_prompt: "You sell solar panels.",
        sms: {
          reply_delay_min_sec: 0,
          reply_delay_max_sec: 0,
          quiet_start_hour: 0,
          quiet_end_hour: 0,
          handoff_message: "A person will follow up.",
        },
      })
    ).body.agent.id;
    await t.api("PATCH", `/v1/numbers/${n}`, { agent_id: agentId });
  });
  afterAll(async () => {
    await t.stop();
    llm.close();
  });
  const say = async (from: string, body: string) =>
    await t.api("POST", "/v1/sandbox/inbound", { from, to: THEIRS, body });
  const threadOf = async (id: string) => (await t.api("GET", `/v1/conversations/${id}`)).body.conversation;

  it("sends the model's reply", async () => {
    llm.script(() => ({
      content: JSON.stringify({
        reply: "Panels start at $9,000 installed.",
        intent: "low",
        sentiment: "neutral",
        confidence: 0.8,
        goal_reached: false,
        captured: {},
        handoff: null,
      }),
    }));
    const message = (await say("+14155558001", "How much are panels?")).body.message;
    const conversation = await eventually(
      () => threadOf(message.conversation_id),
      (c) => agentMessages(c).length > 0,
    );
    expect(agentMessages(conversation).map((m) => m.body)).toEqual(["Panels start at $9,000 installed."]);
    const request = llm.requests.at(-1);
    expect(request?.headers.authorization).toBe("Bearer sk-test");
    expect(JSON.stringify(request?.body.messages)).toContain("How much are panels?");
  });

  it("garbage from the model never reaches the contact: the thread is handed off (llm_unavailable)", async () => {
    llm.script(() => ({ raw: "<html>502 Bad Gateway</html>" }));
    const message = (await say("+14155558002", "Hello?")).body.message;
    // The handoff's message and the thread's state commit together, but GET reads the thread's
    // entries before its row (conversations.ts), so one answer may show the row already paused
    // and the list without the message: wait for both.
    const conversation = await eventually(
      () => threadOf(message.conversation_id),
      (c) => c.agent_active === false && agentMessages(c).length > 0,
    );
    expect(conversation.needs_attention).toBe(true);
    expect(agentMessages(conversation).map((m) => m.body)).toEqual(["A person will follow up."]);
    const handoff = (await remoteLog.of("agent.handoff")).find(
      (e) => (e.data as { conversation_id: string }).conversation_id === message.conversation_id,
    );
    expect((handoff?.data as { reason: string } | undefined)?.reason).toBe("llm_unavailable");
  });
});
