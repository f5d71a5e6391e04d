import { afterAll, describe, expect, it } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MAX_CACHED_PARAMS, openDatabase, STATEMENT_CACHE_SIZE } from "../src/db/client";
import { HttpMetrics, MAX_ROUTE_SERIES } from "../src/http/metrics";
import { NORMALIZED_CACHE_SIZE, normalizePhone } from "../src/lib/phone";

const dir = mkdtempSync(join(tmpdir(), "outreach-bounds-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("compiled statement cache (openDatabase)", () => {
  it("compiles a query shape once, and drops the least recently used past its bound", () => {
    const handle = openDatabase(join(dir, "cache.db"));
    const first = handle.sqlite.prepare("SELECT 0 AS n");
    expect(handle.sqlite.prepare("SELECT 0 AS n")).toBe(first);

    for (let i = 1; i <= STATEMENT_CACHE_SIZE; i++) handle.sqlite.prepare(`SELECT ${i} AS n`);
    const latest = `SELECT ${STATEMENT_CACHE_SIZE} AS n`;
    const kept = handle.sqlite.prepare(latest);
    expect(handle.sqlite.prepare(latest)).toBe(kept);
    // STATEMENT_CACHE_SIZE newer shapes pushed the first one out: it is compiled again, and still runs.
    const again = handle.sqlite.prepare("SELECT 0 AS n");
    expect(again).not.toBe(first);
    expect(again.get()).toEqual({ n: 0 });
    handle.close();
  });

  it("does not keep a statement whose parameters are a list spelled out value by value", () => {
    const handle = openDatabase(join(dir, "lists.db"));
    const list = `SELECT 1 AS n WHERE 1 IN (${Array.from({ length: MAX_CACHED_PARAMS + 1 }, () => "?").join(", ")})`;
    const once = handle.sqlite.prepare(list);
    expect(handle.sqlite.prepare(list)).not.toBe(once);
    expect(
      handle.sqlite.prepare(list).get(...Array.from({ length: MAX_CACHED_PARAMS + 1 }, () => 1)),
    ).toEqual({
      n: 1,
    });
    const short = "SELECT 1 AS n WHERE 1 IN (?, ?)";
    expect(handle.sqlite.prepare(short)).toBe(handle.sqlite.prepare(short));
    handle.close();
  });
});

describe("HttpMetrics", () => {
  it("keeps at most MAX_ROUTE_SERIES routes and counts further ones under route other", () => {
    const metrics = new HttpMetrics();
    metrics.record("GET", "/v1/me", 200, 0.001);
    for (let i = 0; i < MAX_ROUTE_SERIES + 500; i++)
      metrics.record("PATCH", `/v1/contacts/junk${i}`, 422, 0.001);
    metrics.record("GET", "/v1/me", 200, 0.001);
    const text = metrics.render([]);
    const series = text.split("\n").filter((line) => line.startsWith("outreach_http_requests_total{"));
    expect(series.length).toBeLessThanOrEqual(MAX_ROUTE_SERIES + 1);
    expect(text).toContain('outreach_http_requests_total{method="GET",route="/v1/me",status="200"} 2');
    expect(text).toContain('outreach_http_requests_total{method="PATCH",route="other",status="422"} 501');
    expect(text).toContain('outreach_http_request_duration_seconds_count{method="PATCH",route="other"} 501');
  });
});

describe("normalizePhone", () => {
  it("answers the same after more distinct numbers than its cache keeps", () => {
    expect(normalizePhone("(212) 555-0100")).toBe("+12125550100");
    for (let i = 0; i <= NORMALIZED_CACHE_SIZE; i++) normalizePhone(`646-${2_000_000 + i}`);
    expect(normalizePhone("(212) 555-0100")).toBe("+12125550100");
    expect(normalizePhone("646 200 0007")).toBe("+16462000007");
    expect(normalizePhone("not a number")).toBeNull();
  });
});
