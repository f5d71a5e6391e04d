/**
 * `bun scripts/pg-cluster.ts`: starts a throwaway PostgreSQL (test/support/postgres.ts), prints
 * its URL, and stops and removes it on Ctrl-C. For running a PostgreSQL-ready test file by hand:
 * `OUTREACH_TEST_PG_URL=<url> bun test test/store.test.ts`.
 */
import { PgUnavailable, startPgCluster } from "../test/support/postgres";

try {
  const cluster = await startPgCluster();
  console.log(cluster.url);
  console.log(`(data in ${cluster.dir}; Ctrl-C stops and removes it)`);
  const stop = () => {
    cluster.stop();
    process.exit(0);
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  setInterval(() => {}, 1 << 30);
} catch (error) {
  if (!(error instanceof PgUnavailable)) throw error;
  console.error(`no PostgreSQL: ${error.message}`);
  process.exit(1);
}
