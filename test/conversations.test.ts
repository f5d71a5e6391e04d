import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { and, count, eq, like } from "drizzle-orm";
import { conversationReads, conversations, events, messages } from "../src/db/schema";
import { openThreadsFor } from "../src/domain/messaging/conversations";
import { eventually, orderNumber } from "./support/messaging";
import { startTestServer, type TestServer } from "./support/server";

const OURS = "+14155550100";
let s: TestServer;

beforeAll(async () => {
  s = await startTestServer();
  await orderNumber(s, OURS);
});
afterAll(async () => await s.stop());

async function threadWith(from: string, body: string) {
  const answer = await s.api("POST", "/v1/sandbox/inbound", { from, to: OURS, body });
  return answer.body.message.conversation_id as string;
}
const ids = (body: { conversations: { id: string }[] }) => body.conversations.map((c) => c.id);

/** Invites a workspace user (with the key) and signs them in: their id and session cookie. */
async function teammate(email: string, name = email.split("@")[0] as string) {
  const invited = await s.api("POST", "/v1/users", { email, name, role: "agent" });
  expect([invited.status, invited.body.error]).toEqual([200, undefined]);
  const token = new URL(invited.body.setup_url, "http://x").searchParams.get("token");
  const done = await s.api(
    "POST",
    "/auth/setup",
    { token, password: "correct horse battery" },
    { key: null },
  );
  const cookie = (done.headers.get("set-cookie") ?? "").match(/^outreach_session=([A-Za-z0-9_-]{43});/)?.[1];
  if (!cookie) throw new Error(`no session for ${email}: ${done.status} ${JSON.stringify(done.body)}`);
  return { id: invited.body.user.id as string, cookie };
}

/** A request with a user's session instead of the key. */
const asUser = async (cookie: string, method: string, path: string, body?: unknown) =>
  await s.api(method, path, body, { key: null, headers: { cookie: `outreach_session=${cookie}` } });

let dana: { id: string; cookie: string };
let jordan: { id: string; cookie: string };
beforeAll(async () => {
  dana = await teammate("dana@acme.test", "Dana");
  jordan = await teammate("jordan@acme.test", "Jordan");
});

describe("GET /v1/conversations", () => {
  it("lists threads most recently active first with {ok, conversations, total, limit, offset}", async () => {
    const a = await threadWith("+14155550300", "first");
    const b = await threadWith("+14155550301", "second");
    const answer = await s.api("GET", "/v1/conversations");
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ ok: true, limit: 50, offset: 0 });
    expect(ids(answer.body).slice(0, 2)).toEqual([b, a]);
    expect(answer.body.conversations[0]).toEqual({
      id: b,
      contact_id: expect.any(String),
      status: "open",
      needs_attention: true,
      attention_reason: "unanswered_message",
      assigned_to: null,
      agent_id: null,
      agent_paused: false,
      agent_active: false,
      draft_reply: null,
      intent: null,
      last_message_at: expect.stringMatching(/Z$/),
      created_at: expect.stringMatching(/Z$/),
      contact: {
        id: expect.any(String),
        first_name: null,
        last_name: null,
        phone_number: "+14155550301",
        opted_in: true,
      },
      last_message: {
        body: "second",
        direction: "inbound",
        sender: "contact",
        created_at: expect.stringMatching(/Z$/),
      },
      unread: 1,
      assignee: null,
    });
  });

  it("narrows by filter", async () => {
    const closed = await threadWith("+14155550310", "closing soon");
    await s.api("PATCH", `/v1/conversations/${closed}`, {
      status: "closed",
      assigned_to: dana.id,
      needs_attention: false,
    });
    const open = await threadWith("+14155550311", "still open");
    const agentThread = await threadWith("+14155550312", "agent thread");
    await s.server.handle.db
      .update(conversations)
      .set({ agentId: Bun.randomUUIDv7() })
      .where(eq(conversations.id, agentThread))
      .run();
    const get = async (filter: string) =>
      ids((await s.api("GET", `/v1/conversations?filter=${filter}&limit=200`)).body);
    expect(await get("closed")).toContain(closed);
    expect(await get("closed")).not.toContain(open);
    expect(await get("open")).toContain(open);
    expect(await get("open")).not.toContain(closed);
    expect(await get("assigned")).toEqual([closed]);
    expect(await get("unassigned")).not.toContain(closed);
    expect(await get("needs_attention")).toContain(open);
    expect(await get("needs_attention")).not.toContain(closed);
    expect(await get("agent")).toEqual([agentThread]);
    expect((await get("all")).length).toBe((await s.api("GET", "/v1/conversations")).body.total);
  });

  it("answers 422 for an unknown filter", async () => {
    const answer = await s.api("GET", "/v1/conversations?filter=starred");
    expect(answer.status).toBe(422);
    expect(answer.body).toEqual({
      ok: false,
      error: "filter must be one of all, open, closed, needs_attention, assigned, unassigned, agent, mine",
    });
  });

  it("searches contact name, phone and message text with q", async () => {
    const named = await threadWith("+14155550320", "hello");
    const contactId = (await s.api("GET", `/v1/conversations/${named}`)).body.conversation.contact_id;
    await s.api("PATCH", `/v1/contacts/${contactId}`, { first_name: "Marguerite", last_name: "Okafor" });
    const texted = await threadWith("+14155550321", "Do you deliver sourdough on Sundays?");
    const q = async (text: string) =>
      ids((await s.api("GET", `/v1/conversations?q=${encodeURIComponent(text)}`)).body);
    expect(await q("marguerite")).toEqual([named]);
    expect(await q("Marguerite Okafor")).toEqual([named]);
    expect(await q("5550320")).toEqual([named]);
    expect(await q("+14155550320")).toEqual([named]);
    expect(await q("sourdough")).toEqual([texted]);
    expect(await q("sourd")).toEqual([texted]);
    expect(await q("SUNDAYS sourdough")).toEqual([texted]);
    expect(await q("croissant")).toEqual([]);
    expect(await q('"AND NEAR(*')).toEqual([]);
    const filtered = await s.api("GET", "/v1/conversations?q=sourdough&filter=closed");
    expect(filtered.body).toMatchObject({ conversations: [], total: 0 });
  });

  it("searches without accents, folding ø, ß, æ and ligatures as well (the same on both databases)", async () => {
    const named = await threadWith("+14155550322", "hello");
    const contactId = (await s.api("GET", `/v1/conversations/${named}`)).body.conversation.contact_id;
    await s.api("PATCH", `/v1/contacts/${contactId}`, { first_name: "Søren", last_name: "Ærø" });
    const texted = await threadWith("+14155550323", "Grüße aus der Straße: ﬁnal Ｏｆｆｅｒ, Crème brûlée");
    const q = async (text: string) =>
      ids((await s.api("GET", `/v1/conversations?q=${encodeURIComponent(text)}`)).body);
    for (const text of ["soren", "SØREN", "aero", "Søren Ærø"])
      expect({ text, found: await q(text) }).toEqual({ text, found: [named] });
    for (const text of ["strasse", "Straße", "grusse", "final", "offer", "creme brulee", "CRÈME"])
      expect({ text, found: await q(text) }).toEqual({ text, found: [texted] });
  });

  it("never shows another workspace's threads", async () => {
    await threadWith("+14155550330", "mine");
    const other = await s.newWorkspace("Other");
    const answer = await s.api("GET", "/v1/conversations", undefined, { key: other.key });
    expect(answer.body).toMatchObject({ conversations: [], total: 0 });
  });
});

describe("GET /v1/conversations/{id}", () => {
  it("returns the thread with sender, oldest first", async () => {
    const id = await threadWith("+14155550340", "Is my order ready?");
    await s.api("POST", `/v1/conversations/${id}`, { body: "Yes, pick it up any time." });
    const answer = await s.api("GET", `/v1/conversations/${id}`);
    expect(answer.status).toBe(200);
    expect(answer.body.conversation.messages).toEqual([
      {
        id: expect.any(String),
        direction: "inbound",
        sender: "contact",
        body: "Is my order ready?",
        status: "RECEIVED",
        call_id: null,
        created_at: expect.stringMatching(/Z$/),
      },
      {
        id: expect.any(String),
        direction: "outbound",
        sender: "human",
        body: "Yes, pick it up any time.",
        status: expect.any(String),
        call_id: null,
        created_at: expect.stringMatching(/Z$/),
      },
    ]);
  });

  it("answers 404 'Not found' for unknown, malformed and foreign ids", async () => {
    const id = await threadWith("+14155550341", "x");
    const other = await s.newWorkspace("Foreign");
    for (const [path, key] of [
      [`/v1/conversations/${Bun.randomUUIDv7()}`, undefined],
      ["/v1/conversations/123", undefined],
      [`/v1/conversations/${id}`, other.key],
    ] as const) {
      const answer = await s.api("GET", path, undefined, { key });
      expect(answer.status).toBe(404);
      expect(answer.body).toEqual({ ok: false, error: "Not found" });
    }
  });
});

describe("POST /v1/conversations/{id}", () => {
  it("sends a human reply, pauses the thread's agent and clears needs_attention", async () => {
    const id = await threadWith("+14155550350", "I need a person");
    await s.server.handle.db
      .update(conversations)
      .set({ agentId: Bun.randomUUIDv7() })
      .where(eq(conversations.id, id))
      .run();
    const answer = await s.api("POST", `/v1/conversations/${id}`, { body: "Hi, this is Sam." });
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ ok: true, sent: true });
    const conversation = (await s.api("GET", `/v1/conversations/${id}`)).body.conversation;
    expect(conversation).toMatchObject({ needs_attention: false, agent_paused: true });
    const reply = conversation.messages[1];
    const sent = await eventually(
      async () => await s.api("GET", `/v1/messages/${reply.id}`),
      (r) => r.body.message.status === "DELIVERED",
    );
    expect(sent.body.message).toMatchObject({ from: OURS, to: "+14155550350", status: "DELIVERED" });
  });

  it("answers 422 'Recipient has opted out' to an opted-out contact and sends nothing", async () => {
    const id = await threadWith("+14155550351", "STOP");
    const before = (await s.api("GET", `/v1/conversations/${id}`)).body.conversation.messages.length;
    const answer = await s.api("POST", `/v1/conversations/${id}`, { body: "wait!" });
    expect(answer.status).toBe(422);
    expect(answer.body).toEqual({ ok: false, error: "Recipient has opted out" });
    expect((await s.api("GET", `/v1/conversations/${id}`)).body.conversation.messages.length).toBe(before);
  });

  it("answers 422 'body is required' without body and 404 for an unknown thread", async () => {
    const id = await threadWith("+14155550352", "x");
    const empty = await s.api("POST", `/v1/conversations/${id}`, {});
    expect(empty.status).toBe(422);
    expect(empty.body).toEqual({ ok: false, error: "body is required" });
    const long = await s.api("POST", `/v1/conversations/${id}`, { body: "x".repeat(1601) });
    expect(long.body).toEqual({ ok: false, error: "body is too long (max 1600)" });
    const unknown = await s.api("POST", `/v1/conversations/${Bun.randomUUIDv7()}`, { body: "x" });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ ok: false, error: "Not found" });
  });

  it("answers 404 for another workspace's thread and 403 to a read-only key", async () => {
    const id = await threadWith("+14155550353", "x");
    const other = await s.newWorkspace("Other");
    expect((await s.api("POST", `/v1/conversations/${id}`, { body: "x" }, { key: other.key })).status).toBe(
      404,
    );
    const { key } = await s.newKey(["read"]);
    expect((await s.api("POST", `/v1/conversations/${id}`, { body: "x" }, { key })).status).toBe(403);
  });
});

describe("PATCH /v1/conversations/{id}", () => {
  it("updates status, assigned_to and needs_attention", async () => {
    const id = await threadWith("+14155550360", "x");
    const answer = await s.api("PATCH", `/v1/conversations/${id}`, {
      status: "closed",
      assigned_to: jordan.id,
      needs_attention: false,
    });
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ ok: true, updated: true });
    expect((await s.api("GET", `/v1/conversations/${id}`)).body.conversation).toMatchObject({
      status: "closed",
      assigned_to: jordan.id,
      needs_attention: false,
    });
    await s.api("PATCH", `/v1/conversations/${id}`, { assigned_to: null, status: "open" });
    expect((await s.api("GET", `/v1/conversations/${id}`)).body.conversation).toMatchObject({
      status: "open",
      assigned_to: null,
    });
  });

  it("answers 422 'status must be one of open, closed' and changes nothing", async () => {
    const id = await threadWith("+14155550361", "x");
    const answer = await s.api("PATCH", `/v1/conversations/${id}`, { status: "archived", assigned_to: "x" });
    expect(answer.status).toBe(422);
    expect(answer.body).toEqual({ ok: false, error: "status must be one of open, closed" });
    expect((await s.api("GET", `/v1/conversations/${id}`)).body.conversation).toMatchObject({
      status: "open",
      assigned_to: null,
    });
  });

  it("answers 422 for a non-boolean needs_attention and 404 for unknown or foreign threads", async () => {
    const id = await threadWith("+14155550362", "x");
    const bad = await s.api("PATCH", `/v1/conversations/${id}`, { needs_attention: "yes" });
    expect(bad.status).toBe(422);
    expect(bad.body).toEqual({ ok: false, error: "needs_attention must be a boolean" });
    expect(
      (await s.api("PATCH", `/v1/conversations/${Bun.randomUUIDv7()}`, { status: "closed" })).status,
    ).toBe(404);
    const other = await s.newWorkspace("Other");
    expect(
      (await s.api("PATCH", `/v1/conversations/${id}`, { status: "closed" }, { key: other.key })).status,
    ).toBe(404);
  });
});

describe("a thread's last_message_at", () => {
  const threadOf = async (id: string) =>
    await s.server.handle.db.select().from(conversations).where(eq(conversations.id, id)).get();

  it("is its first message's time for a new thread, and moves with each later message", async () => {
    const first = await s.api("POST", "/v1/messages", { to: "+14155550390", body: "one" });
    expect(first.status).toBe(200);
    const message = await s.api("GET", `/v1/messages/${first.body.message.id}`);
    const threadId = message.body.message.conversation_id as string;
    const created = await threadOf(threadId);
    expect(created?.lastMessageAt).toBe(Date.parse(message.body.message.created_at));
    expect(created?.updatedAt).toBe(created?.lastMessageAt ?? -1);
    await Bun.sleep(5);
    const second = await s.api("POST", "/v1/messages", { to: "+14155550390", body: "two" });
    const later = await s.api("GET", `/v1/messages/${second.body.message.id}`);
    expect(later.body.message.conversation_id).toBe(threadId);
    const moved = await threadOf(threadId);
    expect(moved?.lastMessageAt).toBe(Date.parse(later.body.message.created_at));
    expect(moved?.lastMessageAt).toBeGreaterThan(created?.lastMessageAt ?? 0);
    expect(moved?.updatedAt).toBe(moved?.lastMessageAt ?? -1);
  });
});

describe("GET /v1/conversations: what an inbox row shows (API.md §7.4)", () => {
  const row = async (id: string, cookie?: string) => {
    const answer = cookie
      ? await asUser(cookie, "GET", "/v1/conversations?limit=200")
      : await s.api("GET", "/v1/conversations?limit=200");
    return answer.body.conversations.find((c: { id: string }) => c.id === id);
  };

  it("carries the latest message's first 140 characters, its direction and sender", async () => {
    const id = await threadWith("+14155550400", "first");
    await s.api("POST", `/v1/conversations/${id}`, { body: `${"é".repeat(150)} tail` });
    expect((await row(id)).last_message).toEqual({
      body: "é".repeat(140),
      direction: "outbound",
      sender: "human",
      created_at: expect.stringMatching(/Z$/),
    });
  });

  it("counts unread inbound messages per user, from when that user last opened the thread", async () => {
    const id = await threadWith("+14155550401", "one");
    await threadWith("+14155550401", "two");
    const cases: [string, () => Promise<number>, number][] = [
      ["dana before opening", async () => (await row(id, dana.cookie)).unread, 2],
      ["the key before anyone opened", async () => (await row(id)).unread, 2],
    ];
    for (const [name, read, expected] of cases) expect([name, await read()]).toEqual([name, expected]);
    expect((await asUser(dana.cookie, "GET", `/v1/conversations/${id}`)).status).toBe(200);
    await Bun.sleep(2);
    await threadWith("+14155550401", "three");
    const after: [string, () => Promise<number>, number][] = [
      ["dana after opening, one more inbound", async () => (await row(id, dana.cookie)).unread, 1],
      ["jordan, who never opened it", async () => (await row(id, jordan.cookie)).unread, 3],
      ["the key: since any user opened it", async () => (await row(id)).unread, 1],
    ];
    for (const [name, read, expected] of after) expect([name, await read()]).toEqual([name, expected]);
  });

  it("an open thread polled again writes no new read mark until a newer inbound message arrives", async () => {
    const id = await threadWith("+14155550404", "one");
    const stored = async () =>
      (
        await s.server.handle.db
          .select()
          .from(conversationReads)
          .where(and(eq(conversationReads.conversationId, id), eq(conversationReads.userId, dana.id)))
          .get()
      )?.readAt ?? null;
    const open = async () =>
      expect((await asUser(dana.cookie, "GET", `/v1/conversations/${id}`)).status).toBe(200);
    await open();
    const first = await stored();
    await Bun.sleep(5);
    await open();
    const second = await stored();
    await Bun.sleep(5);
    await threadWith("+14155550404", "two");
    await open();
    const third = await stored();
    const cases: [string, boolean][] = [
      ["the first open writes a mark", first !== null],
      ["a second open with nothing new keeps it", second === first],
      ["an open after a newer inbound message moves it", (third ?? 0) > (first ?? 0)],
    ];
    for (const [name, holds] of cases) expect([name, holds]).toEqual([name, true]);
    expect((await row(id, dana.cookie)).unread).toBe(0);
  });

  it("opening a thread with no inbound message writes no read mark", async () => {
    const sent = await s.api("POST", "/v1/messages", { to: "+14155550405", body: "hi" });
    const message = await s.api("GET", `/v1/messages/${sent.body.message.id}`);
    const id = message.body.message.conversation_id as string;
    await asUser(dana.cookie, "GET", `/v1/conversations/${id}`);
    const [marks] = await s.server.handle.db
      .select({ n: count() })
      .from(conversationReads)
      .where(eq(conversationReads.conversationId, id))
      .all();
    expect(marks?.n).toBe(0);
  });

  it("a GET with an API key marks nothing read", async () => {
    const id = await threadWith("+14155550402", "hello");
    await s.api("GET", `/v1/conversations/${id}`);
    expect((await row(id, jordan.cookie)).unread).toBe(1);
  });

  it("carries the assignee's id, e-mail and name", async () => {
    const id = await threadWith("+14155550403", "x");
    await s.api("PATCH", `/v1/conversations/${id}`, { assigned_to: "dana@acme.test" });
    expect(await row(id)).toMatchObject({
      assigned_to: dana.id,
      assignee: { id: dana.id, email: "dana@acme.test", name: "Dana" },
    });
  });

  it("shows the contact's opted-out state in the row", async () => {
    const id = await threadWith("+14155550404", "STOP");
    expect((await row(id)).contact).toMatchObject({ phone_number: "+14155550404", opted_in: false });
  });
});

describe("GET /v1/conversations?filter=mine", () => {
  it("lists the threads assigned to the signed-in user", async () => {
    const danas = await threadWith("+14155550410", "for dana");
    const jordans = await threadWith("+14155550411", "for jordan");
    await s.api("PATCH", `/v1/conversations/${danas}`, { assigned_to: dana.id });
    await s.api("PATCH", `/v1/conversations/${jordans}`, { assigned_to: jordan.id });
    const mine = await asUser(dana.cookie, "GET", "/v1/conversations?filter=mine&limit=200");
    expect(mine.status).toBe(200);
    expect(ids(mine.body)).toContain(danas);
    expect(ids(mine.body)).not.toContain(jordans);
    expect(mine.body.conversations.every((c: { assigned_to: string }) => c.assigned_to === dana.id)).toBe(
      true,
    );
  });

  it("answers 422 to an API key, which has no user", async () => {
    const answer = await s.api("GET", "/v1/conversations?filter=mine");
    expect([answer.status, answer.body]).toEqual([
      422,
      { ok: false, error: "filter mine needs a signed-in user (an API key has none)" },
    ]);
  });
});

describe("PATCH /v1/conversations/{id} assigned_to", () => {
  it("takes a workspace user's id or e-mail (any case) and stores the id; null unassigns", async () => {
    const id = await threadWith("+14155550420", "x");
    const cases: [string, string | null, string | null][] = [
      ["id", jordan.id, jordan.id],
      ["e-mail", "dana@acme.test", dana.id],
      ["e-mail in capitals", "DANA@Acme.Test", dana.id],
      ["null", null, null],
    ];
    for (const [name, value, stored] of cases) {
      const answer = await s.api("PATCH", `/v1/conversations/${id}`, { assigned_to: value });
      const after = (await s.api("GET", `/v1/conversations/${id}`)).body.conversation.assigned_to;
      expect([name, answer.status, after]).toEqual([name, 200, stored]);
    }
  });

  it("answers 422 'assigned_to does not exist' for anyone else and keeps the assignee", async () => {
    const id = await threadWith("+14155550421", "x");
    await s.api("PATCH", `/v1/conversations/${id}`, { assigned_to: dana.id });
    const stranger = await s.newWorkspace("Strangers");
    const invited = await s.api(
      "POST",
      "/v1/users",
      { email: "ola@elsewhere.test", name: "Ola", role: "admin" },
      { key: stranger.key },
    );
    const cases: [string, unknown][] = [
      ["a name", "jordan"],
      ["an unknown e-mail", "nobody@acme.test"],
      ["an unknown id", Bun.randomUUIDv7()],
      ["another workspace's user by id", invited.body.user.id],
      ["another workspace's user by e-mail", "ola@elsewhere.test"],
      ["an empty string", ""],
    ];
    for (const [name, value] of cases) {
      const answer = await s.api("PATCH", `/v1/conversations/${id}`, {
        assigned_to: value,
        status: "closed",
      });
      expect([name, answer.status, answer.body]).toEqual([
        name,
        422,
        { ok: false, error: "assigned_to does not exist" },
      ]);
    }
    expect((await s.api("GET", `/v1/conversations/${id}`)).body.conversation).toMatchObject({
      assigned_to: dana.id,
      status: "open",
    });
  });

  it("lets an agent user assign a thread to themself", async () => {
    const id = await threadWith("+14155550422", "x");
    const answer = await asUser(jordan.cookie, "PATCH", `/v1/conversations/${id}`, {
      assigned_to: jordan.id,
    });
    expect([answer.status, answer.body]).toEqual([200, { ok: true, updated: true }]);
  });
});

describe("GET /v1/conversations/assignees", () => {
  it("lists the workspace's users by name, for agent users too", async () => {
    const answer = await asUser(jordan.cookie, "GET", "/v1/conversations/assignees");
    expect(answer.status).toBe(200);
    expect(answer.body.assignees).toEqual(
      expect.arrayContaining([
        { id: dana.id, email: "dana@acme.test", name: "Dana" },
        { id: jordan.id, email: "jordan@acme.test", name: "Jordan" },
      ]),
    );
  });

  it("never lists another workspace's users", async () => {
    const other = await s.newWorkspace("Lonely");
    const answer = await s.api("GET", "/v1/conversations/assignees", undefined, { key: other.key });
    expect(answer.body.assignees.map((a: { email: string }) => a.email)).not.toContain("dana@acme.test");
  });
});

describe("POST /v1/conversations/{id}/notes", () => {
  const db = () => s.server.handle.db;
  const messageCount = async () => (await db().select({ n: count() }).from(messages).get())?.n ?? 0;
  const messageEvents = async () =>
    (await db().select({ n: count() }).from(events).where(like(events.type, "message.%")).get())?.n ?? 0;

  it("adds a note with its author, shown in the thread as sender 'note'", async () => {
    const id = await threadWith("+14155550430", "Can I change my order?");
    const answer = await asUser(dana.cookie, "POST", `/v1/conversations/${id}/notes`, {
      body: "She wants size M instead.",
    });
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({
      ok: true,
      note: {
        id: expect.any(String),
        body: "She wants size M instead.",
        author: { user_id: dana.id, name: "Dana" },
        created_at: expect.stringMatching(/Z$/),
      },
    });
    const thread = (await s.api("GET", `/v1/conversations/${id}`)).body.conversation.messages;
    expect(thread.at(-1)).toEqual({
      id: answer.body.note.id,
      direction: "internal",
      sender: "note",
      body: "She wants size M instead.",
      status: "NOTE",
      call_id: null,
      created_at: answer.body.note.created_at,
      author: { user_id: dana.id, name: "Dana" },
    });
  });

  it("is never sent: no message, no message.* event, no analytics figure, not the row's last message", async () => {
    const id = await threadWith("+14155550431", "hi");
    const figures = async () => {
      const { messages: counted, replies } = (await s.api("GET", "/v1/analytics/overview")).body.overview;
      return {
        messages: await messageCount(),
        events: await messageEvents(),
        analytics: { sent: counted.sent, inbound: counted.inbound, replies },
        listed: (await s.api("GET", "/v1/messages?limit=1")).body.total,
      };
    };
    // Earlier tests' sends may still be on their way (PENDING → SENT moves the analytics): the
    // figures once two reads 100 ms apart agree.
    let before = await figures();
    for (let i = 0; i < 100; i++) {
      await Bun.sleep(100);
      const again = await figures();
      if (JSON.stringify(again) === JSON.stringify(before)) break;
      before = again;
    }
    const note = await s.api("POST", `/v1/conversations/${id}/notes`, { body: "Do not text her after 6pm" });
    expect(note.status).toBe(200);
    await Bun.sleep(50);
    const after = await figures();
    expect(after).toEqual(before);
    const listed = (await s.api("GET", "/v1/conversations?limit=200")).body.conversations;
    expect(listed.find((c: { id: string }) => c.id === id).last_message.body).toBe("hi");
  });

  it("names the API key as author when written with a key", async () => {
    const id = await threadWith("+14155550432", "x");
    const answer = await s.api("POST", `/v1/conversations/${id}/notes`, { body: "from the CRM" });
    expect(answer.body.note.author).toEqual({ user_id: null, name: expect.any(String) });
  });

  it("answers 422 for a missing, blank or long body, and 404 for unknown and foreign threads", async () => {
    const id = await threadWith("+14155550433", "x");
    const other = await s.newWorkspace("Other notes");
    const cases: [string, string, unknown, string | undefined, number, string][] = [
      ["no body", id, {}, undefined, 422, "body is required"],
      ["blank body", id, { body: "   " }, undefined, 422, "body is required"],
      ["long body", id, { body: "x".repeat(2001) }, undefined, 422, "body is too long (max 2000)"],
      ["unknown thread", Bun.randomUUIDv7(), { body: "x" }, undefined, 404, "Not found"],
      ["another workspace's thread", id, { body: "x" }, other.key, 404, "Not found"],
    ];
    for (const [name, thread, body, key, status, error] of cases) {
      const answer = await s.api("POST", `/v1/conversations/${thread}/notes`, body, { key });
      expect([name, answer.status, answer.body]).toEqual([name, status, { ok: false, error }]);
    }
  });
});

describe("openThreadsFor (a bulk sender's new threads)", () => {
  it("makes one open thread per contact, and takes the one another transaction made meanwhile", async () => {
    const ws = await s.newWorkspace("Bulk threads");
    const made = [];
    for (const phone of ["+14155550701", "+14155550702"]) {
      const res = await s.api("POST", "/v1/contacts", { phone_number: phone }, { key: ws.key });
      made.push(res.body.contact.id as string);
    }
    const [first, second] = made;
    const { db } = s.server.handle;
    const now = Date.now();
    // The first contact's thread is made by another writer after the batch read the open threads.
    const earlier = new Map();
    await db.transaction(async (tx) => await openThreadsFor(tx, earlier, ws.workspaceId, [first], now));
    const open = new Map();
    await db.transaction(
      async (tx) => await openThreadsFor(tx, open, ws.workspaceId, [first, second, second], now),
    );
    expect(open.get(first)?.id).toBe(earlier.get(first)?.id);
    const rows = await db
      .select({
        contactId: conversations.contactId,
        id: conversations.id,
        searchKey: conversations.searchKey,
      })
      .from(conversations)
      .where(and(eq(conversations.workspaceId, ws.workspaceId), eq(conversations.status, "open")))
      .all();
    expect(rows.map((row) => row.contactId).sort()).toEqual([first, second].sort());
    expect(rows.find((row) => row.contactId === second)?.id).toBe(open.get(second)?.id);
    // Each has its own search key, given by the database.
    expect(new Set(rows.map((row) => row.searchKey)).size).toBe(2);
    expect(rows.every((row) => row.searchKey !== null)).toBe(true);
  });
});
