/**
 * Flows end to end through the sandbox carrier (API.md §3 Flows, §5, §6.6): definitions valid and
 * invalid, activation and pausing, manual and automatic enrolment, a running flow that branches,
 * sends, waits for a reply and hands off (never to a suppressed contact, deferred at night),
 * purchase exits, the webhook node, stats and runs, and the simulator against the real run.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { Value } from "@sinclair/typebox/value";
import { Webhook } from "standardwebhooks";
import { EVENT_DATA_SCHEMAS } from "../src/webhooks/events";
import { eventLog } from "./support/event-log";
import { eventually, handOffs } from "./support/messaging";
import { startTestServer, type TestServer } from "./support/server";
import { Receiver } from "./support/webhook-receiver";
import { zoneAtLocalHour } from "./support/zones";

let s: TestServer;
let receiver: Receiver;
beforeAll(async () => {
  s = await startTestServer({}, { SIMULATED_DELIVERY_MS: "20" });
  receiver = new Receiver();
});
afterAll(async () => {
  await s.stop();
  receiver.stop();
});
const log = eventLog(() => s);

// biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON answers
type Json = any;

const DAY = zoneAtLocalHour(12);
const NIGHT = zoneAtLocalHour(3);
let phoneSeq = 5000;
const newPhone = () => `+1415555${String(phoneSeq++).padStart(4, "0")}`;
let numberSeq = 100;

async function workspace(name = "Flows") {
  const ws = await s.newWorkspace(name);
  const api = async (method: string, path: string, body?: unknown) =>
    await s.api(method, path, body, { key: ws.key });
  const contact = async (extra: Record<string, unknown> = {}) => {
    const res = await api("POST", "/v1/contacts", { phone_number: newPhone(), timezone: DAY, ...extra });
    expect(res.status).toBe(200);
    return res.body.contact as Json;
  };
  const outbox = async () =>
    handOffs((await api("GET", "/v1/sandbox/outbox?limit=200")).body.sends as Json[]);
  const flow = async (definition: unknown, extra: Record<string, unknown> = {}) => {
    const res = await api("POST", "/v1/flows", { name: "Welcome", definition, ...extra });
    expect(res.status).toBe(200);
    return res.body.flow as Json;
  };
  const runs = async (flowId: string, status?: string) =>
    (await api("GET", `/v1/flows/${flowId}/runs${status ? `?status=${status}` : ""}`)).body.runs as Json[];
  return { ...ws, api, contact, outbox, flow, runs };
}

const at = (x: number) => ({ x, y: 0 });
const node = (id: string, type: string, data: Record<string, unknown> = {}) => ({
  id,
  type,
  position: at(0),
  data,
});
const edge = (source: string, target: string, sourceHandle?: string) => ({
  id: `${source}-${target}`,
  source,
  target,
  ...(sourceHandle ? { sourceHandle } : {}),
});

/** trigger → send → wait for a reply → (replied) condition on plan → thank pro / thank others; (timeout) end. */
function replyFlow(trigger: Record<string, unknown> = { event: "manual" }) {
  return {
    nodes: [
      node("t", "trigger", trigger),
      node("hello", "send_sms", { body: "Hi {{first_name|there}}, any questions?" }),
      node("wait", "wait_for_reply", { timeout_hours: 24 }),
      node("plan", "condition", { rules: { all: [{ field: "fields.plan", op: "eq", value: "pro" }] } }),
      node("pro", "send_sms", { body: "Thanks, pro customer!" }),
      node("other", "send_sms", { body: "Thanks!" }),
      node("done", "end"),
    ],
    edges: [
      edge("t", "hello"),
      edge("hello", "wait"),
      edge("wait", "plan", "replied"),
      edge("wait", "done", "timeout"),
      edge("plan", "pro", "true"),
      edge("plan", "other", "false"),
    ],
  };
}

/** Gives the workspace a number of its own (a number belongs to one workspace); returns it. */
async function setup(w: Awaited<ReturnType<typeof workspace>>) {
  const number = `+1415555${String(numberSeq++).padStart(4, "0")}`;
  const res = await w.api("POST", "/v1/numbers", { number });
  expect(res.body.added).toBe(1);
  return number;
}

describe("flow definitions", () => {
  it("takes React Flow's own node and edge fields and does not store them", async () => {
    const w = await workspace();
    const res = await w.api("POST", "/v1/flows", {
      name: "From the canvas",
      definition: {
        nodes: [
          {
            id: "t",
            type: "trigger",
            position: { x: 0, y: 0, z: 1 },
            data: { event: "manual" },
            selected: true,
            measured: { width: 100, height: 40 },
          },
          { id: "e", type: "end", position: { x: 0, y: 100 }, dragging: false },
        ],
        edges: [{ id: "x", source: "t", target: "e", animated: true, targetHandle: null }],
      },
    });
    expect(res.status).toBe(200);
    expect(res.body.flow.definition).toEqual({
      nodes: [
        { id: "t", type: "trigger", position: { x: 0, y: 0 }, data: { event: "manual" } },
        { id: "e", type: "end", position: { x: 0, y: 100 }, data: {} },
      ],
      edges: [{ id: "x", source: "t", target: "e" }],
    });
    expect((await w.api("GET", "/v1/flows")).status).toBe(200);
  });

  it("creates a draft with settings and a webhook secret; lists and gets it as the seed shows", async () => {
    const w = await workspace();
    const flow = await w.flow(replyFlow(), { settings: { exit_on_purchase: true } });
    expect(flow).toMatchObject({ name: "Welcome", status: "draft" });
    expect(flow.settings).toMatchObject({ exit_on_purchase: true, allow_reentry: false });
    expect(flow.settings.webhook_secret).toStartWith("whsec_");
    expect(flow.definition.nodes).toHaveLength(7);
    const list = await w.api("GET", "/v1/flows");
    expect(list.body).toMatchObject({ ok: true, total: 1 });
    expect(list.body.flows[0]).toMatchObject({ id: flow.id, name: "Welcome", status: "draft" });
    expect((await w.api("GET", "/v1/flows?q=welc")).body.flows.map((f: { id: string }) => f.id)).toEqual([
      flow.id,
    ]);
    expect((await w.api("GET", "/v1/flows?q=nothing")).body.total).toBe(0);
    expect((await w.api("GET", `/v1/flows/${flow.id}`)).body.flow.id).toBe(flow.id);
    const other = await workspace("Other");
    expect((await other.api("GET", `/v1/flows/${flow.id}`)).status).toBe(404);
  });

  const bad: [string, unknown, string][] = [
    ["no trigger", { nodes: [node("a", "end")], edges: [] }, "definition needs exactly one trigger node"],
    [
      "a dangling edge",
      { nodes: [node("t", "trigger", { event: "manual" })], edges: [edge("t", "ghost")] },
      'edges[0] ("t-ghost"): target "ghost" is not a node',
    ],
    [
      "an unknown node type",
      { nodes: [node("t", "trigger", { event: "manual" }), node("x", "teleport")], edges: [] },
      'nodes[1] ("x"): type must be one of',
    ],
    [
      "a condition edge without its handle",
      {
        nodes: [
          node("t", "trigger", { event: "manual" }),
          node("c", "condition", { rules: { all: [] } }),
          node("e", "end"),
        ],
        edges: [edge("t", "c"), edge("c", "e")],
      },
      'edges[1] ("c-e"): sourceHandle must be one of true, false',
    ],
    [
      "a wait over 365 days",
      {
        nodes: [node("t", "trigger", { event: "manual" }), node("w", "wait", { days: 400 })],
        edges: [edge("t", "w")],
      },
      'nodes[1] ("w"): wait must not be longer than 365 days',
    ],
    [
      "a loop without a wait",
      {
        nodes: [
          node("t", "trigger", { event: "manual" }),
          node("a", "send_sms", { body: "a" }),
          node("b", "send_sms", { body: "b" }),
        ],
        edges: [edge("t", "a"), edge("a", "b"), edge("b", "a")],
      },
      "definition has a loop without a wait",
    ],
    [
      "a condition whose rules do not validate",
      {
        nodes: [
          node("t", "trigger", { event: "manual" }),
          node("c", "condition", { rules: { all: [{ field: "zzz", op: "eq", value: 1 }] } }),
        ],
        edges: [edge("t", "c", undefined)],
      },
      'nodes[1] ("c"): data.rules',
    ],
    [
      "a list that does not exist",
      {
        nodes: [
          node("t", "trigger", { event: "added_to_list", list_id: "01936f8e-7c1a-7a3b-9f00-2d5e8c1b4a77" }),
        ],
        edges: [],
      },
      "definition.nodes[0].data.list_id does not exist",
    ],
  ];
  for (const [what, definition, error] of bad) {
    it(`answers 422 for ${what}, naming it, and writes nothing`, async () => {
      const w = await workspace();
      const res = await w.api("POST", "/v1/flows", { name: "Bad", definition });
      expect(res.status).toBe(422);
      expect(res.body.ok).toBe(false);
      expect(res.body.error).toStartWith(error);
      expect((await w.api("GET", "/v1/flows")).body.total).toBe(0);
    });
  }

  it("activates and pauses with PATCH status; the definition changes only while not active; enroll needs active", async () => {
    const w = await workspace();
    await setup(w);
    const flow = await w.flow(replyFlow());
    const c = await w.contact();
    const early = await w.api("POST", `/v1/flows/${flow.id}/enroll`, { contact_ids: [c.id] });
    expect(early.status).toBe(409);
    // A body that is wrong is answered as such before the state (API.md §1: 422 before 409).
    expect((await w.api("POST", `/v1/flows/${flow.id}/enroll`, { contact_ids: ["nope"] })).body).toEqual({
      ok: false,
      error: "contact_ids[0] does not exist",
    });
    const active = await w.api("PATCH", `/v1/flows/${flow.id}`, { status: "active" });
    expect(active.body).toMatchObject({ ok: true, flow: { status: "active" } });
    const edit = await w.api("PATCH", `/v1/flows/${flow.id}`, { definition: replyFlow() });
    expect(edit.status).toBe(409);
    expect(edit.body.error).toBe("Flow is active: pause it before changing its definition");
    const broken = await w.api("PATCH", `/v1/flows/${flow.id}`, { definition: { nodes: [], edges: [] } });
    expect(broken.body).toEqual({ ok: false, error: "definition needs exactly one trigger node" });
    const paused = await w.api("PATCH", `/v1/flows/${flow.id}`, { status: "paused" });
    expect(paused.body.flow.status).toBe("paused");
    expect((await w.api("PATCH", `/v1/flows/${flow.id}`, { definition: replyFlow() })).status).toBe(200);
    expect((await w.api("POST", `/v1/flows/${flow.id}/enroll`, { contact_ids: [c.id] })).status).toBe(409);
  });
});

describe("running a flow", () => {
  it("sends, waits for the reply, branches on the contact and thanks them; the timeout path ends", async () => {
    const w = await workspace();
    const OURS = await setup(w);
    const flow = await w.flow(replyFlow(), { status: "active" });
    const pro = await w.contact({ first_name: "Ann", fields: { plan: "pro" } });
    const free = await w.contact({ fields: { plan: "free" } });
    const res = await w.api("POST", `/v1/flows/${flow.id}/enroll`, {
      contact_ids: [pro.id, free.id, pro.id],
    });
    expect(res.body).toMatchObject({ ok: true, enrolled: 2, skipped: 1 });
    const first = await eventually(w.outbox, (sends) => sends.length === 2);
    expect(first.map((x) => x.body).sort()).toEqual(["Hi Ann, any questions?", "Hi there, any questions?"]);
    // Both wait for a reply; the pro contact answers.
    expect((await w.runs(flow.id, "active")).map((r) => r.current_node_id)).toEqual(["wait", "wait"]);
    await s.api(
      "POST",
      "/v1/sandbox/inbound",
      { from: pro.phone_number, to: OURS, body: "Tell me more" },
      { key: w.key },
    );
    const after = await eventually(w.outbox, (sends) => sends.length === 3);
    expect(after[0]).toMatchObject({ to: pro.phone_number, body: "Thanks, pro customer!" });
    const done = await eventually(
      () => w.runs(flow.id, "completed"),
      (runs) => runs.length === 1,
    );
    expect(done[0]).toMatchObject({ contact_id: pro.id, status: "completed", current_node_id: "pro" });
    const stats = (await w.api("GET", `/v1/flows/${flow.id}/stats`)).body.stats;
    expect(stats).toMatchObject({ window_days: 30, enrolled: 2, active: 1, completed: 1, exited: 0 });
    expect(stats.nodes.hello).toMatchObject({
      type: "send_sms",
      entered: 2,
      completed: 2,
      sent: 2,
      skipped: 0,
    });
    expect(stats.nodes.wait).toMatchObject({ entered: 2, completed: 1, waiting: 1 });
    expect(stats.nodes.plan).toMatchObject({ entered: 1, completed: 1 });
    expect(stats.nodes.other).toBeUndefined();
    const badStatus = await w.api("GET", `/v1/flows/${flow.id}/runs?status=paused`);
    expect(badStatus.status).toBe(422);
  });

  // [reply, what the thread shows]: neither is a reply the flow answers (API.md §7.1).
  const NOT_REPLIES: [string, { needs_attention: boolean; attention_reason: string | null }][] = [
    ["Stop.", { needs_attention: false, attention_reason: null }],
    [
      "I really want you to stop sending me these",
      { needs_attention: true, attention_reason: "possible_opt_out" },
    ],
  ];
  for (const [body, thread] of NOT_REPLIES) {
    it(`does not answer ${JSON.stringify(body)} from a contact waiting for a reply; the run keeps waiting`, async () => {
      const w = await workspace();
      const OURS = await setup(w);
      const flow = await w.flow(replyFlow(), { status: "active" });
      const stopping = await w.contact();
      const other = await w.contact();
      await w.api("POST", `/v1/flows/${flow.id}/enroll`, { contact_ids: [stopping.id, other.id] });
      await eventually(w.outbox, (sends) => sends.length === 2);
      const inbound = async (from: string, text: string) =>
        await s.api("POST", "/v1/sandbox/inbound", { from, to: OURS, body: text }, { key: w.key });
      await inbound(stopping.phone_number, body);
      // The other contact's reply wakes the same flow: once it is thanked, the first was decided too.
      await inbound(other.phone_number, "Tell me more");
      await eventually(w.outbox, (sends) =>
        sends.some((x) => x.to === other.phone_number && x.body === "Thanks!"),
      );
      const answered = (await w.outbox()).filter(
        (x) => x.to === stopping.phone_number && x.body.startsWith("Thanks"),
      );
      const run = (await w.runs(flow.id)).find((r) => r.contact_id === stopping.id);
      const conversation = (
        await w.api("GET", `/v1/conversations?contact_id=${stopping.id}`)
      ).body.conversations.find((c: Json) => c.contact_id === stopping.id);
      expect({
        body,
        answered: answered.length,
        run: `${run.status}:${run.current_node_id}`,
        thread: {
          needs_attention: conversation.needs_attention,
          attention_reason: conversation.attention_reason,
        },
      }).toEqual({ body, answered: 0, run: "active:wait", thread });
    });
  }

  it("goes on past add_to_list when its list was deleted after the flow was saved", async () => {
    const w = await workspace();
    const list = (await w.api("POST", "/v1/lists", { name: "Gone soon" })).body.list.id;
    const flow = await w.flow(
      {
        nodes: [
          node("t", "trigger", { event: "manual" }),
          node("add", "add_to_list", { list_id: list }),
          node("end", "end"),
        ],
        edges: [edge("t", "add"), edge("add", "end")],
      },
      { status: "active" },
    );
    expect((await w.api("DELETE", `/v1/lists/${list}`)).status).toBe(200);
    const people = [await w.contact(), await w.contact()];
    await w.api("POST", `/v1/flows/${flow.id}/enroll`, { contact_ids: people.map((p) => p.id) });
    const done = await eventually(
      () => w.runs(flow.id, "completed"),
      (runs) => runs.length === 2,
    );
    expect(done.map((r) => r.current_node_id)).toEqual(["end", "end"]);
    const stats = (await w.api("GET", `/v1/flows/${flow.id}/stats`)).body.stats;
    expect(stats.nodes.add).toMatchObject({ entered: 2, skipped: 2 });
  });

  it("never sends to a suppressed contact (skipped, counted) and holds a night-time send until morning", async () => {
    const w = await workspace();
    await setup(w);
    const flow = await w.flow(replyFlow(), { status: "active" });
    const blocked = await w.contact();
    await w.api("POST", "/v1/suppression", { phone_number: blocked.phone_number, reason: "complaint" });
    const night = await w.contact({ timezone: NIGHT });
    await w.api("POST", `/v1/flows/${flow.id}/enroll`, { contact_ids: [blocked.id, night.id] });
    const runs = await eventually(
      () => w.runs(flow.id),
      (list) =>
        list.some(
          (r) => r.contact_id === night.id && r.waiting_until !== null && r.current_node_id === "hello",
        ),
    );
    const held = runs.find((r) => r.contact_id === night.id);
    expect(held.current_node_id).toBe("hello");
    expect(Date.parse(held.waiting_until)).toBeGreaterThan(Date.now() + 60 * 60_000);
    const stats = (await w.api("GET", `/v1/flows/${flow.id}/stats`)).body.stats;
    expect(stats.nodes.hello).toMatchObject({ entered: 2, sent: 0, skipped: 1, waiting: 1 });
    expect(await w.outbox()).toEqual([]);
  });

  it("enrolls by itself on contact_created, added_to_list and inbound_keyword triggers (active flows only)", async () => {
    const w = await workspace();
    const OURS = await setup(w);
    const send = (body: string) => ({
      nodes: [node("t", "trigger", {}), node("s", "send_sms", { body })],
      edges: [edge("t", "s")],
    });
    const created = send("Welcome!");
    created.nodes[0].data = { event: "contact_created" };
    await w.flow(created, { status: "active" });
    const c = await w.contact();
    await eventually(w.outbox, (sends) =>
      sends.some((x) => x.to === c.phone_number && x.body === "Welcome!"),
    );

    const list = (await w.api("POST", "/v1/lists", { name: "VIP" })).body.list;
    const listed = send("You're a VIP");
    listed.nodes[0].data = { event: "added_to_list", list_id: list.id };
    await w.flow(listed, { status: "active" });
    await w.api("POST", `/v1/lists/${list.id}/contacts`, { contact_ids: [c.id] });
    await eventually(w.outbox, (sends) => sends.some((x) => x.body === "You're a VIP"));

    const keyword = send("You joined!");
    keyword.nodes[0].data = { event: "inbound_keyword", keywords: ["JOIN"] };
    await w.flow(keyword, { status: "active" });
    await s.api(
      "POST",
      "/v1/sandbox/inbound",
      { from: c.phone_number, to: OURS, body: "join please" },
      { key: w.key },
    );
    const sends = await eventually(w.outbox, (list2) => list2.some((x) => x.body === "You joined!"));
    expect(sends.filter((x) => x.body === "Welcome!")).toHaveLength(1);
    // A draft flow enrolls nobody.
    const draft = send("Never");
    draft.nodes[0].data = { event: "contact_created" };
    await w.flow(draft);
    await w.contact();
    await Bun.sleep(300);
    expect((await w.outbox()).some((x) => x.body === "Never")).toBe(false);
  });

  it("a purchase exits the contact from flows that opted in and leaves the others running", async () => {
    const w = await workspace();
    await setup(w);
    const exiting = await w.flow(replyFlow(), { status: "active", settings: { exit_on_purchase: true } });
    const staying = await w.flow(replyFlow(), { status: "active" });
    const c = await w.contact();
    await w.api("POST", `/v1/flows/${exiting.id}/enroll`, { contact_ids: [c.id] });
    await w.api("POST", `/v1/flows/${staying.id}/enroll`, { contact_ids: [c.id] });
    await eventually(
      () => w.runs(staying.id, "active"),
      (runs) => runs[0]?.current_node_id === "wait",
    );
    const conversion = await w.api("POST", "/v1/conversion", {
      txn: `t-${c.id}`,
      phone: c.phone_number,
      value: 10,
    });
    expect(conversion.status).toBe(200);
    const exited = await w.runs(exiting.id);
    expect(exited[0]).toMatchObject({ status: "exited", exit_reason: "purchase" });
    expect((await w.runs(staying.id))[0].status).toBe("active");
    expect((await w.api("GET", `/v1/flows/${exiting.id}/stats`)).body.stats).toMatchObject({
      exited: 1,
      exited_on_purchase: 1,
    });
  });

  it("exits the purchaser in a flow among purchases that arrive together, the others in no flow", async () => {
    const w = await workspace();
    await setup(w);
    const exiting = await w.flow(replyFlow(), { status: "active", settings: { exit_on_purchase: true } });
    const inFlow = await w.contact();
    const others = [await w.contact(), await w.contact(), await w.contact()];
    await w.api("POST", `/v1/flows/${exiting.id}/enroll`, { contact_ids: [inFlow.id] });
    await eventually(
      () => w.runs(exiting.id, "active"),
      (runs) => runs[0]?.current_node_id === "wait",
    );
    const answers = await Promise.all(
      [...others, inFlow, others[0]].map((c, i) =>
        w.api("POST", "/v1/conversion", { txn: `together-${i}-${c.id}`, phone: c.phone_number, value: 5 }),
      ),
    );
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200]);
    expect((await w.runs(exiting.id))[0]).toMatchObject({ status: "exited", exit_reason: "purchase" });
  });

  it("credits a conversion to the flow that last messaged the contact, not to one that only waited", async () => {
    const w = await workspace();
    await setup(w);
    const sending = await w.flow(replyFlow(), { status: "active" });
    const waiting = await w.flow(
      {
        nodes: [node("t", "trigger", { event: "manual" }), node("w", "wait", { days: 1 })],
        edges: [edge("t", "w")],
      },
      { status: "active" },
    );
    const touched = await w.contact();
    const untouched = await w.contact();
    await w.api("POST", `/v1/flows/${sending.id}/enroll`, { contact_ids: [touched.id] });
    await eventually(
      () => w.runs(sending.id, "active"),
      (runs) => runs[0]?.current_node_id === "wait",
    );
    // Enrolled later, but it sends nothing: the touch stays with the flow that wrote.
    await w.api("POST", `/v1/flows/${waiting.id}/enroll`, { contact_ids: [touched.id, untouched.id] });
    await eventually(
      () => w.runs(waiting.id, "active"),
      (runs) => runs.length === 2 && runs.every((r: Json) => r.current_node_id === "w"),
    );
    for (const c of [touched, untouched]) {
      const r = await w.api("POST", "/v1/conversion", { txn: `f-${c.id}`, phone: c.phone_number, value: 25 });
      expect(r.status).toBe(200);
    }
    const credited = async (contactId: string) =>
      (await w.api("GET", `/v1/conversions?contact_id=${contactId}`)).body.conversions[0];
    expect(await credited(touched.id)).toMatchObject({ flow_id: sending.id, agent_id: null, value: 25 });
    expect(await credited(untouched.id)).toMatchObject({ flow_id: null, agent_id: null });
  });

  it("a flow's call counts toward the frequency cap of the contact's next marketing send", async () => {
    const w = await workspace();
    await setup(w);
    await w.api("PATCH", "/v1/settings", {
      frequency_cap: { enabled: true, max_messages: 1, window_hours: 24, apply_to_all: true },
    });
    const caller = await w.flow(
      {
        nodes: [node("t", "trigger", { event: "manual" }), node("c", "call", { say: "Hello from the shop" })],
        edges: [edge("t", "c")],
      },
      { status: "active" },
    );
    const [called, other] = [await w.contact(), await w.contact()];
    await w.api("POST", `/v1/flows/${caller.id}/enroll`, { contact_ids: [called.id] });
    await eventually(
      () => w.runs(caller.id),
      (runs) => runs[0]?.status === "completed",
    );
    const campaign = (
      await w.api("POST", "/v1/campaigns", {
        name: "After the call",
        message: { body: "Thanks for talking to us. Reply STOP to opt out." },
        audience: { contact_ids: [called.id, other.id] },
      })
    ).body.campaign;
    const preview = (await w.api("GET", `/v1/campaigns/${campaign.id}/preview`)).body.preview;
    expect(preview).toMatchObject({ recipients: 2, skipped: { frequency_cap: 1 } });
    const byContact = new Map(preview.contacts.map((c: Json) => [c.contact_id, c]));
    expect(byContact.get(called.id)).toMatchObject({ outcome: "skip", reason: "frequency_cap" });
    expect(byContact.get(other.id)).not.toMatchObject({ reason: "frequency_cap" });
  });

  it("the webhook node posts the run signed with the flow's secret; the agent node hands the thread over", async () => {
    const w = await workspace();
    await setup(w);
    const agent = (
      await w.api("POST", "/v1/agents", { name: "Maya", system_prompt: "Help.", greeting: "Hi, Maya here." })
    ).body.agent;
    const flow = await w.flow(
      {
        nodes: [
          node("t", "trigger", { event: "manual" }),
          node("hook", "webhook", { url: receiver.url("/flow-hook") }),
          node("a", "agent", { agent_id: agent.id }),
        ],
        edges: [edge("t", "hook"), edge("hook", "a")],
      },
      { status: "active" },
    );
    const c = await w.contact();
    await w.api("POST", `/v1/flows/${flow.id}/enroll`, { contact_ids: [c.id] });
    await eventually(
      async () => receiver.received.filter((r) => r.path === "/flow-hook").length,
      (n) => n === 1,
    );
    const hit = receiver.received.find((r) => r.path === "/flow-hook");
    const payload = new Webhook(flow.settings.webhook_secret).verify(
      hit?.body ?? "",
      hit?.headers ?? {},
    ) as Json;
    expect(payload).toMatchObject({ flow_id: flow.id, node_id: "hook", contact: { id: c.id } });
    const greeting = await eventually(w.outbox, (sends) => sends.some((x) => x.body === "Hi, Maya here."));
    expect(greeting.filter((x) => x.to === c.phone_number)).toHaveLength(1);
    const threads = (await w.api("GET", "/v1/conversations?filter=agent")).body.conversations;
    expect(threads.map((x: Json) => x.contact_id)).toContain(c.id);
  });

  it("enrolls a contact once ever unless allow_reentry, then again once the run ended; emits flow.completed", async () => {
    const w = await workspace();
    await log.watch(w.key);
    await setup(w);
    const short = {
      nodes: [
        node("t", "trigger", { event: "manual" }),
        node("s", "send_sms", { body: "Ping" }),
        node("e", "end"),
      ],
      edges: [edge("t", "s"), edge("s", "e")],
    };
    const once = await w.flow(short, { status: "active" });
    const again = await w.flow(short, { status: "active", settings: { allow_reentry: true } });
    const c = await w.contact();
    for (const flow of [once, again]) {
      await w.api("POST", `/v1/flows/${flow.id}/enroll`, { contact_ids: [c.id] });
      await eventually(
        () => w.runs(flow.id, "completed"),
        (runs) => runs.length === 1,
      );
    }
    expect((await w.api("POST", `/v1/flows/${once.id}/enroll`, { contact_ids: [c.id] })).body).toMatchObject({
      enrolled: 0,
      skipped: 1,
    });
    expect((await w.api("POST", `/v1/flows/${again.id}/enroll`, { contact_ids: [c.id] })).body).toMatchObject(
      {
        enrolled: 1,
        skipped: 0,
      },
    );
    // One flow.completed per run that reached its end: the re-entered run's too, once it ends.
    await eventually(
      () => w.runs(again.id, "completed"),
      (runs) => runs.length === 2,
    );
    const completed = await eventually(
      async () => await log.of("flow.completed", w.workspaceId),
      (events) => events.length >= 3,
    );
    expect(completed.map((e) => (e.data as Json).flow_id).sort()).toEqual(
      [once.id, again.id, again.id].sort(),
    );
    expect((completed[0].data as Json).contact_id).toBe(c.id);
    // The published payload schema names exactly the fields sent (the Run record), and holds.
    const schema = EVENT_DATA_SCHEMAS["flow.completed"];
    expect(Object.keys(completed[0].data as Json).sort()).toEqual(Object.keys(schema.properties).sort());
    expect(Value.Check(schema, completed[0].data)).toBe(true);
  });

  it("a conversion trigger enrolls on its event name only", async () => {
    const w = await workspace();
    await setup(w);
    const flow = await w.flow(
      {
        nodes: [
          node("t", "trigger", { event: "conversion", conversion_event: "lead" }),
          node("s", "send_sms", { body: "Thanks for signing up" }),
        ],
        edges: [edge("t", "s")],
      },
      { status: "active" },
    );
    const c = await w.contact();
    await w.api("POST", "/v1/conversion", { txn: `p-${c.id}`, phone: c.phone_number, event: "purchase" });
    expect(await w.runs(flow.id)).toEqual([]);
    await w.api("POST", "/v1/conversion", { txn: `l-${c.id}`, phone: c.phone_number, event: "lead" });
    expect((await w.runs(flow.id)).map((r) => r.contact_id)).toEqual([c.id]);
  });

  it("answers 422 naming an unknown or foreign contact, enrolling nobody", async () => {
    const w = await workspace();
    await setup(w);
    const flow = await w.flow(replyFlow(), { status: "active" });
    const c = await w.contact();
    const other = await workspace("Other");
    const foreign = await other.contact();
    const res = await w.api("POST", `/v1/flows/${flow.id}/enroll`, { contact_ids: [c.id, foreign.id] });
    expect(res.status).toBe(422);
    expect(res.body.error).toBe("contact_ids[1] does not exist");
    expect(await w.runs(flow.id)).toEqual([]);
  });
});

describe("POST /v1/flows/{id}/simulate", () => {
  it("runs the same node logic on a virtual clock with scripted replies, and writes and sends nothing", async () => {
    const w = await workspace();
    const OURS = await setup(w);
    const flow = await w.flow(replyFlow());
    const c = await w.contact({ first_name: "Bo", fields: { plan: "pro" } });
    const before = (await w.api("GET", "/v1/messages")).body.total;
    const sim = await w.api("POST", `/v1/flows/${flow.id}/simulate`, {
      contact_id: c.id,
      events: [{ after_minutes: 90, type: "reply", body: "sure" }],
    });
    expect(sim.status).toBe(200);
    const steps = sim.body.trace.map((x: Json) => [x.node_id, x.action]);
    expect(steps).toEqual([
      ["t", "enrolled"],
      ["hello", "sent"],
      ["wait", "waiting_for_reply"],
      ["wait", "reply"],
      ["wait", "replied"],
      ["plan", "true"],
      ["pro", "sent"],
    ]);
    expect(sim.body.trace[1].detail).toBe("Hi Bo, any questions?");
    expect(sim.body.trace[4].at_minutes).toBe(90);
    expect((await w.api("GET", "/v1/messages")).body.total).toBe(before);
    expect(await w.runs(flow.id)).toEqual([]);

    // The real run does the same.
    await w.api("PATCH", `/v1/flows/${flow.id}`, { status: "active" });
    await w.api("POST", `/v1/flows/${flow.id}/enroll`, { contact_ids: [c.id] });
    await eventually(w.outbox, (sends) => sends.length === 1);
    await s.api(
      "POST",
      "/v1/sandbox/inbound",
      { from: c.phone_number, to: OURS, body: "sure" },
      { key: w.key },
    );
    const sends = await eventually(w.outbox, (list) => list.length === 2);
    expect(sends.map((x) => x.body).reverse()).toEqual([sim.body.trace[1].detail, sim.body.trace[6].detail]);
    const run = (await w.runs(flow.id))[0];
    expect(run).toMatchObject({ status: "completed", current_node_id: "pro" });
  });

  for (const body of ["STOP", "I really want you to stop sending me these"]) {
    it(`does not take ${JSON.stringify(body)} as a reply, as the live run does not`, async () => {
      const w = await workspace();
      await setup(w);
      const flow = await w.flow(replyFlow());
      const sim = await w.api("POST", `/v1/flows/${flow.id}/simulate`, {
        contact: { phone_number: "+14155550179", timezone: DAY },
        events: [{ after_minutes: 30, type: "reply", body }],
        max_days: 2,
      });
      const actions = sim.body.trace.map((x: Json) => x.action);
      expect({ body, replied: actions.includes("replied"), timeout: actions.includes("timeout") }).toEqual({
        body,
        replied: false,
        timeout: true,
      });
    });
  }

  it("shows a night-time send as deferred, the timeout path, and a purchase exit", async () => {
    const w = await workspace();
    await setup(w);
    const flow = await w.flow(replyFlow(), { settings: { exit_on_purchase: true } });
    const night = await w.api("POST", `/v1/flows/${flow.id}/simulate`, {
      contact: { phone_number: "+14155550177", timezone: NIGHT },
      max_days: 3,
    });
    const actions = night.body.trace.map((x: Json) => x.action);
    expect(actions.slice(0, 3)).toEqual(["enrolled", "deferred", "sent"]);
    expect(night.body.trace[2].at_minutes).toBeGreaterThan(60);
    expect(actions).toContain("timeout");
    expect(actions.at(-1)).toBe("completed");
    const bought = await w.api("POST", `/v1/flows/${flow.id}/simulate`, {
      contact: { phone_number: "+14155550178", timezone: DAY },
      events: [{ after_minutes: 10, type: "conversion" }],
    });
    expect(bought.body.trace.map((x: Json) => x.action).slice(-2)).toEqual(["conversion", "exited"]);
    expect((await w.api("GET", "/v1/contacts")).body.total).toBe(0);
    const bad = await w.api("POST", `/v1/flows/${flow.id}/simulate`, { events: [] });
    expect(bad.status).toBe(422);
    expect(bad.body.error).toBe("contact_id or contact is required (one of them)");
  });
});
