/**
 * SQLite ⇄ PostgreSQL parity probe: starts the same server twice from source (one on a temp SQLite
 * file, one on a fresh database of a throwaway PostgreSQL cluster), runs one deterministic scenario
 * of API calls against both in lockstep (./scenario.ts), normalizes the answers (ids and timestamps
 * become placeholders) and prints every difference.
 *
 *   node_modules/.bin/bun scripts/parity/run.ts [--only section,section] [--json FILE] [--verbose]
 *                                               [--pg-locale C.utf8]
 *
 * Exit code: 0 when no difference was found, 1 when some were, 2 when the run itself failed.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  freshDatabase,
  freshDatabaseWithLocale,
  type PgCluster,
  startPgCluster,
} from "../../test/support/postgres";
import { root, type StartedServer, startBinary } from "../bench/support";
import { type Api, type CallOptions, type Res, SECTIONS, type Side } from "./scenario";

const args = process.argv.slice(2);
const flag = (name: string) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const only = flag("--only")?.split(",");
const jsonOut = flag("--json");
const verbose = args.includes("--verbose");
// --pg-locale C.utf8: the PostgreSQL database gets this collation and ctype (the throwaway cluster
// is initialised with the C locale; production clusters usually are not).
const pgLocale = flag("--pg-locale");

// Same public URL on both servers: tracking URLs, setup links and the like then compare equal.
const PUBLIC_URL = "https://outreach.example.com";

// ------------------------------------------------------------------------------------------------
// Recording and lockstep
// ------------------------------------------------------------------------------------------------

interface Rec {
  label: string;
  method: string;
  path: string;
  request?: unknown;
  status: number;
  body: unknown;
}

/**
 * Both scenario copies arrive at every recorded call; the call runs on both at once, so anything
 * time-dependent (quiet hours, "last 30 days") sees nearly the same clock on both servers.
 */
class Lockstep {
  private waiting = new Map<number, { labels: string[]; resolve: () => void; promise: Promise<void> }>();
  private abortError: Error | null = null;
  private aborters = new Set<(e: Error) => void>();

  async arrive(index: number, label: string): Promise<void> {
    if (this.abortError) throw this.abortError;
    let slot = this.waiting.get(index);
    if (!slot) {
      let resolve!: () => void;
      const promise = new Promise<void>((r) => (resolve = r));
      slot = { labels: [], resolve, promise };
      this.waiting.set(index, slot);
    }
    slot.labels.push(label);
    if (slot.labels.length === 2) {
      this.waiting.delete(index);
      if (slot.labels[0] !== slot.labels[1])
        this.abort(new Error(`scenario desynchronised at #${index}: ${slot.labels[0]} / ${slot.labels[1]}`));
      slot.resolve();
    }
    let aborter!: (e: Error) => void;
    const aborted = new Promise<never>((_, reject) => {
      aborter = reject;
      this.aborters.add(aborter);
    });
    try {
      await Promise.race([slot.promise, aborted]);
    } finally {
      this.aborters.delete(aborter);
    }
    if (this.abortError) throw this.abortError;
  }

  abort(error: Error) {
    if (!this.abortError) this.abortError = error;
    for (const a of this.aborters) a(this.abortError);
  }
}

function makeApi(side: Side, lockstep: Lockstep, recs: Rec[]): Api {
  let index = 0;
  let section = "";

  async function raw(method: string, path: string, body?: unknown, opts: CallOptions = {}): Promise<Res> {
    const headers: Record<string, string> = { ...(opts.headers ?? {}) };
    const key = opts.key === undefined ? side.key : opts.key;
    if (key) headers.authorization = `Bearer ${key}`;
    let payload: string | undefined;
    if (opts.raw !== undefined) {
      payload = opts.raw;
      headers["content-type"] ??= "application/json";
    } else if (body !== undefined) {
      payload = JSON.stringify(body);
      headers["content-type"] ??= "application/json";
    }
    const response = await fetch(`${side.url}${path}`, {
      method,
      headers,
      body: payload,
      redirect: "manual",
    });
    const text = await response.text();
    let parsed: unknown;
    const type = response.headers.get("content-type") ?? "";
    if (type.includes("json")) {
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = { __unparsable_json: text.slice(0, 300) };
      }
    } else {
      parsed = { __content_type: type.split(";")[0], __length: text.length };
    }
    if (response.status >= 300 && response.status < 400)
      parsed = { __location: response.headers.get("location"), ...(parsed as object) };
    return { status: response.status, body: parsed as Res["body"], headers: response.headers };
  }

  const api: Api = {
    side,
    setSection(name) {
      section = name;
    },
    async call(method, path, body, opts = {}) {
      const label = `${section}: ${opts.label ?? `${method} ${path.replace(/[0-9a-f-]{36}|undefined|null/gi, ":id")}`}`;
      await lockstep.arrive(index++, label);
      const res = await raw(method, path, body, opts);
      recs.push({
        label,
        method,
        path,
        request: opts.raw !== undefined ? `<raw> ${opts.raw.slice(0, 200)}` : body,
        status: res.status,
        body: res.body,
      });
      return res;
    },
    get: (path, opts) => api.call("GET", path, undefined, opts),
    post: (path, body, opts) => api.call("POST", path, body, opts),
    patch: (path, body, opts) => api.call("PATCH", path, body, opts),
    del: (path, body, opts) => api.call("DELETE", path, body, opts),
    peek: (method, path, body, opts) => raw(method, path, body, opts),
    async waitFor(what, check, timeoutMs = 30_000) {
      const deadline = performance.now() + timeoutMs;
      let ok = false;
      let last: unknown;
      while (performance.now() < deadline) {
        try {
          const answer = await check();
          ok = answer === true;
          if (!ok && answer !== false) last = answer;
        } catch (error) {
          last = String(error);
        }
        if (ok) break;
        await Bun.sleep(50);
      }
      const label = `${section}: wait ${what}`;
      await lockstep.arrive(index++, label);
      recs.push({
        label,
        method: "WAIT",
        path: what,
        status: ok ? 0 : -1,
        body: ok ? { settled: true } : { settled: false, last },
      });
      return ok;
    },
    async note(what, value) {
      const label = `${section}: note ${what}`;
      await lockstep.arrive(index++, label);
      recs.push({ label, method: "NOTE", path: what, status: 0, body: value });
    },
  };
  return api;
}

// ------------------------------------------------------------------------------------------------
// Normalization
// ------------------------------------------------------------------------------------------------

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;
const API_KEY = /opk_[0-9A-Za-z]{36}/g;
const SECRET = /whsec_[A-Za-z0-9+/=]+/g;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:?\d{2})$/;
const ISO_IN_TEXT = /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?/g;
// Keys whose whole string value is a random token (short link codes, visitor ids, key prefixes …).
const TOKEN_KEYS = new Set([
  "code",
  "prefix",
  "token",
  "vid",
  "vcx",
  "public_id",
  "carrier_id",
  "carrier_sid",
]);
// Keys whose value is a measurement of this run (not of the database): replaced by "<measured>".
const MEASURED_KEYS = new Set(["duration_ms", "latency_ms", "uptime_sec", "uptime"]);

/**
 * Normalizes both sides' answers together, record by record: where both sides hold an id at the
 * same place for the first time, both get the same placeholder (<id7>), so an extra row on one
 * side does not renumber everything after it. An id first seen on one side only gets a
 * placeholder of its own.
 */
class JointNormalizer {
  private maps = [new Map<string, string>(), new Map<string, string>()];
  private counter = 0;
  private now = Date.now();
  constructor(private replacements: [string, string][][]) {}

  private fresh(kind: string) {
    return `<${kind}${++this.counter}>`;
  }

  /** The id-like tokens of a string in order, with their kind (after fixed replacements). */
  private tokens(
    value: string,
    key: string | undefined,
  ): { raw: string; kind: string; start: number; end: number }[] {
    // A random short code (the simulated review draws it from the request id).
    if (key === "short_code" && /^\d{5,6}$/.test(value))
      return [{ raw: value, kind: "tok", start: 0, end: value.length }];
    if (key && TOKEN_KEYS.has(key) && value.length >= 4 && !ISO.test(value) && !/^\d+$/.test(value))
      return [{ raw: value, kind: "tok", start: 0, end: value.length }];
    const found: { raw: string; kind: string; start: number; end: number }[] = [];
    const scan = (re: RegExp, kind: string, group = 0) => {
      for (const m of value.matchAll(
        new RegExp(re.source, re.flags.includes("g") ? re.flags : `${re.flags}g`),
      )) {
        const raw = m[group];
        const start = (m.index ?? 0) + m[0].indexOf(raw);
        const end = start + raw.length;
        if (found.some((f) => start < f.end && end > f.start)) continue;
        found.push({ raw: kind === "id" ? raw.toLowerCase() : raw, kind, start, end });
      }
    };
    scan(API_KEY, "key");
    scan(SECRET, "secret");
    scan(/[?&]token=([A-Za-z0-9_-]{16,})/g, "tok", 1);
    scan(UUID, "id");
    scan(/\/r\/([A-Za-z0-9_-]{4,})/g, "tok", 1);
    scan(/[?&]vcx=([A-Za-z0-9_-]+)/g, "tok", 1);
    scan(/\.well-known\/outreach\/([A-Za-z0-9_-]{16,})/g, "tok", 1);
    scan(/recordings\.simulated\.invalid\/([0-9a-f]{8,})/g, "tok", 1);
    return found.sort((x, y) => x.start - y.start);
  }

  private replaced(side: number, value: string): string {
    let v = value;
    for (const [from, to] of this.replacements[side]) v = v.split(from).join(to);
    return v;
  }

  private render(value: string, toks: { start: number; end: number }[], names: string[]): string {
    let out = "";
    let at = 0;
    toks.forEach((t, i) => {
      out += value.slice(at, t.start) + names[i];
      at = t.end;
    });
    return (out + value.slice(at)).replace(ISO_IN_TEXT, "<ts>");
  }

  /** Normalizes two strings found at the same place on both sides. */
  private texts(
    a: string | undefined,
    b: string | undefined,
    key?: string,
  ): [string | undefined, string | undefined] {
    const vals = [a, b].map((v, side) => (v === undefined ? undefined : this.replaced(side, v)));
    const toks = vals.map((v) => (v === undefined || ISO.test(v) ? [] : this.tokens(v, key)));
    const names: string[][] = [[], []];
    const n = Math.max(toks[0].length, toks[1].length);
    for (let i = 0; i < n; i++) {
      const t = [toks[0][i], toks[1][i]];
      const known = t.map((x, side) => (x ? this.maps[side].get(x.raw) : undefined));
      if (t[0] && t[1] && !known[0] && !known[1] && t[0].kind === t[1].kind) {
        const name = this.fresh(t[0].kind);
        this.maps[0].set(t[0].raw, name);
        this.maps[1].set(t[1].raw, name);
      }
      for (const side of [0, 1]) {
        const x = t[side];
        if (!x) continue;
        let name = this.maps[side].get(x.raw);
        if (!name) {
          name = this.fresh(x.kind);
          this.maps[side].set(x.raw, name);
        }
        names[side].push(name);
      }
    }
    return vals.map((v, side) => {
      if (v === undefined) return undefined;
      if (ISO.test(v)) return "<ts>";
      return this.render(v, toks[side], names[side]);
    }) as [string | undefined, string | undefined];
  }

  private scalar(v: unknown, key?: string): unknown {
    if (typeof v === "number") {
      if (key && MEASURED_KEYS.has(key)) return "<measured>";
      if (Number.isInteger(v) && Math.abs(v - this.now) < 30 * 86_400_000) return "<ts-ms>";
    }
    return v;
  }

  /** Normalizes the values found at the same place on both sides (MISSING where one has none). */
  pair(a: unknown, b: unknown, key?: string): [unknown, unknown] {
    const ta = typeName(a);
    const tb = typeName(b);
    if (ta === "string" || tb === "string") {
      const [x, y] = this.texts(
        ta === "string" ? (a as string) : undefined,
        tb === "string" ? (b as string) : undefined,
        key,
      );
      return [
        ta === "string" ? x : ta === "missing" ? MISSING : this.pair(a, MISSING, key)[0],
        tb === "string" ? y : tb === "missing" ? MISSING : this.pair(MISSING, b, key)[1],
      ];
    }
    if (ta === "array" || tb === "array") {
      const x = ta === "array" ? (a as unknown[]) : [];
      const y = tb === "array" ? (b as unknown[]) : [];
      const outA: unknown[] = [];
      const outB: unknown[] = [];
      for (let i = 0; i < Math.max(x.length, y.length); i++) {
        const [p, q] = this.pair(i < x.length ? x[i] : MISSING, i < y.length ? y[i] : MISSING, key);
        if (i < x.length) outA.push(p);
        if (i < y.length) outB.push(q);
      }
      return [
        ta === "array" ? outA : ta === "missing" ? MISSING : this.pair(a, MISSING, key)[0],
        tb === "array" ? outB : tb === "missing" ? MISSING : this.pair(MISSING, b, key)[1],
      ];
    }
    if (ta === "object" || tb === "object") {
      const x = ta === "object" ? (a as Record<string, unknown>) : {};
      const y = tb === "object" ? (b as Record<string, unknown>) : {};
      const doneA: Record<string, unknown> = {};
      const doneB: Record<string, unknown> = {};
      for (const k of new Set([...Object.keys(x), ...Object.keys(y)])) {
        const [p, q] = this.pair(k in x ? x[k] : MISSING, k in y ? y[k] : MISSING, k);
        if (k in x) doneA[k] = p;
        if (k in y) doneB[k] = q;
      }
      // Each side keeps its own key order.
      const outA = Object.fromEntries(Object.keys(x).map((k) => [k, doneA[k]]));
      const outB = Object.fromEntries(Object.keys(y).map((k) => [k, doneB[k]]));
      return [
        ta === "object" ? outA : ta === "missing" ? MISSING : this.scalar(a, key),
        tb === "object" ? outB : tb === "missing" ? MISSING : this.scalar(b, key),
      ];
    }
    return [
      ta === "missing" ? MISSING : this.scalar(a, key),
      tb === "missing" ? MISSING : this.scalar(b, key),
    ];
  }
}

// ------------------------------------------------------------------------------------------------
// Diff
// ------------------------------------------------------------------------------------------------

const MISSING = Symbol("missing");
interface Diff {
  at: string;
  sqlite: unknown;
  postgres: unknown;
}

function typeName(v: unknown): string {
  if (v === MISSING) return "missing";
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  return typeof v;
}

/** Objects whose keys are the same but come in another order (JSON objects are unordered: reported apart). */
const keyOrder: Diff[] = [];

function diff(a: unknown, b: unknown, at: string, out: Diff[]) {
  if (a === b) return;
  const ta = typeName(a);
  const tb = typeName(b);
  if (ta !== tb) {
    out.push({ at, sqlite: a, postgres: b });
    return;
  }
  if (ta === "array") {
    const x = a as unknown[];
    const y = b as unknown[];
    if (x.length === y.length) {
      for (let i = 0; i < x.length; i++) diff(x[i], y[i], `${at}[${i}]`, out);
      return;
    }
    // Different lengths: which elements one side has and the other has not.
    const key = (v: unknown) => JSON.stringify(v);
    const rest = y.map(key);
    const onlyA: unknown[] = [];
    for (const v of x) {
      const i = rest.indexOf(key(v));
      if (i >= 0) rest.splice(i, 1);
      else onlyA.push(v);
    }
    const left = x.map(key);
    const onlyB = y.filter((v) => {
      const i = left.indexOf(key(v));
      if (i >= 0) left.splice(i, 1);
      return i < 0;
    });
    out.push({ at: `${at}.length`, sqlite: x.length, postgres: y.length });
    out.push({
      at: `${at} (elements only on one side)`,
      sqlite: onlyA.map(brief),
      postgres: onlyB.map(brief),
    });
    return;
  }
  if (ta === "object") {
    const x = a as Record<string, unknown>;
    const y = b as Record<string, unknown>;
    const kx = Object.keys(x);
    const ky = Object.keys(y);
    if (
      kx.length === ky.length &&
      kx.join("\u0000") !== ky.join("\u0000") &&
      [...kx].sort().join("\u0000") === [...ky].sort().join("\u0000")
    )
      keyOrder.push({ at, sqlite: kx, postgres: ky });
    for (const k of new Set([...kx, ...ky]))
      diff(k in x ? x[k] : MISSING, k in y ? y[k] : MISSING, at ? `${at}.${k}` : k, out);
    return;
  }
  out.push({ at, sqlite: a, postgres: b });
}

/** An array element as it is shown in a one-side-only list: an object by a few telling keys. */
function brief(v: unknown): unknown {
  if (!v || typeof v !== "object" || Array.isArray(v)) return v;
  const o = v as Record<string, unknown>;
  const keys = ["phone_number", "name", "number", "to", "body", "status", "type", "event", "id"].filter(
    (k) => k in o,
  );
  return keys.length ? Object.fromEntries(keys.slice(0, 3).map((k) => [k, o[k]])) : v;
}

const show = (v: unknown) => {
  if (v === MISSING) return "<missing>";
  const s = JSON.stringify(v);
  return s === undefined ? String(v) : s.length > 300 ? `${s.slice(0, 300)}…` : s;
};

// ------------------------------------------------------------------------------------------------
// Whitelist: differences that are legitimate by design (each with its reason).
// ------------------------------------------------------------------------------------------------

const WHITELIST: { label: RegExp; at: RegExp; why: string }[] = [
  // API.md §7.3: /healthz names the database it runs on.
  { label: /GET \/healthz/, at: /^body\.database$/, why: "healthz names its database" },
  // An approved random short code is a number drawn at random on each server.
  {
    label: /GET \/v1\/(numbers|analytics\/numbers)/,
    at: /^body\.numbers\[\d+\]\.number$/,
    why: "random short codes",
  },
  // The Prometheus-style metrics carry the dialect and run-dependent figures.
  { label: /GET \/metrics/, at: /.*/, why: "metrics text" },
];

// ------------------------------------------------------------------------------------------------
// Helpers around the servers
// ------------------------------------------------------------------------------------------------

function cli(argv: string[], env: Record<string, string>): string {
  const result = spawnSync(process.execPath, ["run", join(root, "src/main.ts"), ...argv], {
    cwd: root,
    env: { ...process.env, LOG_LEVEL: "error", ...env },
    encoding: "utf8",
    timeout: 60_000,
  });
  if (result.status !== 0) throw new Error(`cli ${argv.join(" ")} failed: ${result.stderr}${result.stdout}`);
  return result.stdout;
}

/** A local webhook receiver: records what it gets, answers 500 on /fail. */
function startReceiver() {
  const got: { path: string; headers: Record<string, string>; body: unknown }[] = [];
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(request) {
      const url = new URL(request.url);
      const text = await request.text();
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {}
      got.push({
        path: url.pathname,
        headers: Object.fromEntries(
          ["content-type", "webhook-id", "webhook-timestamp", "webhook-signature"]
            .map((name) => [name, request.headers.get(name)])
            .filter(([, value]) => value !== null),
        ),
        body,
      });
      if (url.pathname.startsWith("/fail")) return new Response("nope", { status: 500 });
      return new Response("ok");
    },
  });
  return { url: `http://127.0.0.1:${server.port}`, got, stop: () => server.stop(true) };
}

/** Forwards link-domain checks (`*.proxied.test`) to one server, as a CNAME would. */
function startCheckProxy() {
  let target = "";
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(request) {
      const host = (request.headers.get("host") ?? "").toLowerCase();
      const path = new URL(request.url).pathname;
      if (host.endsWith(".proxied.test") && target)
        return fetch(`${target}${path}`, { headers: { host }, redirect: "manual" });
      return new Response("nope", { status: 404 });
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}`,
    setTarget: (t: string) => (target = t),
    stop: () => server.stop(true),
  };
}

// ------------------------------------------------------------------------------------------------
// Main
// ------------------------------------------------------------------------------------------------

async function main(): Promise<number> {
  const started = performance.now();
  let cluster: PgCluster | undefined;
  const servers: StartedServer[] = [];
  const helpers: { stop(): void }[] = [];
  const dir = mkdtempSync(join(tmpdir(), "outreach-parity-"));
  // Ctrl-C: the servers die with their process group; the cluster and the temp folder are ours.
  const interrupted = () => {
    for (const s of servers) s.proc.kill("SIGKILL");
    cluster?.stop();
    rmSync(dir, { recursive: true, force: true });
    process.exit(130);
  };
  process.once("SIGINT", interrupted);
  process.once("SIGTERM", interrupted);
  try {
    cluster = await startPgCluster();
    const pgUrl = pgLocale
      ? await freshDatabaseWithLocale(cluster.url, pgLocale)
      : await freshDatabase(cluster.url);
    console.log(`postgres cluster on port ${cluster.port}; database ${new URL(pgUrl).pathname.slice(1)}`);

    const sides: Side[] = [];
    for (const name of ["sqlite", "postgres"] as const) {
      const receiver = startReceiver();
      const proxy = startCheckProxy();
      helpers.push(receiver, proxy);
      const dbPath = join(dir, `${name}.db`);
      const env: Record<string, string> = {
        PUBLIC_URL,
        LOG_LEVEL: "error",
        SIMULATED_DELIVERY_MS: "20",
        SIMULATED_CALL_MS: "200",
        SIMULATED_REVIEW_MS: "100",
        WEBHOOK_ALLOW_PRIVATE: "true",
        WEBHOOK_TIMEOUT_MS: "2000",
        LINK_DOMAIN_CHECK_BASE: proxy.url,
        LINK_DOMAIN_CHECK_TIMEOUT_MS: "2000",
        ...(name === "postgres" ? { DATABASE_URL: pgUrl } : { DATABASE_URL: "" }),
      };
      const server = await startBinary({ fromSource: true, dbPath, env });
      servers.push(server);
      proxy.setTarget(server.url);
      if (!server.key) throw new Error(`${name}: the server announced no key`);
      const cliEnv = name === "postgres" ? { DATABASE_URL: pgUrl } : { DATABASE_URL: "" };
      const dbFlag = name === "postgres" ? [] : ["--db", dbPath];
      const other = JSON.parse(cli(["workspaces", "create", "--name", "Other", "--json", ...dbFlag], cliEnv));
      const otherKey = JSON.parse(
        cli(["keys", "create", "--workspace", other.id, "--name", "other", "--json", ...dbFlag], cliEnv),
      );
      sides.push({
        name,
        url: server.url,
        key: server.key,
        workspaceId: server.workspaceId,
        otherKey: otherKey.key,
        otherWorkspaceId: other.id,
        receiverUrl: receiver.url,
        received: receiver.got,
        vars: {},
      });
      console.log(`${name} server on ${server.url}`);
    }

    const lockstep = new Lockstep();
    const recs: Rec[][] = [[], []];
    const apis = sides.map((side, i) => makeApi(side, lockstep, recs[i]));
    const sections = SECTIONS.filter(([name]) => !only || only.includes(name));
    const errors: string[] = [];
    await Promise.all(
      apis.map(async (api) => {
        try {
          for (const [name, run] of sections) {
            api.setSection(name);
            if (verbose) console.log(`[${api.side.name}] ${name}`);
            await run(api);
          }
        } catch (error) {
          errors.push(`${api.side.name}: ${(error as Error).stack ?? error}`);
          lockstep.abort(error as Error);
        }
      }),
    );
    if (errors.length) {
      console.error(`scenario failed:\n${errors.join("\n")}`);
      return 2;
    }

    // Normalize both sides together in recorded order, then compare call by call.
    const joint = new JointNormalizer(
      sides.map((side) => [
        [side.url, "<server>"],
        [side.receiverUrl, "<receiver>"],
        [side.url.replace("127.0.0.1", "localhost"), "<server>"],
      ]),
    );
    const normalized: { label: string; path: string; request: unknown; status: number; body: unknown }[][] = [
      [],
      [],
    ];
    for (let i = 0; i < Math.max(recs[0].length, recs[1].length); i++) {
      const pair = [recs[0][i], recs[1][i]] as const;
      const paths = joint.pair(pair[0]?.path ?? MISSING, pair[1]?.path ?? MISSING);
      const requests = joint.pair(pair[0]?.request ?? MISSING, pair[1]?.request ?? MISSING);
      const bodies = joint.pair(pair[0]?.body ?? MISSING, pair[1]?.body ?? MISSING);
      for (const side of [0, 1] as const) {
        const rec = pair[side];
        if (!rec) continue;
        normalized[side].push({
          label: rec.label,
          path: paths[side] as string,
          request: requests[side] === MISSING ? undefined : requests[side],
          status: rec.status,
          body: bodies[side],
        });
      }
    }
    const [a, b] = normalized;
    let count = 0;
    let whitelisted = 0;
    const report: unknown[] = [];
    for (let i = 0; i < Math.max(a.length, b.length); i++) {
      const x = a[i];
      const y = b[i];
      if (!x || !y) {
        console.log(`#${i} present on one side only: ${show(x ?? y)}`);
        count++;
        continue;
      }
      const diffs: Diff[] = [];
      if (x.path !== y.path) diffs.push({ at: "(path)", sqlite: x.path, postgres: y.path });
      if (x.status !== y.status) diffs.push({ at: "(status)", sqlite: x.status, postgres: y.status });
      const ordered = keyOrder.length;
      diff(x.body, y.body, "body", diffs);
      for (const d of keyOrder.slice(ordered))
        (d as Diff & { call?: string }).call = `${recs[0][i].method} ${x.path}`;
      const kept = diffs.filter((d) => {
        const w = WHITELIST.find((entry) => entry.label.test(x.label) && entry.at.test(d.at));
        if (w) whitelisted++;
        return !w;
      });
      if (!kept.length) continue;
      count += kept.length;
      console.log(
        `\n#${i} ${x.label}\n   ${recs[0][i].method} ${x.path}${x.request !== undefined ? ` ${show(x.request)}` : ""}`,
      );
      for (const d of kept)
        console.log(`   ${d.at}\n      sqlite:   ${show(d.sqlite)}\n      postgres: ${show(d.postgres)}`);
      report.push({
        index: i,
        label: x.label,
        method: recs[0][i].method,
        path: x.path,
        request: x.request,
        diffs: kept,
      });
    }
    // One line per call that differs (the detail is above).
    if (report.length) {
      console.log(`\nCalls that differ (${report.length}):`);
      for (const r of report as { index: number; label: string; diffs: Diff[] }[])
        console.log(`   #${r.index} ${r.label} (${r.diffs.length})`);
    }
    // Key order: one line per place (indices folded), with its first example.
    const places = new Map<string, { n: number; first: Diff & { call?: string } }>();
    for (const d of keyOrder as (Diff & { call?: string })[]) {
      const place = d.at.replace(/\[\d+\]/g, "[]");
      const seen = places.get(place);
      if (seen) seen.n++;
      else places.set(place, { n: 1, first: d });
    }
    if (places.size) {
      console.log(`\nObject key order differs (same keys; not counted above) at ${places.size} place(s):`);
      for (const [place, { n, first }] of places)
        console.log(
          `   ${place} ×${n}, e.g. ${first.call}\n      sqlite:   ${show(first.sqlite)}\n      postgres: ${show(first.postgres)}`,
        );
    }
    if (jsonOut) writeFileSync(jsonOut, JSON.stringify({ report, sqlite: a, postgres: b }, null, 1));
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    console.log(
      `\n${a.length} calls compared; ${count} difference(s)${whitelisted ? ` (+${whitelisted} whitelisted)` : ""}; ${seconds}s`,
    );
    return count ? 1 : 0;
  } finally {
    for (const s of servers) await s.stop().catch(() => {});
    for (const h of helpers) h.stop();
    cluster?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().then(
  (code) => process.exit(code),
  (error) => {
    console.error(error);
    process.exit(2);
  },
);
