import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { spawn } from "bun";

const ROOT = resolve(import.meta.dir, "..", "..");

/** A TCP port free right now on 127.0.0.1 (also a port where nothing answers, once closed). */
export async function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once("error", fail);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => done(port));
    });
  });
}

/**
 * A Prism mock serving `document` (a vendor's OpenAPI document, as adjusted by the test) from a
 * temp file, once it answers; `stop` ends it and removes the file.
 */
export async function startPrism(document: unknown, name: string): Promise<{ url: string; stop(): void }> {
  const bin = join(ROOT, "node_modules/.bin/prism");
  if (!existsSync(bin)) throw new Error(`Prism is not installed (${bin}): run npm install`);
  const dir = mkdtempSync(join(tmpdir(), "prism-"));
  const served = join(dir, name);
  writeFileSync(served, JSON.stringify(document));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const prism = spawn([bin, "mock", "-h", "127.0.0.1", "-p", String(port), "-v", "warn", served], {
    stdout: "ignore",
    stderr: "ignore",
  });
  const stop = () => {
    prism.kill();
    rmSync(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      await fetch(`${url}/`);
      return { url, stop };
    } catch {
      if (Date.now() > deadline || prism.exitCode !== null) {
        stop();
        throw new Error("Prism did not start");
      }
      await Bun.sleep(250);
    }
  }
}
