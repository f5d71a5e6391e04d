/**
 * Another connection to a test server's database, as another process would have: raw SQL with
 * `?` parameters on either database (SQLite: a bun:sqlite connection to the file; PostgreSQL: a
 * postgres.js connection, `?` becoming `$1`, `$2`, …). Write SQL both accept (`TRUE`/`FALSE` for
 * booleans). For tests that read what the API does not show, or change rows behind its back.
 */
import { Database } from "bun:sqlite";
import { createPgClient } from "../../src/db/store/postgres";
import type { TestServer } from "./server";

export interface OutsideConnection {
  all<T = Record<string, unknown>>(text: string, ...params: unknown[]): Promise<T[]>;
  run(text: string, ...params: unknown[]): Promise<void>;
  close(): Promise<void>;
}

export function outsideConnection(s: Pick<TestServer, "dbPath" | "databaseUrl">): OutsideConnection {
  if (s.databaseUrl) {
    // int8 and numeric as numbers, as the server reads them.
    const client = createPgClient(s.databaseUrl, { max: 1 });
    const numbered = (text: string) => {
      let n = 0;
      return text.replace(/\?/g, () => `$${++n}`);
    };
    return {
      async all<T>(text: string, ...params: unknown[]) {
        return (await client.unsafe(numbered(text), params as never[])) as unknown as T[];
      },
      async run(text: string, ...params: unknown[]) {
        await client.unsafe(numbered(text), params as never[]);
      },
      async close() {
        await client.end({ timeout: 1 });
      },
    };
  }
  const db = new Database(s.dbPath);
  db.run("PRAGMA busy_timeout = 5000");
  return {
    async all<T>(text: string, ...params: unknown[]) {
      return db.query(text).all(...(params as never[])) as T[];
    },
    async run(text: string, ...params: unknown[]) {
      db.query(text).run(...(params as never[]));
    },
    async close() {
      db.close();
    },
  };
}

/**
 * What the server answers after another connection's write: the next request on SQLite (its
 * caches compare `data_version` before answering), within a second on PostgreSQL (they hear of the
 * write through a notification, docs/postgres.md). `ask` is asked again until `seen` holds.
 */
export async function answerAfterOutsideWrite<T>(
  s: Pick<TestServer, "databaseUrl">,
  ask: () => Promise<T>,
  seen: (answer: T) => boolean,
): Promise<T> {
  let answer = await ask();
  if (!s.databaseUrl) return answer;
  for (const until = Date.now() + 1000; !seen(answer) && Date.now() < until; answer = await ask())
    await Bun.sleep(20);
  return answer;
}
