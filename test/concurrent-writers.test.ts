import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { join } from "node:path";
import { spawn } from "bun";
import { startTestServer, type TestServer } from "./support/server";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => await s.stop());

describe("several processes writing to one database", () => {
  it("take turns: no write of the server or of the other process fails with 'database is locked'", async () => {
    const child = spawn(
      [process.execPath, join(import.meta.dir, "support/writer-child.ts"), s.dbPath, s.workspaceId, "400"],
      { stdout: "pipe", stderr: "pipe", env: { ...process.env, ...s.cliEnv } },
    );
    const statuses: number[] = [];
    let i = 0;
    const client = async () => {
      while (child.exitCode === null && i < 2000) {
        const n = i++;
        const answer = await s.api("POST", "/v1/contacts", {
          phone_number: `+1415777${String(n).padStart(4, "0")}`,
        });
        statuses.push(answer.status);
      }
    };
    await Promise.all(Array.from({ length: 8 }, client));
    const [out, err] = [await new Response(child.stdout).text(), await new Response(child.stderr).text()];
    await child.exited;
    expect({ exit: child.exitCode, out: out.trim(), err: err.includes("locked") ? err : "" }).toEqual({
      exit: 0,
      out: "done 400",
      err: "",
    });
    expect(statuses.length).toBeGreaterThan(0);
    expect(statuses.filter((status) => status !== 200)).toEqual([]);
  });
});
