import { describe, expect, it } from "bun:test";
import { type DefinitionRefs, nextNode, parseDefinition, type RefKind } from "../src/domain/flows/definition";
import { AppError, invalid } from "../src/lib/errors";
import { checkWebhookUrl } from "../src/webhooks/targets";

/** Ids that exist, by kind; anything else does not. */
const EXISTING: Record<RefKind, string[]> = {
  list: ["list1", "list2"],
  agent: ["sms1", "voice1"],
  sms_agent: ["sms1"],
  voice_agent: ["voice1"],
  pool: ["pool1"],
  offer: ["offer1"],
  verified_link_domain: ["domain1"],
};

const refs: DefinitionRefs = {
  exists: async (kind, id) => EXISTING[kind].includes(id),
  checkUrl: (url) => checkWebhookUrl(url, true),
  async checkRules(rules, path) {
    const all = (rules as { all?: unknown } | null)?.all;
    if (rules === null || typeof rules !== "object" || !Array.isArray(all))
      throw invalid(`${path}.all must be an array`);
    // Like parseRules' tree-wide limits, a message that does not start with the path.
    if (all.length > 2) throw invalid("rules must have at most 2 conditions");
    return rules;
  },
};

type Json = Record<string, unknown>;
interface Def {
  nodes: Json[];
  edges: Json[];
}

const at = (x: number, y: number) => ({ x, y });

/** One node of every type; a loop back to s1 through two waits; a loose say call. */
function valid(): Def {
  return {
    nodes: [
      { id: "t", type: "trigger", position: at(0, 0), data: { event: "added_to_list", list_id: "list1" } },
      { id: "s1", type: "send_sms", position: at(0, 100), data: { body: "Hi {{first_name|there}}" } },
      { id: "w1", type: "wait", position: at(0, 200), data: { hours: 2 } },
      { id: "r1", type: "wait_for_reply", position: at(0, 300), data: { timeout_hours: 24 } },
      { id: "c1", type: "condition", position: at(0, 400), data: { rules: { all: [] } } },
      { id: "a1", type: "agent", position: at(0, 500), data: { agent_id: "sms1" } },
      { id: "l1", type: "add_to_list", position: at(0, 600), data: { list_id: "list1" } },
      { id: "l2", type: "remove_from_list", position: at(0, 700), data: { list_id: "list2" } },
      {
        id: "u1",
        type: "update_contact",
        position: at(0, 800),
        data: {
          fields: { first_name: "Ada", timezone: "America/New_York", fields: { plan: "pro", seats: 3 } },
        },
      },
      { id: "h1", type: "webhook", position: at(0, 900), data: { url: "https://example.com/hook" } },
      { id: "v1", type: "call", position: at(0, 1000), data: { agent_id: "voice1" } },
      { id: "x2", type: "end", position: at(0, 1100), data: {} },
      { id: "x1", type: "end", position: at(200, 400) },
      { id: "w2", type: "wait", position: at(200, 500), data: { days: 1 } },
      { id: "v2", type: "call", position: at(400, 0), data: { say: "Hello" }, selected: true },
    ],
    edges: [
      { id: "e0", source: "t", target: "s1", sourceHandle: null },
      { id: "e1", source: "s1", target: "w1" },
      { id: "e2", source: "w1", target: "r1", sourceHandle: "out" },
      { id: "e3", source: "r1", target: "c1", sourceHandle: "replied" },
      { id: "e4", source: "r1", target: "x1", sourceHandle: "timeout" },
      { id: "e5", source: "c1", target: "a1", sourceHandle: "true" },
      { id: "e6", source: "c1", target: "w2", sourceHandle: "false" },
      { id: "e7", source: "w2", target: "s1" },
      { id: "e8", source: "a1", target: "l1" },
      { id: "e9", source: "l1", target: "l2" },
      { id: "e10", source: "l2", target: "u1" },
      { id: "e11", source: "u1", target: "h1" },
      { id: "e12", source: "h1", target: "v1" },
      { id: "e13", source: "v1", target: "x2", animated: true },
    ],
  };
}

const node = (def: Def, id: string) => def.nodes.find((n) => n.id === id) as Json;
const edge = (def: Def, id: string) => def.edges.find((e) => e.id === id) as Json;
const setData = (id: string, data: Json) => (def: Def) => {
  node(def, id).data = data;
};
const setTrigger = (data: Json) => setData("t", data);

/** The 422 message parseDefinition throws for `def`, or a failure when it accepts it. */
async function messageFor(def: unknown): Promise<string> {
  try {
    await parseDefinition(def, refs);
  } catch (err) {
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).code).toBe("validation");
    return (err as Error).message;
  }
  throw new Error("expected a validation error");
}

describe("parseDefinition: a valid definition", () => {
  it("indexes every edge by source and handle", async () => {
    const parsed = await parseDefinition(valid(), refs);
    expect(parsed.trigger.id).toBe("t");
    expect({ ...parsed.next }).toEqual({
      t: { out: "s1" },
      s1: { out: "w1" },
      w1: { out: "r1" },
      r1: { replied: "c1", timeout: "x1" },
      c1: { true: "a1", false: "w2" },
      a1: { out: "l1" },
      l1: { out: "l2" },
      l2: { out: "u1" },
      u1: { out: "h1" },
      h1: { out: "v1" },
      v1: { out: "x2" },
      x2: {},
      x1: {},
      w2: { out: "s1" },
      v2: {},
    });
    expect(Object.keys(parsed.byId)).toEqual(valid().nodes.map((n) => n.id as string));
    expect(parsed.byId.u1.type).toBe("update_contact");
  });

  it("answers the next node, or null where the run ends", async () => {
    const parsed = await parseDefinition(valid(), refs);
    expect(nextNode(parsed, "t")).toBe("s1");
    expect(nextNode(parsed, "c1", "true")).toBe("a1");
    expect(nextNode(parsed, "c1", "false")).toBe("w2");
    expect(nextNode(parsed, "r1", "timeout")).toBe("x1");
    expect(nextNode(parsed, "c1")).toBeNull();
    expect(nextNode(parsed, "x2")).toBeNull();
    expect(nextNode(parsed, "v2")).toBeNull();
    expect(nextNode(parsed, "nope")).toBeNull();
    expect(nextNode(parsed, "t", "constructor")).toBeNull();
  });

  it("omits sourceHandle where it means out, drops fields a node or edge does not have, and defaults data to {}", async () => {
    const { definition } = await parseDefinition(valid(), refs);
    const edges = Object.fromEntries(definition.edges.map((e) => [e.id, e]));
    expect(edges.e0).toEqual({ id: "e0", source: "t", target: "s1" });
    expect("sourceHandle" in edges.e0).toBe(false);
    expect("sourceHandle" in edges.e2).toBe(false);
    expect(edges.e5.sourceHandle).toBe("true");
    // React Flow's own fields (animated, selected) are not part of a definition: not stored (API.md §1).
    expect(edges.e13 as unknown).toEqual({ id: "e13", source: "v1", target: "x2" });
    const nodes = Object.fromEntries(definition.nodes.map((n) => [n.id, n]));
    expect(nodes.x1.data).toEqual({});
    expect(nodes.v2 as unknown).toEqual({
      id: "v2",
      type: "call",
      position: { x: 400, y: 0 },
      data: { say: "Hello" },
    });
    expect(nodes.s1.data.body).toBe("Hi {{first_name|there}}");
  });

  it("accepts every trigger event with its options", async () => {
    const triggers: Json[] = [
      { event: "contact_created" },
      { event: "manual" },
      { event: "inbound_keyword", keywords: ["JOIN", "deals"] },
      { event: "link_clicked" },
      { event: "link_clicked", offer_id: "offer1" },
      { event: "conversion" },
      { event: "conversion", conversion_event: "purchase" },
      { event: "conversion", conversion_event: "trial.started" },
    ];
    for (const data of triggers) {
      const def = valid();
      setTrigger(data)(def);
      expect((await parseDefinition(def, refs)).trigger.data).toEqual(data);
    }
  });

  it("accepts a lone trigger, loose nodes, odd ids and optional data", async () => {
    const lone = {
      nodes: [{ id: "t", type: "trigger", position: at(0, 0), data: { event: "manual" } }],
      edges: [],
    };
    expect((await parseDefinition(lone, refs)).next.t).toEqual({});
    const def = valid();
    node(def, "s1").data = { body: "Hi", pool_id: "pool1" };
    node(def, "w1").data = { minutes: 365 * 24 * 60 };
    node(def, "r1").data = { timeout_hours: 365 * 24 };
    node(def, "u1").data = { fields: { email: null } };
    node(def, "h1").data = { url: "http://10.0.0.1:8080/x" };
    node(def, "v2").id = "__proto__";
    expect(nextNode(await parseDefinition(def, refs), "__proto__")).toBeNull();
  });
});

type Row = [string, (def: Def) => void, string];

const ROWS: Row[] = [
  // Shape and size
  ["nodes not an array", (d) => Object.assign(d, { nodes: {} }), "definition.nodes must be an array"],
  ["edges missing", (d) => Object.assign(d, { edges: undefined }), "definition.edges must be an array"],
  [
    "201 nodes",
    (d) => {
      for (let i = 0; d.nodes.length <= 200; i++)
        d.nodes.push({ id: `n${i}`, type: "end", position: at(0, 0), data: {} });
    },
    "definition has more than 200 nodes",
  ],
  [
    "1001 edges",
    (d) => {
      while (d.edges.length <= 1000) d.edges.push({ id: `x${d.edges.length}`, source: "t", target: "s1" });
    },
    "definition has more than 1000 edges",
  ],
  // Nodes
  ["a node not an object", (d) => d.nodes.splice(2, 1, null as never), "nodes[2] must be an object"],
  [
    "a node without an id",
    (d) => delete node(d, "w1").id,
    "nodes[2]: id must be a non-empty string of at most 100 characters",
  ],
  [
    "an empty id",
    (d) => Object.assign(node(d, "w1"), { id: "" }),
    "nodes[2]: id must be a non-empty string of at most 100 characters",
  ],
  [
    "a 101-character id",
    (d) => Object.assign(node(d, "w1"), { id: "n".repeat(101) }),
    "nodes[2]: id must be a non-empty string of at most 100 characters",
  ],
  [
    "a duplicate id",
    (d) => Object.assign(node(d, "w1"), { id: "s1" }),
    'nodes[2] ("s1"): id is already used by nodes[1]',
  ],
  [
    "an unknown type",
    (d) => Object.assign(node(d, "w1"), { type: "sleep" }),
    'nodes[2] ("w1"): type must be one of trigger, send_sms, wait, wait_for_reply, condition, agent, add_to_list, remove_from_list, update_contact, webhook, call, end',
  ],
  [
    "no position",
    (d) => delete node(d, "w1").position,
    'nodes[2] ("w1"): position must be an object with numeric x and y',
  ],
  [
    "a string coordinate",
    (d) => Object.assign(node(d, "w1"), { position: { x: "1", y: 2 } }),
    'nodes[2] ("w1"): position must be an object with numeric x and y',
  ],
  [
    "an infinite coordinate",
    (d) => Object.assign(node(d, "w1"), { position: { x: 1, y: Number.POSITIVE_INFINITY } }),
    'nodes[2] ("w1"): position must be an object with numeric x and y',
  ],
  ["data an array", setData("w1", [] as never), 'nodes[2] ("w1"): data must be an object'],
  [
    "no trigger",
    (d) => {
      d.nodes.shift();
      d.edges.shift();
    },
    "definition needs exactly one trigger node",
  ],
  [
    "two triggers",
    (d) => d.nodes.push({ id: "t2", type: "trigger", position: at(0, 0), data: { event: "manual" } }),
    "definition needs exactly one trigger node",
  ],
  // Edges
  ["an edge not an object", (d) => d.edges.splice(1, 1, "e1" as never), "edges[1] must be an object"],
  [
    "an edge without an id",
    (d) => delete edge(d, "e1").id,
    "edges[1]: id must be a non-empty string of at most 300 characters",
  ],
  [
    "a duplicate edge id",
    (d) => Object.assign(edge(d, "e1"), { id: "e0" }),
    'edges[1] ("e0"): id is already used by edges[0]',
  ],
  [
    "a dangling target",
    (d) => Object.assign(edge(d, "e3"), { target: "x" }),
    'edges[3] ("e3"): target "x" is not a node',
  ],
  [
    "a dangling source",
    (d) => Object.assign(edge(d, "e3"), { source: "ghost" }),
    'edges[3] ("e3"): source "ghost" is not a node',
  ],
  ["no source", (d) => delete edge(d, "e3").source, 'edges[3] ("e3"): source null is not a node'],
  [
    "a prototype key as target",
    (d) => Object.assign(edge(d, "e3"), { target: "constructor" }),
    'edges[3] ("e3"): target "constructor" is not a node',
  ],
  [
    "a self-edge",
    (d) => Object.assign(edge(d, "e1"), { target: "s1" }),
    'edges[1] ("e1"): must not connect node "s1" to itself',
  ],
  [
    "an edge into the trigger",
    (d) => Object.assign(edge(d, "e7"), { target: "t" }),
    'edges[7] ("e7"): must not lead into the trigger node',
  ],
  [
    "an edge out of an end",
    (d) => d.edges.push({ id: "e99", source: "x1", target: "s1" }),
    'edges[14] ("e99"): node "x1" is an end node and has no outgoing edges',
  ],
  [
    "a condition edge without a handle",
    (d) => delete edge(d, "e5").sourceHandle,
    'edges[5] ("e5"): sourceHandle must be one of true, false',
  ],
  [
    "a condition edge on out",
    (d) => Object.assign(edge(d, "e5"), { sourceHandle: "out" }),
    'edges[5] ("e5"): sourceHandle must be one of true, false',
  ],
  [
    "a wait_for_reply edge with a null handle",
    (d) => Object.assign(edge(d, "e3"), { sourceHandle: null }),
    'edges[3] ("e3"): sourceHandle must be one of replied, timeout',
  ],
  [
    "a plain edge on a condition's handle",
    (d) => Object.assign(edge(d, "e1"), { sourceHandle: "true" }),
    'edges[1] ("e1"): sourceHandle must be out, null or absent',
  ],
  [
    "a numeric handle",
    (d) => Object.assign(edge(d, "e1"), { sourceHandle: 1 }),
    'edges[1] ("e1"): sourceHandle must be out, null or absent',
  ],
  [
    "two edges from one handle",
    (d) => d.edges.push({ id: "e99", source: "t", target: "v2" }),
    'edges[14] ("e99"): node "t" has two edges from handle out',
  ],
  [
    "two edges from a condition's true",
    (d) => Object.assign(edge(d, "e6"), { sourceHandle: "true" }),
    'edges[6] ("e6"): node "c1" has two edges from handle true',
  ],
  [
    "a loop without a wait",
    (d) => {
      edge(d, "e13").target = "a1";
    },
    "definition has a loop without a wait: a1 → l1 → l2 → u1 → h1 → v1 → a1",
  ],
  [
    "a loop among loose nodes",
    (d) => {
      d.nodes.push({ id: "p", type: "add_to_list", position: at(0, 0), data: { list_id: "list1" } });
      d.edges.push({ id: "e98", source: "v2", target: "p" }, { id: "e99", source: "p", target: "v2" });
    },
    "definition has a loop without a wait: v2 → p → v2",
  ],
  [
    "a loop through a condition only",
    (d) => {
      edge(d, "e6").target = "l1";
      edge(d, "e13").target = "c1";
    },
    "definition has a loop without a wait: c1 → a1 → l1 → l2 → u1 → h1 → v1 → c1",
  ],
  // Trigger data
  ["a trigger without event", setTrigger({}), 'nodes[0] ("t"): data.event is required'],
  [
    "an unknown trigger event",
    setTrigger({ event: "birthday" }),
    'nodes[0] ("t"): data.event must be one of contact_created, added_to_list, inbound_keyword, link_clicked, conversion, manual',
  ],
  [
    "added_to_list without list_id",
    setTrigger({ event: "added_to_list" }),
    'nodes[0] ("t"): data.list_id is required',
  ],
  [
    "added_to_list with a numeric list_id",
    setTrigger({ event: "added_to_list", list_id: 7 }),
    'nodes[0] ("t"): data.list_id must be a non-empty string',
  ],
  [
    "added_to_list with an unknown list",
    setTrigger({ event: "added_to_list", list_id: "list9" }),
    "definition.nodes[0].data.list_id does not exist",
  ],
  [
    "inbound_keyword without keywords",
    setTrigger({ event: "inbound_keyword" }),
    'nodes[0] ("t"): data.keywords is required',
  ],
  [
    "inbound_keyword with no keywords",
    setTrigger({ event: "inbound_keyword", keywords: [] }),
    'nodes[0] ("t"): data.keywords must be an array of 1 to 100 words',
  ],
  [
    "inbound_keyword with a string",
    setTrigger({ event: "inbound_keyword", keywords: "JOIN" }),
    'nodes[0] ("t"): data.keywords must be an array of 1 to 100 words',
  ],
  [
    "inbound_keyword with an empty keyword",
    setTrigger({ event: "inbound_keyword", keywords: ["JOIN", ""] }),
    'nodes[0] ("t"): data.keywords[1] must be a non-empty string',
  ],
  [
    "inbound_keyword with two words",
    setTrigger({ event: "inbound_keyword", keywords: ["join now"] }),
    'nodes[0] ("t"): data.keywords[0] must be a single word',
  ],
  [
    "inbound_keyword with STOP",
    setTrigger({ event: "inbound_keyword", keywords: ["JOIN", "stop"] }),
    'nodes[0] ("t"): data.keywords must not include the reserved keyword STOP',
  ],
  [
    "inbound_keyword with HELP",
    setTrigger({ event: "inbound_keyword", keywords: ["Help"] }),
    'nodes[0] ("t"): data.keywords must not include the reserved keyword HELP',
  ],
  [
    "inbound_keyword with UNSTOP",
    setTrigger({ event: "inbound_keyword", keywords: ["unstop"] }),
    'nodes[0] ("t"): data.keywords must not include the reserved keyword UNSTOP',
  ],
  [
    "link_clicked with an unknown offer",
    setTrigger({ event: "link_clicked", offer_id: "offer9" }),
    "definition.nodes[0].data.offer_id does not exist",
  ],
  [
    "conversion with a bad event name",
    setTrigger({ event: "conversion", conversion_event: "Big Sale" }),
    'nodes[0] ("t"): data.conversion_event must be purchase, lead, action or a custom name of lowercase letters, digits and _ . - (max 64, starting with a letter)',
  ],
  // send_sms
  ["send_sms without body", setData("s1", {}), 'nodes[1] ("s1"): data.body is required'],
  [
    "send_sms with a blank body",
    setData("s1", { body: "  " }),
    'nodes[1] ("s1"): data.body must be a non-empty string',
  ],
  [
    "send_sms with a long body",
    setData("s1", { body: "x".repeat(1601) }),
    'nodes[1] ("s1"): data.body is too long (max 1600)',
  ],
  [
    "send_sms with an unknown merge field",
    setData("s1", { body: "Hi {{favourite_color}}" }),
    'nodes[1] ("s1"): data.body has an unknown merge field {{favourite_color}}',
  ],
  [
    "send_sms with offer_url",
    setData("s1", { body: "See {{offer_url}}" }),
    'nodes[1] ("s1"): data.body uses {{offer_url}} but the node has no data.offer_id',
  ],
  [
    "send_sms with an unknown pool",
    setData("s1", { body: "Hi", pool_id: "pool9" }),
    "definition.nodes[1].data.pool_id does not exist",
  ],
  // wait
  [
    "wait without a duration",
    setData("w1", {}),
    'nodes[2] ("w1"): data must have exactly one of minutes, hours, days',
  ],
  [
    "wait with two units",
    setData("w1", { hours: 1, minutes: 5 }),
    'nodes[2] ("w1"): data must have exactly one of minutes, hours, days',
  ],
  ["wait of zero", setData("w1", { hours: 0 }), 'nodes[2] ("w1"): data.hours must be a positive number'],
  ["wait of a string", setData("w1", { days: "2" }), 'nodes[2] ("w1"): data.days must be a positive number'],
  [
    "wait of 366 days",
    setData("w1", { days: 366 }),
    'nodes[2] ("w1"): wait must not be longer than 365 days',
  ],
  [
    "wait of 8761 hours",
    setData("w1", { hours: 365 * 24 + 1 }),
    'nodes[2] ("w1"): wait must not be longer than 365 days',
  ],
  // wait_for_reply
  ["wait_for_reply without timeout", setData("r1", {}), 'nodes[3] ("r1"): data.timeout_hours is required'],
  [
    "wait_for_reply with a negative timeout",
    setData("r1", { timeout_hours: -1 }),
    'nodes[3] ("r1"): data.timeout_hours must be a positive number',
  ],
  [
    "wait_for_reply over a year",
    setData("r1", { timeout_hours: 365 * 24 + 1 }),
    'nodes[3] ("r1"): data.timeout_hours must not be longer than 365 days',
  ],
  // condition
  ["condition without rules", setData("c1", {}), 'nodes[4] ("c1"): data.rules is required'],
  [
    "condition with bad rules",
    setData("c1", { rules: { all: 1 } }),
    'nodes[4] ("c1"): data.rules.all must be an array',
  ],
  [
    "condition over a tree-wide limit",
    setData("c1", { rules: { all: [{}, {}, {}] } }),
    'nodes[4] ("c1"): data.rules must have at most 2 conditions',
  ],
  // agent, lists
  ["agent without agent_id", setData("a1", {}), 'nodes[5] ("a1"): data.agent_id is required'],
  [
    "agent naming a voice agent",
    setData("a1", { agent_id: "voice1" }),
    'nodes[5] ("a1"): data.agent_id must be an SMS agent',
  ],
  [
    "agent naming no agent of the workspace",
    setData("a1", { agent_id: "ghost" }),
    "definition.nodes[5].data.agent_id does not exist",
  ],
  ["add_to_list without list_id", setData("l1", {}), 'nodes[6] ("l1"): data.list_id is required'],
  [
    "remove_from_list with an unknown list",
    setData("l2", { list_id: "list9" }),
    "definition.nodes[7].data.list_id does not exist",
  ],
  // update_contact
  ["update_contact without fields", setData("u1", {}), 'nodes[8] ("u1"): data.fields is required'],
  [
    "update_contact with an array",
    setData("u1", { fields: [] }),
    'nodes[8] ("u1"): data.fields must be an object',
  ],
  [
    "update_contact with nothing to set",
    setData("u1", { fields: {} }),
    'nodes[8] ("u1"): data.fields must have at least one key',
  ],
  [
    "update_contact opting in",
    setData("u1", { fields: { opted_in: true } }),
    'nodes[8] ("u1"): data.fields.opted_in cannot be set by a flow (allowed: first_name, last_name, email, external_id, timezone, fields)',
  ],
  [
    "update_contact with an unknown key",
    setData("u1", { fields: { phone_number: "+14155550100" } }),
    'nodes[8] ("u1"): data.fields.phone_number cannot be set by a flow (allowed: first_name, last_name, email, external_id, timezone, fields)',
  ],
  [
    "update_contact with a numeric name",
    setData("u1", { fields: { first_name: 5 } }),
    'nodes[8] ("u1"): data.fields.first_name must be a string or null',
  ],
  [
    "update_contact with a bad email",
    setData("u1", { fields: { email: "nope" } }),
    'nodes[8] ("u1"): data.fields.email must be a valid email address',
  ],
  [
    "update_contact with a bad time zone",
    setData("u1", { fields: { timezone: "Mars/Base" } }),
    'nodes[8] ("u1"): data.fields.timezone must be an IANA time zone',
  ],
  [
    "update_contact with a long name",
    setData("u1", { fields: { last_name: "x".repeat(201) } }),
    'nodes[8] ("u1"): data.fields.last_name is too long (max 200)',
  ],
  [
    "update_contact with a nested custom field",
    setData("u1", { fields: { fields: { plan: { tier: 1 } } } }),
    'nodes[8] ("u1"): data.fields.fields.plan must be a string, number, boolean or null',
  ],
  [
    "update_contact with custom fields not an object",
    setData("u1", { fields: { fields: "pro" } }),
    'nodes[8] ("u1"): data.fields.fields must be an object',
  ],
  // webhook
  ["webhook without url", setData("h1", {}), 'nodes[9] ("h1"): data.url is required'],
  [
    "webhook with a relative url",
    setData("h1", { url: "/hook" }),
    'nodes[9] ("h1"): data.url must be an absolute http or https URL',
  ],
  [
    "webhook with an ftp url",
    setData("h1", { url: "ftp://example.com/x" }),
    'nodes[9] ("h1"): data.url must be an absolute http or https URL',
  ],
  [
    "webhook to a cloud metadata address (the target rules of webhooks)",
    setData("h1", { url: "http://169.254.169.254/latest" }),
    'nodes[9] ("h1"): data.url must not point to a link-local or cloud metadata address',
  ],
  [
    "webhook with a long url",
    setData("h1", { url: `https://example.com/${"x".repeat(2030)}` }),
    'nodes[9] ("h1"): data.url is too long (max 2048)',
  ],
  // call
  ["call with neither", setData("v1", {}), 'nodes[10] ("v1"): data must have exactly one of agent_id, say'],
  [
    "call with both",
    setData("v1", { agent_id: "voice1", say: "Hi" }),
    'nodes[10] ("v1"): data must have exactly one of agent_id, say',
  ],
  [
    "call naming an SMS agent",
    setData("v1", { agent_id: "sms1" }),
    'nodes[10] ("v1"): data.agent_id must be a voice agent',
  ],
  [
    "call with an empty say",
    setData("v2", { say: " " }),
    'nodes[14] ("v2"): data.say must be a non-empty string',
  ],
  [
    "call with a long say",
    setData("v2", { say: "x".repeat(2001) }),
    'nodes[14] ("v2"): data.say is too long (max 2000)',
  ],
];

describe("parseDefinition: 422 naming the node or edge", () => {
  it("refuses a definition that is not an object", async () => {
    for (const input of [null, [], "{}", 1])
      expect(await messageFor(input)).toBe("definition must be an object");
  });

  it.each(ROWS)("%s", async (_name, mutate, message) => {
    const def = valid();
    mutate(def);
    expect(await messageFor(def)).toBe(message);
  });
});
