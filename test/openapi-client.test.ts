import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import openapiTS, { astToString } from "openapi-typescript";
import { startTestServer, type TestServer } from "./support/server";

// A client generated from the served document, as its users make one (openapi-typescript types +
// openapi-fetch): a small program is type-checked with tsc, as it is, then run against the server.

const root = join(import.meta.dir, "..");

/** The user's program: typed calls only, no casts; the one wrong call must not compile. */
const PROGRAM = `import createClient from "openapi-fetch";
import type { paths } from "./schema";

export async function run(baseUrl: string, key: string) {
  const client = createClient<paths>({ baseUrl, headers: { Authorization: \`Bearer \${key}\` } });
  const me = await client.GET("/v1/me");
  const created = await client.POST("/v1/contacts", {
    body: { phone_number: "+12025550199", first_name: "Ada", fields: { plan: "pro" } },
  });
  const page = await client.GET("/v1/contacts", { params: { query: { limit: 10, offset: 0 } } });
  const missing = await client.GET("/v1/contacts/{id}", { params: { path: { id: "no-such-contact" } } });
  return {
    workspace: me.data?.workspace.name,
    scopes: me.data?.scopes,
    created: created.data?.contact.phone_number,
    firstName: created.data?.contact.first_name,
    listed: page.data?.contacts.map((contact) => contact.phone_number),
    limit: page.data?.limit,
    total: page.data?.total,
    missingStatus: missing.response.status,
    missingError: missing.error?.error,
  };
}

export function limitIsAnInteger(client: ReturnType<typeof createClient<paths>>) {
  // @ts-expect-error limit is an integer in the document: a string does not type-check
  return client.GET("/v1/contacts", { params: { query: { limit: "10" } } });
}
`;

const TSCONFIG = {
  compilerOptions: {
    target: "ES2022",
    module: "ESNext",
    moduleResolution: "bundler",
    lib: ["ES2022", "DOM"],
    types: [],
    strict: true,
    noEmit: true,
    skipLibCheck: true,
  },
  files: ["program.ts"],
};

let s: TestServer;
let dir: string;
beforeAll(async () => {
  s = await startTestServer();
  dir = mkdtempSync(join(tmpdir(), "outreach-client-"));
  // The program resolves openapi-fetch as a user's project would, from its node_modules.
  symlinkSync(join(root, "node_modules"), join(dir, "node_modules"));
});
afterAll(async () => {
  await s.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe("a client generated from GET /v1/openapi.json", () => {
  it("type-checks as it is (limit is a number) and answers against the live server", async () => {
    // 1. Generate the types from the served document.
    const document = await (await fetch(`${s.url}/v1/openapi.json`)).json();
    writeFileSync(join(dir, "schema.d.ts"), astToString(await openapiTS(document)));
    writeFileSync(join(dir, "program.ts"), PROGRAM);
    writeFileSync(join(dir, "tsconfig.json"), JSON.stringify(TSCONFIG));

    // 2. Type-check the program with the generated types: no errors, the @ts-expect-error used.
    const tsc = Bun.spawn(
      [process.env.NODE ?? "node", join(root, "node_modules", "typescript", "bin", "tsc"), "-p", dir],
      { cwd: dir, stdout: "pipe", stderr: "pipe" },
    );
    const [out, err, code] = await Promise.all([
      new Response(tsc.stdout).text(),
      new Response(tsc.stderr).text(),
      tsc.exited,
    ]);
    expect(`${out}${err}`.trim()).toBe("");
    expect(code).toBe(0);

    // 3. Run it against the server.
    const { run } = await import(join(dir, "program.ts"));
    const answers = await run(s.url, s.key);
    expect(answers).toEqual({
      workspace: "Default",
      scopes: ["read", "write"],
      created: "+12025550199",
      firstName: "Ada",
      listed: ["+12025550199"],
      limit: 10,
      total: 1,
      missingStatus: 404,
      missingError: "Not found",
    });
  }, 60_000);
});
