/**
 * A latency probe in its own process: `bun scripts/bench/probe.ts <url> <key> [intervalMs]` calls
 * `GET <url>/v1/me` every intervalMs (default 25) until SIGTERM, then prints the response times
 * (ms) as one JSON array. A bench that also reads its database file runs synchronous queries on
 * its own thread; timing the probe there would count those stalls as the server's.
 */

export {};

const [url, key, interval = "25"] = process.argv.slice(2);
if (!url || !key) {
  console.error("usage: probe.ts <url> <key> [intervalMs]");
  process.exit(2);
}
const times: number[] = [];
let stopping = false;
process.on("SIGTERM", () => {
  stopping = true;
});
while (!stopping) {
  const t = performance.now();
  const res = await fetch(`${url}/v1/me`, { headers: { authorization: `Bearer ${key}` } });
  await res.arrayBuffer();
  times.push(performance.now() - t);
  await Bun.sleep(Number(interval));
}
console.log(JSON.stringify(times.map((x) => Math.round(x * 100) / 100)));
