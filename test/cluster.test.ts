/**
 * Two nodes on one PostgreSQL database under faults (scripts/cluster-test.ts, small): a campaign
 * through one node, one-off sends to both, an agent's contacts writing through both at once;
 * `kill -9` of a node mid-campaign (restarted, and not), its database sessions cut, the other
 * frozen past its leases in the middle of hand-offs. The audit is SQL on the shared database. Runs
 * on the PostgreSQL pass of `npm test` (and alone, on a cluster of its own); not on SQLite.
 */
import { describe, expect, it } from "bun:test";
import { type ClusterAudit, runClusterTest } from "../scripts/cluster-test";
import { testPostgres, testsRunOn } from "./support/postgres";

const pg = testsRunOn("postgres") ? await testPostgres() : null;
if (pg && "skip" in pg) console.log(`cluster test SKIPPED: ${pg.skip}`);
const adminUrl = pg && "url" in pg ? pg.url : undefined;

/** What every fault run must show: nothing lost, nothing twice, nothing over its limit, no 500. */
function expectClean(audit: ClusterAudit) {
  expect(audit).toMatchObject({
    bootstrapAnnouncements: 1,
    workspaces: 1,
    campaignStatus: "completed",
    campaignMessages: audit.sendable,
    campaignDuplicates: 0,
    wronglySent: 0,
    duplicateHandOffs: 0,
    missingHandOffs: 0,
    unsettled: 0,
    oneOffMessages: audit.oneOffsAccepted,
    oneOffIdsRepeated: 0,
    openThreadDuplicates: 0,
    extraAgentReplies: 0,
    duplicateEvents: 0,
    duplicateWebhookDeliveries: 0,
    capsExceeded: 0,
    throttleExceeded: 0,
    deadJobs: 0,
    serverErrors: 0,
  });
  expect(audit.campaignRecipients).toBeGreaterThanOrEqual(audit.recipients);
  // Every sendable recipient of the import is among those sent (a few blocked ones are not).
  expect(audit.sendable).toBeGreaterThan(audit.recipients * 0.95);
  expect(audit.agentThreads).toBe(5);
  for (const ms of audit.revocationMs) expect(ms).toBeLessThanOrEqual(1000);
}

const RUNS = [
  {
    name: "kill -9 of one (restarted), its sessions cut, the other frozen past its leases mid-hand-off: nothing lost, nothing twice",
    restartKilled: true,
    faults: 4,
  },
  { name: "kill -9 of one, never restarted: the other finishes its work", restartKilled: false, faults: 2 },
];

describe.skipIf(!adminUrl)("two nodes on one PostgreSQL database", () => {
  for (const run of RUNS)
    it(
      run.name,
      async () => {
        const audit = await runClusterTest({
          recipients: 1000,
          oneOffs: 50,
          agentThreads: 5,
          restartKilled: run.restartKilled,
          adminUrl,
        });
        expect(audit.faults).toHaveLength(run.faults);
        expect(audit.oneOffsAccepted).toBe(100);
        // Through one node, through the CLI, and beside a node whose sessions were cut.
        expect(audit.revocationMs).toHaveLength(3);
        expectClean(audit);
      },
      { timeout: 300_000 },
    );
});
