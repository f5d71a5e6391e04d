import { createHash } from "node:crypto";
import { readFileSync, readlinkSync } from "node:fs";
import { and, eq, gt, inArray, lt, lte, sql } from "drizzle-orm";
import type { Db, DbOrTx } from "../db/client";
import { claimingRows, inJsonList, lockedForShare } from "../db/dialect";
import { preparedPerConnection } from "../db/prepared";
import { type JobRow, jobs } from "../db/schema";
import { afterCommit } from "../db/store/pg-terminals";
import { newId } from "../lib/ids";
import { JOB_POLICIES, type JobKind, type JobPayloads, type JobPolicy } from "./catalog";

type Wakeup = () => void;
const wakeups = new Set<Wakeup>();

/** In-process workers subscribe here so a new job starts without waiting for the next poll. */
export function onJobEnqueued(wakeup: Wakeup): () => void {
  wakeups.add(wakeup);
  return () => wakeups.delete(wakeup);
}

function wakeAll() {
  for (const wakeup of wakeups) wakeup();
}

export interface EnqueueOptions {
  workspaceId?: string | null;
  runAt?: number;
  /** A second enqueue with the same key is ignored. */
  dedupeKey?: string;
  now?: number;
}

const queueStatements = preparedPerConnection((db) => {
  const ph = sql.placeholder;
  // The lease the caller holds on the job (heldBy, as placeholders).
  const held = and(
    eq(jobs.id, ph("id")),
    eq(jobs.lockedBy, ph("lockedBy")),
    eq(jobs.attempts, ph("attempts")),
  );
  return {
    insert: db
      .insert(jobs)
      .values({
        id: ph("id"),
        workspaceId: ph("workspaceId"),
        kind: ph("kind"),
        payload: ph("payload"),
        status: "queued",
        runAt: ph("runAt"),
        attempts: 0,
        maxAttempts: ph("maxAttempts"),
        dedupeKey: ph("dedupeKey"),
        createdAt: ph("now"),
        updatedAt: ph("now"),
      })
      .onConflictDoNothing()
      .returning({ id: jobs.id })
      .prepare(),
    lease: db
      .update(jobs)
      .set({
        status: "running",
        leaseUntil: sql`${ph("leaseUntil")}`,
        lockedBy: sql`${ph("workerId")}`,
        attempts: sql`${ph("attempts")}`,
        updatedAt: sql`${ph("now")}`,
      })
      .where(eq(jobs.id, ph("id")))
      .prepare(),
    complete: db
      .update(jobs)
      .set({
        status: "done",
        leaseUntil: null,
        finishedAt: sql`${ph("now")}`,
        updatedAt: sql`${ph("now")}`,
        lastError: null,
      })
      .where(held)
      .returning({ id: jobs.id })
      .prepare(),
    payload: db
      .update(jobs)
      .set({ payload: ph("payload"), updatedAt: sql`${ph("now")}` })
      .where(held)
      .returning({ id: jobs.id })
      .prepare(),
  };
});

/** The two lease scans for each worker's set of kinds (a worker's kinds do not change), by the set. */
const leaseScanSets = new Map<string, (db: DbOrTx) => ReturnType<typeof prepareLeaseScans>>();
function prepareLeaseScans(db: DbOrTx, kinds: string[]) {
  const ofKinds = inArray(jobs.kind, kinds);
  const now = sql.placeholder("now");
  return {
    // PostgreSQL: the rows are locked as they are read, skipping those another worker is claiming.
    expired: claimingRows(
      db
        .select()
        .from(jobs)
        .where(and(eq(jobs.status, "running"), lt(jobs.leaseUntil, now), ofKinds))
        .limit(sql.placeholder("limit")),
    ).prepare(),
    queued: claimingRows(
      db
        .select()
        .from(jobs)
        .where(and(eq(jobs.status, "queued"), lte(jobs.runAt, now), ofKinds))
        .orderBy(jobs.runAt)
        .limit(sql.placeholder("limit")),
    ).prepare(),
  };
}
function leaseScansFor(db: DbOrTx, kinds: string[]) {
  const key = JSON.stringify(kinds);
  let scans = leaseScanSets.get(key);
  if (!scans) {
    // Bounded: workers come with a handful of kind sets; a caller varying them gets no caching.
    if (leaseScanSets.size >= 32) return prepareLeaseScans(db, kinds);
    scans = preparedPerConnection((connection: DbOrTx) => prepareLeaseScans(connection, kinds));
    leaseScanSets.set(key, scans);
  }
  return scans(db);
}

/**
 * Adds a job. Call it with the transaction that makes the change causing the work, so both commit
 * or neither does. Returns the job id (or null when `dedupeKey` already existed).
 */
export async function enqueueJob<K extends JobKind>(
  tx: DbOrTx,
  kind: K,
  payload: JobPayloads[K],
  options: EnqueueOptions = {},
): Promise<string | null> {
  return await enqueueAnyJob(tx, kind, payload, JOB_POLICIES[kind], options);
}

/** Untyped enqueue, for kinds registered outside the catalogue (tests). */
export async function enqueueAnyJob(
  tx: DbOrTx,
  kind: string,
  payload: unknown,
  policy: Pick<JobPolicy, "maxAttempts">,
  options: EnqueueOptions = {},
): Promise<string | null> {
  const now = options.now ?? Date.now();
  const id = newId();
  const inserted = await queueStatements(tx).insert.all({
    id,
    workspaceId: options.workspaceId ?? null,
    kind,
    payload,
    runAt: options.runAt ?? now,
    maxAttempts: policy.maxAttempts,
    dedupeKey: options.dedupeKey ?? null,
    now,
  });
  // After the commit: a worker on another connection sees the job only then.
  afterCommit(tx, wakeAll);
  return inserted.length ? id : null;
}

/**
 * Leases up to `limit` due jobs for `workerId`: queued jobs whose time has come, and running jobs
 * whose lease expired (their worker died). Each lease lasts its kind's timeout.
 */
export async function leaseDueJobs(
  db: Db,
  input: {
    workerId: string;
    limit: number;
    now: number;
    /** Only kinds this worker can run: another process's kinds must not crowd out its own. */
    kinds: string[];
    policyOf: (kind: string) => JobPolicy | undefined;
  },
): Promise<JobRow[]> {
  if (input.limit <= 0 || input.kinds.length === 0) return [];
  const { now } = input;
  return await db.transaction(async (tx) => {
    // Two index range scans, not one OR: with the OR, SQLite collects and sorts every due job
    // before the limit applies, so each lease cost O(backlog) (13 ms at 100k queued jobs).
    const scans = leaseScansFor(tx, input.kinds);
    const expired = await scans.expired.all({ now, limit: input.limit });
    const queued =
      expired.length < input.limit
        ? await scans.queued.all({ now, limit: input.limit - expired.length })
        : [];
    const due = [...expired, ...queued];
    const leased: JobRow[] = [];
    for (const job of due) {
      const policy = input.policyOf(job.kind);
      if (!policy) continue;
      const leaseUntil = now + policy.timeoutMs;
      await queueStatements(tx).lease.run({
        id: job.id,
        leaseUntil,
        workerId: input.workerId,
        attempts: job.attempts + 1,
        now,
      });
      leased.push({
        ...job,
        status: "running",
        leaseUntil,
        lockedBy: input.workerId,
        attempts: job.attempts + 1,
      });
    }
    return leased;
  });
}

/** A job's lease as the worker holding it knows it: one attempt of the job, by one worker. */
export type HeldLease = Pick<JobRow, "id" | "lockedBy" | "attempts">;

/** The lease this worker holds on the job: only its holder may finish it. */
function heldBy(job: HeldLease) {
  return and(eq(jobs.id, job.id), eq(jobs.lockedBy, job.lockedBy ?? ""), eq(jobs.attempts, job.attempts));
}

/** The placeholders of `held` (queueStatements) for the lease this worker holds on the job. */
function heldParams(job: HeldLease) {
  return { id: job.id, lockedBy: job.lockedBy ?? "", attempts: job.attempts };
}

/** The key of a lease in `holdLeases`' answer (its `heldParams`, as one string). */
export function leaseKey(lease: HeldLease): string {
  const { id, lockedBy, attempts } = heldParams(lease);
  return `${id}\u0000${lockedBy}\u0000${attempts}`;
}

/**
 * Which of `leases` their workers still hold (`leaseKey`s), each kept held until the caller's
 * transaction ends: on PostgreSQL the job rows are locked FOR SHARE, so no other worker's claim
 * takes one meanwhile (it passes locked rows by); on SQLite the caller's write transaction already
 * excludes every claim. For an effect written in that transaction that must not also be made by a
 * worker that took the job after the caller's process was frozen past its lease (a simulated
 * carrier's ledger row). Run it inside a transaction.
 */
export async function holdLeases(tx: DbOrTx, leases: readonly HeldLease[]): Promise<Set<string>> {
  const held = new Set<string>();
  if (leases.length === 0) return held;
  // Rows are locked in id order (the ORDER BY), whatever the order of `leases`.
  const ids = [...new Set(leases.map((lease) => lease.id))];
  const rows = await lockedForShare(
    tx
      .select({ id: jobs.id, lockedBy: jobs.lockedBy, attempts: jobs.attempts })
      .from(jobs)
      .where(inJsonList(jobs.id, ids))
      .orderBy(jobs.id),
  ).all();
  for (const row of rows) if (row.lockedBy !== null) held.add(leaseKey(row));
  return held;
}

/** Marks a leased job done. Returns false when the lease was lost (another worker took the job). */
export async function completeJob(tx: DbOrTx, job: JobRow, now = Date.now()): Promise<boolean> {
  const done = await queueStatements(tx).complete.all({ ...heldParams(job), now });
  return done.length > 0;
}

/**
 * Replaces the payload of a job this worker holds, for what its later attempts must know (a send
 * batch's hand-off marker). Returns false when the lease was lost (another worker took the job).
 * Kept through failures, retries and released leases: only the job's own attempts write it.
 */
export async function updateLeasedPayload(db: DbOrTx, job: JobRow, payload: unknown, now = Date.now()) {
  const updated = await queueStatements(db).payload.all({ ...heldParams(job), payload, now });
  return updated.length > 0;
}

/** Records a failed attempt: retried after the kind's backoff, or dead after its last attempt. */
export async function failJob(db: DbOrTx, job: JobRow, error: string, policy: JobPolicy, now = Date.now()) {
  const dead = job.attempts >= job.maxAttempts;
  await db
    .update(jobs)
    .set({
      status: dead ? "dead" : "queued",
      runAt: dead ? job.runAt : now + policy.backoffMs(job.attempts),
      leaseUntil: null,
      lockedBy: null,
      lastError: error.slice(0, 2000),
      finishedAt: dead ? now : null,
      updatedAt: now,
    })
    .where(heldBy(job))
    .run();
}

/** Puts a job back to run at `runAt` without counting the attempt. */
export async function rescheduleJob(db: DbOrTx, job: JobRow, runAt: number, now = Date.now()) {
  await db
    .update(jobs)
    .set({
      status: "queued",
      runAt,
      leaseUntil: null,
      lockedBy: null,
      attempts: job.attempts - 1,
      updatedAt: now,
    })
    .where(heldBy(job))
    .run();
}

/** On graceful shutdown: hands this worker's unfinished jobs back, attempts uncounted. */
export async function releaseLeases(db: Db, workerId: string, now = Date.now()): Promise<number> {
  const released = await db
    .update(jobs)
    .set({
      status: "queued",
      leaseUntil: null,
      lockedBy: null,
      attempts: sql`${jobs.attempts} - 1`,
      updatedAt: now,
    })
    .where(and(eq(jobs.lockedBy, workerId), eq(jobs.status, "running")))
    .returning({ id: jobs.id })
    .all();
  return released.length;
}

/**
 * A worker's id names its machine and process: `worker-<host>-<machine>-<pid>-<suffix>`, where
 * `machine` tells apart what a hostname does not: two hosts (their kernels' boot ids differ) and
 * two containers of one host (their pid namespaces differ, so a pid seen in one means nothing in
 * the other, even when they share a hostname).
 */
export function workerIdFor(host: string, pid: number, machine = machineToken()): string {
  return `worker-${host}-${machine}-${pid}-${crypto.randomUUID().slice(0, 8)}`;
}

const WORKER_ID_RE = /^worker-(.+)-([0-9a-f]{12})-(\d+)-[0-9a-f]{8}$/;

let thisMachine: string | null = null;

/**
 * This process's machine and pid namespace, hashed: processes with the same token can see each
 * other's pids. Where neither file exists (not Linux), the hostname alone stands for the machine.
 */
export function machineToken(): string {
  if (thisMachine !== null) return thisMachine;
  const read = (path: string, link = false) => {
    try {
      return link ? readlinkSync(path) : readFileSync(path, "utf8").trim();
    } catch {
      return "";
    }
  };
  const seen = `${read("/proc/sys/kernel/random/boot_id")}|${read("/proc/self/ns/pid", true)}`;
  thisMachine = createHash("sha256").update(seen).digest("hex").slice(0, 12);
  return thisMachine;
}

/** Whether a process with this id exists (signal 0: a permission error still means it exists). */
function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Leases whose holder ran on this machine (`host`, and the same machine token: not a twin
 * container or another host of that name) and whose process is gone (killed, crashed)
 * expire now instead of at their timeout, so their jobs are taken again at once, the attempt
 * counted as any expired lease's is. A holder whose process still exists, or on another machine,
 * keeps its lease. Returns how many leases expired.
 */
export async function expireLeasesOfGoneWorkers(
  db: Db,
  input: { host: string; now: number },
): Promise<number> {
  const holders = await db
    .selectDistinct({ lockedBy: jobs.lockedBy })
    .from(jobs)
    .where(and(eq(jobs.status, "running"), gt(jobs.leaseUntil, input.now)))
    .all();
  const gone = holders.flatMap(({ lockedBy }) => {
    const match = lockedBy ? WORKER_ID_RE.exec(lockedBy) : null;
    if (!match || match[1] !== input.host || match[2] !== machineToken()) return [];
    const pid = Number(match[3]);
    return pid !== process.pid && !processExists(pid) ? [lockedBy as string] : [];
  });
  if (gone.length === 0) return 0;
  return (
    await db
      .update(jobs)
      .set({ leaseUntil: input.now, updatedAt: input.now })
      .where(and(eq(jobs.status, "running"), inJsonList(jobs.lockedBy, gone)))
      .returning({ id: jobs.id })
      .all()
  ).length;
}

/** Queue depth by status, for /metrics. */
export async function queueDepth(db: Db): Promise<Record<string, number>> {
  const rows = await db
    .select({ status: jobs.status, n: sql<number>`count(*)`.mapWith(Number) })
    .from(jobs)
    .where(inArray(jobs.status, ["queued", "running", "dead"]))
    .groupBy(jobs.status)
    .all();
  const depth: Record<string, number> = { queued: 0, running: 0, dead: 0 };
  for (const row of rows) depth[row.status] = Number(row.n);
  return depth;
}

export async function getJob(db: Db, id: string): Promise<JobRow | undefined> {
  return await db.select().from(jobs).where(eq(jobs.id, id)).get();
}

/**
 * Brings a queued job (found by its dedupe key) forward to `now` when it was due later: e.g. a
 * flow's dispatcher asleep until its next wait ends, when a contact is enrolled. A running job is
 * left alone (it looks again within its own short sleep).
 */
export async function wakeJob(tx: DbOrTx, dedupeKey: string, now = Date.now()) {
  const woken = await tx
    .update(jobs)
    .set({ runAt: now, updatedAt: now })
    .where(and(eq(jobs.dedupeKey, dedupeKey), eq(jobs.status, "queued"), gt(jobs.runAt, now)))
    .returning({ id: jobs.id })
    .all();
  if (woken.length) afterCommit(tx, wakeAll);
}
