import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

// `npm run build` as the README has it, then the executable alone: what it embeds (migrations,
// the API reference and its script) answers from the binary, from a folder with nothing beside it.

const root = join(import.meta.dir, "..");
let dir: string;
let server: ReturnType<typeof Bun.spawn> | null = null;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "outreach-build-"));
});
afterAll(async () => {
  if (server) {
    server.kill("SIGTERM");
    await server.exited;
  }
  rmSync(dir, { recursive: true, force: true });
});

/** Reads the server's stdout until it says where it listens. */
async function listeningUrl(stdout: ReadableStream<Uint8Array>): Promise<string> {
  const reader = stdout.getReader();
  const decoder = new TextDecoder();
  let text = "";
  for (;;) {
    const { done, value } = await reader.read();
    if (done) throw new Error(`the binary stopped before listening: ${text}`);
    text += decoder.decode(value);
    const url = text.match(/listening on (http:\/\/localhost:\d+)/)?.[1];
    if (url) {
      reader.releaseLock();
      return url;
    }
  }
}

describe("npm run build", () => {
  it("compiles one executable that serves the API, /docs and its script", async () => {
    const outfile = join(dir, "outreach");
    const build = Bun.spawn([process.execPath, "scripts/build.ts"], {
      cwd: root,
      env: { ...process.env, OUTFILE: outfile },
      stdout: "pipe",
      stderr: "pipe",
    });
    const [buildOut, buildErr, buildCode] = await Promise.all([
      new Response(build.stdout).text(),
      new Response(build.stderr).text(),
      build.exited,
    ]);
    expect({ code: buildCode, output: buildCode === 0 ? "" : buildOut + buildErr }).toEqual({
      code: 0,
      output: "",
    });

    server = Bun.spawn([outfile, "serve", "--port", "0", "--db", join(dir, "outreach.db")], {
      cwd: dir,
      env: { PATH: process.env.PATH ?? "", LOG_LEVEL: "error" },
      stdout: "pipe",
      stderr: "inherit",
    });
    const url = await listeningUrl(server.stdout as ReadableStream<Uint8Array>);

    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    const page = await fetch(`${url}/docs`);
    expect([page.status, page.headers.get("content-type")]).toEqual([200, "text/html; charset=utf-8"]);
    expect(await page.text()).toContain("/docs/scalar.js");
    const script = await fetch(`${url}/docs/scalar.js`);
    expect([script.status, script.headers.get("content-type")]).toEqual([
      200,
      "text/javascript; charset=utf-8",
    ]);
    expect(await script.text()).toContain("createApiReference");
    const doc = await (await fetch(`${url}/v1/openapi.json`)).json();
    expect(doc.paths["/v1/contacts"].get.operationId).toBe("listContacts");
  }, 120_000);
});
