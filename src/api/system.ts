import { Elysia, t } from "elysia";
import type { AppDeps } from "../app";
import { dialectOf, pingDatabase } from "../db/client";
import { queueDepth } from "../jobs/queue";

const databaseKind = () =>
  t.String({
    description: "The database engine: `sqlite` (the embedded file) or `postgres` (DATABASE_URL)",
    examples: ["sqlite"],
  });

// GET /healthz, GET /metrics – liveness with a database check, and Prometheus metrics. No auth.
export function systemRoutes(deps: AppDeps) {
  return new Elysia({ name: "system" })
    .get(
      "/healthz",
      async ({ set }) => {
        const database = dialectOf(deps.db);
        try {
          await pingDatabase(deps.db);
          return { ok: true, status: "ok" as const, database };
        } catch {
          set.status = 503;
          return { ok: false, status: "database unavailable" as const, database };
        }
      },
      {
        detail: {
          tags: ["System"],
          operationId: "getHealth",
          summary: "Health check",
          description:
            "No auth. 200 when the database answers, 503 otherwise; `database` names the engine (API.md §7.3).",
        },
        response: {
          200: t.Object({
            ok: t.Boolean({ description: "True: the server and its database answer" }),
            status: t.String({ description: "`ok`" }),
            database: databaseKind(),
          }),
          503: t.Object({
            ok: t.Boolean({ description: "False: the database does not answer" }),
            status: t.String({ description: "What is wrong" }),
            database: databaseKind(),
          }),
        },
      },
    )
    .get(
      "/metrics",
      async ({ set }) => {
        set.headers["content-type"] = "text/plain; version=0.0.4";
        return deps.metrics.render([
          {
            name: "outreach_jobs",
            help: "Durable jobs by status (queue depth).",
            label: "status",
            values: await queueDepth(deps.db),
          },
          {
            name: "outreach_process_memory_bytes",
            help: "Process memory: resident set, JavaScript heap used and reserved, and memory held outside the heap.",
            label: "kind",
            values: processMemory(),
          },
        ]);
      },
      {
        detail: {
          tags: ["System"],
          operationId: "getMetrics",
          summary: "Prometheus metrics",
          description:
            "No auth. Requests by route/status, latency histogram, job queue depth, process memory (resident, heap used, heap reserved, external).",
        },
        response: {
          200: t.String({
            description: "Prometheus text exposition format (`text/plain; version=0.0.4`)",
            examples: ['outreach_jobs{status="queued"} 0\n'],
          }),
        },
      },
    );
}

function processMemory(): Record<string, number> {
  const usage = process.memoryUsage();
  return { rss: usage.rss, heap_used: usage.heapUsed, heap_total: usage.heapTotal, external: usage.external };
}
