import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { join } from "node:path";
import { startTestServer, type TestServer } from "./support/server";

// Spectral with its `spectral:oas` ruleset (.spectral.yaml) on the document the server serves, as
// a user linting it would: no errors, and the few warnings left are printed.

const root = join(import.meta.dir, "..");
const MAX_WARNINGS = 20;
const SEVERITIES = ["error", "warning", "info", "hint"];

interface Finding {
  code: string;
  message: string;
  path: string[];
  severity: number;
}

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => await s.stop());

describe("Spectral on GET /v1/openapi.json", () => {
  it(`finds no errors and at most ${MAX_WARNINGS} warnings`, async () => {
    // Asynchronously: the server under test answers spectral from this same process.
    const spectral = Bun.spawn(
      [
        process.env.NODE ?? "node",
        join(root, "node_modules", "@stoplight", "spectral-cli", "dist", "index.js"),
        "lint",
        `${s.url}/v1/openapi.json`,
        "--ruleset",
        join(root, ".spectral.yaml"),
        "--format",
        "json",
        "--quiet",
      ],
      { cwd: root, stdout: "pipe", stderr: "pipe" },
    );
    const [stdout, stderr, exitCode] = await Promise.all([
      new Response(spectral.stdout).text(),
      new Response(spectral.stderr).text(),
      spectral.exited,
    ]);
    let findings: Finding[];
    try {
      findings = JSON.parse(stdout);
    } catch {
      throw new Error(`spectral did not answer JSON (exit ${exitCode}): ${stdout}${stderr}`);
    }
    for (const f of findings)
      console.log(`spectral ${SEVERITIES[f.severity]} ${f.code} at ${f.path.join(".")}: ${f.message}`);
    const count = (severity: number) => findings.filter((f) => f.severity === severity).length;
    console.log(`spectral: ${count(0)} errors, ${count(1)} warnings`);
    expect(findings.filter((f) => f.severity === 0)).toEqual([]);
    expect(count(1)).toBeLessThanOrEqual(MAX_WARNINGS);
  }, 60_000);
});
