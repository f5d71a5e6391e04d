import { describe, expect, it } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { servedDocument, TYPES_FILE, typesFor } from "../scripts/dashboard-types";

// The dashboard's types come from the served OpenAPI document (STYLE.md, wave 3): the committed
// module must be what scripts/dashboard-types.ts writes today.
describe("src/dashboard/api-types.generated.ts", () => {
  it("matches GET /v1/openapi.json (run scripts/dashboard-types.ts after changing a schema)", async () => {
    const expected = await typesFor(await servedDocument());
    expect(readFileSync(TYPES_FILE, "utf8") === expected).toBe(true);
  }, 60_000);
});

// Every page reads the API through the typed client: no `any`, and no lint suppression that allows one.
describe("src/dashboard", () => {
  const root = join(import.meta.dir, "..", "src", "dashboard");
  const sources = (readdirSync(root, { recursive: true }) as string[])
    .filter((f) => /\.tsx?$/.test(f) && !f.endsWith(".generated.ts"))
    .map((f) => [f, readFileSync(join(root, f), "utf8")] as const);

  it("has source files to check", () => {
    expect(sources.length).toBeGreaterThan(20);
  });

  it("declares no any (`: any`, `as any`, `<any>`, `Json = any`) and suppresses no noExplicitAny", () => {
    const offending = sources
      .filter(([, text]) =>
        /(:\s*any\s*([;,=|&[\]>}]|\)\s*(=>|[:{]))|,\s*any\s*>|\bas any\b|<any\b|=\s*any;|noExplicitAny)/.test(
          text,
        ),
      )
      .map(([file]) => file);
    expect(offending).toEqual([]);
  });
});
