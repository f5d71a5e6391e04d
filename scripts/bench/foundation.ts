/**
 * Foundation figures (issue: Foundation):
 *  - GET /v1/me req/s against a raw Bun.serve hello server, same run, and their ratio;
 *  - cold start: exec to first 200 on /healthz with an existing database;
 *  - idle RSS.
 * Usage: bun scripts/bench/foundation.ts   (SECONDS=10 by default; SKIP_BUILD=1 reuses dist/outreach)
 */
import { spawn } from "bun";
import {
  binary,
  ensureBinary,
  freePort,
  rssMb,
  startBinary,
  startHelloServer,
  waitForHealth,
  wrk,
} from "./support";

const seconds = Number(process.env.SECONDS_PER_RUN ?? 10);
ensureBinary();

const server = await startBinary();
const hello = await startHelloServer();
const auth = [`Authorization: Bearer ${server.key}`];

// Warm both, then alternate runs so neither gets the quieter half of the machine.
wrk(`${server.url}/v1/me`, { seconds: 2, headers: auth });
wrk(hello.url, { seconds: 2 });
const me: number[] = [];
const raw: number[] = [];
for (let round = 0; round < 2; round++) {
  raw.push(wrk(hello.url, { seconds }).rps);
  const run = wrk(`${server.url}/v1/me`, { seconds, headers: auth });
  if (run.non2xx > 0) throw new Error(`GET /v1/me answered ${run.non2xx} non-2xx responses`);
  me.push(run.rps);
}
await hello.stop();
const meRps = Math.max(...me);
const rawRps = Math.max(...raw);

await Bun.sleep(3000);
const idleRss = rssMb(server.proc.pid);
await server.stop();

// Cold start on the now-existing database: exec → first 200 on /healthz.
const starts: number[] = [];
for (let i = 0; i < 7; i++) {
  const port = await freePort();
  const t0 = performance.now();
  const proc = spawn([binary, "serve", "--port", String(port), "--db", server.dbPath], {
    env: { ...process.env, LOG_LEVEL: "warn" },
    stdout: "ignore",
    stderr: "inherit",
  });
  await waitForHealth(`http://127.0.0.1:${port}`, 10_000);
  starts.push(performance.now() - t0);
  proc.kill("SIGTERM");
  await proc.exited;
}
starts.sort((a, b) => a - b);
const median = starts[Math.floor(starts.length / 2)];

const row = (name: string, value: string, target: string) => `| ${name} | ${value} | ${target} |`;
console.log(
  [
    "| figure | measured | target |",
    "|---|---|---|",
    row("raw Bun.serve hello req/s", rawRps.toFixed(0), "baseline"),
    row("GET /v1/me req/s", meRps.toFixed(0), "≥ 0.6 × baseline"),
    row("ratio", (meRps / rawRps).toFixed(2), "≥ 0.60"),
    row("cold start, median of 7 (ms)", median.toFixed(0), "≤ 300"),
    row("idle RSS (MB)", idleRss.toFixed(1), "≤ 120"),
  ].join("\n"),
);
