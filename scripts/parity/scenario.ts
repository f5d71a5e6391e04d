/**
 * The parity scenario (see ./run.ts): one deterministic sequence of API calls, written once and run
 * against both servers in lockstep. Ids are taken from each server's own answers (`side.vars`).
 * Control flow must not depend on the answers (both copies must make the same calls in the same
 * order): read ids with optional chaining, never branch on a status.
 */

import { METRICS } from "../../src/domain/attribution/analytics";
import { CONVERSATION_FILTERS } from "../../src/domain/messaging/conversations";
import { brandBody, campaignBody } from "../../test/support/registration-bodies";

// biome-ignore lint/suspicious/noExplicitAny: parsed JSON answers
export type Json = any;

export interface Res {
  status: number;
  body: Json;
  headers: Headers;
}

export interface CallOptions {
  /** Bearer key; null sends none; default the side's bootstrap key. */
  key?: string | null;
  headers?: Record<string, string>;
  /** A raw body instead of JSON.stringify(body). */
  raw?: string;
  label?: string;
}

export interface Side {
  name: "sqlite" | "postgres";
  url: string;
  key: string;
  workspaceId: string;
  otherKey: string;
  otherWorkspaceId: string;
  receiverUrl: string;
  received: { path: string; headers: Record<string, string>; body: unknown }[];
  vars: Record<string, Json>;
}

export interface Api {
  side: Side;
  setSection(name: string): void;
  /** A recorded call (both servers answer it; the answers are compared). */
  call(method: string, path: string, body?: unknown, opts?: CallOptions): Promise<Res>;
  get(path: string, opts?: CallOptions): Promise<Res>;
  post(path: string, body?: unknown, opts?: CallOptions): Promise<Res>;
  patch(path: string, body?: unknown, opts?: CallOptions): Promise<Res>;
  del(path: string, body?: unknown, opts?: CallOptions): Promise<Res>;
  /** An unrecorded call (polling). */
  peek(method: string, path: string, body?: unknown, opts?: CallOptions): Promise<Res>;
  /** Polls `check` until it answers true (each side on its own), then both go on together. */
  waitFor(what: string, check: () => Promise<boolean | unknown>, timeoutMs?: number): Promise<boolean>;
  /** Records a value computed by the scenario for comparison. */
  note(what: string, value: unknown): Promise<void>;
}

const FINAL_MESSAGE = new Set(["DELIVERED", "UNDELIVERED", "FAILED", "RECEIVED"]);
const FINAL_CALL = new Set(["COMPLETED", "BUSY", "NO_ANSWER", "FAILED", "VOICEMAIL", "CANCELED"]);

/** Waits until `read` answers the same JSON three times in a row (300 ms apart) and `done` holds. */
async function settle(
  api: Api,
  what: string,
  read: () => Promise<unknown>,
  done: (v: Json) => boolean = () => true,
) {
  let last = "";
  let same = 0;
  return await api.waitFor(
    what,
    async () => {
      const value = await read();
      const text = JSON.stringify(value);
      same = text === last ? same + 1 : 0;
      last = text;
      if (same >= 2 && done(value)) return true;
      await Bun.sleep(250);
      return false;
    },
    45_000,
  );
}

/** A list's items, ids and times left out, sorted: for lists whose order is a race. */
async function noteSorted(api: Api, what: string, path: string, key: string) {
  const page = await api.peek("GET", path);
  const strip = (o: Json) =>
    Object.fromEntries(
      Object.entries(o).filter(([k]) => !k.endsWith("_id") && !k.endsWith("_at") && k !== "id"),
    );
  const items = ((page.body?.[key] ?? []) as Json[])
    .map(strip)
    .map((o) => JSON.stringify(o))
    .sort();
  await api.note(what, { status: page.status, total: page.body?.total, items });
}

async function allMessagesFinal(api: Api) {
  return await api.waitFor("every message final", async () => {
    const page = await api.peek("GET", "/v1/messages?limit=200");
    const messages: Json[] = page.body?.messages ?? [];
    return messages.every((m) => FINAL_MESSAGE.has(m.status)) ? true : messages.map((m) => m.status);
  });
}

const q = (params: Record<string, string | number | undefined>) => {
  const entries = Object.entries(params).filter(([, v]) => v !== undefined) as [string, string][];
  return entries.length ? `?${new URLSearchParams(entries.map(([k, v]) => [k, String(v)])).toString()}` : "";
};

// ------------------------------------------------------------------------------------------------

const NUMBERS = ["+12125550199", "+14155550198", "+13125550197", "+12065550196"];

async function system(api: Api) {
  await api.get("/healthz", { key: null });
  await api.get("/v1/me");
  await api.get("/api/public/me");
  await api.get("/api/public/me", { key: null });
  await api.get("/v1/me", { key: "opk_notAValidKeyAtAll0000000000000000000" });
  await api.get("/v1/openapi.json", { key: null });
  await api.get("/t.js", { key: null });
  await api.get("/v1/voices");
  await api.get("/auth/providers", { key: null });
  await api.get("/auth/session", { key: null });
  await api.get("/v1/nope");
}

async function settings(api: Api) {
  await api.get("/v1/settings");
  await api.patch("/v1/settings", {
    quiet_hours: { enabled: false },
    state_rules: false,
    frequency_cap: { enabled: false },
    help_reply: "Help: call us. Ünïcødé ✓",
    name: "Parity Wörkspace",
  });
  await api.patch("/v1/settings", { timezone: "Mars/Olympus" });
  await api.patch("/v1/settings", { quiet_hours: { start_hour: 25 } });
  await api.patch("/v1/settings", {
    costs: { sms_segment: 0.0123456789, call_minute: 0.02, currency: "eur" },
  });
  // biome-ignore lint/correctness/noPrecisionLoss: the probe sends a number beyond double precision
  await api.patch("/v1/settings", { one_off_daily_limit: 9007199254740993 });
  await api.patch("/v1/settings", { one_off_daily_limit: 2147483648 });
  await api.patch("/v1/settings", { one_off_daily_limit: 5000, number_orders_daily_limit: 50 });
  await api.patch("/v1/settings", { number_orders_daily_limit: 2147483648 });
  await api.patch("/v1/settings", { frequency_cap: { max_messages: 2147483648 } });
  await api.patch("/v1/settings", {
    frequency_cap: { enabled: false, max_messages: 3 },
    number_orders_daily_limit: 50,
  });
  await api.patch("/v1/settings", { paused_states: ["ny", "CA", "XX"] });
  await api.patch("/v1/settings", { paused_states: [] });
  await api.patch("/v1/settings", { default_number_id: "00000000-0000-7000-8000-000000000000" });
  const s = await api.get("/v1/settings");
  api.side.vars.publicId = s.body?.settings?.public_id;
}

async function numbers(api: Api) {
  const v = api.side.vars;
  await api.get("/v1/numbers/available?area_code=212&limit=3");
  await api.get("/v1/numbers/available?type=toll_free&limit=2&contains=77");
  await api.get("/v1/numbers/available?area_code=abc");
  await api.get("/v1/numbers/available?limit=-1");
  await api.post("/v1/numbers", { number: NUMBERS[0] });
  await api.post("/v1/numbers", { numbers: [NUMBERS[1], NUMBERS[2], NUMBERS[0], "+12125550000"] });
  await api.post("/v1/numbers", { number: "not a number" });
  const list = await api.get("/v1/numbers");
  const byNumber = (n: string) => (list.body?.numbers ?? []).find((x: Json) => x.number === n)?.id;
  v.num = NUMBERS.slice(0, 3).map(byNumber);
  await api.get(`/v1/numbers/${v.num[0]}`);
  await api.patch(`/v1/numbers/${v.num[0]}`, { default: true });
  await api.patch(`/v1/numbers/${v.num[1]}`, { daily_limit: 1000 });
  await api.patch(`/v1/numbers/${v.num[1]}`, { daily_limit: -5 });
  await api.patch(`/v1/numbers/${v.num[1]}`, { daily_limit: 1.5 });
  await api.get("/v1/numbers?status=active");
  await api.get("/v1/numbers?status=released");
  await api.get("/v1/numbers?status=bogus");

  const pool = await api.post("/v1/pools", { name: "Main pool", description: "Ünïcødé" });
  v.pool = pool.body?.pool?.id;
  await api.post("/v1/pools", { name: "second pool" });
  await api.post("/v1/pools", { name: "" });
  await api.post(`/v1/pools/${v.pool}/numbers`, { number_ids: [v.num[1], v.num[2], "nope", v.num[1]] });
  await api.get(`/v1/pools/${v.pool}`);
  await api.get("/v1/pools");
  await api.get("/v1/pools?q=MAIN");
  await api.get("/v1/pools?q=%25");
  await api.get(`/v1/numbers${q({ pool_id: v.pool })}`);
  await api.patch(`/v1/pools/${v.pool}`, { name: "Main pool (renamed)" });
  await api.del(`/v1/pools/${v.pool}/numbers`, { number_ids: [v.num[2]] });
  await api.get(`/v1/pools/${v.pool}`);
  await api.get("/v1/settings");
}

// Contacts with names and fields that exercise collation, case folding, accents and JSON types.
const PEOPLE: Json[] = [
  {
    phone_number: "+12125550101",
    first_name: "Émile",
    last_name: "Zola",
    email: "Emile.Zola@Example.COM",
    fields: { plan: "pro", seats: 3, vip: true, score: 10, signup: "2024-05-01", note: "café au lait" },
  },
  {
    phone_number: "2125550102",
    first_name: "émile",
    last_name: "durand",
    email: "emile@example.com",
    fields: { plan: "Pro", seats: "3", vip: "true", score: "9", signup: "2024-07-15" },
  },
  {
    phone_number: "+1 (415) 555-0103",
    first_name: "Zoë",
    last_name: "Saldaña",
    fields: { plan: "team", seats: 3.0, vip: 1, score: "abc", nested_like: '{"a":1}' },
  },
  {
    phone_number: "14155550104",
    first_name: "adam",
    last_name: "smith",
    email: "ADAM@EXAMPLE.COM",
    fields: { plan: "free", seats: "03", vip: false, score: "12abc" },
  },
  {
    phone_number: "+13055550105",
    first_name: "Adam",
    last_name: "Smith",
    fields: { seats: 10, vip: "false", score: " 42 ", zip: "02134" },
  },
  {
    phone_number: "+13055550106",
    first_name: "Søren",
    last_name: "Kierkegaard",
    fields: { plan: "PRO", seats: "3.50", score: "1e3", zip: 2134 },
  },
  {
    phone_number: "+18085550107",
    first_name: "Иван",
    last_name: "Петров",
    fields: { plan: "team", seats: 2.5, score: -1 },
  },
  {
    phone_number: "+16175550108",
    first_name: "Straße",
    last_name: "O'Brien",
    email: "o_brien%@example.com",
    fields: { score: 0, big: 9007199254740991, tiny: 1e-7, neg: -0.5 },
  },
  {
    phone_number: "+13125550109",
    first_name: "ΩMEGA",
    last_name: "ωmega",
    fields: { plan: "", seats: "", vip: "TRUE" },
  },
  {
    phone_number: "+12065550110",
    first_name: "Jean-Luc",
    last_name: "Picard",
    external_id: "crm-42",
    fields: { score: 1.0, when: "2025-01-01T00:00:00Z" },
  },
  { phone_number: "+12125550111", first_name: null, last_name: null, email: null, fields: {} },
  {
    phone_number: "+12125550112",
    first_name: "J.R.",
    last_name: "Ewing",
    timezone: "America/Chicago",
    state: "tx",
    fields: { days: 5 },
  },
  {
    phone_number: "+12125550113",
    first_name: "zoe",
    last_name: "Ångström",
    opted_in: false,
    fields: { plan: "pro " },
  },
  { phone_number: "+12125550114", first_name: "İstanbul", last_name: "ǅemal", fields: { score: 100 } },
  { phone_number: "+12125550115", first_name: "Ǆ", last_name: "ﬁsh", fields: { seats: true } },
  // Punctuation in names (thread search labels are tokenized by each database), odd field keys.
  {
    phone_number: "+12125550116",
    first_name: "Dot.Com",
    last_name: "a@b.example",
    email: "Zoë.Ünder@Example.com",
    fields: {
      "a.b": 1,
      "x[0]": "y",
      "*": true,
      é: "accent key",
      "a b": "space",
      "😀": "emoji",
      $: "dollar",
      "a'b": "quote",
      "A.B": "upper",
    },
  },
  {
    phone_number: "+12125550117",
    first_name: "v1.2.3",
    last_name: "/usr/bin",
    fields: { "a.b": "2", "a'b": 7 },
  },
  { phone_number: "+12125550118", first_name: "under_score", last_name: "3.50 x-ray" },
  { phone_number: "+12125550119", first_name: "www.example.com", last_name: "Ünder-Straße" },
];

async function contacts(api: Api) {
  const v = api.side.vars;
  v.contacts = [];
  for (const person of PEOPLE) {
    const r = await api.post("/v1/contacts", person, { label: `create contact ${person.phone_number}` });
    v.contacts.push(r.body?.contact?.id);
  }
  // Duplicates, bad input.
  await api.post("/v1/contacts", { phone_number: "(212) 555-0101" });
  await api.post("/v1/contacts", { phone_number: "12" });
  await api.post("/v1/contacts", { phone_number: 2125550199 });
  await api.post("/v1/contacts", { phone_number: "+12125550190", fields: { nested: { a: 1 } } });
  await api.post("/v1/contacts", { phone_number: "+12125550190", fields: { list: [1, 2] } });
  await api.post("/v1/contacts", { phone_number: "+12125550190", fields: "x" });
  await api.post("/v1/contacts", { phone_number: "+12125550190", fields: { "bad key": 1 } });
  await api.post("/v1/contacts", { phone_number: "+12125550190", email: "not-an-email" });
  await api.post("/v1/contacts", { phone_number: "+12125550190", timezone: "Nowhere/Land" });
  await api.post("/v1/contacts", { phone_number: "+12125550190", opted_in: "yes" });
  await api.post("/v1/contacts", { phone_number: "+12125550190", first_name: "x".repeat(201) });
  await api.post("/v1/contacts", {}, { label: "create contact empty" });
  await api.post("/v1/contacts", undefined, { raw: "{bad json", label: "create contact bad json" });
  await api.post("/v1/contacts", undefined, { raw: "[]", label: "create contact array" });
  await api.post("/v1/contacts", undefined, { raw: "null", label: "create contact null" });
  await api.post("/v1/contacts", { phone_number: "+12125550190", first_name: "Key\u0000Null" });

  await api.get(`/v1/contacts/${v.contacts[0]}`);
  await api.get(`/v1/contacts/${v.contacts[2]}`);
  await api.get("/v1/contacts/00000000-0000-7000-8000-000000000000");
  await api.get("/v1/contacts/not-a-uuid");
  await api.get(`/v1/contacts/${v.contacts[0].toUpperCase?.() ?? "x"}`, {
    label: "get contact upper-case id",
  });
  await api.get(`/v1/contacts/${v.contacts[0]}`, {
    key: api.side.otherKey,
    label: "get contact from other workspace",
  });

  // Updates: fields merge, null removes, timezone back to area code.
  await api.patch(`/v1/contacts/${v.contacts[0]}`, { fields: { seats: null, extra: "x", score: 11 } });
  await api.patch(`/v1/contacts/${v.contacts[1]}`, { timezone: "Europe/Paris" });
  await api.patch(`/v1/contacts/${v.contacts[1]}`, { timezone: null });
  await api.patch(`/v1/contacts/${v.contacts[3]}`, { phone_number: "+13055550105" });
  await api.patch(`/v1/contacts/${v.contacts[3]}`, { first_name: "", email: "" });
  await api.patch(`/v1/contacts/${v.contacts[3]}`, { state: "Ny" });
  await api.patch(`/v1/contacts/${v.contacts[3]}`, { state: "Zz" });
  await api.patch("/v1/contacts/00000000-0000-7000-8000-000000000000", { first_name: "x" });

  // Lists and searches.
  await api.get("/v1/contacts");
  await api.get("/v1/contacts?limit=3");
  await api.get("/v1/contacts?limit=3&offset=3");
  await api.get("/v1/contacts?limit=3&offset=1000");
  await api.get("/v1/contacts?limit=0");
  await api.get("/v1/contacts?limit=500");
  await api.get("/v1/contacts?limit=-1");
  await api.get("/v1/contacts?offset=-1");
  await api.get("/v1/contacts?limit=abc");
  await api.get("/v1/contacts?limit=1.5");
  await api.get("/v1/contacts?offset=99999999999999999999");
  await api.get("/v1/contacts?limit=2&offset=9007199254740993");
  for (const text of [
    "émile",
    "ÉMILE",
    "Émile",
    "EMILE",
    "emile",
    "zoë",
    "ZOË",
    "zoe",
    "søren",
    "SØREN",
    "soren",
    "иван",
    "ИВАН",
    "ωmega",
    "ΩMEGA",
    "straße",
    "STRASSE",
    "strasse",
    "o'brien",
    "O'BRIEN",
    "%",
    "_",
    "\\",
    "o_brien%",
    "example.com",
    "EXAMPLE.COM",
    "5550101",
    "555-0101",
    "(212) 555-0101",
    "+12125550101",
    "2125550101",
    "0101",
    "415",
    "émile zola",
    "Émile Zola",
    "zola émile",
    "adam smith",
    "ADAM SMITH",
    " adam ",
    "jean-luc",
    "J.R.",
    "istanbul",
    "İSTANBUL",
    "ǆemal",
    "ǅEMAL",
    "ǄEMAL",
    "fish",
    "ﬁsh",
    "FISH",
    "ångström",
    "ÅNGSTRÖM",
    "angstrom",
    "crm-42",
  ]) {
    await api.get(`/v1/contacts${q({ q: text })}`, { label: `contacts q=${JSON.stringify(text)}` });
  }

  // Import: JSON and CSV.
  await api.post("/v1/contacts/import", {
    contacts: [
      { phone_number: "+12125550120", first_name: "Imported", fields: { plan: "pro", seats: "7" } },
      { phone_number: "+12125550101", first_name: "Émile (again)" },
      { phone_number: "garbage", first_name: "Bad" },
      { phone_number: "+12125550121", first_name: "Ünder", opted_in: false, fields: { vip: "true" } },
      { phone_number: "+12125550121", first_name: "Dup in file" },
    ],
  });
  await api.post("/v1/contacts/import", undefined, {
    raw: [
      "phone,first_name,last_name,email,Accepts SMS Marketing,plan,seats,state",
      "+12125550130,Çsv,Ümlaut,CSV@Example.com,yes,team,12,NY",
      "+12125550131,Second,Row,,no,pro,3.0,",
      "+12125550132,Third,Row,,maybe,,,",
      "not-a-phone,Fourth,Row,,yes,,,",
      "+12125550101,Émile,Zola,,yes,enterprise,99,",
    ].join("\n"),
    headers: { "content-type": "text/csv" },
    label: "import csv",
  });
  await api.post("/v1/contacts/import", { contacts: "nope" });
  await api.post("/v1/contacts/import", { contacts: [] });
  await api.get("/v1/contacts?limit=200");
  await api.get(`/v1/contacts${q({ q: "Çsv" })}`);
  await api.get(`/v1/contacts${q({ q: "çsv" })}`);

  // A contact to delete.
  const gone = await api.post("/v1/contacts", { phone_number: "+12125550140", first_name: "Gone" });
  v.goneContact = gone.body?.contact?.id;
  await api.del(`/v1/contacts/${v.goneContact}`);
  await api.del(`/v1/contacts/${v.goneContact}`);
  await api.get(`/v1/contacts/${v.goneContact}`);
  await api.get("/v1/contacts?limit=1");
}

async function lists(api: Api) {
  const v = api.side.vars;
  const a = await api.post("/v1/lists", { name: "VIPs", description: "Très important" });
  v.listA = a.body?.list?.id;
  const b = await api.post("/v1/lists", { name: "vips lowercase" });
  v.listB = b.body?.list?.id;
  await api.post("/v1/lists", { name: "Ünïcode list" });
  await api.post("/v1/lists", { name: 42 });
  await api.post(`/v1/lists/${v.listA}/contacts`, {
    contact_ids: [
      v.contacts[0],
      v.contacts[1],
      v.contacts[2],
      v.contacts[0],
      "00000000-0000-7000-8000-000000000000",
      "x",
    ],
    phone_numbers: ["+13055550105", "2125550111", "bad", "+19995550000"],
  });
  await api.post(`/v1/lists/${v.listA}/contacts`, { contact_ids: [v.contacts[0]] });
  await api.post(`/v1/lists/${v.listB}/contacts`, { contact_ids: v.contacts.slice(5, 9) });
  await api.post(`/v1/lists/${v.listB}/contacts`, { contact_ids: "nope" });
  await api.post(`/v1/lists/${v.listB}/contacts`, {});
  await api.get(`/v1/lists/${v.listA}`);
  await api.get(`/v1/lists/${v.listA}/contacts`);
  await api.get(`/v1/lists/${v.listA}/contacts?limit=2&offset=1`);
  await api.get(`/v1/lists/${v.listB}/contacts`);
  await api.get("/v1/lists");
  await api.get("/v1/lists?q=vip");
  await api.get("/v1/lists?q=VIP");
  await api.get("/v1/lists?q=%C3%BCn%C3%AF");
  await api.get("/v1/lists?q=%C3%9CN%C3%8F");
  await api.del(`/v1/lists/${v.listA}/contacts`, {
    contact_ids: [v.contacts[1]],
    phone_numbers: ["+13055550105", "+19995550000"],
  });
  await api.get(`/v1/lists/${v.listA}/contacts`);
  await api.patch(`/v1/lists/${v.listB}`, { name: "Renamed", description: null });
  await api.patch(`/v1/lists/${v.listB}`, { description: "described" });
  await api.get(`/v1/lists/${v.listA}`, { key: api.side.otherKey, label: "get list from other workspace" });
  await api.post(
    `/v1/lists/${v.listA}/contacts`,
    { contact_ids: [v.contacts[0]] },
    { key: api.side.otherKey, label: "add to list from other workspace" },
  );
  const c = await api.post("/v1/lists", { name: "Doomed" });
  v.listC = c.body?.list?.id;
  await api.post(`/v1/lists/${v.listC}/contacts`, { contact_ids: [v.contacts[0]] });
  await api.del(`/v1/lists/${v.listC}`);
  await api.get(`/v1/lists/${v.listC}/contacts`);
  await api.get(`/v1/contacts/${v.contacts[0]}`);
}

const RULES: [string, unknown][] = [
  ["plan eq pro", { field: "fields.plan", op: "eq", value: "pro" }],
  ["plan eq Pro", { field: "fields.plan", op: "eq", value: "Pro" }],
  ["plan neq pro", { field: "fields.plan", op: "neq", value: "pro" }],
  ["plan in", { field: "fields.plan", op: "in", value: ["pro", "team"] }],
  ["plan not_in", { field: "fields.plan", op: "not_in", value: ["pro", "team"] }],
  ["plan contains PR", { field: "fields.plan", op: "contains", value: "PR" }],
  ["plan starts_with p", { field: "fields.plan", op: "starts_with", value: "p" }],
  ["plan exists", { field: "fields.plan", op: "exists" }],
  ["plan not_exists", { field: "fields.plan", op: "not_exists" }],
  ["plan eq empty", { field: "fields.plan", op: "eq", value: "" }],
  ["plan gt m", { field: "fields.plan", op: "gt", value: "m" }],
  ["seats eq 3", { field: "fields.seats", op: "eq", value: 3 }],
  ["seats eq '3'", { field: "fields.seats", op: "eq", value: "3" }],
  ["seats eq 3.5", { field: "fields.seats", op: "eq", value: 3.5 }],
  ["seats eq '3.50'", { field: "fields.seats", op: "eq", value: "3.50" }],
  ["seats eq '03'", { field: "fields.seats", op: "eq", value: "03" }],
  ["seats eq 1", { field: "fields.seats", op: "eq", value: 1 }],
  ["seats eq true", { field: "fields.seats", op: "eq", value: true }],
  ["seats gt 2", { field: "fields.seats", op: "gt", value: 2 }],
  ["seats gt '2'", { field: "fields.seats", op: "gt", value: "2" }],
  ["seats gte 3", { field: "fields.seats", op: "gte", value: 3 }],
  ["seats lt 10", { field: "fields.seats", op: "lt", value: 10 }],
  ["seats lte '3'", { field: "fields.seats", op: "lte", value: "3" }],
  ["seats lt '10'", { field: "fields.seats", op: "lt", value: "10" }],
  ["seats in [3,'7']", { field: "fields.seats", op: "in", value: [3, "7"] }],
  ["vip eq true", { field: "fields.vip", op: "eq", value: true }],
  ["vip eq 'true'", { field: "fields.vip", op: "eq", value: "true" }],
  ["vip eq false", { field: "fields.vip", op: "eq", value: false }],
  ["vip eq 1", { field: "fields.vip", op: "eq", value: 1 }],
  ["vip eq 0", { field: "fields.vip", op: "eq", value: 0 }],
  ["vip neq true", { field: "fields.vip", op: "neq", value: true }],
  ["vip contains tru", { field: "fields.vip", op: "contains", value: "tru" }],
  ["vip contains 1", { field: "fields.vip", op: "contains", value: "1" }],
  ["score gt 5", { field: "fields.score", op: "gt", value: 5 }],
  ["score lt 1", { field: "fields.score", op: "lt", value: 1 }],
  ["score lte 0", { field: "fields.score", op: "lte", value: 0 }],
  ["score gte 12", { field: "fields.score", op: "gte", value: 12 }],
  ["score gt '5'", { field: "fields.score", op: "gt", value: "5" }],
  ["score lt 'b'", { field: "fields.score", op: "lt", value: "b" }],
  ["score gt 999", { field: "fields.score", op: "gt", value: 999 }],
  ["score eq 1", { field: "fields.score", op: "eq", value: 1 }],
  ["score eq '1.0'", { field: "fields.score", op: "eq", value: "1.0" }],
  ["score contains 0", { field: "fields.score", op: "contains", value: "0" }],
  ["score contains '.'", { field: "fields.score", op: "contains", value: "." }],
  ["score starts_with '-'", { field: "fields.score", op: "starts_with", value: "-" }],
  ["zip eq '02134'", { field: "fields.zip", op: "eq", value: "02134" }],
  ["zip eq 2134", { field: "fields.zip", op: "eq", value: 2134 }],
  ["zip contains 213", { field: "fields.zip", op: "contains", value: "213" }],
  ["big gt 9e15", { field: "fields.big", op: "gt", value: 9e15 }],
  ["big eq max", { field: "fields.big", op: "eq", value: 9007199254740991 }],
  ["tiny gt 0", { field: "fields.tiny", op: "gt", value: 0 }],
  ["tiny contains e", { field: "fields.tiny", op: "contains", value: "e" }],
  ["neg lt 0", { field: "fields.neg", op: "lt", value: 0 }],
  ["signup before 2024-06-01", { field: "fields.signup", op: "before", value: "2024-06-01" }],
  ["signup after 2024-06-01", { field: "fields.signup", op: "after", value: "2024-06-01" }],
  ["when after 2024", { field: "fields.when", op: "after", value: "2024-12-31T23:00:00Z" }],
  ["days within_last_days 30", { field: "fields.days", op: "within_last_days", value: 30 }],
  ["score within_last_days 30", { field: "fields.score", op: "within_last_days", value: 30 }],
  ["signup within_last_days 36500", { field: "fields.signup", op: "within_last_days", value: 36500 }],
  ["note contains CAFÉ", { field: "fields.note", op: "contains", value: "CAFÉ" }],
  ["note contains café", { field: "fields.note", op: "contains", value: "café" }],
  ["key a.b exists", { field: "fields.a.b", op: "exists" }],
  ["key a.b eq 1", { field: "fields.a.b", op: "eq", value: 1 }],
  ["key a.b gt 1", { field: "fields.a.b", op: "gt", value: 1 }],
  ["key A.B exists", { field: "fields.A.B", op: "exists" }],
  ["key x[0] eq y", { field: "fields.x[0]", op: "eq", value: "y" }],
  ["key * eq true", { field: "fields.*", op: "eq", value: true }],
  ["key é exists", { field: "fields.é", op: "exists" }],
  ["key 'a b' exists", { field: "fields.a b", op: "exists" }],
  ["key 😀 contains emo", { field: "fields.😀", op: "contains", value: "emo" }],
  ["key $ exists", { field: "fields.$", op: "exists" }],
  ["key a'b exists", { field: "fields.a'b", op: "exists" }],
  ["key a'b gte 7", { field: "fields.a'b", op: "gte", value: 7 }],
  ["nested_like contains '\"a\":1'", { field: "fields.nested_like", op: "contains", value: '"a":1' }],
  ["first_name eq Émile", { field: "first_name", op: "eq", value: "Émile" }],
  ["first_name contains ÉMI", { field: "first_name", op: "contains", value: "ÉMI" }],
  ["first_name contains émi", { field: "first_name", op: "contains", value: "émi" }],
  ["first_name contains EMI", { field: "first_name", op: "contains", value: "EMI" }],
  ["first_name contains MILE", { field: "first_name", op: "contains", value: "MILE" }],
  ["first_name starts_with z", { field: "first_name", op: "starts_with", value: "z" }],
  ["first_name starts_with Z", { field: "first_name", op: "starts_with", value: "Z" }],
  ["first_name starts_with ω", { field: "first_name", op: "starts_with", value: "ω" }],
  ["first_name gt M", { field: "first_name", op: "gt", value: "M" }],
  ["first_name lt a", { field: "first_name", op: "lt", value: "a" }],
  ["first_name gte É", { field: "first_name", op: "gte", value: "É" }],
  ["first_name in", { field: "first_name", op: "in", value: ["adam", "Zoë"] }],
  ["first_name neq adam", { field: "first_name", op: "neq", value: "adam" }],
  ["first_name not_in", { field: "first_name", op: "not_in", value: ["adam", "Adam"] }],
  ["first_name exists", { field: "first_name", op: "exists" }],
  ["first_name not_exists", { field: "first_name", op: "not_exists" }],
  ["last_name contains '", { field: "last_name", op: "contains", value: "'" }],
  ["email contains EXAMPLE", { field: "email", op: "contains", value: "EXAMPLE" }],
  ["email contains %", { field: "email", op: "contains", value: "%" }],
  ["email contains _", { field: "email", op: "contains", value: "_" }],
  ["email eq lower", { field: "email", op: "eq", value: "emile@example.com" }],
  ["email starts_with ADAM", { field: "email", op: "starts_with", value: "ADAM" }],
  ["phone eq 10-digit", { field: "phone_number", op: "eq", value: "2125550101" }],
  ["phone in mixed", { field: "phone_number", op: "in", value: ["(212) 555-0102", "+14155550103"] }],
  ["phone starts_with +1212", { field: "phone_number", op: "starts_with", value: "+1212" }],
  ["phone gt +1400", { field: "phone_number", op: "gt", value: "+1400" }],
  ["timezone eq NY", { field: "timezone", op: "eq", value: "America/New_York" }],
  ["timezone eq Chicago", { field: "timezone", op: "eq", value: "America/Chicago" }],
  ["timezone contains angeles", { field: "timezone", op: "contains", value: "angeles" }],
  ["timezone not_exists", { field: "timezone", op: "not_exists" }],
  ["state eq TX", { field: "state", op: "eq", value: "TX" }],
  ["state eq tx", { field: "state", op: "eq", value: "tx" }],
  ["state exists", { field: "state", op: "exists" }],
  ["source eq api", { field: "source", op: "eq", value: "api" }],
  ["source eq import", { field: "source", op: "eq", value: "import" }],
  ["opted_in eq false", { field: "opted_in", op: "eq", value: false }],
  ["opted_in neq true", { field: "opted_in", op: "neq", value: true }],
  ["created_at within_last_days 1", { field: "created_at", op: "within_last_days", value: 1 }],
  ["created_at within_last_days 0", { field: "created_at", op: "within_last_days", value: 0 }],
  ["created_at after 2020", { field: "created_at", op: "after", value: "2020-01-01" }],
  ["created_at before 2020", { field: "created_at", op: "before", value: "2020-01-01T00:00:00Z" }],
  ["created_at gt 2020", { field: "created_at", op: "gt", value: "2020-01-01" }],
  ["updated_at eq 2020", { field: "updated_at", op: "eq", value: "2020-01-01" }],
  ["not plan eq pro", { not: { field: "fields.plan", op: "eq", value: "pro" } }],
  ["not seats gt 2", { not: { field: "fields.seats", op: "gt", value: 2 } }],
  ["not score lt 1", { not: { field: "fields.score", op: "lt", value: 1 } }],
  [
    "any plan/vip",
    {
      any: [
        { field: "fields.plan", op: "eq", value: "team" },
        { field: "fields.vip", op: "eq", value: true },
      ],
    },
  ],
  ["all empty", { all: [] }],
  ["any empty", { any: [] }],
  ["not all empty", { not: { all: [] } }],
  ["inbound any 1", { event: "inbound", op: "any_within_days", value: 1 }],
  ["outbound any 1", { event: "outbound", op: "any_within_days", value: 1 }],
  ["outbound none 1", { event: "outbound", op: "none_within_days", value: 1 }],
  ["clicked any 30", { event: "clicked", op: "any_within_days", value: 30 }],
  ["conversion any 30", { event: "conversion", op: "any_within_days", value: 30 }],
  ["conversion none 0", { event: "conversion", op: "none_within_days", value: 0 }],
];

const BAD_RULES: [string, unknown][] = [
  ["bad op", { field: "fields.plan", op: "like", value: "x" }],
  ["bad field", { field: "plan", op: "eq", value: "x" }],
  [
    "bad nested path",
    {
      all: [
        { field: "first_name", op: "eq", value: "x" },
        { any: [{ field: "opted_in", op: "gt", value: true }] },
      ],
    },
  ],
  ["bool on text", { field: "first_name", op: "eq", value: true }],
  ["number on text", { field: "first_name", op: "eq", value: 3 }],
  ["object value", { field: "fields.plan", op: "eq", value: { a: 1 } }],
  ["null value", { field: "fields.plan", op: "eq", value: null }],
  ["in empty", { field: "fields.plan", op: "in", value: [] }],
  ["bad date", { field: "created_at", op: "after", value: "yesterday" }],
  ["two kinds", { field: "first_name", op: "exists", all: [] }],
  ["unknown list", { in_list: "00000000-0000-7000-8000-000000000000" }],
  ["event bad", { event: "opened", op: "any_within_days", value: 1 }],
  ["days huge", { event: "inbound", op: "any_within_days", value: 1e9 }],
  ["days negative", { field: "created_at", op: "within_last_days", value: -1 }],
  ["gt NaN-like", { field: "fields.score", op: "gt", value: true }],
  ["__proto__", { field: "fields.__proto__", op: "exists" }],
  ["constructor", { field: "constructor", op: "exists" }],
  ["array root", []],
  ["string root", "x"],
];

/** A preview as "phone value-of-the-rule's-field" strings (readable diffs). */
const members = (r: Res, rule: Json) => {
  const field: string | undefined = rule?.field ?? rule?.not?.field;
  const shown = (c: Json) =>
    !field
      ? ""
      : field.startsWith("fields.")
        ? ` ${JSON.stringify(c.fields?.[field.slice(7)])}`
        : ` ${JSON.stringify(c[field])}`;
  return {
    status: r.status,
    count: r.body?.count,
    members: (r.body?.sample ?? []).map((c: Json) => `${c.phone_number}${shown(c)}`),
  };
};

async function segments(api: Api) {
  const v = api.side.vars;
  const all = await api.peek("POST", "/v1/segments/preview", { rules: { all: [] } });
  const total = all.body?.count;
  for (const [name, rule] of RULES) {
    // Up to 200 members (the sample is capped at 10): a preview of the rule ANDed with each
    // contact's phone would be too many calls, so the members come from the segment's page.
    const r = await api.peek("POST", "/v1/segments/preview", { rules: { all: [rule] } });
    const negated = await api.peek("POST", "/v1/segments/preview", { rules: { not: rule } });
    await api.note(`preview ${name}`, {
      ...members(r, rule),
      // A rule and its negation split the audience: count + count(not) = every contact.
      complement: { not: negated.body?.count, sum: (r.body?.count ?? 0) + (negated.body?.count ?? 0), total },
    });
  }
  await api.post("/v1/segments/preview", { rules: { field: "fields.plan", op: "eq", value: "pro" } });
  await api.post("/v1/segments/preview", { rules: { in_list: v.listA } });
  await api.post("/v1/segments/preview", { rules: { not_in_list: v.listA } });
  await api.post("/v1/segments/preview", {
    rules: { all: [{ in_list: v.listB }, { field: "fields.plan", op: "eq", value: "team" }] },
  });
  for (const [name, rule] of BAD_RULES)
    await api.post("/v1/segments/preview", { rules: rule }, { label: `preview bad: ${name}` });
  await api.post("/v1/segments/preview", {});
  const deep = Array.from({ length: 12 }).reduce<unknown>((r) => ({ not: r }), {
    field: "first_name",
    op: "exists",
  });
  await api.post("/v1/segments/preview", { rules: deep }, { label: "preview too deep" });

  const pro = await api.post("/v1/segments", {
    name: "Pro or team",
    description: "d",
    rules: {
      any: [{ field: "fields.plan", op: "in", value: ["pro", "team"] }, { in_list: v.listA }],
      extra: 1,
    },
  });
  v.segPro = pro.body?.segment?.id;
  const num = await api.post("/v1/segments", {
    name: "Seats > 2",
    rules: { all: [{ field: "fields.seats", op: "gt", value: 2 }] },
  });
  v.segSeats = num.body?.segment?.id;
  const everyone = await api.post("/v1/segments", { name: "everyone", rules: { all: [] } });
  v.segAll = everyone.body?.segment?.id;
  await api.post("/v1/segments", { name: "bad", rules: { all: [{ field: "x" }] } });
  await api.get(`/v1/segments/${v.segPro}`);
  await api.get(`/v1/segments/${v.segSeats}`);
  await api.get(`/v1/segments/${v.segAll}`);
  await api.get(`/v1/segments/${v.segPro}/members`);
  await api.get(`/v1/segments/${v.segSeats}/members?limit=2&offset=1`);
  await api.get("/v1/segments");
  await api.get("/v1/segments?q=SEATS");
  await api.get("/v1/segments?q=%3E");
  await api.patch(`/v1/segments/${v.segSeats}`, {
    rules: { all: [{ field: "fields.seats", op: "gte", value: "3" }] },
  });
  await api.get(`/v1/segments/${v.segSeats}`);
  await api.patch(`/v1/segments/${v.segSeats}`, { rules: { bogus: 1 } });
  await api.del(`/v1/segments/${v.segAll}`);
  await api.get(`/v1/segments/${v.segAll}`);
}

async function suppression(api: Api) {
  const v = api.side.vars;
  const s1 = await api.post("/v1/suppression", {
    phone_number: "(305) 555-0105",
    reason: "complaint",
    source: "parity",
  });
  v.sup1 = s1.body?.suppression?.id;
  await api.post("/v1/suppression", { phone_number: "+13055550105" });
  await api.post("/v1/suppression", { phone_number: "+19175550150", reason: "manual" });
  await api.post("/v1/suppression", { phone_number: "+19175550151", reason: "carrier" });
  await api.post("/v1/suppression", { phone_number: "+19175550152", reason: "bogus" });
  await api.post("/v1/suppression", { phone_number: "x" });
  await api.get("/v1/suppression");
  await api.get("/v1/suppression?reason=manual");
  await api.get("/v1/suppression?reason=nope");
  await api.get("/v1/suppression?q=0105");
  await api.get("/v1/suppression?q=%2B1917");
  await api.get(`/v1/suppression/${v.sup1}`);
  // Sends to suppressed / opted-out numbers.
  await api.post("/v1/messages", { to: "+13055550105", body: "Should not go" });
  await api.post("/v1/messages", { to: "+12125550113", body: "Opted out contact" });
  await api.post("/v1/calls", { to: "+13055550105", say: "no" });
  const s3 = await api.post("/v1/suppression", { phone_number: "+19175550153" });
  await api.del(`/v1/suppression/${s3.body?.suppression?.id}`);
  await api.del(`/v1/suppression/${s3.body?.suppression?.id}`);
  await api.get("/v1/suppression?limit=2&offset=1");
}

async function messages(api: Api) {
  const v = api.side.vars;
  v.sent = [];
  const sends: [string, Json][] = [
    ["plain", { to: "+12125550101", body: "Hello Émile, pizza tonight? café at 3.50" }],
    ["10-digit", { to: "2125550102", body: "Hi émile — see e-mail foo@bar.com https://x.example/a?b=c" }],
    ["emoji", { to: "+14155550103", body: "Zoë 😀 🍕 PIZZA!" }],
    ["long", { to: "+14155550104", body: `${"Long message ".repeat(20)}end` }],
    ["from pool number", { to: "+13055550106", body: "Hej Søren, Straße und Maß", from: NUMBERS[1] }],
    ["cyrillic", { to: "+18085550107", body: "Привет, Иван! ПРИВЕТ" }],
    ["unknown recipient", { to: "+16175550160", body: "New person here" }],
    ["invalid magic", { to: "+15005550001", body: "invalid" }],
    ["cannot receive", { to: "+15005550009", body: "cannot receive" }],
    ["blocked", { to: "+15005550004", body: "blocked" }],
    ["omega", { to: "+13125550109", body: "Ωmega test" }],
    ["jean-luc", { to: "+12065550110", body: "Engage, J.R. Jean-Luc! 50% off; $3.50" }],
    ["j.r.", { to: "+12125550112", body: "Hello J.R." }],
    ["istanbul", { to: "+12125550114", body: "İstanbul trip" }],
    ["fish", { to: "+12125550115", body: "ﬁsh and chips" }],
    ["dot.com", { to: "+12125550116", body: "hello one" }],
    ["v1.2.3", { to: "+12125550117", body: "hello two" }],
    ["under_score", { to: "+12125550118", body: "hello three" }],
    ["www", { to: "+12125550119", body: "hello four" }],
  ];
  for (const [name, body] of sends) {
    const r = await api.post("/v1/messages", body, { label: `send ${name}` });
    v.sent.push(r.body?.message?.id);
    // One at a time to its final status: the carrier's ledger order is then the send order.
    await allMessagesFinal(api);
  }
  await api.post("/v1/messages", { to: "+12125550101", body: "" });
  await api.post("/v1/messages", { to: "+12125550101" });
  await api.post("/v1/messages", { to: "+12125550101", body: "x".repeat(1601) });
  await api.post("/v1/messages", { to: "nope", body: "x" });
  await api.post("/v1/messages", { to: "+12125550101", body: "x", from: "+19995550000" });
  await api.post("/v1/messages", { to: "+12125550101", body: "x", from: 5 });
  await api.post(
    "/v1/messages",
    { to: "+12125550101", body: "x" },
    { key: api.side.otherKey, label: "send without a number (other workspace)" },
  );
  await allMessagesFinal(api);

  // Inbound through the sandbox: replies, keywords.
  const inbound: [string, string, string][] = [
    ["+12125550101", NUMBERS[0], "Yes! Pizza sounds great. Merci beaucoup"],
    ["+14155550103", NUMBERS[0], "who is this?"],
    ["+16175550108", NUMBERS[0], "Hi from Straße O'Brien, call me at 555-1234"],
    ["+19175550170", NUMBERS[0], "Brand new sender here: ÆØÅ æøå"],
    ["+12125550102", NUMBERS[0], "STOP"],
    ["+12125550102", NUMBERS[0], "START"],
    ["+14155550104", NUMBERS[0], "HELP"],
    ["+14155550104", NUMBERS[0], "please stop texting me"],
    [
      "+12065550110",
      NUMBERS[0],
      "I would like to know more but honestly I might want you to stop sending these eventually",
    ],
    ["+12125550101", "+19995550000", "to a number we do not own"],
    ["+12125550101", NUMBERS[0], ""],
  ];
  for (const [from, to, body] of inbound) {
    await api.post(
      "/v1/sandbox/inbound",
      { from, to, body },
      { label: `inbound ${from} ${JSON.stringify(body.slice(0, 20))}` },
    );
    // Each keyword's reply is handed off before the next inbound (a STOP right after a HELP
    // would otherwise race the HELP reply's hand-off).
    await allMessagesFinal(api);
  }
  await api.post("/v1/sandbox/inbound", { from: "garbage", to: NUMBERS[0], body: "x" });
  await allMessagesFinal(api);

  for (const id of v.sent) await api.get(`/v1/messages/${id}`);
  await api.get("/v1/messages/00000000-0000-7000-8000-000000000000");
  await api.get("/v1/messages");
  await api.get("/v1/messages?limit=5&offset=2");
  for (const status of ["DELIVERED", "FAILED", "UNDELIVERED", "RECEIVED", "QUEUED", "delivered", "nope"])
    await api.get(`/v1/messages?status=${status}`);
  await api.get("/v1/messages?direction=inbound");
  await api.get("/v1/messages?direction=outbound&limit=3");
  await api.get("/v1/messages?direction=sideways");
  await api.get(`/v1/messages${q({ contact_id: v.contacts[0] })}`);
  await api.get(`/v1/messages${q({ contact_id: "00000000-0000-7000-8000-000000000000" })}`);
  await api.get(`/v1/messages${q({ contact_id: "not-a-uuid" })}`);
  await api.get("/v1/sandbox/outbox");
  await api.get("/v1/sandbox/outbox?limit=3&offset=1");
  await api.get(`/v1/contacts/${v.contacts[1]}`);
  await api.get("/v1/suppression");
}

async function conversations(api: Api) {
  const v = api.side.vars;
  const list = await api.get("/v1/conversations");
  v.convs = (list.body?.conversations ?? []).map((c: Json) => c.id);
  for (const filter of [...CONVERSATION_FILTERS, "bogus"])
    await api.get(`/v1/conversations?filter=${filter}`);
  await api.get("/v1/conversations?limit=2&offset=1");
  const searches = [
    "pizza",
    "PIZZA",
    "piz",
    "Pizza sounds",
    "sounds pizza",
    "café",
    "cafe",
    "CAFÉ",
    "émile",
    "ÉMILE",
    "Émile",
    "emile",
    "emi",
    "zoë",
    "zoe",
    "ZOË",
    "søren",
    "soren",
    "SØREN",
    "straße",
    "strasse",
    "STRASSE",
    "иван",
    "ИВАН",
    "Иван",
    "привет",
    "ПРИВЕТ",
    "ωmega",
    "ΩMEGA",
    "Ωmega",
    "omega",
    "0101",
    "5550101",
    "2125550101",
    "12125550101",
    "+12125550101",
    "(212) 555-0101",
    "555",
    "1",
    "e-mail",
    "foo@bar.com",
    "bar.com",
    "o'brien",
    "brien",
    "O'BRIEN",
    "j.r.",
    "j.r",
    "jr",
    "jean-luc",
    "luc",
    "jean",
    "3.50",
    "50",
    "50%",
    "$3.50",
    '"',
    "*",
    "pizza*",
    "NEAR",
    "AND",
    "OR",
    "NOT",
    "a OR b",
    '"pizza"',
    "'",
    "''",
    "-",
    "--",
    "()",
    "^pizza",
    "æøå",
    "ÆØÅ",
    "aeoa",
    "ae",
    "merci beaucoup",
    "MERCI",
    "istanbul",
    "İstanbul",
    "i̇stanbul",
    "fish",
    "ﬁsh",
    "FISH",
    "ǅemal",
    "Ǆ",
    "ǆ",
    "ångström",
    "angstrom",
    "😀",
    "🍕 pizza",
    "new person",
    "who",
    "x".repeat(300),
    "  pizza  ",
    "pizza\ttonight",
    "e",
    "é",
    // Labels with punctuation (names are tokenized by the database on PostgreSQL).
    "dot",
    "com",
    "dot.com",
    "Dot.Com",
    "a@b.example",
    "example",
    "b",
    "v1",
    "v1.2.3",
    "1.2.3",
    "2",
    "usr",
    "bin",
    "/usr/bin",
    "usr/bin",
    "under",
    "score",
    "under_score",
    "3.50",
    "ray",
    "x-ray",
    "x",
    "www",
    "www.example.com",
    "example.com",
    "ünder",
    "under-straße",
    "Ünder-Straße",
    "hello",
    "hello one",
  ];
  for (const text of searches)
    await api.get(`/v1/conversations${q({ q: text })}`, {
      label: `conversations q=${JSON.stringify(text.slice(0, 40))}`,
    });
  await api.get(`/v1/conversations${q({ q: "pizza", filter: "open" })}`);
  await api.get(`/v1/conversations${q({ q: "pizza", filter: "closed" })}`);
  await api.get(`/v1/conversations${q({ q: "", filter: "open" })}`);
  await api.get(`/v1/conversations${q({ q: "pizza", limit: 1, offset: 1 })}`);

  const first = v.convs?.[0];
  v.conv = first;
  await api.get(`/v1/conversations/${first}`);
  for (const id of (v.convs ?? []).slice(1))
    await api.get(`/v1/conversations/${id}`, { label: "get conversation (each)" });
  await api.post(`/v1/conversations/${first}`, { body: "Human reply ✓" });
  await api.post(`/v1/conversations/${first}`, { body: "" });
  await api.post(`/v1/conversations/${first}/notes`, { body: "A note — private" });
  await api.post(`/v1/conversations/${first}/notes`, { body: "" });
  await api.patch(`/v1/conversations/${first}`, { status: "closed" });
  await api.patch(`/v1/conversations/${first}`, { status: "archived" });
  await api.patch(`/v1/conversations/${first}`, { needs_attention: true });
  await api.patch(`/v1/conversations/${first}`, { assigned_to: "nobody@example.com" });
  await api.patch(`/v1/conversations/${first}`, { assigned_to: null });
  await api.patch(`/v1/conversations/${first}`, { agent_id: "00000000-0000-7000-8000-000000000000" });
  await api.get("/v1/conversations/assignees");
  await allMessagesFinal(api);
  await api.get(`/v1/conversations/${first}`);
  await api.get("/v1/conversations?filter=closed");
  await api.get("/v1/conversations?filter=needs_attention");
  await api.get("/v1/conversations/00000000-0000-7000-8000-000000000000");
  await api.get(`/v1/conversations/${first}`, {
    key: api.side.otherKey,
    label: "get conversation from other workspace",
  });
  await api.get(`/v1/contacts/${v.contacts[0]}/activity`);
  await api.get(`/v1/contacts/${v.contacts[1]}/activity?limit=2`);
}

async function offers(api: Api) {
  const v = api.side.vars;
  const o = await api.post("/v1/offers", {
    name: "Spring sale",
    destination_url: "https://shop.example.com/spring?utm_source=sms&x=a%20b#top",
    value: 49.99,
    currency: "usd",
  });
  v.offer = o.body?.offer?.id;
  v.offerUrl = o.body?.offer?.tracking_url;
  const o2 = await api.post("/v1/offers", {
    name: "Paused",
    destination_url: "https://shop.example.com/p",
    status: "paused",
    value: 0,
  });
  v.offerPaused = o2.body?.offer?.id;
  v.offerPausedUrl = o2.body?.offer?.tracking_url;
  await api.post("/v1/offers", { name: "bad", destination_url: "https://shop.example.com/a b" });
  await api.post("/v1/offers", { name: "bad", destination_url: "javascript:alert(1)" });
  await api.post("/v1/offers", { name: "bad", destination_url: "https://x.example", value: -1 });
  await api.post("/v1/offers", { name: "bad", destination_url: "https://x.example", value: 1e308 });
  await api.post("/v1/offers", { name: "bad", destination_url: "https://x.example", currency: "dollars" });
  await api.get("/v1/offers");
  await api.get("/v1/offers?status=active");
  await api.get("/v1/offers?status=paused");
  await api.get("/v1/offers?q=SPRING");
  await api.get(`/v1/offers/${v.offer}`);
  await api.patch(`/v1/offers/${v.offer}`, { value: 59.5 });
  const code = (url: string | undefined) => (url ? new URL(url).pathname : "/r/none");
  await api.get(code(v.offerUrl), { key: null, label: "follow offer link" });
  await api.get(code(v.offerUrl), { key: null, label: "follow offer link again" });
  await api.get(code(v.offerPausedUrl), { key: null, label: "follow paused offer link" });
  await api.get("/r/doesnotexist", { key: null });
  await api.get("/r/", { key: null });
  const follow = await api.peek("GET", code(v.offerUrl), undefined, { key: null });
  const location = follow.body?.__location as string | undefined;
  v.vcx = location ? new URL(location).searchParams.get("vcx") : null;
  await api.post(
    "/t/collect",
    {
      vid: "11111111-2222-4333-8444-555555555555",
      vcx: v.vcx,
      w: v.publicId,
      url: "https://shop.example.com/spring",
      referrer: "",
    },
    { key: null },
  );
  await api.post("/t/collect", { vid: "not a uuid" }, { key: null });
  await api.post(
    "/t/identify",
    { vid: "11111111-2222-4333-8444-555555555555", w: v.publicId, email: "EMILE@example.com" },
    { key: null },
  );
  await api.post(
    "/t/identify",
    { vid: "11111111-2222-4333-8444-555555555555", w: "nope", phone: "+12125550101" },
    { key: null },
  );
}

async function conversionsSection(api: Api) {
  const v = api.side.vars;
  const bodies: [string, Json][] = [
    ["by vcx", { txn: "order-1", value: 10, currency: "usd", vcx: v.vcx }],
    ["duplicate", { txn: "order-1", value: 99, vcx: v.vcx }],
    ["by phone 10-digit", { txn: "order-2", value: 12.345, phone: "2125550102" }],
    ["by email upper", { txn: "order-3", value: 0, email: "ADAM@EXAMPLE.COM" }],
    ["by email mixed", { txn: "order-3b", value: 1, email: "emile.zola@example.com" }],
    ["by external_id", { txn: "order-4", value: 5, external_id: "crm-42", event: "lead" }],
    ["by vid", { txn: "order-5", value: 7.1, vid: "11111111-2222-4333-8444-555555555555" }],
    ["custom event", { txn: "order-6", value: 1, phone: "+12125550101", event: "signup.done" }],
    ["bad event", { txn: "order-7", value: 1, phone: "+12125550101", event: "Bad Event" }],
    ["no txn", { value: 1, phone: "+12125550101" }],
    ["no identifier", { txn: "order-8" }],
    ["no match", { txn: "order-9", phone: "+19995550199" }],
    ["negative value", { txn: "order-10", value: -3, phone: "+12125550101" }],
    ["huge value", { txn: "order-11", value: 1e15, phone: "+12125550101" }],
    ["fraction value", { txn: "order-12", value: 0.1, phone: "+12125550101" }],
    ["fraction value 2", { txn: "order-13", value: 0.2, phone: "+12125550101" }],
    ["string value", { txn: "order-14", value: "5", phone: "+12125550101" }],
    ["txn unicode", { txn: "ordér-ü", value: 1, phone: "+12125550101" }],
    ["txn upper", { txn: "ORDER-1", value: 1, phone: "+12125550101" }],
    ["email non-ASCII lower", { txn: "order-15", value: 1, email: "zoë.ünder@example.com" }],
    ["email non-ASCII upper", { txn: "order-16", value: 1, email: "ZOË.ÜNDER@EXAMPLE.COM" }],
    ["email as stored", { txn: "order-17", value: 1, email: "Zoë.Ünder@Example.com" }],
  ];
  for (const [name, body] of bodies) await api.post("/v1/conversion", body, { label: `conversion ${name}` });
  for (const [name, body] of bodies.slice(0, 2))
    await api.post("/v1/conversion", body, { key: null, label: `conversion without key ${name}` });
  await api.get("/v1/conversions");
  await api.get("/v1/conversions?event=lead");
  await api.get("/v1/conversions?event=purchase&limit=2");
  await api.get(`/v1/conversions${q({ contact_id: v.contacts[0] })}`);
  await api.get(`/v1/conversions${q({ offer_id: v.offer })}`);
  await api.get("/v1/conversions?campaign_id=00000000-0000-7000-8000-000000000000");
  await api.get(`/v1/contacts/${v.contacts[0]}/activity`);
}

async function campaigns(api: Api) {
  const v = api.side.vars;
  const base = {
    name: "Spring",
    message: { body: "Hi {{first_name|there}} {{fields.plan|friend}}: {{offer_url}} Reply STOP to opt out" },
  };
  const c1 = await api.post("/v1/campaigns", {
    ...base,
    audience: { list_ids: [v.listA, v.listB], segment_ids: [v.segPro], exclude_list_ids: [] },
    offer_id: v.offer,
    from: NUMBERS[0],
  });
  v.camp1 = c1.body?.campaign?.id;
  const c2 = await api.post("/v1/campaigns", {
    name: "A/B test",
    // Variants are picked from contact id + campaign id, which differ per server: B is weighted so
    // that it is (practically) never picked on either side.
    message: {
      body: "x",
      variants: [
        { name: "A", body: "Variant A {{first_name}}", weight: 1 },
        { name: "B", body: "Variant B", weight: 1e-9 },
      ],
    },
    audience: { list_ids: [v.listB], contact_ids: [v.contacts[9], v.contacts[9]] },
    pool_id: v.pool,
  });
  v.camp2 = c2.body?.campaign?.id;
  const c3 = await api.post("/v1/campaigns", {
    name: "Voice",
    campaign_type: "voice",
    say: "Hello from the campaign",
    audience: { contact_ids: [v.contacts[0], v.contacts[2]] },
  });
  v.camp3 = c3.body?.campaign?.id;
  const c4 = await api.post("/v1/campaigns", {
    name: "Later",
    message: { body: "later" },
    audience: { contact_ids: [v.contacts[0]] },
    send_at: "2099-01-01T00:00:00Z",
  });
  v.camp4 = c4.body?.campaign?.id;
  const draft = await api.post("/v1/campaigns", { name: "Draft", message: { body: "draft" } });
  await api.patch(`/v1/campaigns/${draft.body?.campaign?.id}`, { throttle_per_minute: 2147483648 });
  await api.get(`/v1/campaigns/${draft.body?.campaign?.id}`);
  await api.post("/v1/campaigns", { name: "Bad merge", message: { body: "Hi {{favourite_color}}" } });
  await api.post("/v1/campaigns", {
    name: "Bad list",
    message: { body: "x" },
    audience: { list_ids: ["00000000-0000-7000-8000-000000000000"] },
  });
  await api.post("/v1/campaigns", { name: "Bad type", campaign_type: "fax" });
  await api.post("/v1/campaigns", { name: "Bad throttle", message: { body: "x" }, throttle_per_minute: 0 });
  await api.post("/v1/campaigns", { name: "Bad send_at", message: { body: "x" }, send_at: "tomorrow" });

  await api.get(`/v1/campaigns/${v.camp1}/preview`);
  await api.get(`/v1/campaigns/${v.camp1}/preview?limit=2&offset=1`);
  await api.get(`/v1/campaigns/${v.camp1}/preview${q({ contact_id: v.contacts[0] })}`);
  await api.get(`/v1/campaigns/${v.camp2}/preview`);
  await api.get("/v1/campaigns");
  await api.get("/v1/campaigns?status=draft");
  await api.get("/v1/campaigns?q=SPRING");
  await api.patch(`/v1/campaigns/${v.camp1}`, { throttle_per_minute: 600 });
  await api.post(`/v1/campaigns/${v.camp1}/pause`);
  // One campaign at a time, each to its end: two running together race for the same threads.
  for (const id of [v.camp1, v.camp2, v.camp3]) {
    await api.post(`/v1/campaigns/${id}/launch`);
    await api.waitFor("campaign completed", async () => {
      const c = await api.peek("GET", `/v1/campaigns/${id}`);
      return c.body?.campaign?.status === "completed" ? true : c.body?.campaign?.status;
    });
    await allMessagesFinal(api);
  }
  await api.post(`/v1/campaigns/${v.camp1}/launch`);
  await api.post(`/v1/campaigns/${v.camp4}/launch`);
  await api.patch(`/v1/campaigns/${v.camp1}`, { name: "edit after launch" });
  await allMessagesFinal(api);
  await api.waitFor("campaign calls final", async () => {
    const page = await api.peek("GET", "/v1/calls?limit=200");
    return (page.body?.calls ?? []).every((c: Json) => FINAL_CALL.has(c.status));
  });
  for (const id of [v.camp1, v.camp2, v.camp3])
    await settle(
      api,
      "campaign stats stable",
      async () => (await api.peek("GET", `/v1/campaigns/${id}`)).body?.campaign?.stats,
    );
  // Click the first recipient's link and convert, to attribute to the campaign.
  const firstMsg = await api.peek("GET", `/v1/messages${q({ campaign_id: v.camp1, limit: 1 })}`);
  const link = /\/r\/[A-Za-z0-9_-]+/.exec(firstMsg.body?.messages?.[0]?.body ?? "")?.[0] ?? "/r/none";
  const clicked = await api.get(link, { key: null, label: "follow campaign link" });
  const vcx = clicked.body?.__location ? new URL(clicked.body.__location).searchParams.get("vcx") : null;
  await api.post("/v1/conversion", { txn: "camp-order-1", value: 25.25, vcx });
  // An inbound reply from a recipient counts as replied.
  await api.post("/v1/sandbox/inbound", {
    from: "+12125550101",
    to: NUMBERS[0],
    body: "Thanks for the campaign",
  });
  await allMessagesFinal(api);
  for (const id of [v.camp1, v.camp2, v.camp3, v.camp4]) {
    await api.get(`/v1/campaigns/${id}`);
    await api.get(`/v1/campaigns/${id}/recipients`);
  }
  for (const outcome of ["queued", "deferred", "sent", "delivered", "failed", "skipped", "bogus"])
    await api.get(`/v1/campaigns/${v.camp1}/recipients?outcome=${outcome}`);
  await api.get(`/v1/campaigns/${v.camp1}/recipients?limit=2&offset=2`);
  await api.get(`/v1/messages${q({ campaign_id: v.camp1 })}`);
  await api.get(`/v1/calls${q({ campaign_id: v.camp3 })}`);
  await api.get(`/v1/conversions${q({ campaign_id: v.camp1 })}`);
  await api.get("/v1/campaigns?status=completed");
  await api.get("/v1/campaigns?status=scheduled");
  await api.post(`/v1/campaigns/${v.camp4}/pause`);
  await api.post(`/v1/campaigns/${v.camp4}/cancel`);
  await api.post(`/v1/campaigns/${v.camp4}/resume`);
  await api.del(`/v1/campaigns/${v.camp4}`);
  await api.del(`/v1/campaigns/${v.camp1}`);
  await api.get("/v1/campaigns");
}

async function analytics(api: Api) {
  const now = Date.now();
  const day = 86_400_000;
  const iso = (ms: number) => new Date(ms).toISOString();
  const from = iso(Math.floor(now / day) * day - day);
  const to = iso(Math.floor(now / day) * day + day);
  await api.get("/v1/analytics/overview");
  await api.get(`/v1/analytics/overview${q({ from, to })}`);
  await api.get(`/v1/analytics/overview${q({ from: "2000-01-01", to: "2000-01-02" })}`);
  await api.get(`/v1/analytics/overview${q({ from: "garbage" })}`);
  await api.get(`/v1/analytics/overview${q({ from: to, to: from })}`);
  for (const metric of [...METRICS, "bogus"])
    for (const interval of ["hour", "day"])
      await api.get(`/v1/analytics/timeseries${q({ metric, interval, from, to })}`);
  await api.get("/v1/analytics/timeseries?metric=sent");
  await api.get("/v1/analytics/timeseries");
  await api.get(`/v1/analytics/timeseries${q({ metric: "sent", interval: "minute" })}`);
  await api.get(
    `/v1/analytics/timeseries${q({ metric: "sent", interval: "hour", from: "2000-01-01", to: "2001-01-01" })}`,
  );
  await api.get("/v1/analytics/campaigns");
  await api.get(`/v1/analytics/campaigns${q({ from, to })}`);
  await api.get("/v1/analytics/numbers");
  await api.get(`/v1/analytics/numbers${q({ from, to })}`);
  await api.get("/v1/analytics/agents");
}

async function webhooks(api: Api) {
  const v = api.side.vars;
  const r = api.side.receiverUrl;
  const w1 = await api.post("/v1/webhooks", { url: `${r}/hook`, events: ["*"], description: "all" });
  v.hook1 = w1.body?.webhook?.id;
  const w2 = await api.post("/v1/webhooks", {
    url: `${r}/fail`,
    events: ["message.delivered", "contact.created"],
  });
  v.hook2 = w2.body?.webhook?.id;
  await api.post("/v1/webhooks", { url: `${r}/x`, events: ["nope.event"] });
  await api.post("/v1/webhooks", { url: "http://169.254.169.254/latest", events: ["*"] });
  await api.post("/v1/webhooks", { url: "not a url", events: ["*"] });
  await api.post("/v1/webhooks", { url: `${r}/x`, events: [] });
  await api.get("/v1/webhooks");
  await api.get(`/v1/webhooks/${v.hook1}`);
  await api.patch(`/v1/webhooks/${v.hook2}`, { description: "failing", enabled: true });
  await api.post(`/v1/webhooks/${v.hook1}/test`);
  await api.post(`/v1/webhooks/${v.hook2}/test`);
  await api.post(`/v1/webhooks/${v.hook1}/rotate-secret`);
  // Events after the hooks exist.
  await api.post("/v1/contacts", { phone_number: "+12125550180", first_name: "Hooked" });
  await api.post("/v1/messages", { to: "+12125550180", body: "hook me" });
  await allMessagesFinal(api);
  await settle(api, "deliveries stable", async () => {
    const a = await api.peek("GET", `/v1/webhooks/${v.hook1}/deliveries?limit=200`);
    const b = await api.peek("GET", `/v1/webhooks/${v.hook2}/deliveries?limit=200`);
    return [a.body?.total, b.body?.total, (a.body?.deliveries ?? []).map((d: Json) => d.status)];
  });
  await api.get(`/v1/webhooks/${v.hook1}/deliveries`);
  const d2 = await api.get(`/v1/webhooks/${v.hook2}/deliveries`);
  const failed = d2.body?.deliveries?.[0]?.id;
  await api.post(`/v1/webhooks/${v.hook2}/deliveries/${failed}/retry`);
  await api.post(`/v1/webhooks/${v.hook2}/deliveries/00000000-0000-7000-8000-000000000000/retry`);
  await api.del(`/v1/webhooks/${v.hook2}`);
  await api.get("/v1/webhooks");
  // What the receiver got, as a multiset (arrival order is a race).
  const got = api.side.received
    .filter((g) => g.path === "/hook")
    .map((g) => ({ type: (g.body as Json)?.type, data: (g.body as Json)?.data }))
    .map((g) =>
      JSON.stringify(g).replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, "<id>"),
    )
    .map((g) => g.replace(/\d{4}-\d{2}-\d{2}T[\d:.]+Z/g, "<ts>"))
    .sort();
  await api.note("receiver payloads", got);
}

async function agents(api: Api) {
  const v = api.side.vars;
  const a = await api.post("/v1/agents", {
    name: "Maya",
    system_prompt: "You are Maya, the front desk of Sunny Dental.",
    goal: "book a cleaning appointment",
    greeting: "Hi! This is Maya from Sunny Dental.",
    status: "active",
    handoff_keywords: ["human", "MANAGER"],
    sms: {
      knowledge: "We are open Monday to Friday 8am to 5pm. A cleaning costs $99. We are at 12 Main St.",
      reply_delay_min_sec: 0,
      reply_delay_max_sec: 0,
      quiet_start_hour: 0,
      quiet_end_hour: 0,
    },
  });
  v.agent = a.body?.agent?.id;
  await api.post("/v1/agents", { name: "Voice", system_prompt: "x", channel: "voice" });
  const va = await api.post("/v1/agents", {
    name: "Voicé",
    system_prompt: "x",
    channel: "voice",
    voice_id: "nope",
  });
  v.voiceAgentBad = va.body?.agent?.id;
  const voices = await api.get("/v1/voices");
  const voiceId = voices.body?.voices?.[0]?.voice_id;
  const vb = await api.post("/v1/agents", {
    name: "Voice ok",
    system_prompt: "You call people.",
    channel: "voice",
    voice_id: voiceId,
    status: "active",
  });
  v.voiceAgent = vb.body?.agent?.id;
  await api.post("/v1/agents", { name: "Overflow", system_prompt: "x", max_turns: 2147483648 });
  await api.patch(`/v1/agents/${v.agent}`, { max_turns: 2147483648 });
  await api.post("/v1/agents", { name: "bad", system_prompt: "x", sms: { tone: "angry" } });
  await api.post("/v1/agents", { name: "bad", system_prompt: "x", voice: { speed: 5 } });
  await api.get("/v1/agents");
  await api.get("/v1/agents?status=active");
  await api.get("/v1/agents?channel=voice");
  await api.get("/v1/agents?q=MAYA");
  await api.get("/v1/agents?q=voic%C3%A9");
  await api.get("/v1/agents?q=VOIC%C3%89");
  await api.get(`/v1/agents/${v.agent}`);
  await api.patch(`/v1/agents/${v.agent}`, { goal: "book an appointment", sms: { max_length: 200 } });
  await api.post(`/v1/agents/${v.agent}/test`, {
    messages: [{ role: "contact", text: "How much is a cleaning? My email is a@b.co" }],
  });
  await api.post(`/v1/agents/${v.agent}/test`, { messages: [] });
  await api.post(`/v1/agents/${v.agent}/test`, { messages: [{ role: "bot", text: "x" }] });
  await api.patch(`/v1/numbers/${v.num[2]}`, { agent_id: v.agent });
  await api.post("/v1/sandbox/inbound", {
    from: "+12125550103",
    to: NUMBERS[2],
    body: "Hi, when are you open?",
  });
  await api.waitFor("agent replied", async () => {
    const page = await api.peek("GET", "/v1/messages?direction=outbound&limit=200");
    return (page.body?.messages ?? []).some((m: Json) => m.from === NUMBERS[2] && m.to === "+12125550103");
  });
  await allMessagesFinal(api);
  await api.post("/v1/sandbox/inbound", {
    from: "+12125550103",
    to: NUMBERS[2],
    body: "I want a human please",
  });
  await api.waitFor("agent handed off", async () => {
    const convs = await api.peek("GET", "/v1/conversations?filter=needs_attention&limit=200");
    return (convs.body?.conversations ?? []).some((c: Json) => c.contact?.phone_number === "+12125550103");
  });
  await allMessagesFinal(api);
  const convs = await api.get("/v1/conversations?filter=agent");
  await api.get(`/v1/conversations${q({ q: "open" })}`);
  await api.get(`/v1/conversations/${convs.body?.conversations?.[0]?.id}`);
  await api.get("/v1/conversations?filter=needs_attention");
  await api.get("/v1/analytics/agents");
  await api.del(`/v1/agents/${v.voiceAgentBad}`);
}

async function calls(api: Api) {
  const v = api.side.vars;
  const targets: [string, Json][] = [
    ["say", { to: "+12125550101", say: "Your table is ready." }],
    ["busy", { to: "+15005550004", say: "busy" }],
    ["no answer", { to: "+15005550009", say: "nobody" }],
    ["voicemail", { to: "+15005550007", say: "leave it" }],
    ["failed", { to: "+15005550001", say: "fail" }],
    ["agent", { to: "+12125550111", agent_id: v.voiceAgent }],
    ["neither", { to: "+14155550104" }],
    ["both", { to: "+14155550104", say: "x", agent_id: v.voiceAgent }],
    ["sms agent", { to: "+14155550104", agent_id: v.agent }],
    ["bad to", { to: "nope", say: "x" }],
  ];
  v.calls = [];
  for (const [name, body] of targets) {
    const r = await api.post("/v1/calls", body, { label: `call ${name}` });
    v.calls.push(r.body?.call?.id);
    // One at a time to its end: calls ending together race for the order of their threads.
    await api.waitFor("call final", async () => {
      const page = await api.peek("GET", "/v1/calls?limit=200");
      return (page.body?.calls ?? []).every((c: Json) => FINAL_CALL.has(c.status));
    });
    await allMessagesFinal(api);
  }
  await api.waitFor("calls final", async () => {
    const page = await api.peek("GET", "/v1/calls?limit=200");
    const calls: Json[] = page.body?.calls ?? [];
    return calls.every((c) => FINAL_CALL.has(c.status)) ? true : calls.map((c) => c.status);
  });
  await allMessagesFinal(api);
  for (const id of v.calls.slice(0, 6)) await api.get(`/v1/calls/${id}`);
  await api.get("/v1/calls");
  for (const status of ["COMPLETED", "BUSY", "NO_ANSWER", "VOICEMAIL", "FAILED", "completed", "bogus"])
    await api.get(`/v1/calls?status=${status}`);
  await api.get(`/v1/calls${q({ agent_id: v.voiceAgent })}`);
  await api.get(`/v1/calls${q({ contact_id: v.contacts[0] })}`);
  // Campaign calls are placed concurrently: their order in the ledger is a race, so as a set.
  await noteSorted(api, "sandbox calls (sorted)", "/v1/sandbox/calls?limit=200", "calls");
  await api.get(`/v1/analytics/overview`);
}

const node = (id: string, type: string, data: Json = {}) => ({ id, type, position: { x: 0, y: 0 }, data });
const edge = (source: string, target: string, sourceHandle?: string) => ({
  id: `${source}-${target}`,
  source,
  target,
  ...(sourceHandle ? { sourceHandle } : {}),
});

async function flows(api: Api) {
  const v = api.side.vars;
  const definition = {
    nodes: [
      node("t", "trigger", { event: "manual" }),
      node("c", "condition", { rules: { all: [{ field: "fields.plan", op: "eq", value: "pro" }] } }),
      node("pro", "send_sms", { body: "Hi {{first_name|there}}, pro!" }),
      node("other", "send_sms", { body: "Hi {{first_name|there}}" }),
      node("tag", "update_contact", { fields: { fields: { flowed: true, plan_seen: "{{fields.plan}}" } } }),
      node("list", "add_to_list", { list_id: v.listB }),
      node("e", "end"),
    ],
    edges: [
      edge("t", "c"),
      edge("c", "pro", "true"),
      edge("c", "other", "false"),
      edge("pro", "tag"),
      edge("other", "tag"),
      edge("tag", "list"),
      edge("list", "e"),
    ],
  };
  const f = await api.post("/v1/flows", { name: "Welcome", definition, settings: { allow_reentry: false } });
  v.flow = f.body?.flow?.id;
  await api.post("/v1/flows", {
    name: "Broken",
    definition: { nodes: [node("s", "send_sms", { body: "x" })], edges: [] },
  });
  await api.post("/v1/flows", {
    name: "Dangling",
    definition: { nodes: [node("t", "trigger", { event: "manual" })], edges: [edge("t", "zz")] },
  });
  await api.post("/v1/flows", {
    name: "Bad list",
    definition: {
      nodes: [
        node("t", "trigger", { event: "manual" }),
        node("l", "add_to_list", { list_id: "00000000-0000-7000-8000-000000000000" }),
      ],
      edges: [edge("t", "l")],
    },
  });
  const f2 = await api.post("/v1/flows", {
    name: "On create",
    definition: {
      nodes: [node("t", "trigger", { event: "contact_created" }), node("w", "wait", { days: 3 })],
      edges: [edge("t", "w")],
    },
  });
  v.flow2 = f2.body?.flow?.id;
  await api.post(`/v1/flows/${v.flow}/enroll`, { contact_ids: [v.contacts[0]] });
  await api.patch(`/v1/flows/${v.flow}`, { status: "active" });
  await api.patch(`/v1/flows/${v.flow2}`, { status: "active" });
  await api.patch(`/v1/flows/${v.flow2}`, { status: "bogus" });
  await api.post(`/v1/flows/${v.flow}/enroll`, {
    contact_ids: [v.contacts[0], v.contacts[2], v.contacts[0], "00000000-0000-7000-8000-000000000000"],
  });
  await api.post(`/v1/flows/${v.flow}/enroll`, { contact_ids: [v.contacts[0]] });
  await api.post("/v1/contacts", { phone_number: "+12125550185", first_name: "Flowed in" });
  await api.waitFor("flow runs ended", async () => {
    const runs = await api.peek("GET", `/v1/flows/${v.flow}/runs?limit=200`);
    return (
      (runs.body?.runs ?? []).length > 0 && (runs.body?.runs ?? []).every((r: Json) => r.status !== "active")
    );
  });
  await allMessagesFinal(api);
  await settle(
    api,
    "flow stats stable",
    async () => (await api.peek("GET", `/v1/flows/${v.flow}/stats`)).body,
  );
  await api.get(`/v1/flows/${v.flow}`);
  await api.get(`/v1/flows/${v.flow}/stats`);
  await api.get(`/v1/flows/${v.flow}/runs`);
  await api.get(`/v1/flows/${v.flow}/runs?status=completed`);
  await api.get(`/v1/flows/${v.flow}/runs?status=bogus`);
  await api.get(`/v1/flows/${v.flow2}/runs`);
  await api.get(`/v1/flows/${v.flow2}/stats`);
  await api.get("/v1/flows");
  await api.get("/v1/flows?status=active");
  await api.get("/v1/flows?q=WELCOME");
  await api.post(`/v1/flows/${v.flow}/simulate`, { contact_id: v.contacts[1] });
  await api.post(`/v1/flows/${v.flow}/simulate`, {
    contact: { first_name: "Sim", fields: { plan: "pro" } },
    max_days: 2,
  });
  await api.post(`/v1/flows/${v.flow}/simulate`, { contact_id: "00000000-0000-7000-8000-000000000000" });
  await api.get(`/v1/contacts/${v.contacts[0]}`);
  await api.get(`/v1/lists/${v.listB}/contacts`);
  await api.get(`/v1/contacts/${v.contacts[0]}/activity`);
  await api.patch(`/v1/flows/${v.flow}`, { status: "paused" });
  await api.del(`/v1/flows/${v.flow2}`);
}

async function registration(api: Api) {
  const v = api.side.vars;
  const brand = (extra: Json = {}) => brandBody(extra);
  const b1 = await api.post("/v1/10dlc/brands", brand());
  v.brand = b1.body?.brand?.id;
  const b2 = await api.post("/v1/10dlc/brands", brand({ ein: "00-0000000", legal_name: "Ünïcode Brand" }));
  v.brand2 = b2.body?.brand?.id;
  await api.post("/v1/10dlc/brands", brand({ ein: "123456789" }));
  await api.post("/v1/10dlc/brands", brand({ entity_type: "LLC" }));
  await api.post("/v1/10dlc/brands", {});
  await api.waitFor("brands reviewed", async () => {
    const list = await api.peek("GET", "/v1/10dlc/brands");
    return (list.body?.brands ?? []).every((b: Json) => b.status !== "PENDING");
  });
  await api.get("/v1/10dlc/brands");
  await api.get(`/v1/10dlc/brands/${v.brand}`);
  await api.patch(`/v1/10dlc/brands/${v.brand}`, { legal_name: "Other" });
  await api.patch(`/v1/10dlc/brands/${v.brand2}`, { ein: "12-3456789" });
  const camp = (extra: Json = {}) => campaignBody(v.brand, { number_ids: [v.num[0]], ...extra });
  await api.post("/v1/10dlc/campaigns/preflight", camp());
  await api.post("/v1/10dlc/campaigns/preflight", camp({ optout_message: "bye", sample_messages: ["one"] }));
  const tc = await api.post("/v1/10dlc/campaigns", camp());
  v.tcamp = tc.body?.campaign?.id;
  await api.post("/v1/10dlc/campaigns", camp({ brand_id: v.brand2 }));
  await api.post("/v1/10dlc/campaigns", camp({ number_ids: ["00000000-0000-7000-8000-000000000000"] }));
  await api.waitFor("10dlc campaigns reviewed", async () => {
    const list = await api.peek("GET", "/v1/10dlc/campaigns");
    const brands = await api.peek("GET", "/v1/10dlc/brands");
    return [...(list.body?.campaigns ?? []), ...(brands.body?.brands ?? [])].every(
      (c: Json) => c.status !== "PENDING",
    );
  });
  await api.get("/v1/10dlc/campaigns");
  await api.get(`/v1/10dlc/campaigns/${v.tcamp}`);
  await api.patch(`/v1/10dlc/campaigns/${v.tcamp}`, {
    description: "Changed: appointment reminders for patients of Sunny Dental, Ünïcode.",
  });
  await api.get("/v1/10dlc/brands");
  const sc = await api.post("/v1/short-codes/requests", {
    type: "vanity",
    vanity_code: "12345",
    use_case: "ACCOUNT_NOTIFICATION",
    monthly_volume: 100000,
    sample_messages: [
      "Sunny: 20% off. Reply STOP to opt out.",
      "Sunny: sale ends today. Reply STOP to opt out.",
    ],
  });
  v.shortCode = sc.body?.request?.id;
  await api.post("/v1/short-codes/requests", {
    type: "random",
    use_case: "2FA",
    monthly_volume: -1,
    sample_messages: [],
  });
  await api.post("/v1/short-codes/requests", {
    type: "random",
    use_case: "2FA",
    monthly_volume: 50000,
    sample_messages: ["Your code is 1234. Reply STOP to opt out.", "Code 5678. Reply STOP to opt out."],
  });
  await api.waitFor("short codes reviewed", async () => {
    const list = await api.peek("GET", "/v1/short-codes/requests");
    return (list.body?.requests ?? []).every((r: Json) => ["approved", "rejected"].includes(r.status));
  });
  await api.get("/v1/short-codes/requests");
  await api.get(`/v1/short-codes/requests/${v.shortCode}`);
  await api.get("/v1/settings");
  await api.patch("/v1/settings", { require_registration: true });
  await api.post("/v1/messages", { to: "+12125550101", body: "registered?", from: NUMBERS[0] });
  await api.post("/v1/messages", { to: "+12125550101", body: "unregistered?", from: NUMBERS[1] });
  await api.patch("/v1/settings", { require_registration: false });
  await allMessagesFinal(api);
}

async function linkDomains(api: Api) {
  const v = api.side.vars;
  const d1 = await api.post("/v1/link-domains", { domain: "  Go.Parity-1.proxied.TEST. " });
  v.ld1 = d1.body?.link_domain?.id;
  const d2 = await api.post("/v1/link-domains", { domain: "links.missing.test" });
  v.ld2 = d2.body?.link_domain?.id;
  await api.post("/v1/link-domains", { domain: "go.parity-1.proxied.test" });
  await api.post("/v1/link-domains", { domain: "links.bücher.example" });
  await api.post("/v1/link-domains", { domain: "127.0.0.1" });
  await api.post("/v1/link-domains", { domain: "bit.ly" });
  await api.post("/v1/link-domains", { domain: "outreach.example.com" });
  await api.post("/v1/link-domains", { domain: 42 });
  await api.post(
    "/v1/link-domains",
    { domain: "go.parity-1.proxied.test" },
    { key: api.side.otherKey, label: "add taken domain from other workspace" },
  );
  await api.post(`/v1/link-domains/${v.ld1}/verify`);
  await api.post(`/v1/link-domains/${v.ld2}/verify`);
  await api.patch(`/v1/link-domains/${v.ld1}`, { is_default: true });
  await api.patch(`/v1/link-domains/${v.ld2}`, { is_default: true });
  await api.get("/v1/link-domains");
  await api.get("/v1/link-domains?status=verified");
  await api.get("/v1/link-domains?status=failed");
  await api.get(`/v1/link-domains/${v.ld1}`);
  const o = await api.post("/v1/offers", {
    name: "Branded",
    destination_url: "https://shop.example.com/b",
    link_domain_id: v.ld1,
  });
  await api.post("/v1/offers", {
    name: "Branded bad",
    destination_url: "https://shop.example.com/b",
    link_domain_id: v.ld2,
  });
  const url = o.body?.offer?.tracking_url as string | undefined;
  await api.get(url ? new URL(url).pathname : "/r/none", {
    key: null,
    headers: { host: "go.parity-1.proxied.test" },
    label: "follow branded link",
  });
  await api.get(`/v1/offers/${v.offer}`);
  await api.del(`/v1/link-domains/${v.ld2}`);
  await api.get("/v1/link-domains");
}

async function usersAndKeys(api: Api) {
  const v = api.side.vars;
  const u1 = await api.post("/v1/users", {
    email: "Agent.One@Example.com",
    name: "Agent Ünë",
    role: "agent",
  });
  v.user1 = u1.body?.user?.id;
  await api.post("/v1/users", { email: "agent.one@example.com", name: "dup", role: "agent" });
  const u2 = await api.post("/v1/users", { email: "admin@example.com", name: "Admin", role: "admin" });
  v.user2 = u2.body?.user?.id;
  for (const [email, name] of [
    ["u1@example.com", "adam"],
    ["u2@example.com", "Adam"],
    ["u3@example.com", "Émile"],
    ["u4@example.com", "émile"],
    ["u5@example.com", "Zoë"],
    ["u6@example.com", "zoe"],
    ["u7@example.com", "Ωmega"],
    ["u8@example.com", "_under"],
  ])
    await api.post("/v1/users", { email, name, role: "agent" }, { label: `create user ${name}` });
  await api.post("/v1/users", { email: "bad", name: "x", role: "agent" });
  await api.post("/v1/users", { email: "x@example.com", name: "x", role: "owner" });
  await api.get("/v1/users");
  await api.get(`/v1/users/${v.user1}`);
  await api.patch(`/v1/users/${v.user1}`, { role: "admin" });
  await api.patch(`/v1/users/${v.user1}`, { role: "god" });
  await api.patch(`/v1/conversations/${v.conv}`, { assigned_to: "AGENT.ONE@example.com" });
  await api.patch(`/v1/conversations/${v.conv}`, { assigned_to: v.user2 });
  await api.get("/v1/conversations?filter=assigned");
  await api.get("/v1/conversations?filter=unassigned");
  await api.get("/v1/conversations/assignees");
  await api.del(`/v1/users/${v.user2}`);
  await api.get(`/v1/conversations/${v.conv}`);
  await api.get("/v1/users");

  const k = await api.post("/v1/api-keys", { name: "read only", scopes: ["read"] });
  v.readKey = k.body?.key?.key ?? k.body?.api_key?.key;
  v.readKeyId = k.body?.key?.id ?? k.body?.api_key?.id;
  await api.post("/v1/api-keys", { name: "bad", scopes: ["admin"] });
  await api.post("/v1/api-keys", { name: "" });
  await api.get("/v1/api-keys");
  await api.get("/v1/contacts?limit=1", { key: v.readKey, label: "read with read-only key" });
  await api.post(
    "/v1/contacts",
    { phone_number: "+12125550190" },
    { key: v.readKey, label: "write with read-only key" },
  );
  await api.post("/v1/contacts", undefined, {
    key: v.readKey,
    raw: "{bad",
    label: "bad json with read-only key",
  });
  await api.del(`/v1/api-keys/${v.readKeyId}`);
  await api.get("/v1/contacts?limit=1", { key: v.readKey, label: "read with revoked key" });
  await api.del(`/v1/api-keys/${v.readKeyId}`);
  await api.get("/v1/api-keys");
  await api.get("/v1/me");
}

async function badInput(api: Api) {
  const v = api.side.vars;
  const unknown = "00000000-0000-7000-8000-000000000000";
  const other = api.side.otherKey;
  for (const path of [
    "contacts",
    "lists",
    "segments",
    "messages",
    "calls",
    "agents",
    "conversations",
    "numbers",
    "pools",
    "campaigns",
    "offers",
    "flows",
    "webhooks",
    "suppression",
    "users",
    "link-domains",
    "10dlc/brands",
    "10dlc/campaigns",
    "short-codes/requests",
  ]) {
    await api.get(`/v1/${path}/${unknown}`, { label: `get unknown ${path}` });
    await api.get(`/v1/${path}/zzz`, { label: `get malformed ${path}` });
    await api.get(`/v1/${path}/${unknown.toUpperCase()}`, { label: `get upper ${path}` });
    await api.get(`/v1/${path}?limit=-5`, { label: `list negative limit ${path}` });
    await api.get(`/v1/${path}?limit=1e2`, { label: `list exp limit ${path}` });
    await api.get(`/v1/${path}?offset=1&limit=1`, { label: `list offset ${path}` });
    await api.get(`/v1/${path}?offset=18446744073709551616`, { label: `list huge offset ${path}` });
  }
  // Other workspace's ids.
  for (const [path, id] of [
    ["contacts", v.contacts?.[0]],
    ["lists", v.listA],
    ["segments", v.segPro],
    ["offers", v.offer],
    ["webhooks", v.hook1],
    ["agents", v.agent],
    ["numbers", v.num?.[0]],
    ["pools", v.pool],
    ["flows", v.flow],
    ["campaigns", v.camp2],
  ] as [string, string][]) {
    await api.get(`/v1/${path}/${id}`, { key: other, label: `get other workspace ${path}` });
    await api.patch(
      `/v1/${path}/${id}`,
      { name: "hijack" },
      { key: other, label: `patch other workspace ${path}` },
    );
    await api.del(`/v1/${path}/${id}`, undefined, { key: other, label: `delete other workspace ${path}` });
  }
  await api.get("/v1/contacts?limit=50", { key: other, label: "other workspace contacts" });
  await api.get("/v1/conversations", { key: other, label: "other workspace conversations" });
  await api.get(`/v1/conversations${q({ q: "pizza" })}`, { key: other, label: "other workspace search" });
  await api.get("/v1/messages", { key: other, label: "other workspace messages" });
  await api.get("/v1/analytics/overview", { key: other, label: "other workspace analytics" });
  await api.post(
    "/v1/segments/preview",
    { rules: { in_list: v.listA } },
    { key: other, label: "other workspace list in rules" },
  );
  await api.post(
    "/v1/campaigns",
    { name: "steal", message: { body: "x" }, audience: { list_ids: [v.listA] } },
    { key: other, label: "other workspace campaign audience" },
  );
  await api.post(
    "/v1/conversion",
    { txn: "other-1", phone: "+12125550101" },
    { key: other, label: "other workspace conversion (key)" },
  );
  // Wrong types and sizes.
  await api.patch(`/v1/contacts/${v.contacts?.[0]}`, { fields: { n: 1e308 } });
  await api.patch(`/v1/contacts/${v.contacts?.[0]}`, { fields: { n: -0 } });
  // biome-ignore lint/correctness/noPrecisionLoss: the probe sends a number beyond double precision
  await api.patch(`/v1/contacts/${v.contacts?.[0]}`, { fields: { n: 123456789012345678901234567890 } });
  await api.patch(`/v1/contacts/${v.contacts?.[0]}`, { fields: { s: "\u0000" } });
  await api.patch(`/v1/contacts/${v.contacts?.[0]}`, { fields: { s: "\ud800" } });
  await api.get(`/v1/contacts/${v.contacts?.[0]}`);
  await api.patch(`/v1/contacts/${v.contacts?.[1]}`, { first_name: "Nul\u0000byte" });
  await api.get(`/v1/contacts/${v.contacts?.[1]}`);
  await api.patch(`/v1/contacts/${v.contacts?.[1]}`, { first_name: "lone \ud83d surrogate" });
  await api.get(`/v1/contacts/${v.contacts?.[1]}`);
  await api.post("/v1/lists", { name: "nul\u0000list" });
  // NUL characters elsewhere: text and JSON columns, and a message arriving from the carrier.
  await api.post("/v1/messages", { to: "+12125550101", body: "nul\u0000body" });
  await api.post("/v1/sandbox/inbound", { from: "+12125550101", to: NUMBERS[0], body: "inbound nul\u0000" });
  await api.post(`/v1/conversations/${v.conv}/notes`, { body: "note nul\u0000" });
  await api.post("/v1/segments", { name: "seg nul\u0000", rules: { all: [] } });
  await api.post("/v1/campaigns", { name: "nul campaign", message: { body: "body nul\u0000" } });
  await api.post("/v1/conversion", { txn: "nul\u0000txn", value: 1, phone: "+12125550101" });
  await api.post("/v1/contacts/import", {
    contacts: [
      { phone_number: "+12125550186", first_name: "imp\u0000nul" },
      { phone_number: "+12125550187", first_name: "fine" },
    ],
  });
  await allMessagesFinal(api);
  await api.get("/v1/messages?limit=3");
  await api.get(`/v1/contacts${q({ q: "+12125550187" })}`);
  await api.get("/v1/lists?q=%00");
  await api.get("/v1/contacts?q=%00");
  await api.get("/v1/conversations?q=%00");
  await api.get("/v1/contacts?q=%F0%9F%98%80");
  await api.get(`/v1/contacts${q({ q: "x".repeat(3000) })}`);
  await api.post("/v1/segments/preview", { rules: { field: "fields.plan", op: "eq", value: "\u0000" } });
  await api.post("/v1/segments/preview", { rules: { field: "fields.a\u0000b", op: "exists" } });
  await api.post("/v1/segments/preview", { rules: { field: "fields.score", op: "gt", value: 1e308 } });
  await api.post("/v1/segments/preview", { rules: { field: "fields.score", op: "gt", value: -1e308 } });
  await api.post("/v1/segments/preview", {
    // biome-ignore lint/correctness/noPrecisionLoss: the probe sends a number beyond double precision
    rules: { field: "fields.big", op: "eq", value: 9007199254740993 },
  });
  await api.post("/v1/segments/preview", {
    rules: { field: "fields.score", op: "in", value: [1, "1", true, 1.0] },
  });
  await api.post("/v1/segments/preview", {
    rules: { field: "created_at", op: "after", value: "+275760-09-13T00:00:00.000Z" },
  });
  await api.post("/v1/segments/preview", {
    rules: { field: "created_at", op: "after", value: "1970-01-01" },
  });
  await api.post("/v1/segments/preview", { rules: { field: "created_at", op: "eq", value: "2024-02-30" } });
  await api.post("/v1/segments/preview", {
    rules: { field: "fields.when", op: "before", value: "2025-01-01T00:00:00.001Z" },
  });
  await api.post("/v1/segments/preview", {
    rules: { field: "fields.when", op: "after", value: "2024-12-31" },
  });
  await api.patch(`/v1/numbers/${v.num?.[1]}`, { daily_limit: 1000001 });
  await api.patch(`/v1/numbers/${v.num?.[1]}`, { daily_limit: 2147483647 });
  await api.patch(`/v1/numbers/${v.num?.[1]}`, { pool_id: unknown });
  await api.post("/v1/pools", { name: "p".repeat(201) });
  await api.post(`/v1/pools/${v.pool}/numbers`, { number_ids: [] });
  await api.post(`/v1/pools/${v.pool}/numbers`, { number_ids: [1, 2] });
  await api.post("/v1/campaigns", {
    name: "big throttle",
    message: { body: "x" },
    // biome-ignore lint/correctness/noPrecisionLoss: the probe sends a number beyond double precision
    throttle_per_minute: 9007199254740993,
  });
  await api.post("/v1/campaigns", {
    name: "int32 throttle",
    message: { body: "x" },
    throttle_per_minute: 2147483648,
  });
  // Last of the overflow probes (refused on both; an accepted one would be reviewed into a number).
  await api.post("/v1/short-codes/requests", {
    type: "random",
    use_case: "2FA",
    monthly_volume: 2147483648,
    sample_messages: ["Your code is 1234. Reply STOP to opt out.", "Code 5678. Reply STOP to opt out."],
  });
  await api.post("/v1/offers", {
    name: "big value",
    destination_url: "https://x.example",
    // biome-ignore lint/correctness/noPrecisionLoss: the probe sends a number beyond double precision
    value: 9007199254740993,
  });
  await api.post("/v1/offers", { name: "precise", destination_url: "https://x.example", value: 0.1 + 0.2 });
  await api.post("/v1/conversion", { txn: "precise-1", value: 0.1 + 0.2, phone: "+12125550101" });
  await api.post("/v1/conversion", { txn: "x".repeat(300), value: 1, phone: "+12125550101" });
  await api.get("/v1/conversions?limit=3");
  await api.get("/v1/analytics/overview");
  await api.post(
    "/v1/contacts",
    { phone_number: "+12125550191" },
    { headers: { "idempotency-key": "k1" }, label: "idempotent create 1" },
  );
  await api.post(
    "/v1/contacts",
    { phone_number: "+12125550191" },
    { headers: { "idempotency-key": "k1" }, label: "idempotent create replay" },
  );
  await api.post(
    "/v1/contacts",
    { phone_number: "+12125550192" },
    { headers: { "idempotency-key": "k1" }, label: "idempotent create other body" },
  );
  await api.post(
    "/v1/contacts",
    { phone_number: "+12125550193" },
    { headers: { "idempotency-key": "K1" }, label: "idempotent key case" },
  );
  await api.post(
    "/v1/contacts",
    { phone_number: "+12125550194" },
    { headers: { "idempotency-key": "x".repeat(256) }, label: "idempotent key too long" },
  );
  await api.post(
    "/v1/contacts",
    { phone_number: "+12125550195" },
    { headers: { "content-type": "text/plain" }, label: "wrong content type" },
  );
  await api.post("/v1/contacts", undefined, { raw: "", label: "empty body" });
  await api.post("/v1/contacts", undefined, {
    raw: `{"phone_number":"+12125550196","fields":{"a":1,"a":2}}`,
    label: "duplicate JSON keys",
  });
  await api.get(`/v1/contacts${q({ q: "+12125550196" })}`);
  await api.post("/v1/contacts", undefined, {
    raw: `{"phone_number":"+12125550197","fields":{"big":1e400}}`,
    label: "JSON number overflow",
  });
  await api.post("/v1/contacts", undefined, {
    raw: `{"phone_number":"+12125550198","fields":{"big":12345678901234567890}}`,
    label: "JSON big integer",
  });
  await api.get(`/v1/contacts${q({ q: "+12125550198" })}`);
  await api.post("/v1/contacts", undefined, {
    raw: `{"phone_number":"+12125550189","fields":{"f":1.10}}`,
    label: "JSON 1.10",
  });
  await api.get(`/v1/contacts${q({ q: "+12125550189" })}`);
  await api.post("/v1/segments/preview", { rules: { field: "fields.f", op: "eq", value: "1.10" } });
  await api.post("/v1/segments/preview", { rules: { field: "fields.f", op: "eq", value: "1.1" } });
  await api.post("/v1/segments/preview", { rules: { field: "fields.f", op: "contains", value: "1.1" } });
  await api.post("/v1/segments/preview", { rules: { field: "fields.big", op: "contains", value: "e" } });
}

async function finalState(api: Api) {
  // The whole visible state at the end, once more, after everything settled.
  await allMessagesFinal(api);
  await api.get("/v1/contacts?limit=200");
  await api.get("/v1/messages?limit=200");
  await api.get("/v1/conversations?limit=200");
  await api.get("/v1/suppression?limit=200");
  await api.get("/v1/lists?limit=200");
  await api.get("/v1/numbers?limit=200");
  await api.get("/v1/analytics/overview");
  await api.get("/v1/analytics/numbers");
  await api.get("/v1/analytics/campaigns");
  await api.get("/v1/campaigns?limit=200");
  await api.get("/v1/conversions?limit=200");
  // Campaign sends are handed off concurrently: their order in the ledger is a race, so as a set.
  await noteSorted(api, "sandbox outbox (sorted)", "/v1/sandbox/outbox?limit=200", "sends");
  await api.get("/v1/settings");
}

export const SECTIONS: [string, (api: Api) => Promise<void>][] = [
  ["system", system],
  ["settings", settings],
  ["numbers", numbers],
  ["contacts", contacts],
  ["lists", lists],
  ["segments", segments],
  ["suppression", suppression],
  ["messages", messages],
  ["conversations", conversations],
  ["offers", offers],
  ["conversions", conversionsSection],
  ["campaigns", campaigns],
  ["analytics", analytics],
  ["webhooks", webhooks],
  ["agents", agents],
  ["calls", calls],
  ["flows", flows],
  ["registration", registration],
  ["link-domains", linkDomains],
  ["users", usersAndKeys],
  ["bad-input", badInput],
  ["final", finalState],
];
