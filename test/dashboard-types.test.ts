import { describe, expect, it } from "bun:test";
import { readFileSync } from "node:fs";
import { servedDocument, TYPES_FILE, typesFor } from "../scripts/dashboard-types";

// The dashboard's types come from the served OpenAPI document (STYLE.md, wave 3): the committed
// module must be what scripts/dashboard-types.ts writes today.
describe("src/dashboard/api-types.generated.ts", () => {
  it("matches GET /v1/openapi.json (run scripts/dashboard-types.ts after changing a schema)", async () => {
    const expected = await typesFor(await servedDocument());
    expect(readFileSync(TYPES_FILE, "utf8") === expected).toBe(true);
  }, 60_000);
});
