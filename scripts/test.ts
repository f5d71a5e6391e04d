/**
 * `npm test`: lint, type-check, then the whole bun:test suite. Fails on the first failing step and
 * ends with one plain summary line (`tests: N passed, M failed`).
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";

const root = join(import.meta.dir, "..");
const bin = (name: string) => join(root, "node_modules", ".bin", name);

function step(name: string, command: string, args: string[]) {
  console.log(`\n▶ ${name}: ${[command.replace(`${root}/`, ""), ...args].join(" ")}`);
  const result = spawnSync(command, args, { cwd: root, stdio: "inherit" });
  if (result.status !== 0) {
    console.error(`\n✖ ${name} failed`);
    process.exit(result.status ?? 1);
  }
}

step("lint", bin("biome"), ["check", "."]);
step("typecheck", bin("tsc"), ["--noEmit", "-p", "."]);

// Browser tests (test/browser) need a Chromium; without one they skip, and say so in one line.
const chromium = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
if (!existsSync(chromium)) console.log("browser tests SKIPPED: no chromium (apt-get install chromium)");

// The suite's output is passed through as it comes and also read for the summary line.
console.log("\n▶ tests: bun test");
const child = spawn(bin("bun"), ["test", "--timeout", "60000", ...process.argv.slice(2)], {
  cwd: root,
  stdio: ["inherit", "pipe", "pipe"],
});
let output = "";
child.stdout.on("data", (chunk: Buffer) => {
  output += chunk;
  process.stdout.write(chunk);
});
child.stderr.on("data", (chunk: Buffer) => {
  output += chunk;
  process.stderr.write(chunk);
});
child.on("close", (code) => {
  const passed = Number(output.match(/^\s*(\d+) pass$/m)?.[1] ?? 0);
  const failed = Number(output.match(/^\s*(\d+) fail$/m)?.[1] ?? 0);
  console.log(`\ntests: ${passed} passed, ${failed} failed`);
  process.exit(code ?? 1);
});
