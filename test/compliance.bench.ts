/**
 * Micro-benchmark of decideSend (not part of `bun test`): `bun test/compliance.bench.ts`.
 * A campaign asks once per recipient, so a million recipients must not wait on this module.
 * Numbers from many area codes (state rows, split codes, Canada), a recent send each, at an hour
 * when most may send and at night when every one is deferred.
 */
import { decideSend, type SendInput } from "../src/compliance";

const AREA_CODES = [
  "212",
  "305",
  "504",
  "205",
  "214",
  "601",
  "415",
  "503",
  "860",
  "907",
  "808",
  "416",
  "850",
  "801",
];
const phones = Array.from(
  { length: 100_000 },
  (_, i) => `+1${AREA_CODES[i % AREA_CODES.length]}${String(2_000_000 + i).padStart(7, "0")}`,
);
const RUNS = 1_000_000;

function run(label: string, now: number, extra: Partial<SendInput> = {}) {
  const outcomes = { send: 0, defer: 0, skip: 0 };
  const recent = [now - 3_600_000];
  const started = performance.now();
  for (let i = 0; i < RUNS; i++) {
    const decision = decideSend(
      {
        channel: "sms",
        kind: "marketing",
        phone: phones[i % phones.length],
        timezone: null,
        suppressed: false,
        opted_out: false,
        recent_sends: recent,
        ...extra,
      },
      now + i / 5, // the clock moves on as in a real run (5,000 sends/s)
    );
    outcomes[decision.action]++;
  }
  const seconds = (performance.now() - started) / 1000;
  console.log(
    `${label.padEnd(34)} ${Math.round(RUNS / seconds).toLocaleString("en-US")} decisions/s`,
    JSON.stringify(outcomes),
  );
}

run("daytime (16:30Z), state rules on", Date.parse("2026-06-17T16:30:00Z"));
run("night (07:30Z), all deferred", Date.parse("2026-06-17T07:30:00Z"));
run("daytime, contact zones given", Date.parse("2026-06-17T16:30:00Z"), { timezone: "America/Chicago" });
run("unknown area codes (fallback zones)", Date.parse("2026-06-17T16:30:00Z"), { phone: "+15335550100" });
