/**
 * Flows cannot loop without bound (API.md §7.2): activation refuses a flow whose list additions
 * would start itself again through the active flows (or directly), and at run time a contact
 * enters one flow at most 5 times in 24 hours, further entries counted as `skipped_reentry`.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { eq } from "drizzle-orm";
import { flows } from "../src/db/schema";
import { findFlowLoop, listLinksOf } from "../src/domain/flows/loops";
import { eventually, handOffs } from "./support/messaging";
import { startTestServer, type TestServer } from "./support/server";
import { zoneAtLocalHour } from "./support/zones";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({}, { SIMULATED_DELIVERY_MS: "20" });
});
afterAll(async () => await s.stop());

// biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON answers
type Json = any;

const DAY = zoneAtLocalHour(12);
let phoneSeq = 7000;
const newPhone = () => `+1415555${String(phoneSeq++).padStart(4, "0")}`;
let numberSeq = 300;

const node = (id: string, type: string, data: Record<string, unknown> = {}) => ({
  id,
  type,
  position: { x: 0, y: 0 },
  data,
});
const edge = (source: string, target: string) => ({ id: `${source}-${target}`, source, target });

/** A chain of nodes from a trigger, each edge `out`. */
function chain(trigger: Record<string, unknown>, ...steps: [string, Record<string, unknown>][]) {
  const nodes = [node("t", "trigger", trigger), ...steps.map(([type, data], i) => node(`n${i}`, type, data))];
  const edges = nodes.slice(1).map((n, i) => edge(nodes[i].id, n.id));
  return { nodes, edges };
}

async function workspace() {
  const ws = await s.newWorkspace("Loops");
  const api = async (method: string, path: string, body?: unknown) =>
    await s.api(method, path, body, { key: ws.key });
  const ordered = await api("POST", "/v1/numbers", {
    number: `+1415555${String(numberSeq++).padStart(4, "0")}`,
  });
  expect(ordered.body.added).toBe(1);
  const list = async (name: string) => (await api("POST", "/v1/lists", { name })).body.list.id as string;
  const flow = async (name: string, definition: unknown, extra: Record<string, unknown> = {}) =>
    await api("POST", "/v1/flows", { name, definition, settings: { allow_reentry: true }, ...extra });
  const contact = async () =>
    (await api("POST", "/v1/contacts", { phone_number: newPhone(), timezone: DAY })).body.contact as Json;
  return { ...ws, api, list, flow, contact };
}

describe("activating a flow that would loop", () => {
  it("answers 422 naming the loop for the issue's two flows (A: L1 → add to L2, B: L2 → add to L1), and B stays a draft", async () => {
    const w = await workspace();
    const [l1, l2] = [await w.list("L1"), await w.list("L2")];
    const a = await w.flow(
      "Welcome",
      chain({ event: "added_to_list", list_id: l1 }, ["add_to_list", { list_id: l2 }]),
      {
        status: "active",
      },
    );
    expect(a.status).toBe(200);
    const b = await w.flow(
      "Nurture",
      chain({ event: "added_to_list", list_id: l2 }, ["add_to_list", { list_id: l1 }]),
    );
    expect(b.status).toBe(200);
    const refused = await w.api("PATCH", `/v1/flows/${b.body.flow.id}`, { status: "active" });
    expect({ status: refused.status, body: refused.body }).toEqual({
      status: 422,
      body: { ok: false, error: "flow would loop through flows: Nurture → Welcome → Nurture" },
    });
    expect((await w.api("GET", `/v1/flows/${b.body.flow.id}`)).body.flow.status).toBe("draft");
    // Created active, the same flow is refused and not stored.
    const created = await w.flow(
      "Nurture 2",
      chain({ event: "added_to_list", list_id: l2 }, ["add_to_list", { list_id: l1 }]),
      { status: "active" },
    );
    expect({ status: created.status, error: created.body.error }).toEqual({
      status: 422,
      error: "flow would loop through flows: Nurture 2 → Welcome → Nurture 2",
    });
    expect((await w.api("GET", "/v1/flows")).body.total).toBe(2);
  });

  it("answers 422 for a flow that adds to its own trigger list (A → A), and for a loop through three flows", async () => {
    const w = await workspace();
    const [l1, l2, l3] = [await w.list("L1"), await w.list("L2"), await w.list("L3")];
    const self = await w.flow(
      "Echo",
      chain(
        { event: "added_to_list", list_id: l1 },
        ["send_sms", { body: "Hi" }],
        ["add_to_list", { list_id: l1 }],
      ),
      { status: "active" },
    );
    expect({ status: self.status, error: self.body.error }).toEqual({
      status: 422,
      error: "flow would loop through flows: Echo → Echo",
    });
    const cases: [string, string, string][] = [
      ["One", l1, l2],
      ["Two", l2, l3],
    ];
    for (const [name, from, to] of cases) {
      const r = await w.flow(
        name,
        chain({ event: "added_to_list", list_id: from }, ["add_to_list", { list_id: to }]),
        {
          status: "active",
        },
      );
      expect({ name, status: r.status }).toEqual({ name, status: 200 });
    }
    const closing = await w.flow(
      "Three",
      chain({ event: "added_to_list", list_id: l3 }, ["add_to_list", { list_id: l1 }]),
      { status: "active" },
    );
    expect(closing.body.error).toBe("flow would loop through flows: Three → One → Two → Three");
  });

  it("allows the same flows when the chain is open: the other flow paused, or not triggered by the list", async () => {
    const w = await workspace();
    const [l1, l2] = [await w.list("L1"), await w.list("L2")];
    const a = await w.flow(
      "A",
      chain({ event: "added_to_list", list_id: l1 }, ["add_to_list", { list_id: l2 }]),
      {
        status: "active",
      },
    );
    const b = await w.flow(
      "B",
      chain({ event: "added_to_list", list_id: l2 }, ["add_to_list", { list_id: l1 }]),
    );
    await w.api("PATCH", `/v1/flows/${a.body.flow.id}`, { status: "paused" });
    expect((await w.api("PATCH", `/v1/flows/${b.body.flow.id}`, { status: "active" })).status).toBe(200);
    // Resuming A would close the loop now.
    const resumed = await w.api("PATCH", `/v1/flows/${a.body.flow.id}`, { status: "active" });
    expect(resumed.body.error).toBe("flow would loop through flows: A → B → A");
    const manual = await w.flow("Manual", chain({ event: "manual" }, ["add_to_list", { list_id: l1 }]), {
      status: "active",
    });
    expect(manual.status).toBe(200);
  });

  it("checks a paused flow's new definition when it is activated in the same request", async () => {
    const w = await workspace();
    const [l1, l2] = [await w.list("L1"), await w.list("L2")];
    await w.flow("A", chain({ event: "added_to_list", list_id: l1 }, ["add_to_list", { list_id: l2 }]), {
      status: "active",
    });
    const b = await w.flow(
      "B",
      chain({ event: "added_to_list", list_id: l2 }, ["send_sms", { body: "Hi" }]),
      {
        status: "active",
      },
    );
    const id = b.body.flow.id;
    await w.api("PATCH", `/v1/flows/${id}`, { status: "paused" });
    const looping = chain({ event: "added_to_list", list_id: l2 }, ["add_to_list", { list_id: l1 }]);
    const r = await w.api("PATCH", `/v1/flows/${id}`, { definition: looping, status: "active" });
    expect({ status: r.status, error: r.body.error }).toEqual({
      status: 422,
      error: "flow would loop through flows: B → A → B",
    });
    const kept = (await w.api("GET", `/v1/flows/${id}`)).body.flow;
    expect({ status: kept.status, last: kept.definition.nodes.at(-1).type }).toEqual({
      status: "paused",
      last: "send_sms",
    });
  });
});

describe("findFlowLoop", () => {
  const flow = (id: string, trigger: string | null, addsTo: string[]) => ({
    id,
    name: id.toUpperCase(),
    triggerListId: trigger,
    addsTo,
  });
  const cases: [string, ReturnType<typeof flow>, ReturnType<typeof flow>[], string[] | null][] = [
    ["no list additions", flow("a", "l1", []), [flow("b", "l2", ["l1"])], null],
    ["itself", flow("a", "l1", ["l1"]), [], ["A", "A"]],
    ["two flows", flow("a", "l1", ["l2"]), [flow("b", "l2", ["l1"])], ["A", "B", "A"]],
    ["a loop that does not come back to it", flow("a", "l0", ["l1"]), [flow("b", "l1", ["l1"])], null],
    [
      "the shortest of two loops",
      flow("a", "l1", ["l2", "l3"]),
      [flow("b", "l2", ["l4"]), flow("c", "l4", ["l1"]), flow("d", "l3", ["l1"])],
      ["A", "D", "A"],
    ],
    ["a manual trigger", flow("a", null, ["l1"]), [flow("b", "l1", ["l2"])], null],
  ];
  for (const [what, start, others, expected] of cases)
    it(`finds ${expected ? expected.join(" → ") : "no loop"} for ${what}`, () => {
      expect({ what, loop: findFlowLoop(start, others) }).toEqual({ what, loop: expected });
    });

  it("reads the links from a definition: the added_to_list trigger and every add_to_list node", () => {
    const definition = chain(
      { event: "added_to_list", list_id: "l1" },
      ["add_to_list", { list_id: "l2" }],
      ["remove_from_list", { list_id: "l3" }],
      ["add_to_list", { list_id: "l4" }],
    );
    expect(listLinksOf({ id: "a", name: "A", definition })).toEqual({
      id: "a",
      name: "A",
      triggerListId: "l1",
      addsTo: ["l2", "l4"],
    });
  });
});

describe("the re-entry bound at run time", () => {
  it("lets a contact enter a flow 5 times in 24 hours, then skips and counts skipped_reentry", async () => {
    const w = await workspace();
    const f = await w.flow("Ping", chain({ event: "manual" }, ["send_sms", { body: "Ping" }]), {
      status: "active",
    });
    const id = f.body.flow.id;
    const c = await w.contact();
    const answers: Json[] = [];
    for (let i = 0; i < 7; i++) {
      answers.push((await w.api("POST", `/v1/flows/${id}/enroll`, { contact_ids: [c.id] })).body);
      await eventually(
        () => w.api("GET", `/v1/flows/${id}/runs?status=active`),
        (r) => r.body.total === 0,
      );
    }
    expect(answers.map((a) => a.enrolled)).toEqual([1, 1, 1, 1, 1, 0, 0]);
    const stats = (await w.api("GET", `/v1/flows/${id}/stats`)).body.stats;
    expect({ enrolled: stats.enrolled, skipped_reentry: stats.skipped_reentry }).toEqual({
      enrolled: 5,
      skipped_reentry: 2,
    });
    // Another contact is not held back by the first one's entries.
    const other = await w.contact();
    expect((await w.api("POST", `/v1/flows/${id}/enroll`, { contact_ids: [other.id] })).body.enrolled).toBe(
      1,
    );
  });

  it("stops a loop between two flows that were active before the check (sends are bounded)", async () => {
    const w = await workspace();
    const [l1, l2] = [await w.list("L1"), await w.list("L2")];
    // A: added to L1 → text → leave L2 → join L2; B: added to L2 → leave L1 → join L1.
    const a = await w.flow(
      "A",
      chain(
        { event: "added_to_list", list_id: l1 },
        ["send_sms", { body: "Loop" }],
        ["remove_from_list", { list_id: l2 }],
        ["add_to_list", { list_id: l2 }],
      ),
      { status: "active" },
    );
    const harmless = chain({ event: "added_to_list", list_id: l2 }, ["remove_from_list", { list_id: l1 }]);
    const b = await w.flow("B", harmless, { status: "active" });
    expect([a.status, b.status]).toEqual([200, 200]);
    // As a database from before the check could hold: B's definition closes the loop while active.
    const looping = chain(
      { event: "added_to_list", list_id: l2 },
      ["remove_from_list", { list_id: l1 }],
      ["add_to_list", { list_id: l1 }],
    );
    await s.server.handle.db
      .update(flows)
      .set({ definition: looping })
      .where(eq(flows.id, b.body.flow.id))
      .run();
    const c = await w.contact();
    await w.api("POST", `/v1/lists/${l1}/contacts`, { contact_ids: [c.id] });
    const stats = await eventually(
      async () => (await w.api("GET", `/v1/flows/${a.body.flow.id}/stats`)).body.stats,
      (st) => st.skipped_reentry > 0 && st.active === 0,
    );
    expect({ enrolled: stats.enrolled, skipped: stats.skipped_reentry > 0 }).toEqual({
      enrolled: 5,
      skipped: true,
    });
    await Bun.sleep(300);
    const sends = handOffs((await w.api("GET", "/v1/sandbox/outbox?limit=200")).body.sends as Json[]).filter(
      (send: Json) => send.to === c.phone_number,
    );
    expect(sends.length).toBe(5);
  });
});
