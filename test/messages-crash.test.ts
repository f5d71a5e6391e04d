import { describe, expect, it } from "bun:test";
import { runCrashTest } from "../scripts/crash-test";

describe("send pipeline under SIGKILL", () => {
  it(
    "hands every queued message to the carrier exactly once across kills and restarts",
    async () => {
      const result = await runCrashTest({ messages: 300, kills: 2 });
      expect(result.recorded).toBe(300);
      expect(result.duplicated).toBe(0);
      expect(result.missing).toBe(0);
      expect(result.handoffs).toBe(300);
      expect(result.unsent).toBe(0);
    },
    { timeout: 240_000 },
  );
});
