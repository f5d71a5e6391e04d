import {
  and,
  count,
  desc,
  eq,
  gt,
  gte,
  inArray,
  isNotNull,
  isNull,
  lt,
  lte,
  ne,
  not,
  or,
  type SQL,
  sql,
} from "drizzle-orm";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import type { Db, DbOrTx } from "../../db/client";
import {
  byteOrder,
  containsText,
  escapeLike,
  jsonField,
  jsonIn,
  jsonNumber,
  jsonText,
  likeInsensitive,
  startsWithIsoDate,
} from "../../db/dialect";
import {
  audienceVersions,
  type ContactRow,
  clicks,
  contacts,
  conversions,
  listMembers,
  lists,
  messages,
  type SegmentRow,
  segments,
} from "../../db/schema";
import { workspaceRow } from "../../db/workspace-row";
import { areaCodeMainZones } from "../../lib/area-codes";
import { invalid, notFound } from "../../lib/errors";
import { newId } from "../../lib/ids";
import { normalizePhone } from "../../lib/phone";
import { parseIsoDate, toIso } from "../../lib/time";
import { isFieldKey } from "./contacts";

/**
 * Segments: live audiences described by a rule tree (API.md §3 Segments). The tree is validated
 * (422 naming the path of the bad node) and compiled into one SQL condition on `contacts`, with
 * every user value a bound parameter. Members are never evaluated contact by contact in code.
 *
 *   group      {"all": [rule, ...]} | {"any": [rule, ...]}
 *   negation   {"not": rule}
 *   condition  {"field": "<column>" | "fields.<key>", "op": "<op>", "value": ...}
 *   membership {"in_list": "<list id>"} | {"not_in_list": "<list id>"}
 *   activity   {"event": "inbound"|"outbound"|"clicked"|"conversion",
 *               "op": "any_within_days"|"none_within_days", "value": N}
 */

export const MAX_DEPTH = 10;
export const MAX_CONDITIONS = 100;
const MAX_IN_VALUES = 1000;
const DAY_MS = 86_400_000;

export const OPS = [
  "eq",
  "neq",
  "in",
  "not_in",
  "contains",
  "starts_with",
  "gt",
  "gte",
  "lt",
  "lte",
  "exists",
  "not_exists",
  "within_last_days",
  "before",
  "after",
] as const;
export type Op = (typeof OPS)[number];

const DATE_ONLY_OPS: Op[] = ["within_last_days", "before", "after"];
const TEXT_OPS: Op[] = OPS.filter((op) => !DATE_ONLY_OPS.includes(op));
const BOOL_OPS: Op[] = ["eq", "neq"];
const DATE_OPS: Op[] = ["eq", "neq", "gt", "gte", "lt", "lte", "within_last_days", "before", "after"];

export const ACTIVITY_EVENTS = ["inbound", "outbound", "clicked", "conversion"] as const;
export const ACTIVITY_OPS = ["any_within_days", "none_within_days"] as const;

type ColumnKind = "text" | "bool" | "date";

/**
 * The zone a contact shows (API.md §7.1): its own, else its area code's main zone. Segments match
 * it as the API shows it, whether the zone was given or comes from the area code.
 */
const shownTimezone: SQL = (() => {
  const branches = areaCodeMainZones()
    .map(([code, zone]) => `WHEN '${code}' THEN '${zone}'`)
    .join(" ");
  const phone = sql`${contacts.phoneNumber}`;
  return sql`COALESCE(${contacts.timezone}, CASE WHEN length(${phone}) = 12 AND substr(${phone}, 1, 2) = '+1' THEN CASE substr(${phone}, 3, 3) ${sql.raw(branches)} END END)`;
})();

const COLUMNS: Record<string, { column: SQLiteColumn | SQL; kind: ColumnKind; nullable: boolean }> = {
  phone_number: { column: contacts.phoneNumber, kind: "text", nullable: false },
  first_name: { column: contacts.firstName, kind: "text", nullable: true },
  last_name: { column: contacts.lastName, kind: "text", nullable: true },
  email: { column: contacts.email, kind: "text", nullable: true },
  external_id: { column: contacts.externalId, kind: "text", nullable: true },
  source: { column: contacts.source, kind: "text", nullable: false },
  timezone: { column: shownTimezone, kind: "text", nullable: true },
  state: { column: contacts.state, kind: "text", nullable: true },
  opted_in: { column: contacts.optedIn, kind: "bool", nullable: false },
  created_at: { column: contacts.createdAt, kind: "date", nullable: false },
  updated_at: { column: contacts.updatedAt, kind: "date", nullable: false },
};
const FIELD_NAMES = Object.keys(COLUMNS);

export type Scalar = string | number | boolean;

/** A validated rule, ready to compile. */
export type Rule =
  | { kind: "all" | "any"; rules: Rule[] }
  | { kind: "not"; rule: Rule }
  | { kind: "column"; field: string; op: Op; value: unknown }
  | { kind: "custom"; key: string; op: Op; value: unknown }
  | { kind: "list"; listId: string; member: boolean }
  | { kind: "activity"; event: (typeof ACTIVITY_EVENTS)[number]; within: boolean; days: number };

const isObject = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === "object" && !Array.isArray(v);

const NODE_KINDS = ["all", "any", "not", "field", "in_list", "not_in_list", "event"] as const;

/**
 * Validates a rule tree. Every message names the path of the bad node (`rules.all[1].op must be
 * one of ...`). Groups (`all`, `any`, `not`) nest at most 10 deep; at most 100 conditions. Lists
 * named by membership rules must belong to the workspace (422 otherwise) unless `checkLists` is
 * false: stored segments are evaluated with a since-deleted list as an empty one.
 */
export async function parseRules(
  db: DbOrTx,
  workspaceId: string,
  input: unknown,
  path = "rules",
  options: { checkLists?: boolean } = {},
): Promise<Rule> {
  let conditions = 0;
  const listIds = new Map<string, string>();

  const tooDeep = () => invalid(`rules must not be nested deeper than ${MAX_DEPTH} levels`);
  /** `depth`: how many groups enclose `node` (0 at the root). */
  const walk = (node: unknown, at: string, depth: number): Rule => {
    if (!isObject(node)) throw invalid(`${at} must be an object`);
    if (NODE_KINDS.filter((kind) => kind in node).length > 1)
      throw invalid(`${at} must have exactly one of ${NODE_KINDS.join(", ")}`);
    if ("all" in node || "any" in node || "not" in node) {
      if (depth + 1 > MAX_DEPTH) throw tooDeep();
    }
    if ("all" in node || "any" in node) {
      const kind = "all" in node ? "all" : "any";
      const children = node[kind];
      if (!Array.isArray(children)) throw invalid(`${at}.${kind} must be an array`);
      return { kind, rules: children.map((child, i) => walk(child, `${at}.${kind}[${i}]`, depth + 1)) };
    }
    if ("not" in node) return { kind: "not", rule: walk(node.not, `${at}.not`, depth + 1) };
    conditions++;
    if (conditions > MAX_CONDITIONS) throw invalid(`rules must have at most ${MAX_CONDITIONS} conditions`);
    if ("in_list" in node || "not_in_list" in node) {
      const key = "in_list" in node ? "in_list" : "not_in_list";
      const id = node[key];
      if (typeof id !== "string") throw invalid(`${at}.${key} must be a string`);
      listIds.set(id, `${at}.${key}`);
      return { kind: "list", listId: id, member: key === "in_list" };
    }
    if ("event" in node) return activity(node, at);
    if ("field" in node) return condition(node, at);
    throw invalid(`${at} must have one of ${NODE_KINDS.join(", ")}`);
  };

  const activity = (node: Record<string, unknown>, at: string): Rule => {
    const event = node.event;
    if (typeof event !== "string" || !(ACTIVITY_EVENTS as readonly string[]).includes(event))
      throw invalid(`${at}.event must be one of ${ACTIVITY_EVENTS.join(", ")}`);
    if (node.op === undefined) throw invalid(`${at}.op is required`);
    if (typeof node.op !== "string" || !(ACTIVITY_OPS as readonly string[]).includes(node.op))
      throw invalid(`${at}.op must be one of ${ACTIVITY_OPS.join(", ")}`);
    const days = node.value;
    if (days === undefined) throw invalid(`${at}.value is required`);
    if (typeof days !== "number" || !Number.isInteger(days) || days < 0 || days > 36500)
      throw invalid(`${at}.value must be an integer between 0 and 36500`);
    return {
      kind: "activity",
      event: event as (typeof ACTIVITY_EVENTS)[number],
      within: node.op === "any_within_days",
      days,
    };
  };

  const condition = (node: Record<string, unknown>, at: string): Rule => {
    const field = node.field;
    if (typeof field !== "string") throw invalid(`${at}.field must be a string`);
    let allowed: Op[];
    let kind: ColumnKind | "custom";
    let key = "";
    if (field.startsWith("fields.")) {
      key = field.slice("fields.".length);
      if (!isFieldKey(key)) throw invalid(`${at}.field is not a valid custom field name`);
      kind = "custom";
      allowed = [...OPS];
    } else {
      // Own keys only: "constructor", "__proto__" and the like are not fields.
      const spec = Object.hasOwn(COLUMNS, field) ? COLUMNS[field] : undefined;
      if (!spec) throw invalid(`${at}.field must be one of ${FIELD_NAMES.join(", ")} or fields.<key>`);
      kind = spec.kind;
      allowed = spec.kind === "text" ? TEXT_OPS : spec.kind === "bool" ? BOOL_OPS : DATE_OPS;
      if (spec.nullable)
        allowed = allowed.includes("exists") ? allowed : [...allowed, "exists", "not_exists"];
    }
    if (node.op === undefined) throw invalid(`${at}.op is required`);
    if (typeof node.op !== "string" || !allowed.includes(node.op as Op))
      throw invalid(`${at}.op must be one of ${allowed.join(", ")}`);
    const op = node.op as Op;
    let value = checkValue(kind, op, node.value, `${at}.value`);
    // Phone numbers are stored in E.164: compare a 10- or 11-digit US number the same way.
    if (field === "phone_number" && ["eq", "neq", "in", "not_in"].includes(op)) {
      const e164 = (v: unknown) => normalizePhone(v) ?? v;
      value = Array.isArray(value) ? value.map(e164) : e164(value);
    }
    return kind === "custom" ? { kind: "custom", key, op, value } : { kind: "column", field, op, value };
  };

  const rule = walk(input, path, 0);
  for (const [id, at] of options.checkLists === false ? [] : listIds) {
    if (!(await workspaceRow(db, lists, workspaceId, id))) throw invalid(`${at} does not exist`);
  }
  return rule;
}

function isScalar(v: unknown): v is Scalar {
  return typeof v === "string" || typeof v === "boolean" || (typeof v === "number" && Number.isFinite(v));
}

function parseDate(v: unknown, at: string): number {
  const ms = typeof v === "string" ? parseIsoDate(v) : Number.NaN;
  if (!Number.isFinite(ms)) throw invalid(`${at} must be a date (ISO 8601)`);
  return ms;
}

/** Checks (and, for dates, converts) a condition's value for its field kind and op. */
function checkValue(kind: ColumnKind | "custom", op: Op, value: unknown, at: string): unknown {
  if (op === "exists" || op === "not_exists") return null;
  if (value === undefined) throw invalid(`${at} is required`);
  if (op === "within_last_days") {
    if (typeof value !== "number" || !Number.isInteger(value) || value < 0 || value > 36500)
      throw invalid(`${at} must be an integer between 0 and 36500`);
    return value;
  }
  if (op === "in" || op === "not_in") {
    if (!Array.isArray(value)) throw invalid(`${at} must be an array`);
    if (value.length === 0 || value.length > MAX_IN_VALUES)
      throw invalid(`${at} must have between 1 and ${MAX_IN_VALUES} items`);
    return value.map((item, i) => checkScalar(kind, item, `${at}[${i}]`));
  }
  if (op === "before" || op === "after") {
    const ms = parseDate(value, at);
    return kind === "custom" ? new Date(ms).toISOString() : ms;
  }
  if (op === "contains" || op === "starts_with") {
    if (typeof value !== "string" || value === "") throw invalid(`${at} must be a non-empty string`);
    if (value.length > 2000) throw invalid(`${at} is too long (max 2000)`);
    return value;
  }
  if (kind === "custom" && (op === "gt" || op === "gte" || op === "lt" || op === "lte")) {
    if (typeof value !== "number" && typeof value !== "string")
      throw invalid(`${at} must be a number or a string`);
    if (typeof value === "number" && !Number.isFinite(value))
      throw invalid(`${at} must be a number or a string`);
  }
  return checkScalar(kind, value, at);
}

function checkScalar(kind: ColumnKind | "custom", value: unknown, at: string): unknown {
  switch (kind) {
    case "text":
      if (typeof value !== "string") throw invalid(`${at} must be a string`);
      if (value.length > 2000) throw invalid(`${at} is too long (max 2000)`);
      return value;
    case "bool":
      if (typeof value !== "boolean") throw invalid(`${at} must be a boolean`);
      return value;
    case "date":
      return parseDate(value, at);
    case "custom":
      if (!isScalar(value)) throw invalid(`${at} must be a string, number or boolean`);
      if (typeof value === "string" && value.length > 2000) throw invalid(`${at} is too long (max 2000)`);
      return value;
  }
}

// ---------------------------------------------------------------------------------------------
// Compilation
// ---------------------------------------------------------------------------------------------

/**
 * The values a custom field may hold for one rule value. Imported CSV values are strings and API
 * values are typed, so `3` also matches "3", `true` also matches "true" (and JSON true), and "3"
 * also matches 3.
 */
function variants(value: Scalar): Scalar[] {
  if (typeof value === "boolean") return [value ? 1 : 0, String(value)];
  if (typeof value === "number") return [value, String(value)];
  const out: Scalar[] = [value];
  if (/^-?\d+(\.\d+)?$/.test(value.trim())) out.push(Number(value));
  if (value === "true" || value === "false") out.push(value === "true" ? 1 : 0);
  return out;
}

function compareOp(op: Op): "=" | ">" | ">=" | "<" | "<=" {
  switch (op) {
    case "gt":
    case "after":
      return ">";
    case "gte":
      return ">=";
    case "lt":
    case "before":
      return "<";
    case "lte":
      return "<=";
    default:
      return "=";
  }
}

/**
 * A rule on a custom field, never NULL (NOT works as people expect), the same on both databases:
 * equality matches the value's forms (see `variants`); `contains`, `starts_with`,
 * `within_last_days` (text that starts with an ISO date) and a comparison with a text value read
 * the field only when it holds text; a comparison with a number reads it as a number (a JSON
 * number, text that is a number literal, a boolean as 1/0). A field of another kind matches none
 * of them, and their negation.
 */
function compileCustom(key: string, op: Op, value: unknown, now: number): SQL {
  const expr = jsonField(contacts.fields, key);
  const present = sql`${expr} IS NOT NULL`;
  const text = jsonText(contacts.fields, key);
  const holds = (operand: SQL, condition: SQL) => sql`(${operand} IS NOT NULL AND ${condition})`;
  switch (op) {
    case "exists":
      return present;
    case "not_exists":
      return sql`${expr} IS NULL`;
    case "eq":
      return sql`(${present} AND ${jsonIn(contacts.fields, key, variants(value as Scalar))})`;
    case "neq":
      return sql`(${expr} IS NULL OR NOT ${jsonIn(contacts.fields, key, variants(value as Scalar))})`;
    case "in":
      return sql`(${present} AND ${jsonIn(contacts.fields, key, (value as Scalar[]).flatMap(variants))})`;
    case "not_in":
      return sql`(${expr} IS NULL OR NOT ${jsonIn(contacts.fields, key, (value as Scalar[]).flatMap(variants))})`;
    case "contains":
      return holds(text, likeInsensitive(text, `%${escapeLike(value as string)}%`));
    case "starts_with":
      return holds(text, likeInsensitive(text, `${escapeLike(value as string)}%`));
    case "within_last_days":
      return holds(
        text,
        sql`${startsWithIsoDate(text)} AND ${text} >= ${new Date(now - (value as number) * DAY_MS).toISOString()}`,
      );
    default: {
      const cmp = sql.raw(compareOp(op));
      if (typeof value === "number") {
        const number = jsonNumber(contacts.fields, key);
        return holds(number, sql`${number} ${cmp} ${value}`);
      }
      return holds(text, sql`${text} ${cmp} ${value as string}`);
    }
  }
}

function compileColumn(field: string, op: Op, value: unknown, now: number): SQL {
  const spec = COLUMNS[field] as (typeof COLUMNS)[string];
  // drizzle's operators take a column or an SQL expression alike (the shown timezone is one); the
  // cast only picks an overload: text values bind the same either way.
  const col = spec.column as SQLiteColumn;
  const guard = (condition: SQL | undefined): SQL =>
    (spec.nullable ? and(isNotNull(col), condition) : condition) as SQL;
  // Text is compared in byte order on both databases (as custom fields are).
  const ordered = (spec.kind === "text" ? byteOrder(col) : col) as SQLiteColumn;
  switch (op) {
    case "exists":
      return isNotNull(col);
    case "not_exists":
      return isNull(col);
    case "eq":
      return guard(eq(col, value));
    case "neq":
      return (spec.nullable ? or(isNull(col), ne(col, value)) : ne(col, value)) as SQL;
    case "in":
      return guard(inArray(col, value as unknown[]));
    case "not_in":
      return (
        spec.nullable
          ? or(isNull(col), not(inArray(col, value as unknown[])))
          : not(inArray(col, value as unknown[]))
      ) as SQL;
    case "contains":
      return guard(likeInsensitive(col, `%${escapeLike(value as string)}%`));
    case "starts_with":
      return guard(likeInsensitive(col, `${escapeLike(value as string)}%`));
    case "within_last_days":
      return gte(col, now - (value as number) * DAY_MS);
    case "gt":
    case "after":
      return guard(gt(ordered, value));
    case "gte":
      return guard(gte(ordered, value));
    case "lt":
    case "before":
      return guard(lt(ordered, value));
    case "lte":
      return guard(lte(ordered, value));
  }
  throw new Error(`unhandled op ${op}`);
}

const TRUE = sql`1 = 1`;
const FALSE = sql`1 = 0`;

/** The rule as one SQL condition on `contacts` (never NULL: NOT works as people expect). */
export function compileRule(rule: Rule, workspaceId: string, now: number): SQL {
  switch (rule.kind) {
    case "all":
      return rule.rules.length === 0
        ? TRUE
        : (and(...rule.rules.map((r) => compileRule(r, workspaceId, now))) as SQL);
    case "any":
      return rule.rules.length === 0
        ? FALSE
        : (or(...rule.rules.map((r) => compileRule(r, workspaceId, now))) as SQL);
    case "not":
      return sql`NOT (${compileRule(rule.rule, workspaceId, now)})`;
    case "column":
      return compileColumn(rule.field, rule.op, rule.value, now);
    case "custom":
      return compileCustom(rule.key, rule.op, rule.value, now);
    case "list": {
      const exists = sql`EXISTS (SELECT 1 FROM ${listMembers} WHERE ${listMembers.listId} = ${rule.listId} AND ${listMembers.contactId} = ${contacts.id})`;
      return rule.member ? exists : sql`NOT ${exists}`;
    }
    case "activity": {
      const since = now - rule.days * DAY_MS;
      // Each through an index that starts (workspace_id, contact_id, ...).
      const exists =
        rule.event === "clicked"
          ? sql`EXISTS (SELECT 1 FROM ${clicks} WHERE ${clicks.workspaceId} = ${workspaceId} AND ${clicks.contactId} = ${contacts.id} AND ${clicks.createdAt} >= ${since})`
          : rule.event === "conversion"
            ? sql`EXISTS (SELECT 1 FROM ${conversions} WHERE ${conversions.workspaceId} = ${workspaceId} AND ${conversions.contactId} = ${contacts.id} AND ${conversions.createdAt} >= ${since})`
            : sql`EXISTS (SELECT 1 FROM ${messages} WHERE ${messages.workspaceId} = ${workspaceId} AND ${messages.contactId} = ${contacts.id} AND ${messages.direction} = ${rule.event} AND ${messages.createdAt} >= ${since})`;
      return rule.within ? exists : sql`NOT ${exists}`;
    }
  }
}

/** The full WHERE for a workspace's contacts matching `rules` (already validated). */
export function audienceWhere(rule: Rule, workspaceId: string, now: number): SQL {
  return and(eq(contacts.workspaceId, workspaceId), compileRule(rule, workspaceId, now)) as SQL;
}

/** Validates and compiles `rules` in one go: the WHERE selecting the matching contacts. */
export async function compileSegmentRules(
  db: DbOrTx,
  workspaceId: string,
  rules: unknown,
  now = Date.now(),
): Promise<SQL> {
  return audienceWhere(await parseRules(db, workspaceId, rules), workspaceId, now);
}

/** Matching contacts, newest first, and how many match in all. */
export async function matchContacts(
  db: DbOrTx,
  workspaceId: string,
  rule: Rule,
  page: { limit: number; offset: number },
  now = Date.now(),
): Promise<{ rows: ContactRow[]; total: number }> {
  const where = audienceWhere(rule, workspaceId, now);
  const rows = await db
    .select()
    .from(contacts)
    .where(where)
    .orderBy(desc(contacts.createdAt), desc(contacts.id))
    .limit(page.limit)
    .offset(page.offset)
    .all();
  return { rows, total: await countMatches(db, workspaceId, rule, now) };
}

/** Counts without the cache. */
export async function countMatchesNow(
  db: DbOrTx,
  workspaceId: string,
  rule: Rule,
  now = Date.now(),
): Promise<number> {
  return (
    (
      await db
        .select({ n: count() })
        .from(contacts)
        .where(audienceWhere(rule, workspaceId, now))
        .get()
    )?.n ?? 0
  );
}

/** Whether the rule reads messages (activity) or a window relative to now (within_last_days). */
function traitsOf(rule: Rule): { activity: boolean; relative: boolean } {
  switch (rule.kind) {
    case "all":
    case "any":
      return rule.rules
        .map(traitsOf)
        .reduce((a, b) => ({ activity: a.activity || b.activity, relative: a.relative || b.relative }), {
          activity: false,
          relative: false,
        });
    case "not":
      return traitsOf(rule.rule);
    case "activity":
      return { activity: true, relative: true };
    case "column":
    case "custom":
      return { activity: false, relative: rule.op === "within_last_days" };
    default:
      return { activity: false, relative: false };
  }
}

/**
 * Segment totals are cached against the workspace's audience version, which triggers bump on every
 * write to contacts or list_members (by any code path or process). A cached total is therefore
 * exact until the next audience write; rules relative to now (within_last_days) are recounted at
 * least every second, and rules on message activity are never cached (messages are not versioned).
 */
const countCache = new Map<string, { version: number; at: number; total: number }>();
const COUNT_CACHE_LIMIT = 1000;
const RELATIVE_TTL_MS = 1000;

async function audienceVersion(db: DbOrTx, workspaceId: string): Promise<number> {
  return (
    (
      await db
        .select({ version: audienceVersions.version })
        .from(audienceVersions)
        .where(eq(audienceVersions.workspaceId, workspaceId))
        .get()
    )?.version ?? 0
  );
}

export async function countMatches(
  db: DbOrTx,
  workspaceId: string,
  rule: Rule,
  now = Date.now(),
): Promise<number> {
  const traits = traitsOf(rule);
  if (traits.activity) return await countMatchesNow(db, workspaceId, rule, now);
  const key = `${workspaceId}\n${JSON.stringify(rule)}`;
  const version = await audienceVersion(db, workspaceId);
  const hit = countCache.get(key);
  if (hit && hit.version === version && (!traits.relative || Math.abs(now - hit.at) < RELATIVE_TTL_MS)) {
    return hit.total;
  }
  const total = await countMatchesNow(db, workspaceId, rule, now);
  countCache.delete(key);
  countCache.set(key, { version, at: now, total });
  if (countCache.size > COUNT_CACHE_LIMIT) {
    const oldest = countCache.keys().next().value;
    if (oldest !== undefined) countCache.delete(oldest);
  }
  return total;
}

/** Whether one contact matches `rules` right now (one SQL query; e.g. a flow condition node). */
export async function contactMatches(
  db: DbOrTx,
  workspaceId: string,
  contactId: string,
  rules: unknown,
  now = Date.now(),
): Promise<boolean> {
  const where = and(await compileSegmentRules(db, workspaceId, rules, now), eq(contacts.id, contactId));
  return (await db.select({ id: contacts.id }).from(contacts).where(where).limit(1).get()) !== undefined;
}

// ---------------------------------------------------------------------------------------------
// Segment records
// ---------------------------------------------------------------------------------------------

export interface SegmentJson {
  id: string;
  name: string;
  description: string;
  rules: unknown;
  created_at: string;
  count?: number;
}

export function segmentJson(row: SegmentRow, matching?: number): SegmentJson {
  const out: SegmentJson = {
    id: row.id,
    name: row.name,
    description: row.description,
    rules: row.rules,
    created_at: toIso(row.createdAt) as string,
  };
  if (matching !== undefined) out.count = matching;
  return out;
}

async function requireSegment(db: DbOrTx, workspaceId: string, id: string): Promise<SegmentRow> {
  const row = await workspaceRow(db, segments, workspaceId, id);
  if (!row) throw notFound();
  return row;
}

/** The segment's stored rules (a list deleted since counts as empty). */
export async function segmentRule(
  db: DbOrTx,
  workspaceId: string,
  id: string,
): Promise<{ row: SegmentRow; rule: Rule }> {
  const row = await requireSegment(db, workspaceId, id);
  return { row, rule: await parseRules(db, workspaceId, row.rules, "rules", { checkLists: false }) };
}

/** The WHERE selecting a segment's members now (for campaign audiences). 404 for unknown ids. */
export async function segmentWhere(
  db: DbOrTx,
  workspaceId: string,
  segmentId: string,
  now = Date.now(),
): Promise<SQL> {
  return audienceWhere((await segmentRule(db, workspaceId, segmentId)).rule, workspaceId, now);
}

/**
 * Rules as stored and answered, once `parseRules` accepted them: each node with the keys of its
 * kind only, values as given (API.md §1: an unknown field is ignored, never stored).
 */
function rulesAsStored(node: unknown): unknown {
  const n = node as Record<string, unknown>;
  if ("all" in n) return { all: (n.all as unknown[]).map(rulesAsStored) };
  if ("any" in n) return { any: (n.any as unknown[]).map(rulesAsStored) };
  if ("not" in n) return { not: rulesAsStored(n.not) };
  if ("in_list" in n) return { in_list: n.in_list };
  if ("not_in_list" in n) return { not_in_list: n.not_in_list };
  const keys = "event" in n ? ["event", "op", "value"] : ["field", "op", "value"];
  return Object.fromEntries(keys.filter((key) => key in n).map((key) => [key, n[key]]));
}

export async function createSegment(
  db: Db,
  workspaceId: string,
  input: { name: string; description?: string; rules: unknown },
  now = Date.now(),
): Promise<SegmentRow> {
  await parseRules(db, workspaceId, input.rules);
  const row: SegmentRow = {
    id: newId(),
    workspaceId,
    name: input.name,
    description: input.description ?? "",
    rules: rulesAsStored(input.rules),
    createdAt: now,
    updatedAt: now,
  };
  await db.insert(segments).values(row).run();
  return row;
}

export async function getSegment(
  db: DbOrTx,
  workspaceId: string,
  id: string,
  now = Date.now(),
): Promise<SegmentJson> {
  const row = await requireSegment(db, workspaceId, id);
  const rule = await parseRules(db, workspaceId, row.rules, "rules", { checkLists: false });
  return segmentJson(row, await countMatches(db, workspaceId, rule, now));
}

export async function listSegments(
  db: DbOrTx,
  workspaceId: string,
  options: { q?: string; limit: number; offset: number },
): Promise<{ rows: SegmentRow[]; total: number }> {
  const q = options.q?.trim();
  const where = and(eq(segments.workspaceId, workspaceId), containsText(segments.name, q));
  const rows = await db
    .select()
    .from(segments)
    .where(where)
    .orderBy(desc(segments.createdAt), desc(segments.id))
    .limit(options.limit)
    .offset(options.offset)
    .all();
  const total = (await db.select({ n: count() }).from(segments).where(where).get())?.n ?? 0;
  return { rows, total };
}

export async function updateSegment(
  db: Db,
  workspaceId: string,
  id: string,
  patch: { name?: string; description?: string; rules?: unknown },
  now = Date.now(),
): Promise<SegmentRow> {
  return await db.transaction(async (tx) => {
    // Validation (422) before the lookup (404), as everywhere.
    if (patch.rules !== undefined) await parseRules(tx, workspaceId, patch.rules);
    const row = await requireSegment(tx, workspaceId, id);
    const changes: Partial<SegmentRow> = { updatedAt: now };
    if (patch.name !== undefined) changes.name = patch.name;
    if (patch.description !== undefined) changes.description = patch.description;
    if (patch.rules !== undefined) changes.rules = rulesAsStored(patch.rules);
    await tx
      .update(segments)
      .set(changes)
      .where(and(eq(segments.workspaceId, workspaceId), eq(segments.id, id)))
      .run();
    return { ...row, ...changes };
  });
}

export async function deleteSegment(db: Db, workspaceId: string, id: string): Promise<void> {
  await db.transaction(async (tx) => {
    await requireSegment(tx, workspaceId, id);
    await tx
      .delete(segments)
      .where(and(eq(segments.workspaceId, workspaceId), eq(segments.id, id)))
      .run();
  });
}
