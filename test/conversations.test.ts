import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { eq } from "drizzle-orm";
import { conversations } from "../src/db/schema";
import { eventually, orderNumber } from "./support/messaging";
import { startTestServer, type TestServer } from "./support/server";

const OURS = "+14155550100";
let s: TestServer;

beforeAll(async () => {
  s = await startTestServer();
  await orderNumber(s, OURS);
});
afterAll(() => s.stop());

async function threadWith(from: string, body: string) {
  const answer = await s.api("POST", "/v1/sandbox/inbound", { from, to: OURS, body });
  return answer.body.message.conversation_id as string;
}
const ids = (body: { conversations: { id: string }[] }) => body.conversations.map((c) => c.id);

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
    });
  });

  it("narrows by filter", async () => {
    const closed = await threadWith("+14155550310", "closing soon");
    await s.api("PATCH", `/v1/conversations/${closed}`, {
      status: "closed",
      assigned_to: "dana",
      needs_attention: false,
    });
    const open = await threadWith("+14155550311", "still open");
    const agentThread = await threadWith("+14155550312", "agent thread");
    s.server.handle.db
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
      error: "filter must be one of all, open, closed, needs_attention, assigned, unassigned, agent",
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

  it("never shows another workspace's threads", async () => {
    await threadWith("+14155550330", "mine");
    const other = s.newWorkspace("Other");
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
    const other = s.newWorkspace("Foreign");
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
    s.server.handle.db
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
      () => s.api("GET", `/v1/messages/${reply.id}`),
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
    const other = s.newWorkspace("Other");
    expect((await s.api("POST", `/v1/conversations/${id}`, { body: "x" }, { key: other.key })).status).toBe(
      404,
    );
    const { key } = s.newKey(["read"]);
    expect((await s.api("POST", `/v1/conversations/${id}`, { body: "x" }, { key })).status).toBe(403);
  });
});

describe("PATCH /v1/conversations/{id}", () => {
  it("updates status, assigned_to and needs_attention", async () => {
    const id = await threadWith("+14155550360", "x");
    const answer = await s.api("PATCH", `/v1/conversations/${id}`, {
      status: "closed",
      assigned_to: "jordan",
      needs_attention: false,
    });
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ ok: true, updated: true });
    expect((await s.api("GET", `/v1/conversations/${id}`)).body.conversation).toMatchObject({
      status: "closed",
      assigned_to: "jordan",
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
    const other = s.newWorkspace("Other");
    expect(
      (await s.api("PATCH", `/v1/conversations/${id}`, { status: "closed" }, { key: other.key })).status,
    ).toBe(404);
  });
});

describe("a thread's last_message_at", () => {
  const threadOf = (id: string) =>
    s.server.handle.db.select().from(conversations).where(eq(conversations.id, id)).get();

  it("is its first message's time for a new thread, and moves with each later message", async () => {
    const first = await s.api("POST", "/v1/messages", { to: "+14155550390", body: "one" });
    expect(first.status).toBe(200);
    const message = await s.api("GET", `/v1/messages/${first.body.message.id}`);
    const threadId = message.body.message.conversation_id as string;
    const created = threadOf(threadId);
    expect(created?.lastMessageAt).toBe(Date.parse(message.body.message.created_at));
    expect(created?.updatedAt).toBe(created?.lastMessageAt ?? -1);
    await Bun.sleep(5);
    const second = await s.api("POST", "/v1/messages", { to: "+14155550390", body: "two" });
    const later = await s.api("GET", `/v1/messages/${second.body.message.id}`);
    expect(later.body.message.conversation_id).toBe(threadId);
    const moved = threadOf(threadId);
    expect(moved?.lastMessageAt).toBe(Date.parse(later.body.message.created_at));
    expect(moved?.lastMessageAt).toBeGreaterThan(created?.lastMessageAt ?? 0);
    expect(moved?.updatedAt).toBe(moved?.lastMessageAt ?? -1);
  });
});
