import { and, desc, eq, isNull, sql } from "drizzle-orm";
import { changeWatchOf, type Db, type DbOrTx, writeSoonUnlessBusy } from "../../db/client";
import { CommitCheckedCaches } from "../../db/commit-watch";
import { newestFirstPage } from "../../db/paging";
import { type ApiKeyRow, apiKeys, workspaces } from "../../db/schema";
import { AppError, notFound } from "../../lib/errors";
import { isUuid, newId } from "../../lib/ids";
import { generateApiKey, hashApiKey, isWellFormedApiKey, sameDigest } from "../../lib/keys";
import { toIso } from "../../lib/time";

export const SCOPES = ["read", "write"] as const;
export type Scope = (typeof SCOPES)[number];

export interface CreatedKey {
  id: string;
  key: string;
  prefix: string;
  name: string;
  scopes: Scope[];
  workspace_id: string;
  created_at: number;
}

/** Creates a key for a workspace; the plain key is returned once and never stored. */
export async function createApiKey(
  db: DbOrTx,
  input: { workspaceId: string; name?: string; scopes?: Scope[]; now?: number },
): Promise<CreatedKey> {
  const scopes = input.scopes?.length ? [...new Set(input.scopes)] : ["read", "write"];
  for (const scope of scopes) {
    if (!SCOPES.includes(scope as Scope))
      throw new AppError("validation", `scopes must be one of ${SCOPES.join(", ")}`);
  }
  const exists = await db
    .select({ id: workspaces.id })
    .from(workspaces)
    .where(eq(workspaces.id, input.workspaceId))
    .get();
  if (!exists) throw notFound();
  const generated = generateApiKey();
  const now = input.now ?? Date.now();
  const id = newId();
  const name = input.name ?? "API key";
  await db
    .insert(apiKeys)
    .values({
      id,
      workspaceId: input.workspaceId,
      name,
      prefix: generated.prefix,
      hash: generated.hash,
      scopes,
      createdAt: now,
    })
    .run();
  return {
    id,
    key: generated.key,
    prefix: generated.prefix,
    name,
    scopes: scopes as Scope[],
    workspace_id: input.workspaceId,
    created_at: now,
  };
}

export async function listApiKeys(db: DbOrTx, workspaceId: string): Promise<ApiKeyRow[]> {
  return await db
    .select()
    .from(apiKeys)
    .where(eq(apiKeys.workspaceId, workspaceId))
    .orderBy(desc(apiKeys.createdAt))
    .all();
}

/** A key as the API lists it: never the key itself, nor its hash. */
export interface ApiKeyRecord {
  id: string;
  name: string;
  prefix: string;
  scopes: Scope[];
  last_used_at: string | null;
  created_at: string;
  revoked_at: string | null;
}

export function toApiKeyRecord(row: ApiKeyRow): ApiKeyRecord {
  return {
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    scopes: row.scopes as Scope[],
    last_used_at: toIso(row.lastUsedAt),
    created_at: toIso(row.createdAt) as string,
    revoked_at: toIso(row.revokedAt),
  };
}

/** One page of a workspace's keys, revoked ones included, newest first. */
export async function listApiKeyPage(
  db: DbOrTx,
  workspaceId: string,
  page: { limit: number; offset: number },
): Promise<{ api_keys: ApiKeyRecord[]; total: number }> {
  const { rows, total } = await newestFirstPage(
    db,
    apiKeys,
    eq(apiKeys.workspaceId, workspaceId),
    [apiKeys.createdAt, apiKeys.id],
    page,
  );
  return { api_keys: rows.map(toApiKeyRecord), total };
}

/** Revokes a key; effective on the very next request (auth reads the row every time). */
export async function revokeApiKey(
  db: DbOrTx,
  keyId: string,
  workspaceId?: string,
  now = Date.now(),
): Promise<ApiKeyRow> {
  if (workspaceId && !isUuid(keyId)) throw notFound();
  const where = workspaceId
    ? and(eq(apiKeys.id, keyId), eq(apiKeys.workspaceId, workspaceId))
    : eq(apiKeys.id, keyId);
  const row = await db.select().from(apiKeys).where(where).get();
  if (!row) throw notFound();
  if (row.revokedAt === null) {
    await db.update(apiKeys).set({ revokedAt: now }).where(eq(apiKeys.id, keyId)).run();
    row.revokedAt = now;
    invalidateKeyCache();
  }
  return row;
}

/** A request authenticated by an API key (`Authorization: Bearer opk_...`). */
export interface AuthenticatedKey {
  kind: "key";
  keyId: string;
  keyName: string;
  prefix: string;
  scopes: Scope[];
  workspaceId: string;
  workspaceName: string;
}

/** `last_used_at` is written at most this often per key, so authentication stays a read. */
const LAST_USED_GRANULARITY_MS = 60_000;

/** Caches of live authenticators, cleared whenever this process changes keys or workspaces. */
const keyCaches = new CommitCheckedCaches<string, CachedKey>();

/** Forgets every cached key resolution in this process (after a revocation or a rename). */
export function invalidateKeyCache() {
  keyCaches.clear();
}

interface CachedKey extends AuthenticatedKey {
  hash: string;
  lastUsedAt: number | null;
}

/**
 * Resolves a presented key to its workspace. Resolutions are cached, but the cache can never
 * serve a stale answer: it is emptied whenever SQLite's `data_version` shows that another
 * connection (a CLI `keys revoke`, another server process) committed anything — checked before
 * any request of an event-loop turn is answered — and whenever this process revokes a key or
 * renames a workspace (`invalidateKeyCache`). Only live keys are cached
 * (nothing is remembered about a wrong key). Returns null for anything that is not a live key.
 */
export function createKeyAuthenticator(db: Db) {
  const byHash = db
    .select({
      keyId: apiKeys.id,
      keyName: apiKeys.name,
      prefix: apiKeys.prefix,
      hash: apiKeys.hash,
      scopes: apiKeys.scopes,
      lastUsedAt: apiKeys.lastUsedAt,
      workspaceId: workspaces.id,
      workspaceName: workspaces.name,
    })
    .from(apiKeys)
    .innerJoin(workspaces, eq(workspaces.id, apiKeys.workspaceId))
    .where(and(eq(apiKeys.hash, sql.placeholder("hash")), isNull(apiKeys.revokedAt)))
    .prepare();
  const touch = db
    .update(apiKeys)
    .set({ lastUsedAt: sql`${sql.placeholder("now")}` })
    .where(eq(apiKeys.id, sql.placeholder("id")))
    .prepare();
  // Emptied whenever another connection or process commits (a revoke by the CLI, say).
  const cache = keyCaches.create(changeWatchOf(db), 10_000);

  /**
   * Records a use (see below). The refresh runs only when nothing else is writing on this
   * connection (else it is skipped, as when another connection holds the lock).
   */
  function touched(entry: CachedKey, now: number): void | Promise<void> {
    const id = entry.keyId;
    if (entry.lastUsedAt === null) {
      // A key's first use is recorded before it is answered, waiting for another writer once in
      // the key's life: a key shown as never used after it was used would mislead.
      return Promise.resolve()
        .then(() => touch.run({ id, now }))
        .then(
          () => {
            entry.lastUsedAt = now;
          },
          () => {
            // A failure must not fail the request; retried a minute later.
            entry.lastUsedAt = now;
          },
        );
    }
    // A refresh (once a minute) never waits (the background thread may be sending a campaign):
    // while the database is busy, a later request records it.
    try {
      const ran = writeSoonUnlessBusy(db, () => touch.run({ id, now }));
      if (ran === true) entry.lastUsedAt = now;
      else if (ran instanceof Promise)
        void ran.then(
          (done) => {
            if (done) entry.lastUsedAt = now;
          },
          () => {},
        );
    } catch {
      // Any other failure must not fail the request either; retried a minute later.
      entry.lastUsedAt = now;
    }
  }

  /**
   * A cached key (its last use recent) is answered at once, synchronously; a lookup or a first use
   * answers with a promise.
   */
  return function authenticate(
    presented: string,
    now = Date.now(),
  ): AuthenticatedKey | null | Promise<AuthenticatedKey | null> {
    // Keyed by the presented key itself: a hit skips the checksum and the hash; a miss pays both.
    const entry = cache.get(presented);
    if (entry) return use(entry, now);
    if (!isWellFormedApiKey(presented)) return null;
    const hash = hashApiKey(presented);
    return Promise.resolve(byHash.get({ hash })).then((row) => {
      if (!row || !sameDigest(row.hash, hash)) return null;
      const found: CachedKey = { ...row, kind: "key", scopes: row.scopes as Scope[] };
      cache.set(presented, found);
      return use(found, now);
    });
  };

  function use(entry: CachedKey, now: number): AuthenticatedKey | Promise<AuthenticatedKey> {
    if (entry.lastUsedAt !== null && now - entry.lastUsedAt <= LAST_USED_GRANULARITY_MS) return entry;
    const pending = touched(entry, now);
    return pending instanceof Promise ? pending.then(() => entry) : entry;
  }
}
