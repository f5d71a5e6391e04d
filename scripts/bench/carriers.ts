/**
 * Simulated carrier figures (issue: Messaging, carrier adapters), measured in-process on a temp
 * database so the adapter's own cost is isolated from the send pipeline:
 *  - hand-offs/s (sendSms: ledger write) one at a time and 32 at a time (the worker's concurrency);
 *  - end to end: first hand-off → last DELIVERED report reaching the status sink.
 * The end-to-end messaging figure (POST → DELIVERED) is measured by the messaging benchmark.
 * Usage: bun scripts/bench/carriers.ts   (N=50000 sends per run by default)
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SimulatedCarrier } from "../../src/carriers/simulated";
import { openDatabase } from "../../src/db/client";
import { migrate } from "../../src/db/migrate";
import { systemClock } from "../../src/lib/time";

const total = Number(process.env.N ?? 50_000);

async function run(concurrency: number) {
  const dir = mkdtempSync(join(tmpdir(), "outreach-bench-carrier-"));
  const handle = openDatabase(join(dir, "bench.db"));
  migrate(handle.sqlite);
  const carrier = new SimulatedCarrier(handle.db, systemClock, { deliveryDelayMs: 200 });
  let reported = 0;
  carrier.attachSinks({
    onStatus: (updates) => {
      reported += updates.length;
    },
    onInbound: () => {},
  });
  carrier.start();
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) {
        const i = next++;
        await carrier.sendSms({
          messageId: Bun.randomUUIDv7(),
          workspaceId: "bench",
          from: "+14155550100",
          to: `+1415555${String(i % 10_000).padStart(4, "0")}`,
          body: `Benchmark message ${i}`,
          statusCallbackUrl: "",
        });
      }
    }),
  );
  const handedOff = performance.now() - t0;
  while (reported < total) await Bun.sleep(5);
  const endToEnd = performance.now() - t0;
  await carrier.stop();
  handle.close();
  rmSync(dir, { recursive: true, force: true });
  return { handoffsPerSec: total / (handedOff / 1000), endToEndPerSec: total / (endToEnd / 1000) };
}

const lines: string[] = [];
for (const concurrency of [1, 32]) {
  const r = await run(concurrency);
  lines.push(
    `| ${concurrency} | ${Math.round(r.handoffsPerSec).toLocaleString("en-US")} | ${Math.round(r.endToEndPerSec).toLocaleString("en-US")} |`,
  );
}
console.log(`Simulated carrier, ${total.toLocaleString("en-US")} sends per run, delivery delay 200 ms\n`);
console.log(
  "| concurrent hand-offs | hand-offs/s (ledger written) | sends/s handed off → DELIVERED reported |",
);
console.log("|---|---|---|");
for (const line of lines) console.log(line);
