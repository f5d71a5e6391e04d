import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { threadForContact } from "../src/domain/messaging/conversations";
import { isPossibleOptOut, type KeywordKind, keywordOf } from "../src/domain/messaging/inbound";
import { eventLog } from "./support/event-log";
import { eventually, handOffs, orderNumber } from "./support/messaging";
import { type SecondNode, startSecondNode, startTestServer, type TestServer } from "./support/server";

const OURS = "+14155550100";
let s: TestServer;

const log = eventLog(() => s);
beforeAll(async () => {
  s = await startTestServer();
  await log.watch();
  await orderNumber(s, OURS);
});
afterAll(async () => await s.stop());

const inbound = async (from: string, body: string, key?: string) =>
  await s.api("POST", "/v1/sandbox/inbound", { from, to: OURS, body }, { key });
const eventsOfType = (type: string) => log.of(type);
async function outboxTo(to: string) {
  const answer = await s.api("GET", "/v1/sandbox/outbox?limit=200");
  return handOffs(answer.body.sends).filter((send: { to: string }) => send.to === to);
}
/** Waits until the send jobs for `to` are done (nothing PENDING or QUEUED), then reads the outbox. */
async function settledOutboxTo(to: string) {
  await eventually(
    async () => await s.api("GET", "/v1/messages?direction=outbound&limit=200"),
    (r) =>
      !r.body.messages.some(
        (m: { to: string; status: string }) => m.to === to && ["PENDING", "QUEUED"].includes(m.status),
      ),
  );
  return outboxTo(to);
}
const contactOf = async (phone: string) =>
  (await s.api("GET", `/v1/contacts?q=${encodeURIComponent(phone)}`)).body.contacts.find(
    (c: { phone_number: string }) => c.phone_number === phone,
  );

describe("inbound messages", () => {
  it("create the contact (source inbound) and an open conversation that needs attention", async () => {
    const answer = await inbound("4155550200", "Hi, is this the bakery?");
    expect(answer.status).toBe(200);
    expect(answer.body.message).toMatchObject({
      direction: "inbound",
      from: "+14155550200",
      to: OURS,
      body: "Hi, is this the bakery?",
      status: "RECEIVED",
      encoding: "GSM-7",
      segments: 1,
    });
    const contact = await contactOf("+14155550200");
    expect(contact).toMatchObject({ source: "inbound", opted_in: true, id: answer.body.message.contact_id });
    const conversation = await s.api("GET", `/v1/conversations/${answer.body.message.conversation_id}`);
    expect(conversation.body.conversation).toMatchObject({
      status: "open",
      needs_attention: true,
      contact_id: contact.id,
    });
    expect(conversation.body.conversation.messages).toEqual([
      expect.objectContaining({
        id: answer.body.message.id,
        direction: "inbound",
        sender: "contact",
        status: "RECEIVED",
      }),
    ]);
    expect(
      (await eventsOfType("message.received")).some(
        (e) => (e.data as { id: string }).id === answer.body.message.id,
      ),
    ).toBe(true);
    expect(
      (await eventsOfType("conversation.needs_attention")).some(
        (e) => (e.data as { id: string }).id === answer.body.message.conversation_id,
      ),
    ).toBe(true);
  });

  it("thread into the contact's open conversation", async () => {
    const first = await inbound("+14155550201", "one");
    const second = await inbound("+14155550201", "two");
    expect(second.body.message.conversation_id).toBe(first.body.message.conversation_id);
    const thread = await s.api("GET", `/v1/conversations/${first.body.message.conversation_id}`);
    expect(thread.body.conversation.messages.map((m: { body: string }) => m.body)).toEqual(["one", "two"]);
  });

  it("give a new thread on an agent's number to that agent, without needs_attention", async () => {
    const agentNumber = "+14155550105";
    const numberId = await orderNumber(s, agentNumber);
    // An active agent that answers after a minute: the thread is its own, nobody needs to look.
    const agentId = (
      await s.api("POST", "/v1/agents", {
        name: "Front desk",
        system_prompt: "Answer questions.",
        sms: { reply_delay_min_sec: 60, reply_delay_max_sec: 60 },
      })
    ).body.agent.id;
    expect((await s.api("PATCH", `/v1/numbers/${numberId}`, { agent_id: agentId })).status).toBe(200);
    const answer = await s.api("POST", "/v1/sandbox/inbound", {
      from: "+14155550203",
      to: agentNumber,
      body: "hi",
    });
    const conversation = (await s.api("GET", `/v1/conversations/${answer.body.message.conversation_id}`)).body
      .conversation;
    expect(conversation).toMatchObject({ agent_id: agentId, agent_paused: false, needs_attention: false });
  });

  it("reopen the latest closed conversation", async () => {
    const first = await inbound("+14155550202", "hello");
    const id = first.body.message.conversation_id;
    await s.api("PATCH", `/v1/conversations/${id}`, { status: "closed", needs_attention: false });
    const again = await inbound("+14155550202", "me again");
    expect(again.body.message.conversation_id).toBe(id);
    const conversation = (await s.api("GET", `/v1/conversations/${id}`)).body.conversation;
    expect(conversation).toMatchObject({ status: "open", needs_attention: true });
  });
});

describe("CTIA keywords", () => {
  it("STOP opts out, suppresses (opt_out), confirms exactly once and emits contact.opted_out once", async () => {
    const phone = "+14155550210";
    await s.api("PATCH", "/v1/settings", {
      opt_out_reply: "You are unsubscribed. Reply START to resubscribe.",
    });
    await inbound(phone, "  stop ");
    await inbound(phone, "STOP");
    const contact = await contactOf(phone);
    expect(contact.opted_in).toBe(false);
    const suppression = await s.api("GET", "/v1/suppression?limit=200");
    expect(
      suppression.body.suppressions.filter((e: { phone_number: string }) => e.phone_number === phone),
    ).toEqual([expect.objectContaining({ reason: "opt_out", source: "inbound" })]);
    const sends = await settledOutboxTo(phone);
    expect(sends.map((x: { body: string }) => x.body)).toEqual([
      "You are unsubscribed. Reply START to resubscribe.",
    ]);
    expect(
      (await eventsOfType("contact.opted_out")).filter((e) => (e.data as { id: string }).id === contact.id),
    ).toHaveLength(1);
    const thread = (await s.api("GET", `/v1/conversations?q=${encodeURIComponent(phone)}`)).body
      .conversations[0];
    expect(thread.needs_attention).toBe(false);
  });

  for (const word of ["STOPALL", "unsubscribe", "Cancel", "END", "quit", "OPTOUT", "revoke"]) {
    it(`${word} is an opt-out keyword`, async () => {
      const phone = `+1415555${String(300 + word.length * 7 + word.charCodeAt(1)).padStart(4, "0")}`;
      await inbound(phone, word);
      expect((await contactOf(phone)).opted_in).toBe(false);
    });
  }

  // API.md §7.1: trimmed, case folded, punctuation and emoji dropped; the whole message, or at most
  // six words one of which is an opt-out keyword.
  const OPT_OUTS = [
    "Stop.",
    "STOP!!",
    "stop 🛑",
    "Opt out",
    "opt-out",
    "OPT-OUT!",
    "please stop",
    "stop texting me",
    "Unsubscribe me",
    "STOP STOP STOP",
    "¡Stop!",
    "pls don't text me, stop",
    "I want to opt out now",
    "Cancel.",
    "quit it",
    "“stop”",
  ];
  let next = 1000;
  for (const body of OPT_OUTS) {
    it(`${JSON.stringify(body)} is an opt-out, confirmed once`, async () => {
      const phone = `+1415556${next++}`;
      await inbound(phone, body);
      await inbound(phone, body);
      const contact = await contactOf(phone);
      const confirmations = (await settledOutboxTo(phone)).length;
      expect({ body, opted_in: contact.opted_in, confirmations }).toEqual({
        body,
        opted_in: false,
        confirmations: 1,
      });
    });
  }

  const NOT_OPT_OUTS = [
    "please stop by the shop tomorrow to pick up your order",
    "Hi, is the store open on Sunday?",
    "stopping by later",
    "yes please",
    "help me",
    "START now",
  ];
  for (const body of NOT_OPT_OUTS) {
    it(`${JSON.stringify(body)} is not an opt-out`, async () => {
      const phone = `+1415556${next++}`;
      await inbound(phone, body);
      const contact = await contactOf(phone);
      expect({ body, opted_in: contact.opted_in }).toEqual({ body, opted_in: true });
    });
  }

  it("a message of more than six words containing a keyword flags the thread possible_opt_out", async () => {
    const phone = "+14155550211";
    const answer = await inbound(phone, "I told you last week to STOP sending me these offers!");
    expect((await contactOf(phone)).opted_in).toBe(true);
    const conversation = (await s.api("GET", `/v1/conversations/${answer.body.message.conversation_id}`)).body
      .conversation;
    expect(conversation).toMatchObject({ needs_attention: true, attention_reason: "possible_opt_out" });
    expect(await settledOutboxTo(phone)).toEqual([]);
    // Cleared by a person: the reason goes with the flag.
    await s.api("PATCH", `/v1/conversations/${conversation.id}`, { needs_attention: false });
    const cleared = (await s.api("GET", `/v1/conversations/${conversation.id}`)).body.conversation;
    expect(cleared).toMatchObject({ needs_attention: false, attention_reason: null });
  });

  it("an ordinary message no agent owns needs attention with attention_reason unanswered_message", async () => {
    const answer = await inbound("+14155550219", "What time do you open?");
    const conversation = (await s.api("GET", `/v1/conversations/${answer.body.message.conversation_id}`)).body
      .conversation;
    expect(conversation).toMatchObject({ needs_attention: true, attention_reason: "unanswered_message" });
  });

  it("START opts back in, lifts the opt_out entry, confirms and emits contact.opted_in", async () => {
    const phone = "+14155550212";
    await s.api("PATCH", "/v1/settings", { opt_in_reply: "Welcome back!" });
    await inbound(phone, "STOP");
    await inbound(phone, "Start");
    const contact = await contactOf(phone);
    expect(contact.opted_in).toBe(true);
    const suppression = await s.api("GET", "/v1/suppression?limit=200");
    expect(
      suppression.body.suppressions.some((e: { phone_number: string }) => e.phone_number === phone),
    ).toBe(false);
    const bodies = (await settledOutboxTo(phone)).map((x: { body: string }) => x.body);
    expect(bodies).toContain("Welcome back!");
    expect(
      (await eventsOfType("contact.opted_in")).filter((e) => (e.data as { id: string }).id === contact.id),
    ).toHaveLength(1);
    expect((await s.api("POST", "/v1/messages", { to: phone, body: "glad to have you" })).status).toBe(200);
  });

  it("UNSTOP and YES opt an opted-out contact back in", async () => {
    for (const [phone, word] of [
      ["+14155550213", "unstop"],
      ["+14155550214", "yes"],
    ]) {
      await inbound(phone, "STOP");
      await inbound(phone, word);
      expect((await contactOf(phone)).opted_in).toBe(true);
    }
  });

  it("HELP and INFO get the workspace's help reply", async () => {
    await s.api("PATCH", "/v1/settings", { help_reply: "Bakery Co: reply STOP to opt out." });
    await inbound("+14155550215", "help");
    await inbound("+14155550216", "INFO");
    expect((await settledOutboxTo("+14155550215")).map((x: { body: string }) => x.body)).toEqual([
      "Bakery Co: reply STOP to opt out.",
    ]);
    expect((await settledOutboxTo("+14155550216")).map((x: { body: string }) => x.body)).toEqual([
      "Bakery Co: reply STOP to opt out.",
    ]);
  });
});

describe("keyword replies and the daily cap", () => {
  it("count against the number's daily_limit, and still go out from a number at its cap", async () => {
    const capped = "+14155550130";
    const ordered = await s.api("POST", "/v1/numbers", { number: capped, daily_limit: 1 });
    const id = ordered.body.ordered.id;
    expect(
      (await s.api("POST", "/v1/messages", { to: "+14155556400", from: capped, body: "hi" })).status,
    ).toBe(200);
    const full = await s.api("POST", "/v1/messages", { to: "+14155556400", from: capped, body: "again" });
    expect(full.body).toEqual({ ok: false, error: "from has reached its daily_limit" });
    await s.api("POST", "/v1/sandbox/inbound", { from: "+14155556400", to: capped, body: "HELP" });
    await s.api("POST", "/v1/sandbox/inbound", { from: "+14155556401", to: capped, body: "STOP" });
    expect(await settledOutboxTo("+14155556401")).toHaveLength(1);
    expect(await settledOutboxTo("+14155556400")).toHaveLength(2);
    expect((await s.api("GET", `/v1/numbers/${id}`)).body.number.sent_today).toBe(3);
  });
});

describe("POST /v1/sandbox/inbound", () => {
  it("answers 422 'to is not a number of this workspace' for a number it does not own", async () => {
    const answer = await s.api("POST", "/v1/sandbox/inbound", {
      from: "+14155550220",
      to: "+14155559999",
      body: "x",
    });
    expect(answer.status).toBe(422);
    expect(answer.body).toEqual({ ok: false, error: "to is not a number of this workspace" });
  });

  it("answers 422 for an invalid from and a missing body", async () => {
    const from = await s.api("POST", "/v1/sandbox/inbound", { from: "nope", to: OURS, body: "x" });
    expect(from.body).toEqual({ ok: false, error: "from must be a valid phone number" });
    const body = await s.api("POST", "/v1/sandbox/inbound", { from: "+14155550220", to: OURS });
    expect(body.status).toBe(422);
    expect(body.body).toEqual({ ok: false, error: "body is required" });
  });

  it("does not let another workspace inject into this one's number", async () => {
    const other = await s.newWorkspace("Other");
    const answer = await inbound("+14155550221", "x", other.key);
    expect(answer.status).toBe(422);
  });

  it("answers 403 to a read-only key", async () => {
    const { key } = await s.newKey(["read"]);
    expect((await inbound("+14155550222", "x", key)).status).toBe(403);
  });
});

describe("inbound messages on several servers sharing the database", () => {
  let node: SecondNode;
  beforeAll(async () => {
    node = await startSecondNode(s);
  });
  afterAll(async () => await node.stop());

  /** 8 messages from `from` at once, every other one through the second server: their answers. */
  const burst = async (from: string) =>
    await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        (i % 2 === 0 ? s.api : node.api)("POST", "/v1/sandbox/inbound", {
          from,
          to: OURS,
          body: `burst ${i}`,
        }),
      ),
    );
  /** The threads of the contact of `phone`, and the ids of the threads its inbound messages went to. */
  const threadsOf = async (phone: string) => {
    const contactId = (await contactOf(phone)).id;
    const all = (await s.api("GET", "/v1/conversations?limit=200")).body.conversations.filter(
      (c: { contact_id: string }) => c.contact_id === contactId,
    );
    const received = (await s.api("GET", `/v1/messages?contact_id=${contactId}&direction=inbound&limit=200`))
      .body.messages;
    return {
      open: all.filter((c: { status: string }) => c.status === "open").map((c: { id: string }) => c.id),
      all: all.length,
      messages: received.length,
      usedThreads: [...new Set(received.map((m: { conversation_id: string }) => m.conversation_id))],
    };
  };

  it("makes one contact and one open thread for a new number's burst, and answers every message", async () => {
    const from = "+14155550250";
    const answers = await burst(from);
    expect(answers.map((answer) => answer.status)).toEqual(Array(8).fill(200));
    const contacts = (await s.api("GET", `/v1/contacts?q=${encodeURIComponent(from)}`)).body.contacts;
    expect(contacts).toHaveLength(1);
    const threads = await threadsOf(from);
    expect(threads).toMatchObject({ all: 1, messages: 8 });
    expect(threads.usedThreads).toEqual(threads.open);
  });

  it("makes one open thread for a known contact without one", async () => {
    const from = "+14155550251";
    expect((await s.api("POST", "/v1/contacts", { phone_number: from })).status).toBe(200);
    const answers = await burst(from);
    expect(answers.map((answer) => answer.status)).toEqual(Array(8).fill(200));
    const threads = await threadsOf(from);
    expect(threads).toMatchObject({ all: 1, messages: 8 });
    expect(threads.usedThreads).toEqual(threads.open);
  });

  it("reopens a contact's closed thread once for a burst", async () => {
    const from = "+14155550252";
    await inbound(from, "hello");
    const [thread] = (await threadsOf(from)).open;
    expect((await s.api("PATCH", `/v1/conversations/${thread}`, { status: "closed" })).status).toBe(200);
    const answers = await burst(from);
    expect(answers.map((answer) => answer.status)).toEqual(Array(8).fill(200));
    const threads = await threadsOf(from);
    expect(threads).toMatchObject({ open: [thread], all: 1, messages: 9 });
  });

  it("puts a reply into the thread a send opened meanwhile instead of reopening the closed one beside it", async () => {
    const from = "+14155550254";
    await inbound(from, "hello");
    const [closed] = (await threadsOf(from)).open;
    expect((await s.api("PATCH", `/v1/conversations/${closed}`, { status: "closed" })).status).toBe(200);
    const contactId = (await contactOf(from)).id;
    // A send's transaction (another server's) opens a new thread and has not committed yet while
    // the reply reopens the closed one.
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let opened = (_id: string) => {};
    const newThread = new Promise<string>((resolve) => {
      opened = resolve;
    });
    const send = s.server.handle.db.transaction(async (tx) => {
      const thread = await threadForContact(tx, s.workspaceId, contactId, { reopen: false, now: Date.now() });
      opened(thread.id);
      await held;
    });
    const opener = await newThread;
    const reply = node.api("POST", "/v1/sandbox/inbound", { from, to: OURS, body: "meanwhile" });
    await Bun.sleep(200);
    release();
    const [answer] = await Promise.all([reply, send]);
    expect(answer.status).toBe(200);
    const threads = await threadsOf(from);
    expect(threads.open).toEqual([opener]);
    expect(answer.body.message.conversation_id).toBe(opener);
  });
});

describe("PATCH /v1/conversations/{id} status open", () => {
  it("answers 409 when the contact has another open thread, and changes nothing", async () => {
    const from = "+14155550253";
    await inbound(from, "first");
    const contactId = (await contactOf(from)).id;
    const threadOf = async () =>
      (await s.api("GET", "/v1/conversations?limit=200")).body.conversations.filter(
        (c: { contact_id: string }) => c.contact_id === contactId,
      );
    const [first] = await threadOf();
    await s.api("PATCH", `/v1/conversations/${first.id}`, { status: "closed" });
    // A send does not reopen: the contact gets a new open thread beside the closed one.
    expect((await s.api("POST", "/v1/calls", { to: from, say: "hi" })).status).toBe(200);
    const open = (await threadOf()).filter((c: { status: string }) => c.status === "open");
    expect(open).toHaveLength(1);
    const reopened = await s.api("PATCH", `/v1/conversations/${first.id}`, { status: "open" });
    expect(reopened.status).toBe(409);
    expect(reopened.body).toEqual({ ok: false, error: "The contact has another open conversation" });
    expect((await threadOf()).find((c: { id: string }) => c.id === first.id).status).toBe("closed");
  });
});

describe("GET /v1/sandbox/outbox", () => {
  it("lists hand-offs newest first, paginated, scoped to the workspace", async () => {
    // Newest by hand-off: the first is handed off before the second is sent (two send jobs may
    // otherwise be claimed together and handed off in either order).
    await s.api("POST", "/v1/messages", { to: "+14155550230", body: "first" });
    await settledOutboxTo("+14155550230");
    await s.api("POST", "/v1/messages", { to: "+14155550230", body: "second" });
    await settledOutboxTo("+14155550230");
    const page = await s.api("GET", "/v1/sandbox/outbox?limit=1");
    expect(page.body).toMatchObject({ ok: true, limit: 1, offset: 0 });
    expect(page.body.total).toBeGreaterThanOrEqual(2);
    expect(page.body.sends[0]).toEqual({
      message_id: expect.any(String),
      from: OURS,
      to: "+14155550230",
      body: "second",
      accepted_at: expect.stringMatching(/Z$/),
      handoffs: 1,
    });
    const other = await s.newWorkspace("Empty");
    const theirs = await s.api("GET", "/v1/sandbox/outbox", undefined, { key: other.key });
    expect(theirs.body).toMatchObject({ sends: [], total: 0 });
    expect((await s.api("GET", "/v1/sandbox/outbox?limit=x")).status).toBe(422);
  });
});

describe("sandbox endpoints with a real carrier", () => {
  it("answer 404 'Not found' when the simulated carrier is not active", async () => {
    const saved = { sid: process.env.TWILIO_ACCOUNT_SID, token: process.env.TWILIO_AUTH_TOKEN };
    process.env.TWILIO_ACCOUNT_SID = "ACtest";
    process.env.TWILIO_AUTH_TOKEN = "token";
    const t = await startTestServer({ carrier: "twilio", workerEnabled: false });
    try {
      const outbox = await t.api("GET", "/v1/sandbox/outbox");
      expect(outbox.status).toBe(404);
      expect(outbox.body).toEqual({ ok: false, error: "Not found" });
      const injected = await t.api("POST", "/v1/sandbox/inbound", {
        from: "+14155550240",
        to: OURS,
        body: "x",
      });
      expect(injected.status).toBe(404);
    } finally {
      await t.stop();
      if (saved.sid === undefined) delete process.env.TWILIO_ACCOUNT_SID;
      else process.env.TWILIO_ACCOUNT_SID = saved.sid;
      if (saved.token === undefined) delete process.env.TWILIO_AUTH_TOKEN;
      else process.env.TWILIO_AUTH_TOKEN = saved.token;
    }
  });
});

describe("keywordOf and isPossibleOptOut (the wording rule, API.md §7.1)", () => {
  // [reply, keyword, possible opt-out]
  const CASES: [string, KeywordKind | null, boolean][] = [
    ["STOP", "opt_out", false],
    ["  stop  ", "opt_out", false],
    ["Stop.", "opt_out", false],
    ["STOP!!", "opt_out", false],
    ["🛑 stop 🛑", "opt_out", false],
    ["Opt out", "opt_out", false],
    ["opt-out", "opt_out", false],
    ["OPTOUT", "opt_out", false],
    ["please stop", "opt_out", false],
    ["stop texting me", "opt_out", false],
    ["unsubscribe me", "opt_out", false],
    ["Cancel my subscription please", "opt_out", false],
    ["can you please just stop now", "opt_out", false], // six words
    ["can you please just stop now thanks", null, true], // seven words
    ["I said STOP sending me these texts every day", null, true],
    ["please stop by the shop tomorrow to pick up your order", null, true],
    ["stopping by later", null, false],
    ["unstoppable deals", null, false],
    ["START", "opt_in", false],
    ["unstop", "opt_in", false],
    ["Yes", "opt_in", false],
    ["yes please", null, false],
    ["HELP", "help", false],
    ["info", "help", false],
    ["help me", null, false],
    ["", null, false],
    ["!!!", null, false],
  ];
  for (const [reply, keyword, possible] of CASES) {
    it(`${JSON.stringify(reply)} → ${keyword ?? "no keyword"}${possible ? ", possible opt-out" : ""}`, () => {
      expect({ reply, keyword: keywordOf(reply), possible: isPossibleOptOut(reply) }).toEqual({
        reply,
        keyword,
        possible,
      });
    });
  }
});
