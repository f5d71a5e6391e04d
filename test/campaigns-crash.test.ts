import { describe, expect, it } from "bun:test";
import { campaignLedgerExact, runCampaignCrashTest } from "../scripts/crash-test";

describe("campaigns under SIGKILL", () => {
  it(
    "sends every sendable recipient exactly one message and completes, killed once between resolution chunks and once mid-dispatch",
    async () => {
      const result = await runCampaignCrashTest({ recipients: 2500, kills: 2 });
      // The first kill lands after the first resolution chunk (500 of 2,500), the second after hand-offs began.
      expect(result.killedAt[0].resolved).toBeLessThan(2500);
      expect(result.killedAt[1].handoffs).toBeGreaterThan(0);
      expect(result).toMatchObject({
        status: "completed",
        resolved: 2500,
        missing: 0,
        duplicated: 0,
        wronglySent: 0,
      });
      expect(result.handoffs).toBe(result.sendable);
      expect(campaignLedgerExact(result)).toBe(true);
    },
    { timeout: 240_000 },
  );
});
