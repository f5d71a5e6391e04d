import { AppError, invalid } from "../../lib/errors";
import { checkEventName } from "../attribution/values";
import { type ContactInput, checkContactScalars } from "../audience/contacts";
import { checkMergeFields, mergeFieldsOf } from "../campaigns/merge";
import { HELP_KEYWORDS, OPT_IN_KEYWORDS, OPT_OUT_KEYWORDS } from "../messaging/inbound";
import {
  type FlowDefinition,
  type FlowEdge,
  type FlowNode,
  HANDLES,
  MAX_NODES,
  MAX_WAIT_MINUTES,
  NODE_TYPES,
  type NodeType,
  TRIGGER_EVENTS,
} from "./types";

/**
 * Flow definitions (API.md §3 Flows, §6.6): React Flow's nodes and edges, validated into a 422
 * naming the node or edge (`nodes[3] ("send1"): data.body is required`,
 * `edges[2] ("e2"): target "x" is not a node`) and indexed for the runner. Pure: everything that
 * needs the database (ids of lists, agents, pools, offers; segment rules) comes through `refs`.
 */

export const MAX_EDGES = 1000;
export const MAX_NODE_ID_LENGTH = 100;
/** React Flow's own edge ids embed both node ids and handles (`xy-edge__a-b`). */
export const MAX_EDGE_ID_LENGTH = 300;
export const MAX_SMS_BODY = 1600;
export const MAX_SAY = 2000;
export const MAX_URL = 2048;
export const MAX_KEYWORDS = 100;
export const MAX_KEYWORD_LENGTH = 64;

/** The contact fields an `update_contact` node may set. Never `opted_in`: a flow opts no one in. */
export const UPDATABLE_FIELDS = ["first_name", "last_name", "email", "external_id", "timezone", "fields"];
/** Nodes where a run pauses: a loop through one of them is allowed. */
const WAIT_TYPES: readonly NodeType[] = ["wait", "wait_for_reply"];

/** `verified_link_domain`: a verified branded link domain of the workspace (API.md §7.5). */
export type RefKind =
  | "list"
  | "agent"
  | "voice_agent"
  | "sms_agent"
  | "pool"
  | "offer"
  | "verified_link_domain";

export interface DefinitionRefs {
  /**
   * Validates segment rules for a condition node; throws invalid(...) with messages that start
   * with `path` (e.g. `nodes[3] ("c1"): data.rules`). Wraps audience/segments.ts parseRules.
   */
  checkRules(rules: unknown, path: string): Promise<unknown>;
  /** Whether an id of this kind exists in the workspace. */
  exists(kind: RefKind, id: string): Promise<boolean>;
  /** A webhook node's URL under the target rules of webhooks: the problem, or null when allowed. */
  checkUrl(url: string): string | null;
}

export interface ParsedDefinition {
  /** As sent, except: `data` absent → {}, and `sourceHandle` absent, null or `out` → omitted. */
  definition: FlowDefinition;
  /** The one trigger node. */
  trigger: FlowNode;
  /** next[nodeId][handle] = target node id (handle `out` for plain edges); every node has an entry. */
  next: Record<string, Record<string, string>>;
  byId: Record<string, FlowNode>;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === "object" && !Array.isArray(v);

const isPositive = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v) && v > 0;

/** `nodes[3] ("send1")`: the position and id, quoted as JSON so odd ids stay readable. */
const nodeName = (index: number, id: string) => `nodes[${index}] (${JSON.stringify(id)})`;
const edgeName = (index: number, id: string) => `edges[${index}] (${JSON.stringify(id)})`;

/** A dictionary without a prototype: ids such as `__proto__` or `constructor` are plain keys. */
const dict = <T>(): Record<string, T> => Object.create(null);

/**
 * Validates a flow definition and indexes it. Throws 422 on the first problem, naming the node or
 * edge by index and id; returns the normalised definition, its trigger and the edges by handle.
 */
export async function parseDefinition(input: unknown, refs: DefinitionRefs): Promise<ParsedDefinition> {
  // 1. Shape and size.
  if (!isObject(input)) throw invalid("definition must be an object");
  if (!Array.isArray(input.nodes)) throw invalid("definition.nodes must be an array");
  if (!Array.isArray(input.edges)) throw invalid("definition.edges must be an array");
  if (input.nodes.length > MAX_NODES) throw invalid(`definition has more than ${MAX_NODES} nodes`);
  if (input.edges.length > MAX_EDGES) throw invalid(`definition has more than ${MAX_EDGES} edges`);

  // 2. Nodes, each with its data.
  const byId = dict<FlowNode>();
  const indexOf = new Map<string, number>();
  // One at a time, in order: the first invalid node is the one reported.
  const nodes: FlowNode[] = [];
  for (const [i, raw] of (input.nodes as unknown[]).entries()) {
    const node = parseNode(raw, i, indexOf);
    await checkNodeData(node, nodeName(i, node.id), `definition.nodes[${i}]`, refs);
    indexOf.set(node.id, i);
    byId[node.id] = node;
    nodes.push(node);
  }
  const triggers = nodes.filter((node) => node.type === "trigger");
  if (triggers.length !== 1) throw invalid("definition needs exactly one trigger node");
  const trigger = triggers[0];

  // 3. Edges, indexed by source and handle.
  const next = dict<Record<string, string>>();
  for (const node of nodes) next[node.id] = dict<string>();
  const edgeIds = new Map<string, number>();
  const edges: FlowEdge[] = input.edges.map((raw: unknown, i: number) => {
    const edge = parseEdge(raw, i, edgeIds, byId);
    edgeIds.set(edge.id, i);
    const handle = edge.sourceHandle ?? "out";
    const out = next[edge.source];
    if (Object.hasOwn(out, handle))
      throw invalid(
        `${edgeName(i, edge.id)}: node ${JSON.stringify(edge.source)} has two edges from handle ${handle}`,
      );
    out[handle] = edge.target;
    return edge;
  });

  // 4. Loops: every cycle must pause somewhere, or one run would spin forever.
  const loop = loopWithoutWait(nodes, byId, next);
  if (loop) throw invalid(`definition has a loop without a wait: ${loop.join(" → ")}`);

  return { definition: { nodes, edges }, trigger, next, byId };
}

/** The node after `nodeId` on `handle`, or null where the run ends. */
export function nextNode(parsed: ParsedDefinition, nodeId: string, handle = "out"): string | null {
  const out = Object.hasOwn(parsed.next, nodeId) ? parsed.next[nodeId] : undefined;
  return out && Object.hasOwn(out, handle) ? out[handle] : null;
}

// ---------------------------------------------------------------------------------------------
// Structure
// ---------------------------------------------------------------------------------------------

function parseNode(raw: unknown, i: number, seen: Map<string, number>): FlowNode {
  if (!isObject(raw)) throw invalid(`nodes[${i}] must be an object`);
  const id = raw.id;
  if (typeof id !== "string" || id === "" || id.length > MAX_NODE_ID_LENGTH)
    throw invalid(`nodes[${i}]: id must be a non-empty string of at most ${MAX_NODE_ID_LENGTH} characters`);
  const name = nodeName(i, id);
  const earlier = seen.get(id);
  if (earlier !== undefined) throw invalid(`${name}: id is already used by nodes[${earlier}]`);
  if (typeof raw.type !== "string" || !(NODE_TYPES as readonly string[]).includes(raw.type))
    throw invalid(`${name}: type must be one of ${NODE_TYPES.join(", ")}`);
  const position = raw.position;
  if (
    !isObject(position) ||
    typeof position.x !== "number" ||
    !Number.isFinite(position.x) ||
    typeof position.y !== "number" ||
    !Number.isFinite(position.y)
  )
    throw invalid(`${name}: position must be an object with numeric x and y`);
  const data = raw.data === undefined ? {} : raw.data;
  if (!isObject(data)) throw invalid(`${name}: data must be an object`);
  // Only the fields a node has: React Flow's own (selected, measured, dragging...) are not stored.
  return { id, type: raw.type as NodeType, position: { x: position.x, y: position.y }, data };
}

function parseEdge(
  raw: unknown,
  i: number,
  seen: Map<string, number>,
  byId: Record<string, FlowNode>,
): FlowEdge {
  if (!isObject(raw)) throw invalid(`edges[${i}] must be an object`);
  const id = raw.id;
  if (typeof id !== "string" || id === "" || id.length > MAX_EDGE_ID_LENGTH)
    throw invalid(`edges[${i}]: id must be a non-empty string of at most ${MAX_EDGE_ID_LENGTH} characters`);
  const name = edgeName(i, id);
  const earlier = seen.get(id);
  if (earlier !== undefined) throw invalid(`${name}: id is already used by edges[${earlier}]`);
  const { source, target } = raw;
  if (typeof source !== "string" || !Object.hasOwn(byId, source))
    throw invalid(`${name}: source ${JSON.stringify(source ?? null)} is not a node`);
  if (typeof target !== "string" || !Object.hasOwn(byId, target))
    throw invalid(`${name}: target ${JSON.stringify(target ?? null)} is not a node`);
  if (source === target) throw invalid(`${name}: must not connect node ${JSON.stringify(source)} to itself`);
  if (byId[target].type === "trigger") throw invalid(`${name}: must not lead into the trigger node`);
  const from = byId[source];
  const handles = HANDLES[from.type] ?? ["out"];
  if (handles.length === 0)
    throw invalid(`${name}: node ${JSON.stringify(source)} is an end node and has no outgoing edges`);
  const given = raw.sourceHandle;
  const handle = given === undefined || given === null ? "out" : given;
  if (typeof handle !== "string" || !handles.includes(handle))
    throw invalid(
      handles.includes("out")
        ? `${name}: sourceHandle must be out, null or absent`
        : `${name}: sourceHandle must be one of ${handles.join(", ")}`,
    );
  // Only the fields an edge has: React Flow's own (type, animated, selected...) are not stored.
  const edge: FlowEdge = { id, source, target };
  if (handle !== "out") edge.sourceHandle = handle;
  return edge;
}

/**
 * A cycle that passes through no wait node, as its node ids (first repeated at the end), or null.
 * A cycle passes through a wait exactly when it leaves one, so the search skips their edges.
 */
function loopWithoutWait(
  nodes: FlowNode[],
  byId: Record<string, FlowNode>,
  next: Record<string, Record<string, string>>,
): string[] | null {
  const state = new Map<string, "open" | "done">();
  const stack: string[] = [];
  const visit = (id: string): string[] | null => {
    state.set(id, "open");
    stack.push(id);
    const targets = WAIT_TYPES.includes(byId[id].type) ? [] : Object.values(next[id]);
    for (const target of targets) {
      const seen = state.get(target);
      if (seen === "open") return [...stack.slice(stack.indexOf(target)), target];
      if (seen === undefined) {
        const found = visit(target);
        if (found) return found;
      }
    }
    stack.pop();
    state.set(id, "done");
    return null;
  };
  for (const node of nodes) {
    if (state.has(node.id)) continue;
    const found = visit(node.id);
    if (found) return found;
  }
  return null;
}

// ---------------------------------------------------------------------------------------------
// Node data (API.md §3 Flows, §6.6)
// ---------------------------------------------------------------------------------------------

async function checkNodeData(
  node: FlowNode,
  name: string,
  path: string,
  refs: DefinitionRefs,
): Promise<void> {
  const data = node.data;
  /**
   * A required (or, with `optional`, nullable) id of `kind` that must exist in the workspace. One
   * that does not is named by its path, as every body id is (API.md §1:
   * `definition.nodes[2].data.list_id does not exist`); an agent of the other channel is `wrong`.
   */
  const ref = async (key: string, kind: RefKind, wrong: string | null, optional = false) => {
    const value = data[key];
    if (value === undefined || value === null) {
      if (optional) return;
      throw invalid(`${name}: data.${key} is required`);
    }
    if (typeof value !== "string" || value === "")
      throw invalid(`${name}: data.${key} must be a non-empty string`);
    if (await refs.exists(kind, value)) return;
    if (wrong && (await refs.exists("agent", value))) throw invalid(`${name}: data.${key} ${wrong}`);
    throw invalid(`${path}.data.${key} does not exist`);
  };
  const has = (key: string) => data[key] !== undefined && data[key] !== null;

  switch (node.type) {
    case "trigger":
      await checkTrigger(data, name, ref);
      return;
    case "send_sms": {
      const body = data.body;
      if (body === undefined || body === null) throw invalid(`${name}: data.body is required`);
      if (typeof body !== "string" || body.trim() === "")
        throw invalid(`${name}: data.body must be a non-empty string`);
      if (body.length > MAX_SMS_BODY) throw invalid(`${name}: data.body is too long (max ${MAX_SMS_BODY})`);
      // Campaign merge fields; {{offer_url}} (a link of the contact's own) needs the node's offer.
      checkMergeFields(body, `${name}: data.body`, true);
      if (!has("offer_id") && mergeFieldsOf(body).some((field) => field.name === "offer_url"))
        throw invalid(`${name}: data.body uses {{offer_url}} but the node has no data.offer_id`);
      await ref("pool_id", "pool", null, true);
      await ref("offer_id", "offer", null, true);
      // The domain of the workspace's tracked links in the text (null: the default, else PUBLIC_URL).
      const domainId = data.link_domain_id;
      if (
        domainId !== undefined &&
        domainId !== null &&
        (typeof domainId !== "string" || !(await refs.exists("verified_link_domain", domainId)))
      )
        throw invalid(`${path}.data.link_domain_id is not a verified link domain`);
      return;
    }
    case "wait": {
      const units = (["minutes", "hours", "days"] as const).filter(has);
      if (units.length !== 1) throw invalid(`${name}: data must have exactly one of minutes, hours, days`);
      const unit = units[0];
      const amount = data[unit];
      if (!isPositive(amount)) throw invalid(`${name}: data.${unit} must be a positive number`);
      const minutes = amount * { minutes: 1, hours: 60, days: 1440 }[unit];
      if (minutes > MAX_WAIT_MINUTES)
        throw invalid(`${name}: wait must not be longer than ${MAX_WAIT_MINUTES / 1440} days`);
      return;
    }
    case "wait_for_reply": {
      if (!has("timeout_hours")) throw invalid(`${name}: data.timeout_hours is required`);
      if (!isPositive(data.timeout_hours))
        throw invalid(`${name}: data.timeout_hours must be a positive number`);
      if (data.timeout_hours * 60 > MAX_WAIT_MINUTES)
        throw invalid(`${name}: data.timeout_hours must not be longer than ${MAX_WAIT_MINUTES / 1440} days`);
      return;
    }
    case "condition":
      if (!has("rules")) throw invalid(`${name}: data.rules is required`);
      await checkRules(refs, data.rules, `${name}: data.rules`);
      return;
    case "agent":
      await ref("agent_id", "sms_agent", "must be an SMS agent");
      return;
    case "add_to_list":
    case "remove_from_list":
      await ref("list_id", "list", null);
      return;
    case "update_contact":
      checkUpdate(data.fields, `${name}: data.fields`);
      return;
    case "webhook": {
      const url = data.url;
      if (url === undefined || url === null) throw invalid(`${name}: data.url is required`);
      if (typeof url === "string" && url.length > MAX_URL)
        throw invalid(`${name}: data.url is too long (max ${MAX_URL})`);
      if (typeof url !== "string" || !isHttpUrl(url))
        throw invalid(`${name}: data.url must be an absolute http or https URL`);
      const problem = refs.checkUrl(url);
      if (problem) throw invalid(`${name}: data.url ${problem}`);
      return;
    }
    case "call": {
      if (has("agent_id") === has("say"))
        throw invalid(`${name}: data must have exactly one of agent_id, say`);
      if (has("agent_id")) {
        await ref("agent_id", "voice_agent", "must be a voice agent");
        return;
      }
      if (typeof data.say !== "string" || data.say.trim() === "")
        throw invalid(`${name}: data.say must be a non-empty string`);
      if (data.say.length > MAX_SAY) throw invalid(`${name}: data.say is too long (max ${MAX_SAY})`);
      return;
    }
    case "end":
      return;
  }
}

async function checkTrigger(
  data: Record<string, unknown>,
  name: string,
  ref: (key: string, kind: RefKind, wrong: string | null, optional?: boolean) => Promise<void>,
): Promise<void> {
  const event = data.event;
  if (event === undefined || event === null) throw invalid(`${name}: data.event is required`);
  if (typeof event !== "string" || !(TRIGGER_EVENTS as readonly string[]).includes(event))
    throw invalid(`${name}: data.event must be one of ${TRIGGER_EVENTS.join(", ")}`);
  switch (event) {
    case "added_to_list":
      await ref("list_id", "list", null);
      return;
    case "link_clicked":
      await ref("offer_id", "offer", null, true);
      return;
    case "conversion":
      // `event` names the trigger, so the conversion's own event name has a key of its own.
      if (data.conversion_event !== undefined && data.conversion_event !== null)
        checkEventName(data.conversion_event, `${name}: data.conversion_event`);
      return;
    case "inbound_keyword":
      checkKeywords(data.keywords, `${name}: data.keywords`);
      return;
  }
}

function checkKeywords(keywords: unknown, at: string): void {
  if (keywords === undefined || keywords === null) throw invalid(`${at} is required`);
  if (!Array.isArray(keywords) || keywords.length === 0 || keywords.length > MAX_KEYWORDS)
    throw invalid(`${at} must be an array of 1 to ${MAX_KEYWORDS} words`);
  // Read here, not at load: inbound.ts may (through the flow triggers) import this module.
  const reserved = [...OPT_OUT_KEYWORDS, ...OPT_IN_KEYWORDS, ...HELP_KEYWORDS];
  keywords.forEach((keyword: unknown, i) => {
    if (typeof keyword !== "string" || keyword === "")
      throw invalid(`${at}[${i}] must be a non-empty string`);
    if (/\s/.test(keyword)) throw invalid(`${at}[${i}] must be a single word`);
    if (keyword.length > MAX_KEYWORD_LENGTH)
      throw invalid(`${at}[${i}] is too long (max ${MAX_KEYWORD_LENGTH})`);
    const upper = keyword.toUpperCase();
    if (reserved.includes(upper)) throw invalid(`${at} must not include the reserved keyword ${upper}`);
  });
}

/** Segment rules through `refs`; a message that does not name the path yet gets it in front. */
async function checkRules(refs: DefinitionRefs, rules: unknown, at: string): Promise<void> {
  try {
    await refs.checkRules(rules, at);
  } catch (err) {
    if (!(err instanceof AppError) || err.code !== "validation" || err.message.startsWith(at)) throw err;
    // parseRules' tree-wide limits say `rules must ...`.
    const message = err.message.startsWith("rules ")
      ? `${at}${err.message.slice(5)}`
      : `${at}: ${err.message}`;
    throw invalid(message, err.extra);
  }
}

function checkUpdate(fields: unknown, at: string): void {
  if (fields === undefined || fields === null) throw invalid(`${at} is required`);
  if (!isObject(fields)) throw invalid(`${at} must be an object`);
  const keys = Object.keys(fields);
  if (keys.length === 0) throw invalid(`${at} must have at least one key`);
  for (const key of keys) {
    if (!UPDATABLE_FIELDS.includes(key))
      throw invalid(
        `${at}.${key.slice(0, 64)} cannot be set by a flow (allowed: ${UPDATABLE_FIELDS.join(", ")})`,
      );
    const value = fields[key];
    if (key !== "fields" && value !== null && typeof value !== "string")
      throw invalid(`${at}.${key} must be a string or null`);
  }
  // The contact rules themselves (lengths, email, time zone, custom fields), named under `at`.
  try {
    checkContactScalars(fields as ContactInput);
  } catch (err) {
    if (err instanceof AppError && err.code === "validation")
      throw invalid(`${at}.${err.message}`, err.extra);
    throw err;
  }
}

function isHttpUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return (url.protocol === "http:" || url.protocol === "https:") && url.hostname !== "";
  } catch {
    return false;
  }
}
