import { and, eq, sql } from "drizzle-orm";
import type { Db, Tx } from "../../db/client";
import { type ContactRow, contacts, listMembers } from "../../db/schema";
import { AppError, invalid } from "../../lib/errors";
import { newId } from "../../lib/ids";
import { normalizePhone } from "../../lib/phone";
import { stateCodeOf } from "../../lib/state-codes";
import { isTimeZone } from "../../lib/time";
import { emitEvents } from "../events";
import { checkContactScalars, contactJson, mergeFields } from "./contacts";
import { getListRow, listMembersAdded } from "./lists";

/**
 * Bulk import of contacts (API.md §3 Contacts): CSV streamed from the request (or a file, for the
 * CLI) or a JSON array. Rows are applied in batches, one transaction per batch; a bad row is
 * reported by its row number and never stops the rest. Upsert by phone number: a number already in
 * the workspace (or earlier in the same import) updates that contact instead of creating another.
 */

export interface ImportError {
  row: number;
  error: string;
}

export interface ImportResult {
  created: number;
  updated: number;
  skipped: number;
  errors: ImportError[];
  /**
   * The column that set `opted_in` per row (as the file spells it), or null when there was none
   * and everyone was imported as opted in (API.md §7.1).
   */
  consent_column: string | null;
}

export interface ImportOptions {
  listId?: string;
  now?: number;
  batchSize?: number;
  /** Stop reading after this many bytes (413). */
  maxBytes?: number;
  /** Called after each batch: rows seen so far and bytes read. */
  onProgress?: (rows: number, bytes: number) => void;
}

/** At most this many row errors are listed; the counts stay exact. */
export const MAX_REPORTED_ERRORS = 1000;
/** Rows per transaction: big enough for throughput, small enough that a batch never holds the server long. */
const DEFAULT_BATCH = 1000;

/** One contact as read from a CSV line or a JSON item, before validation. */
interface RawRow {
  row: number;
  phone?: unknown;
  /** `Default Address Phone` / `Address Phone`: used when the row's main phone is empty. */
  phone_fallback?: unknown;
  first_name?: unknown;
  last_name?: unknown;
  email?: unknown;
  external_id?: unknown;
  opted_in?: unknown;
  /** The consent column's name as the file spells it (for the row error). */
  consent_column?: string;
  timezone?: unknown;
  state?: unknown;
  fields?: unknown;
}

interface CleanRow {
  row: number;
  phone: string;
  firstName?: string;
  lastName?: string;
  email?: string;
  externalId?: string;
  optedIn?: boolean;
  timezone?: string;
  state?: string;
  fields?: Record<string, unknown>;
}

// ---------------------------------------------------------------------------------------------
// Phone numbers: the common shapes of US numbers skip the full parser (same answer, much faster).
// ---------------------------------------------------------------------------------------------

const E164_US = /^\+1\d{10}$/;
const TEN = /^\d{10}$/;
const ELEVEN = /^1\d{10}$/;

export function normalizePhoneFast(input: string): string | null {
  const s = input.trim();
  if (E164_US.test(s)) return s;
  if (TEN.test(s)) return `+1${s}`;
  if (ELEVEN.test(s)) return `+${s}`;
  return normalizePhone(s);
}

// ---------------------------------------------------------------------------------------------
// CSV: RFC 4180 (quoted fields, doubled quotes, CRLF or LF, newlines inside quotes), incremental.
// ---------------------------------------------------------------------------------------------

export interface CsvRecord {
  /** Line number of the record's first line (the header is line 1). */
  line: number;
  fields: string[];
}

export class CsvReader {
  private buf = "";
  private lineNo = 0;
  private started = false;

  /** Feeds text; returns every record completed by it. */
  push(text: string): CsvRecord[] {
    if (!this.started) {
      if (text.length === 0) return [];
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
      this.started = true;
    }
    this.buf += text;
    return this.drain(false);
  }

  /** Ends the input; returns the last record when the file has no final newline. */
  end(): CsvRecord[] {
    return this.drain(true);
  }

  private drain(final: boolean): CsvRecord[] {
    const out: CsvRecord[] = [];
    const buf = this.buf;
    let pos = 0;
    while (pos < buf.length) {
      const nl = buf.indexOf("\n", pos);
      const lineEnd = nl === -1 ? buf.length : nl;
      if (nl === -1 && !final) break;
      let line = buf.slice(pos, lineEnd);
      if (!line.includes('"')) {
        if (line.endsWith("\r")) line = line.slice(0, -1);
        this.lineNo++;
        out.push({ line: this.lineNo, fields: line.split(",") });
        pos = lineEnd + 1;
        continue;
      }
      const parsed = this.parseQuoted(buf, pos, final);
      if (!parsed) break;
      out.push(parsed.record);
      pos = parsed.next;
    }
    this.buf = pos >= buf.length ? "" : buf.slice(pos);
    return out;
  }

  /** Parses one record that contains quotes; null when it is not complete yet. */
  private parseQuoted(
    buf: string,
    start: number,
    final: boolean,
  ): { record: CsvRecord; next: number } | null {
    const fields: string[] = [];
    let field = "";
    let i = start;
    let lines = 1;
    let inQuotes = false;
    while (i < buf.length) {
      const c = buf[i];
      if (inQuotes) {
        if (c === '"') {
          if (buf[i + 1] === '"') {
            field += '"';
            i += 2;
            continue;
          }
          if (i + 1 >= buf.length && !final) return null;
          inQuotes = false;
          i++;
          continue;
        }
        if (c === "\n") lines++;
        field += c;
        i++;
        continue;
      }
      if (c === '"') {
        inQuotes = true;
        i++;
      } else if (c === ",") {
        fields.push(field);
        field = "";
        i++;
      } else if (c === "\n" || (c === "\r" && buf[i + 1] === "\n")) {
        fields.push(field);
        const record = { line: this.lineNo + 1, fields };
        this.lineNo += lines;
        return { record, next: c === "\r" ? i + 2 : i + 1 };
      } else if (c === "\r" && i + 1 >= buf.length && !final) {
        return null;
      } else {
        field += c;
        i++;
      }
    }
    if (!final) return null;
    // End of input: an unterminated quote takes the rest of the file as its field.
    fields.push(field);
    const record = { line: this.lineNo + 1, fields };
    this.lineNo += lines;
    return { record, next: buf.length };
  }
}

// ---------------------------------------------------------------------------------------------
// Header → contact attribute
// ---------------------------------------------------------------------------------------------

type Column =
  | "phone"
  | "phone_fallback"
  | "first_name"
  | "last_name"
  | "email"
  | "external_id"
  | "opted_in"
  | "timezone"
  | "state";

/**
 * Header names (lower case, runs of anything but letters and digits as "_") → contact attribute.
 * Covers the exports users bring (API.md §7.1): Shopify (`Phone`, `Default Address Phone`,
 * `Accepts SMS Marketing`, `Default Address Province Code`), Klaviyo (`Phone Number`, `SMS
 * Consent`, `State / Region`), Mailchimp (`Phone Number`, `SMS Subscription Status`, `REGION`,
 * `TIMEZONE`), HubSpot (`Phone Number`, `Mobile Phone Number`, `State/Region`).
 */
const HEADER_ALIASES: Record<string, Column> = {
  phone: "phone",
  phone_number: "phone",
  phonenumber: "phone",
  mobile: "phone",
  mobile_number: "phone",
  mobile_phone: "phone",
  mobile_phone_number: "phone",
  cell: "phone",
  cell_phone: "phone",
  cell_phone_number: "phone",
  sms_phone: "phone",
  sms_phone_number: "phone",
  number: "phone",
  default_address_phone: "phone_fallback",
  address_phone: "phone_fallback",
  first_name: "first_name",
  firstname: "first_name",
  first: "first_name",
  given_name: "first_name",
  last_name: "last_name",
  lastname: "last_name",
  last: "last_name",
  surname: "last_name",
  family_name: "last_name",
  email: "email",
  email_address: "email",
  external_id: "external_id",
  externalid: "external_id",
  opted_in: "opted_in",
  accepts_sms_marketing: "opted_in",
  sms_consent: "opted_in",
  sms_opt_in: "opted_in",
  sms_marketing_consent: "opted_in",
  sms_subscription_status: "opted_in",
  timezone: "timezone",
  time_zone: "timezone",
  tz: "timezone",
  state: "state",
  province: "state",
  default_address_province_code: "state",
  region: "state",
  state_region: "state",
  province_code: "state",
};

/** A header as HEADER_ALIASES spells it: "State / Region" → "state_region". */
const canonicalHeader = (name: string) =>
  name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "_")
    .replace(/^_+|_+$/g, "");

interface HeaderPlan {
  columns: ({ kind: "column"; column: Column } | { kind: "field"; key: string } | { kind: "ignore" })[];
  /** The consent column as the file spells it, or null. */
  consentColumn: string | null;
  /** Header names as the file spells them (trimmed). */
  headers: string[];
}

function planHeader(header: string[]): HeaderPlan {
  const seen = new Set<string>();
  let consentColumn: string | null = null;
  const columns: HeaderPlan["columns"] = header.map((raw) => {
    const name = raw.trim();
    const canonical = canonicalHeader(name);
    // Own keys only: a header named "constructor" or "__proto__" is a custom field, not a column.
    const column = Object.hasOwn(HEADER_ALIASES, canonical) ? HEADER_ALIASES[canonical] : undefined;
    // A second phone column (HubSpot's `Mobile Phone Number` after `Phone Number`) is the fallback.
    if (column === "phone" && seen.has("phone") && !seen.has("phone_fallback")) {
      seen.add("phone_fallback");
      return { kind: "column", column: "phone_fallback" };
    }
    if (column && !seen.has(column)) {
      seen.add(column);
      if (column === "opted_in") consentColumn = name;
      return { kind: "column", column };
    }
    if (!name || column) return { kind: "ignore" };
    // biome-ignore lint/suspicious/noControlCharactersInRegex: strips what field names may not hold
    const key = name.slice(0, 64).replace(/["\\\u0000-\u001f]/g, "");
    if (!key || seen.has(`field:${key}`)) return { kind: "ignore" };
    seen.add(`field:${key}`);
    return { kind: "field", key };
  });
  if (!seen.has("phone") && !seen.has("phone_fallback")) throw invalid("phone_number column is required");
  return { columns, consentColumn, headers: header.map((name) => name.trim()) };
}

function rowFromCsv(plan: HeaderPlan, record: CsvRecord): RawRow | ImportError {
  if (record.fields.length > plan.columns.length) {
    return {
      row: record.line,
      error: `row has ${record.fields.length} columns, the header has ${plan.columns.length}`,
    };
  }
  const row: RawRow = { row: record.line };
  if (plan.consentColumn !== null) row.consent_column = plan.consentColumn;
  let fields: Record<string, unknown> | undefined;
  for (let i = 0; i < record.fields.length; i++) {
    const value = record.fields[i] as string;
    const spec = plan.columns[i];
    if (!spec || spec.kind === "ignore") continue;
    const v = value.trim();
    if (v === "") continue;
    if (spec.kind === "column") {
      // A state the table cannot read as two letters stays a custom field under its header.
      if (spec.column === "state" && stateCodeOf(v) === null) {
        fields ??= {};
        fields[plan.headers[i] as string] = v;
      } else row[spec.column] = v;
    } else {
      fields ??= {};
      fields[spec.key] = v;
    }
  }
  if (fields) row.fields = fields;
  return row;
}

/** Consent values (API.md §7.1), compared in lower case. */
const TRUE_WORDS = new Set(["true", "yes", "y", "1", "subscribed"]);
const FALSE_WORDS = new Set(["false", "no", "n", "0", "unsubscribed", "not_subscribed", "never_subscribed"]);

function optionalText(value: unknown, name: string): string | undefined {
  if (value === undefined || value === null || value === "") return undefined;
  if (typeof value !== "string") throw invalid(`${name} must be a string`);
  return value.trim() || undefined;
}

/** Validates one row; throws AppError with the message reported for the row. */
function cleanRow(raw: RawRow): CleanRow {
  // The row's main phone, else its address phone (Shopify's `Default Address Phone`).
  const given =
    raw.phone === undefined || raw.phone === null || raw.phone === "" ? raw.phone_fallback : raw.phone;
  if (given === undefined || given === null || given === "") throw invalid("phone_number is required");
  if (typeof given !== "string") throw invalid("phone_number must be a string");
  // A leading apostrophe is a spreadsheet's "keep as text" mark (Shopify exports write one).
  const phone = normalizePhoneFast(given.replace(/^'/, ""));
  if (!phone) throw invalid("phone_number must be a valid phone number");
  const out: CleanRow = { row: raw.row, phone };
  out.firstName = optionalText(raw.first_name, "first_name");
  out.lastName = optionalText(raw.last_name, "last_name");
  out.email = optionalText(raw.email, "email");
  out.externalId = optionalText(raw.external_id, "external_id");
  out.timezone = optionalText(raw.timezone, "timezone");
  if (raw.opted_in !== undefined && raw.opted_in !== null && raw.opted_in !== "") {
    const word =
      typeof raw.opted_in === "string"
        ? raw.opted_in
            .trim()
            .toLowerCase()
            .replace(/[\s-]+/g, "_")
        : null;
    if (typeof raw.opted_in === "boolean") out.optedIn = raw.opted_in;
    else if (raw.opted_in === 1 || raw.opted_in === 0) out.optedIn = raw.opted_in === 1;
    else if (word !== null && TRUE_WORDS.has(word)) out.optedIn = true;
    else if (word !== null && FALSE_WORDS.has(word)) out.optedIn = false;
    else if (raw.consent_column) throw invalid(`${raw.consent_column} must be yes or no`);
    else throw invalid("opted_in must be true or false");
  } else if (raw.consent_column) {
    // A file with a consent column and an empty cell: no consent recorded (fail closed).
    out.optedIn = false;
  }
  if (raw.state !== undefined && raw.state !== null && raw.state !== "") {
    if (typeof raw.state !== "string") throw invalid("state must be a string");
    const code = stateCodeOf(raw.state);
    if (code === null) throw invalid("state must be a two-letter state or province code");
    out.state = code;
  }
  if (raw.fields !== undefined && raw.fields !== null) {
    if (typeof raw.fields !== "object" || Array.isArray(raw.fields))
      throw invalid("fields must be an object");
    out.fields = raw.fields as Record<string, unknown>;
  }
  if (out.timezone !== undefined && !isTimeZone(out.timezone))
    throw invalid("timezone must be an IANA time zone");
  checkContactScalars({
    first_name: out.firstName,
    last_name: out.lastName,
    email: out.email,
    external_id: out.externalId,
    fields: out.fields,
  });
  return out;
}

// ---------------------------------------------------------------------------------------------
// The batch writer
// ---------------------------------------------------------------------------------------------

const p = (name: string) => sql.placeholder(name);

/** The statements an import runs per row, prepared once per import. */
function prepareStatements(db: Db) {
  return {
    findByPhone: db
      .select()
      .from(contacts)
      .where(and(eq(contacts.workspaceId, p("workspaceId")), eq(contacts.phoneNumber, p("phoneNumber"))))
      .prepare(),
    insertContact: db
      .insert(contacts)
      .values({
        id: p("id"),
        workspaceId: p("workspaceId"),
        phoneNumber: p("phoneNumber"),
        firstName: p("firstName"),
        lastName: p("lastName"),
        email: p("email"),
        externalId: p("externalId"),
        source: p("source"),
        optedIn: p("optedIn"),
        timezone: p("timezone"),
        state: p("state"),
        fields: p("fields"),
        createdAt: p("createdAt"),
        updatedAt: p("updatedAt"),
      })
      .prepare(),
    // Update values are bound raw (no column encoders): fields as JSON text, opted_in as 0/1.
    updateContact: db
      .update(contacts)
      .set({
        firstName: sql`${p("firstName")}`,
        lastName: sql`${p("lastName")}`,
        email: sql`${p("email")}`,
        externalId: sql`${p("externalId")}`,
        optedIn: sql`${p("optedIn")}`,
        timezone: sql`${p("timezone")}`,
        state: sql`${p("state")}`,
        fields: sql`${p("fields")}`,
        updatedAt: sql`${p("updatedAt")}`,
      })
      .where(and(eq(contacts.workspaceId, p("workspaceId")), eq(contacts.id, p("id"))))
      .prepare(),
    addMember: db
      .insert(listMembers)
      .values({
        listId: p("listId"),
        contactId: p("contactId"),
        workspaceId: p("workspaceId"),
        createdAt: p("createdAt"),
      })
      .onConflictDoNothing()
      .returning({ contactId: listMembers.contactId })
      .prepare(),
  };
}

class Importer {
  readonly result: ImportResult = { created: 0, updated: 0, skipped: 0, errors: [], consent_column: null };
  private pending: (CleanRow | ImportError)[] = [];
  rows = 0;
  private readonly batchSize: number;
  private readonly statements: ReturnType<typeof prepareStatements>;

  constructor(
    private readonly db: Db,
    private readonly workspaceId: string,
    private readonly options: ImportOptions,
  ) {
    this.batchSize = options.batchSize ?? DEFAULT_BATCH;
    this.statements = prepareStatements(db);
  }

  async add(raw: RawRow | ImportError) {
    this.rows++;
    if ("error" in raw) {
      this.pending.push(raw);
    } else {
      try {
        this.pending.push(cleanRow(raw));
      } catch (error) {
        if (!(error instanceof AppError)) throw error;
        this.pending.push({ row: raw.row, error: error.message });
      }
    }
    if (this.pending.length >= this.batchSize) await this.flush();
  }

  private fail(error: ImportError) {
    if (this.result.errors.length < MAX_REPORTED_ERRORS) this.result.errors.push(error);
  }

  /** Batches written so far. */
  flushes = 0;

  async flush() {
    const batch = this.pending;
    this.pending = [];
    if (batch.length === 0) return;
    this.flushes++;
    const good: CleanRow[] = [];
    for (const item of batch) {
      if ("error" in item) this.fail(item);
      else good.push(item);
    }
    if (good.length > 0) await this.db.transaction(async (tx) => await this.write(tx, good));
  }

  /** One batch, in the caller's transaction. */
  private async write(tx: Tx, rows: CleanRow[]) {
    const now = this.options.now ?? Date.now();
    const ws = this.workspaceId;
    const st = this.statements;
    const byPhone = new Map<string, ContactRow>();
    const created = new Map<string, ContactRow>();
    const changed = new Map<string, ContactRow>();
    const optedOut = new Set<string>();
    for (const r of rows) {
      let current = byPhone.get(r.phone);
      if (!current) {
        current = (await st.findByPhone.get({ workspaceId: ws, phoneNumber: r.phone })) as
          | ContactRow
          | undefined;
        if (current) byPhone.set(r.phone, current);
      }
      if (!current) {
        const row: ContactRow = {
          id: newId(),
          workspaceId: ws,
          phoneNumber: r.phone,
          firstName: r.firstName ?? null,
          lastName: r.lastName ?? null,
          email: r.email ?? null,
          externalId: r.externalId ?? null,
          source: "import",
          optedIn: r.optedIn ?? true,
          // Only a zone the file gives is stored (given); none: the area code decides.
          timezone: r.timezone ?? null,
          state: r.state ?? null,
          fields: r.fields ? mergeFields({}, r.fields) : {},
          createdAt: now,
          updatedAt: now,
        };
        byPhone.set(r.phone, row);
        created.set(r.phone, row);
        this.result.created++;
        continue;
      }
      const next = applyRow(current, r, now);
      if (!next) {
        this.result.skipped++;
        continue;
      }
      if (current.optedIn && !next.optedIn && !created.has(r.phone)) optedOut.add(r.phone);
      byPhone.set(r.phone, next);
      if (created.has(r.phone)) created.set(r.phone, next);
      else changed.set(r.phone, next);
      this.result.updated++;
    }
    const inserts = [...created.values()];
    for (const row of inserts) await st.insertContact.run(row);
    await emitEvents(tx, ws, "contact.created", inserts.map(contactJson), now);
    for (const row of changed.values()) {
      await st.updateContact.run({
        ...row,
        optedIn: row.optedIn ? 1 : 0,
        fields: JSON.stringify(row.fields ?? {}),
      });
    }
    await emitEvents(
      tx,
      ws,
      "contact.opted_out",
      [...changed.values()].filter((row) => optedOut.has(row.phoneNumber)).map(contactJson),
      now,
    );
    const listId = this.options.listId;
    if (listId) {
      const added: string[] = [];
      for (const contact of byPhone.values()) {
        const inserted = await st.addMember.all({
          listId,
          contactId: contact.id,
          workspaceId: ws,
          createdAt: now,
        });
        if (inserted.length) added.push(contact.id);
      }
      await listMembersAdded(tx, ws, listId, added, now);
    }
  }
}

/**
 * The contact after applying an import row, or null when the row changes nothing. Blank cells
 * leave values as they are; custom fields merge. An import can opt a contact out but never back in
 * (a STOP is only undone by the person).
 */
function applyRow(current: ContactRow, r: CleanRow, now: number): ContactRow | null {
  const next: ContactRow = { ...current };
  let dirty = false;
  const set = <K extends keyof ContactRow>(key: K, value: ContactRow[K] | undefined) => {
    if (value !== undefined && next[key] !== value) {
      next[key] = value;
      dirty = true;
    }
  };
  set("firstName", r.firstName);
  set("lastName", r.lastName);
  set("email", r.email);
  set("externalId", r.externalId);
  set("timezone", r.timezone);
  set("state", r.state);
  if (r.optedIn === false) set("optedIn", false);
  if (r.fields) {
    const merged = mergeFields(current.fields ?? {}, r.fields);
    if (JSON.stringify(merged) !== JSON.stringify(current.fields ?? {})) {
      next.fields = merged;
      dirty = true;
    }
  }
  if (!dirty) return null;
  next.updatedAt = now;
  return next;
}

async function checkList(db: Db, workspaceId: string, listId: string | undefined) {
  if (listId === undefined) return;
  if (!(await getListRow(db, workspaceId, listId))) throw invalid("list_id does not exist");
}

// ---------------------------------------------------------------------------------------------
// Entry points
// ---------------------------------------------------------------------------------------------

/**
 * Imports a CSV byte stream: header row first (a phone column is required: 422 before anything is
 * written), then one contact per line. Memory stays bounded by the batch size.
 */
export async function importContactsCsv(
  db: Db,
  workspaceId: string,
  stream: ReadableStream<Uint8Array>,
  options: ImportOptions = {},
): Promise<ImportResult> {
  await checkList(db, workspaceId, options.listId);
  const importer = new Importer(db, workspaceId, options);
  const reader = new CsvReader();
  const decoder = new TextDecoder("utf-8");
  let plan: HeaderPlan | null = null;
  let bytes = 0;
  let lastProgressRows = 0;
  const take = async (records: CsvRecord[]) => {
    for (const record of records) {
      if (!plan) {
        plan = planHeader(record.fields);
        importer.result.consent_column = plan.consentColumn;
        continue;
      }
      if (record.fields.length === 1 && record.fields[0]?.trim() === "") continue;
      await importer.add(rowFromCsv(plan, record));
    }
    if (options.onProgress && importer.rows - lastProgressRows >= 1000) {
      lastProgressRows = importer.rows;
      options.onProgress(importer.rows, bytes);
    }
  };
  for await (const chunk of stream as unknown as AsyncIterable<Uint8Array>) {
    bytes += chunk.byteLength;
    if (options.maxBytes !== undefined && bytes > options.maxBytes) {
      throw new AppError("payload_too_large", `Request body is too large (max ${options.maxBytes} bytes)`);
    }
    const flushedBefore = importer.flushes;
    await take(reader.push(decoder.decode(chunk, { stream: true })));
    // A batch was written: let the server answer other requests before the next one.
    if (importer.flushes !== flushedBefore) await yieldToEventLoop();
  }
  await take(reader.push(decoder.decode()));
  await take(reader.end());
  if (!plan) throw invalid("CSV is empty: a header row with a phone_number column is required");
  await importer.flush();
  options.onProgress?.(importer.rows, bytes);
  return importer.result;
}

/**
 * Imports `{contacts:[{phone_number, first_name, ..., fields}]}` items; `row` in errors is the
 * item's 1-based position in the array.
 */
export async function importContactsJson(
  db: Db,
  workspaceId: string,
  items: unknown[],
  options: ImportOptions = {},
): Promise<ImportResult> {
  await checkList(db, workspaceId, options.listId);
  const importer = new Importer(db, workspaceId, options);
  let flushed = 0;
  for (let index = 0; index < items.length; index++) {
    // A batch was written: let the server answer other requests before the next one.
    if (importer.flushes !== flushed) {
      flushed = importer.flushes;
      await yieldToEventLoop();
    }
    const item = items[index];
    const row = index + 1;
    if (item === null || typeof item !== "object" || Array.isArray(item)) {
      await importer.add({ row, error: "contact must be an object" });
      continue;
    }
    const o = item as Record<string, unknown>;
    if (o.opted_in !== undefined) importer.result.consent_column = "opted_in";
    await importer.add({
      row,
      phone: o.phone_number ?? o.phone,
      first_name: o.first_name,
      last_name: o.last_name,
      email: o.email,
      external_id: o.external_id,
      opted_in: o.opted_in,
      timezone: o.timezone,
      state: o.state,
      fields: o.fields,
    });
  }
  await importer.flush();
  options.onProgress?.(importer.rows, 0);
  return importer.result;
}

const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));
