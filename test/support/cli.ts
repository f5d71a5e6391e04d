import { join } from "node:path";
import { spawn } from "bun";

const main = join(import.meta.dir, "..", "..", "src", "main.ts");

/**
 * Runs the outreach CLI in a child process, asynchronously (a cluster or server the test uses may
 * live in this very process), with DATABASE_URL unset unless `env` sets it.
 */
export async function runCli(args: string[], env: Record<string, string> = {}) {
  const child = spawn([process.execPath, main, ...args], {
    env: { ...process.env, LOG_LEVEL: "error", DATABASE_URL: "", ...env },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([
    new Response(child.stdout).text(),
    new Response(child.stderr).text(),
    child.exited,
  ]);
  return { code, stdout, stderr };
}
