/**
 * `npm run bench [area ...]`: runs the benchmark scripts against the built binary.
 * Areas: foundation (default), and each scripts/bench/<area>.ts present.
 */

import { existsSync } from "node:fs";
import { join } from "node:path";
import { spawnSync } from "bun";
import { ensureBinary } from "./support";

const areas = process.argv.slice(2);
const wanted = areas.length ? areas : ["foundation"];
ensureBinary();
for (const area of wanted) {
  const file = join(import.meta.dir, `${area}.ts`);
  if (!existsSync(file)) {
    console.error(`no benchmark named ${area}`);
    process.exit(2);
  }
  console.log(`\n## ${area}\n`);
  const result = spawnSync([process.execPath, file], {
    stdout: "inherit",
    stderr: "inherit",
    env: { ...process.env, SKIP_BUILD: "1" },
  });
  if (result.exitCode !== 0) process.exit(result.exitCode ?? 1);
}
