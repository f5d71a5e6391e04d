/**
 * `npm test`: lint, type-check, then the whole bun:test suite. Fails on the first failing step.
 */
import { spawnSync } from "node:child_process";
import { join } from "node:path";

const root = join(import.meta.dir, "..");
const bin = (name: string) => join(root, "node_modules", ".bin", name);

const steps: [string, string, string[]][] = [
  ["lint", bin("biome"), ["check", "."]],
  ["typecheck", bin("tsc"), ["--noEmit", "-p", "."]],
  ["tests", bin("bun"), ["test", "--timeout", "60000", ...process.argv.slice(2)]],
];

for (const [name, command, args] of steps) {
  console.log(`\n▶ ${name}: ${[command.replace(`${root}/`, ""), ...args].join(" ")}`);
  const result = spawnSync(command, args, { cwd: root, stdio: "inherit" });
  if (result.status !== 0) {
    console.error(`\n✖ ${name} failed`);
    process.exit(result.status ?? 1);
  }
}
