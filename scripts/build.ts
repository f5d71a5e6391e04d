/**
 * `npm run build`: embeds the migrations, then compiles src/main.ts (and the background thread,
 * src/jobs/thread.ts) into one self-contained
 * executable, dist/outreach (Bun runtime, code, migrations and static assets inside).
 */
import { spawnSync } from "node:child_process";
import { mkdirSync } from "node:fs";
import { join } from "node:path";

const root = join(import.meta.dir, "..");
const bun = process.execPath;

function run(args: string[]) {
  const result = spawnSync(bun, args, { cwd: root, stdio: "inherit" });
  if (result.status !== 0) process.exit(result.status ?? 1);
}

run(["scripts/embed-migrations.ts"]);
run(["scripts/build-dashboard.ts"]);
mkdirSync(join(root, "dist"), { recursive: true });
const outfile = process.env.OUTFILE ?? "dist/outreach";
// The background thread's entry point is compiled in beside main (src/jobs/background-thread.ts).
run(["build", "src/main.ts", "src/jobs/thread.ts", "--compile", "--minify", "--outfile", outfile]);
console.log(`built ${outfile}`);
