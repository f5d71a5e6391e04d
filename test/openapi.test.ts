import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { startTestServer, type TestServer } from "./support/server";

// The OpenAPI document is generated from the route schemas; these checks keep it complete:
// every field described, every operation named, tagged and summarised with a 200 schema, 401
// declared under /v1, integers typed as integers. Spectral's lint is test/openapi-lint.test.ts.

// biome-ignore lint/suspicious/noExplicitAny: walks an arbitrary JSON document
type Json = any;

const METHODS = ["get", "post", "put", "patch", "delete"];
/** Hidden from the reference (an HTML page), so not documented. */
const SKIPPED_PATHS = new Set(["/docs"]);

let s: TestServer;
let doc: Json;
beforeAll(async () => {
  s = await startTestServer();
  const r = await s.api("GET", "/v1/openapi.json", undefined, { key: null });
  expect(r.status).toBe(200);
  doc = r.body;
});
afterAll(async () => await s.stop());

interface Operation {
  name: string;
  path: string;
  method: string;
  op: Json;
}

/** Every operation of `paths` (and of `webhooks` with `withWebhooks`). */
function operations(withWebhooks = false): Operation[] {
  const out: Operation[] = [];
  const items = Object.entries({ ...doc.paths, ...(withWebhooks ? doc.webhooks : {}) } as Record<
    string,
    Json
  >);
  for (const [path, item] of items) {
    if (SKIPPED_PATHS.has(path)) continue;
    for (const method of METHODS) {
      const op = item[method];
      if (op && !op.hide) out.push({ name: `${method.toUpperCase()} ${path}`, path, method, op });
    }
  }
  return out;
}

function resolve(schema: Json): Json {
  let current = schema;
  const seen = new Set<string>();
  while (current && typeof current.$ref === "string" && !seen.has(current.$ref)) {
    seen.add(current.$ref);
    const name = current.$ref.replace(/^#\/components\/schemas\//, "");
    current = doc.components?.schemas?.[name] ?? current;
  }
  return current;
}

function hasDescription(schema: Json): boolean {
  if (!schema) return false;
  if (typeof schema.description === "string" && schema.description.trim() !== "") return true;
  const target = resolve(schema);
  return target !== schema && hasDescription(target);
}

/** Field paths below `schema` (object properties, recursively) that have no description. */
function undescribed(schema: Json, at: string, out: string[], seen = new Set<Json>()): void {
  const node = resolve(schema);
  if (!node || typeof node !== "object" || seen.has(node)) return;
  seen.add(node);
  for (const [key, child] of Object.entries((node.properties ?? {}) as Record<string, Json>)) {
    if (!hasDescription(child)) out.push(`${at}.${key}`);
    undescribed(child, `${at}.${key}`, out, seen);
  }
  for (const [pattern, child] of Object.entries((node.patternProperties ?? {}) as Record<string, Json>))
    undescribed(child, `${at}[${pattern}]`, out, seen);
  if (node.additionalProperties && typeof node.additionalProperties === "object")
    undescribed(node.additionalProperties, `${at}[*]`, out, seen);
  if (node.items) {
    const items = Array.isArray(node.items) ? node.items : [node.items];
    items.forEach((item: Json) => {
      undescribed(item, `${at}[]`, out, seen);
    });
  }
  for (const keyword of ["anyOf", "oneOf", "allOf"]) {
    const branches = node[keyword];
    if (Array.isArray(branches))
      branches.forEach((branch: Json, i: number) => {
        undescribed(branch, `${at}<${keyword}${i}>`, out, seen);
      });
  }
}

function okSchema(op: Json): Json {
  const content = op.responses?.["200"]?.content ?? {};
  const media = Object.values(content as Record<string, Json>)[0];
  return media?.schema;
}

describe("GET /v1/openapi.json", () => {
  it("answers version 1.0.0 without a key", () => {
    expect(doc.openapi).toMatch(/^3\./);
    expect(doc.info.version).toBe("1.0.0");
    expect(operations().length).toBeGreaterThan(10);
  });

  it("gives every operation a summary and a 200 response schema", () => {
    const missing: string[] = [];
    for (const { name, op } of operations()) {
      if (typeof op.summary !== "string" || op.summary.trim() === "") missing.push(`${name}: summary`);
      // Parts not built yet answer 501 only (and say so); tracked links and tracking reports
      // answer 302 and 204 without a body.
      const bodiless = ["302", "204"].some((status) => op.responses?.[status]);
      if (!op["x-planned"] && !bodiless && !okSchema(op)) missing.push(`${name}: 200 schema`);
    }
    expect(missing).toEqual([]);
  });

  it("declares the 401 error on every operation under /v1", () => {
    const missing = operations()
      .filter(
        ({ path, op }) => path.startsWith("/v1/") && path !== "/v1/openapi.json" && !op.responses?.["401"],
      )
      .map(({ name }) => name);
    expect(missing).toEqual([]);
  });

  it("describes every parameter, request-body field and response field", () => {
    const missing: string[] = [];
    for (const { name, op } of operations()) {
      const declared = new Set(
        ((op.parameters ?? []) as Json[]).filter((p) => p.in === "path").map((p) => p.name),
      );
      for (const [, param] of name.matchAll(/\{(\w+)\}/g))
        if (!declared.has(param)) missing.push(`${name} path ${param} (undeclared)`);
      for (const p of (op.parameters ?? []) as Json[]) {
        if (p.in === "header" || p.in === "cookie") continue;
        if (!p.description && !hasDescription(p.schema)) missing.push(`${name} ${p.in} ${p.name}`);
        undescribed(p.schema, `${name} ${p.in} ${p.name}`, missing);
      }
      for (const [type, media] of Object.entries((op.requestBody?.content ?? {}) as Record<string, Json>))
        undescribed(media.schema, `${name} body(${type})`, missing);
      for (const [status, response] of Object.entries((op.responses ?? {}) as Record<string, Json>))
        for (const media of Object.values((response.content ?? {}) as Record<string, Json>))
          undescribed(media.schema, `${name} ${status}`, missing);
    }
    expect(missing).toEqual([]);
  });

  it("names every operation with a unique, readable operationId", () => {
    const all = operations(true);
    const ids = all.map(({ op }) => op.operationId);
    expect(ids.filter((id) => typeof id !== "string" || !/^[a-z][A-Za-z0-9]*$/.test(id))).toEqual([]);
    expect(ids.filter((id, i) => ids.indexOf(id) !== i)).toEqual([]);
    // Set on the route (`detail.operationId`), not left to the generator (`getV1PoolsById`).
    expect(ids.filter((id) => /V1|By[A-Z]/.test(id))).toEqual([]);
    const idOf = (method: string, path: string) => doc.paths[path][method].operationId;
    expect(idOf("get", "/v1/pools")).toBe("listPools");
    expect(idOf("post", "/v1/pools")).toBe("createPool");
    expect(idOf("get", "/v1/pools/{id}")).toBe("getPool");
    expect(idOf("patch", "/v1/pools/{id}")).toBe("updatePool");
    expect(idOf("delete", "/v1/pools/{id}")).toBe("deletePool");
    expect(idOf("get", "/v1/segments/{id}/members")).toBe("listSegmentMembers");
    expect(idOf("get", "/v1/webhooks/{id}/deliveries")).toBe("listWebhookDeliveries");
    expect(idOf("post", "/v1/messages")).toBe("sendMessage");
    expect(idOf("get", "/v1/me")).toBe("getMe");
    expect(idOf("get", "/healthz")).toBe("getHealth");
    expect(idOf("post", "/v1/campaigns")).toBe("createCampaign");
    expect(idOf("post", "/v1/flows")).toBe("createFlow");
    expect(idOf("post", "/v1/10dlc/brands")).toBe("createBrand");
    expect(idOf("post", "/v1/10dlc/campaigns")).toBe("createTendlcCampaign");
    expect(doc.webhooks["message.sent"].post.operationId).toBe("messageSentEvent");
  });

  it("tags every operation with a declared, described tag, and uses every declared tag", () => {
    const declared = new Map((doc.tags as Json[]).map((tag) => [tag.name, tag.description]));
    expect([...declared.values()].filter((d) => typeof d !== "string" || d.trim() === "")).toEqual([]);
    const used = new Set<string>();
    const undeclared: string[] = [];
    for (const { name, op } of operations(true)) {
      if (!Array.isArray(op.tags) || op.tags.length === 0) undeclared.push(`${name}: no tag`);
      for (const tag of op.tags ?? []) {
        used.add(tag);
        if (!declared.has(tag)) undeclared.push(`${name}: ${tag}`);
      }
    }
    expect(undeclared).toEqual([]);
    expect([...declared.keys()].filter((tag) => !used.has(tag))).toEqual([]);
  });

  it("gives every operation, public and planned ones too, a description and a success response", () => {
    const missing: string[] = [];
    for (const { name, op } of operations(true)) {
      if (typeof op.description !== "string" || op.description.trim() === "")
        missing.push(`${name}: description`);
      // A redirect (a tracked link's 302) is its success.
      if (!Object.keys(op.responses ?? {}).some((status) => /^(2\d\d|302)$/.test(status)))
        missing.push(`${name}: 2xx response`);
    }
    expect(missing).toEqual([]);
  });

  it("types integer query parameters as integers", () => {
    const strings: string[] = [];
    for (const { name, op } of operations()) {
      for (const p of (op.parameters ?? []) as Json[]) {
        if (p.in === "query" && ["limit", "offset"].includes(p.name) && p.schema?.type !== "integer")
          strings.push(`${name} ${p.name}: ${p.schema?.type}`);
      }
    }
    expect(strings).toEqual([]);
    const limit = doc.paths["/v1/contacts"].get.parameters.find((p: Json) => p.name === "limit");
    expect(limit.schema).toMatchObject({ type: "integer", minimum: 0, default: 50, examples: [50] });
    const available = doc.paths["/v1/numbers/available"].get.parameters.find((p: Json) => p.name === "limit");
    expect(available.schema).toMatchObject({ type: "integer", minimum: 1, default: 20 });
  });

  it("still answers junk integers with 422 and the field named, and clamps huge ones", async () => {
    for (const [path, error] of [
      ["/v1/contacts?limit=abc", "limit must be a non-negative integer"],
      ["/v1/contacts?limit=-1", "limit must be a non-negative integer"],
      ["/v1/lists?offset=1.5", "offset must be a non-negative integer"],
      ["/v1/numbers/available?limit=0", "limit must be a positive integer"],
    ]) {
      const r = await s.api("GET", path);
      expect([path, r.status, r.body]).toEqual([path, 422, { ok: false, error }]);
    }
    const huge = await s.api("GET", "/v1/contacts?limit=99999999999999999999999&offset=10");
    expect([huge.status, huge.body.limit, huge.body.offset]).toEqual([200, 200, 10]);
  });

  it("declares the server it is fetched from, and who answers for it", () => {
    expect(doc.servers).toEqual([{ url: "/", description: "This server" }]);
    expect(doc.info.contact.name).toBeTruthy();
  });

  it("publishes every event kind as a webhook with its payload schema and signature headers", () => {
    for (const [type, item] of Object.entries(doc.webhooks as Record<string, Json>)) {
      const op = item.post;
      const ref = op.requestBody.content["application/json"].schema.$ref;
      expect(doc.components.schemas[ref.replace("#/components/schemas/", "")]).toBeDefined();
      expect(op.parameters.map((p: Json) => p.name)).toEqual([
        "webhook-id",
        "webhook-timestamp",
        "webhook-signature",
      ]);
      expect(op.summary).toBe(type);
    }
    expect(Object.keys(doc.webhooks)).toContain("message.received");
  });

  it("types integers as integers (no string half with an integer default)", () => {
    const numericStrings: string[] = [];
    const walk = (node: Json, at: string) => {
      if (!node || typeof node !== "object") return;
      if (node.type === "string" && ["integer", "numeric"].includes(node.format)) numericStrings.push(at);
      for (const [key, value] of Object.entries(node)) walk(value, `${at}/${key}`);
    };
    walk(doc, "#");
    expect(numericStrings).toEqual([]);
  });

  it("leaves the public endpoints without security and offers Idempotency-Key on every POST with a key", () => {
    expect(doc.paths["/healthz"].get.security).toEqual([]);
    expect(doc.paths["/metrics"].get.security).toEqual([]);
    // Carrier callbacks: signed by the carrier, no key, so no Idempotency-Key either.
    const inbound = doc.paths["/carriers/twilio/inbound"].post;
    expect(inbound.security).toEqual([]);
    expect(inbound.parameters ?? []).toEqual([]);
    expect(inbound.responses["401"].description).toContain("Invalid signature");
    expect(Object.keys(inbound.responses["200"].content)).toEqual(["text/xml"]);
    const posts = operations().filter(
      // Carrier callbacks and tracking reports take no key, so no Idempotency-Key either.
      ({ path, method }) => method === "post" && path.startsWith("/v1/"),
    );
    expect(posts.length).toBeGreaterThan(10);
    const without = posts
      .filter(
        ({ op }) =>
          !(op.parameters ?? []).some((p: Json) => p.in === "header" && p.name === "Idempotency-Key"),
      )
      .map(({ name }) => name);
    expect(without).toEqual([]);
  });

  it("declares the 409 of a reused Idempotency-Key on every POST that takes the header", () => {
    const posts = operations().filter(({ op }) =>
      (op.parameters ?? []).some((p: Json) => p.in === "header" && p.name === "Idempotency-Key"),
    );
    expect(posts.length).toBeGreaterThan(10);
    const without = posts
      .filter(
        ({ op }) =>
          !String(op.responses?.["409"]?.description ?? "").includes(
            "Idempotency-Key was used with a different request",
          ),
      )
      .map(({ name }) => name);
    expect(without).toEqual([]);
    // A route's own 409 (a state conflict) keeps its wording beside the reuse.
    expect(doc.paths["/v1/campaigns/{id}/launch"].post.responses["409"].description).toMatch(
      /^State conflict.*; or Idempotency-Key reuse/,
    );
  });

  it("declares the 408 of a slow body on every route with a body deadline", () => {
    const paths = [
      "/auth/login",
      "/auth/setup",
      "/auth/password",
      "/t/collect",
      "/t/identify",
      "/carriers/twilio/status",
      "/carriers/twilio/inbound",
      "/carriers/twilio/call-status",
      "/carriers/retell/webhook",
    ];
    const missing = paths.filter((path) => !doc.paths[path]?.post?.responses?.["408"]);
    expect(missing).toEqual([]);
  });

  it("names the daily budget in the 429 of the routes that spend one", () => {
    const cases: [string, string][] = [
      ["/v1/messages", "Daily limit reached: one_off_daily_limit is 5000"],
      ["/v1/calls", "Daily limit reached: one_off_daily_limit is 5000"],
      ["/v1/conversations/{id}", "Daily limit reached: one_off_daily_limit is 5000"],
      ["/v1/numbers", "Daily limit reached: number_orders_daily_limit is 50"],
    ];
    for (const [path, wording] of cases) {
      const description = String(doc.paths[path].post.responses["429"]?.description);
      expect({ path, named: description.includes(wording) }).toEqual({ path, named: true });
    }
  });

  it("documents the bodies the tracking reports accept (JSON sent as text/plain or application/json)", () => {
    const cases: [string, string[], string[]][] = [
      ["/t/collect", ["vid"], ["vid", "vcx", "w", "url", "referrer"]],
      ["/t/identify", ["vid", "w"], ["vid", "w", "email", "phone", "external_id"]],
    ];
    for (const [path, required, properties] of cases) {
      const content = doc.paths[path].post.requestBody?.content ?? {};
      const schema = content["text/plain"]?.schema;
      expect({
        path,
        media: Object.keys(content).sort(),
        required: schema?.required,
        properties: Object.keys(schema?.properties ?? {}),
        described: Object.values(schema?.properties ?? {}).every(
          (p: Json) => typeof p.description === "string",
        ),
      }).toEqual({ path, media: ["application/json", "text/plain"], required, properties, described: true });
    }
  });

  it("says segments take clicked and conversion activity, and answer no 501", () => {
    const segmentOps = operations().filter(({ path }) => path.startsWith("/v1/segments"));
    expect(segmentOps.length).toBeGreaterThan(3);
    const mentions501 = segmentOps
      .filter(
        ({ op }) =>
          op.responses?.["501"] ||
          /\b501\b|not available yet/.test(`${op.description} ${JSON.stringify(op.requestBody ?? {})}`),
      )
      .map(({ name }) => name);
    expect(mentions501).toEqual([]);
    const rules =
      doc.paths["/v1/segments"].post.requestBody.content["application/json"].schema.properties.rules;
    expect(rules.description).toContain('"inbound"|"outbound"|"clicked"|"conversion"');
  });

  it("documents routes with a dot in their path (the tracking script)", () => {
    expect(doc.paths["/t.js"]?.get?.operationId).toBe("getTrackingScript");
  });

  it("offers JSON request bodies only (the contact import also CSV, the tracking reports also text/plain), as the server reads them", () => {
    const kinds = new Set<string>();
    for (const { op } of operations())
      for (const media of Object.keys(op.requestBody?.content ?? {})) kinds.add(media);
    // The tracking reports are JSON too, sent as text/plain by the script (no CORS preflight).
    expect([...kinds].sort()).toEqual(["application/json", "text/csv", "text/plain"]);
  });

  it("marks a query parameter the server requires as required (timeseries metric)", () => {
    const metric = doc.paths["/v1/analytics/timeseries"].get.parameters.find(
      (p: Json) => p.name === "metric",
    );
    expect(metric.required).toBe(true);
  });

  it("has no part left unbuilt: no planned operation and no 'Not built yet' tag", () => {
    const planned = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.entries(ops as Record<string, Json>)
        .filter(([, op]) => op?.["x-planned"])
        .map(([method]) => `${method} ${path}`),
    );
    expect(planned).toEqual([]);
    expect(doc.tags.map((tag: { name: string }) => tag.name)).not.toContain("Not built yet");
  });
});
