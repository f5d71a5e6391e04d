/**
 * Two nodes on one PostgreSQL database, under faults: `outreach serve` twice on one database, a
 * campaign launched through one node, one-off sends to both, inbound replies for agent threads on
 * both at once, and meanwhile `kill -9` of a node mid-campaign (restarted, or not), `SIGSTOP` of a
 * node past its leases in the middle of hand-offs then `SIGCONT`, and a node's database sessions
 * cut. Then the database is audited in SQL: no message, call, agent reply, event or webhook
 * delivery twice; every sendable recipient exactly once; daily caps and the throttle kept; no 500.
 *
 *   node_modules/.bin/bun scripts/cluster-test.ts [--recipients 10000] [--restart false]
 *
 * Needs Debian's postgresql (a throwaway cluster is started, unless CLUSTER_PG_URL names an admin
 * URL). Exits 0 when the audit is clean. test/cluster.test.ts runs a small version on the
 * PostgreSQL pass of `npm test`.
 */

import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { spawn } from "bun";
import postgres from "postgres";
import { dropDatabase, freshDatabase, startPgCluster } from "../test/support/postgres";
import { type ServeNode, startServeNode } from "./bench/support";

const root = join(import.meta.dir, "..");
const bun = join(root, "node_modules", ".bin", "bun");

export interface ClusterTestOptions {
  recipients: number;
  /** One-off sends posted to each node. */
  oneOffs?: number;
  /** Contacts writing to the agent's number through both nodes at once. */
  agentThreads?: number;
  /** Whether the node killed mid-campaign is started again (else the other finishes alone). */
  restartKilled?: boolean;
  /** An admin URL of a running PostgreSQL (a database of its own is made there); else one is started. */
  adminUrl?: string;
  log?: (line: string) => void;
}

export interface ClusterAudit {
  recipients: number;
  /**
   * Recipients the campaign resolved (the imported audience, and contacts that one-off sends made
   * before resolution reached them), and those of them neither opted out nor suppressed.
   */
  campaignRecipients: number;
  sendable: number;
  seconds: number;
  /** Sends the launch took, from first hand-off to last (for throughput). */
  campaignSeconds: number;
  bootstrapAnnouncements: number;
  workspaces: number;
  campaignStatus: string;
  /** Campaign messages, and campaign recipients with more than one message. */
  campaignMessages: number;
  campaignDuplicates: number;
  /** Blocked recipients (suppressed, opted out) that got a message anyway. */
  wronglySent: number;
  /** Ledger rows whose message was handed off more than once, and outbound messages never handed off. */
  duplicateHandOffs: number;
  missingHandOffs: number;
  unsettled: number;
  /** One-off sends answered 200, their distinct message ids, and messages of theirs on record. */
  oneOffsAccepted: number;
  oneOffMessages: number;
  oneOffIdsRepeated: number;
  /** Conversations open twice for one contact; agent replies beyond one per burst. */
  openThreadDuplicates: number;
  agentThreads: number;
  agentReplies: number;
  extraAgentReplies: number;
  /** message.sent / message.delivered events and webhook deliveries emitted twice for one message. */
  duplicateEvents: number;
  duplicateWebhookDeliveries: number;
  /** Webhook POSTs the receiver saw twice (allowed: delivery is at least once; reported). */
  webhookRedeliveries: number;
  /** Numbers whose day went over their daily_limit; fixed windows over the throttle. */
  capsExceeded: number;
  throttleExceeded: number;
  deadJobs: number;
  /** Answers of 500 seen by the clients; 503s (a node's database sessions cut) reported apart. */
  serverErrors: number;
  unavailable: number;
  /**
   * How long other nodes kept accepting a key revoked (ms): through one node, through the CLI (both
   * nodes), and through one node while the other reconnects after its sessions were cut.
   */
  revocationMs: number[];
  faults: string[];
}

type Node = ServeNode;

type Json = Record<string, unknown> & { ok?: boolean };

const DELIVERY_MS = 2_000;
/**
 * Leases at a fifth by default (a send batch 6 s, a dispatch step 6 s): a frozen node loses its
 * jobs sooner. The freeze outlasts the longest lease of the run by half (CLUSTER_LEASE_SCALE=1:
 * the shipped leases, a 45 s freeze).
 */
const LEASE_SCALE = process.env.CLUSTER_LEASE_SCALE ?? "0.2";
const FREEZE_MS = Math.round(30_000 * Number(LEASE_SCALE) * 1.5);

export async function runClusterTest(options: ClusterTestOptions): Promise<ClusterAudit> {
  const say = options.log ?? (() => {});
  const started = performance.now();
  const dir = mkdtempSync(join(tmpdir(), "outreach-cluster-"));
  const cluster = options.adminUrl ? null : await startPgCluster();
  const adminUrl = options.adminUrl ?? (cluster as { url: string }).url;
  const databaseUrl = await freshDatabase(adminUrl);
  const sql = postgres(databaseUrl, { max: 2, onnotice: () => {} });
  const nodes: Node[] = [];
  const faults: string[] = [];
  let serverErrors = 0;
  let unavailable = 0;
  try {
    // 1. Two nodes started together on an empty database: migrations and the first boot run once.
    const [a, b] = await Promise.all([startNode("a", databaseUrl, dir), startNode("b", databaseUrl, dir)]);
    nodes.push(a, b);
    const announcements = [a, b].map(
      (n) => readFileSync(n.logPath, "utf8").match(/opk_[0-9A-Za-z]{36}/)?.[0],
    );
    const key = announcements.find(Boolean);
    if (!key) throw new Error("neither node announced a first key");
    const headers = { authorization: `Bearer ${key}`, "content-type": "application/json" };
    const call = async (
      node: Node,
      method: string,
      path: string,
      body?: unknown,
      extra: Record<string, string> = {},
    ) => {
      const res = await fetch(`${node.url}${path}`, {
        method,
        headers: { ...headers, ...extra },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      if (res.status >= 500) {
        if (res.status === 503) unavailable++;
        else serverErrors++;
      }
      let json: Json = {};
      try {
        json = JSON.parse(text) as Json;
      } catch {
        // not JSON
      }
      return { status: res.status, json };
    };
    const must = async (node: Node, method: string, path: string, body?: unknown) => {
      // As a client does, a 503 (the node's database sessions were just cut) is tried again.
      for (let attempt = 0; ; attempt++) {
        const { status, json } = await call(node, method, path, body);
        if (status === 503 && attempt < 10) {
          await Bun.sleep(200);
          continue;
        }
        if (status !== 200)
          throw new Error(`${method} ${path} on ${node.name} answered ${status}: ${JSON.stringify(json)}`);
        return json;
      }
    };

    // 2. The workspace, through both nodes.
    await must(a, "PATCH", "/v1/settings", { one_off_daily_limit: null });
    const pool = (await must(a, "POST", "/v1/pools", { name: "Campaign" })).pool as { id: string };
    const poolNumbers = ["+14155550101", "+14155550102", "+14155550103"];
    const dailyLimit = Math.ceil(options.recipients / 2);
    await must(a, "POST", "/v1/numbers", { numbers: poolNumbers, pool_id: pool.id, daily_limit: dailyLimit });
    const oneOffFrom = "+14155550110";
    const agentNumber = "+14155550120";
    await must(b, "POST", "/v1/numbers", { numbers: [oneOffFrom, agentNumber] });
    const agentNumberId = (
      ((await must(b, "GET", "/v1/numbers?limit=200")).numbers as { id: string; number: string }[]).find(
        (n) => n.number === agentNumber,
      ) as { id: string }
    ).id;
    const agent = (
      await must(b, "POST", "/v1/agents", {
        name: "Desk",
        system_prompt: "You are the front desk of Sunny Dental.",
        sms: {
          knowledge: "Sunny Dental is open Monday to Friday from 9am to 5pm.",
          // Both nodes' inbound messages of one burst land before the reply is written.
          reply_delay_min_sec: 2,
          reply_delay_max_sec: 2,
          quiet_start_hour: 0,
          quiet_end_hour: 0,
        },
      })
    ).agent as { id: string };
    await must(b, "PATCH", `/v1/numbers/${agentNumberId}`, { agent_id: agent.id });

    const receiver = startReceiver();
    await must(a, "POST", "/v1/webhooks", {
      url: receiver.url,
      events: ["message.sent", "message.delivered"],
    });

    const people = Array.from({ length: options.recipients }, (_, i) => ({
      phone_number: `+1415${String(3000000 + i).padStart(7, "0")}`,
      first_name: `P${i}`,
      opted_in: i % 50 !== 7,
    }));
    for (let i = 0; i < people.length; i += 5000)
      await must(a, "POST", "/v1/contacts/import", { contacts: people.slice(i, i + 5000) });
    let blocked = people.filter((p) => !p.opted_in).length;
    for (let i = 3; i < people.length; i += 100) {
      await must(i % 200 === 3 ? a : b, "POST", "/v1/suppression", {
        phone_number: people[i].phone_number,
        reason: "complaint",
      });
      blocked++;
    }
    const sendable = people.length - blocked;
    const segment = (await must(a, "POST", "/v1/segments", { name: "Everyone", rules: { all: [] } }))
      .segment as {
      id: string;
    };
    // Two throttle windows: most of the sends, a minute's wait, the rest (faults land in both).
    const throttle = Math.ceil(options.recipients * 0.6);
    const campaign = (
      await must(a, "POST", "/v1/campaigns", {
        name: "Cluster",
        message: { body: "Hello {{first_name}}, reply STOP to opt out" },
        audience: { segment_ids: [segment.id] },
        pool_id: pool.id,
        throttle_per_minute: throttle,
        quiet_hours: { enabled: false },
      })
    ).campaign as { id: string };

    // 3. Launch through B; one-off sends and agent conversations on both nodes meanwhile.
    await must(b, "POST", `/v1/campaigns/${campaign.id}/launch`);
    const launchedAt = performance.now();
    say(`launched ${options.recipients} recipients (about ${sendable} sendable) through b`);
    const live = () => nodes.filter((n) => n.proc.exitCode === null && n.proc.signalCode === null);

    const oneOffs = options.oneOffs ?? 100;
    const accepted = new Map<string, string>();
    const postOneOff = async (i: number) => {
      const idempotencyKey = `one-off-${i}`;
      const body = {
        to: `+1415${String(4000000 + i).padStart(7, "0")}`,
        from: oneOffFrom,
        body: `one-off ${i}`,
      };
      // As a client does: the same key again, on another node, after a 5xx or a dropped
      // connection; after a 409 (a killed node's request holds the key until its claim goes stale,
      // 60 s), a second later.
      const deadline = performance.now() + 120_000;
      for (let attempt = 0; performance.now() < deadline; attempt++) {
        const candidates = live();
        const node = candidates[(i + attempt) % candidates.length];
        let status = 0;
        try {
          const answer = await call(node, "POST", "/v1/messages", body, {
            "idempotency-key": idempotencyKey,
          });
          status = answer.status;
          if (status === 200) {
            accepted.set(idempotencyKey, (answer.json.message as { id: string }).id);
            return;
          }
          if (status < 500 && status !== 409)
            throw new Error(`one-off ${i}: ${status} ${JSON.stringify(answer.json)}`);
        } catch (error) {
          if (String(error).includes("one-off")) throw error;
        }
        await Bun.sleep(status === 409 ? 1000 : 200);
      }
      throw new Error(`one-off ${i} never accepted`);
    };
    const agentContacts = options.agentThreads ?? 10;
    const bursts = async () => {
      for (let i = 0; i < agentContacts; i++) {
        const from = `+1415${String(5000000 + i).padStart(7, "0")}`;
        // The same contact writes through both nodes at once: one thread, one reply.
        await Promise.all(
          [a, b].map((node, n) =>
            must(node, "POST", "/v1/sandbox/inbound", {
              from,
              to: agentNumber,
              body: `Are you open on Monday? (${n})`,
            }),
          ),
        );
      }
    };
    let next = 0;
    const oneOffWorkers = Array.from({ length: 4 }, async () => {
      while (next < oneOffs * 2) {
        const i = next++;
        await postOneOff(i);
        await Bun.sleep(100);
      }
    });
    const conversations = bursts();

    // 4. A key made and revoked through one node is refused by the other within a second.
    const revocationMs = [await revocation(a, b, must)];
    // And through the CLI: both nodes refuse it within a second of the command's exit.
    revocationMs.push(await revocation(a, [a, b], must, databaseUrl));

    // 5. Faults. a. kill -9 of node A once a fifth of the first window is handed off.
    const campaignHandOffs = async () =>
      Number(
        (
          await sql`SELECT count(*)::int AS n FROM sandbox_sends s JOIN messages m ON m.id = s.message_id
                    WHERE m.campaign_id = ${campaign.id}`
        )[0].n,
      );
    await waitFor(async () => (await campaignHandOffs()) >= throttle / 5, 60_000);
    a.proc.kill("SIGKILL");
    await a.proc.exited;
    faults.push(`kill -9 a at ${await campaignHandOffs()} campaign hand-offs`);
    say(faults.at(-1) as string);
    let a2: Node | null = null;
    if (options.restartKilled !== false) {
      await Bun.sleep(1000);
      a2 = await startNode("a2", databaseUrl, dir);
      nodes.push(a2);
      faults.push("a restarted after 1 s");
    }

    // b. The cut: every session of one node ends (the restarted one, else b); a key revoked
    //    through the other node meanwhile is refused by it once it has reconnected.
    const cutNode = a2 ?? b;
    const cut = await sql`SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity
                          WHERE application_name = ${`outreach ${cutNode.proc.pid}@${hostname()}`}`;
    faults.push(`cut ${cut[0].n} database sessions of ${cutNode.name}`);
    say(faults.at(-1) as string);
    revocationMs.push(await revocation(live().find((n) => n !== cutNode) ?? cutNode, cutNode, must));

    // d. The freeze: B stopped in the middle of the second window's hand-offs, past its leases.
    const firstWindowDone = await campaignHandOffs();
    await waitFor(async () => (await campaignHandOffs()) > Math.max(firstWindowDone, throttle) + 20, 120_000);
    const frozen = a2 ? b : null;
    if (frozen) {
      frozen.proc.kill("SIGSTOP");
      faults.push(`SIGSTOP b for ${FREEZE_MS} ms at ${await campaignHandOffs()} campaign hand-offs`);
      say(faults.at(-1) as string);
      await Bun.sleep(FREEZE_MS);
      frozen.proc.kill("SIGCONT");
    }

    await Promise.all([...oneOffWorkers, conversations]);
    // 6. Everything settles: the campaign completes, no message waits, every job ran.
    const settled = async () => {
      const [row] = await sql`SELECT
          (SELECT status FROM campaigns WHERE id = ${campaign.id}) AS status,
          (SELECT count(*)::int FROM messages WHERE status IN ('PENDING', 'QUEUED', 'SENT')) AS waiting,
          (SELECT count(*)::int FROM jobs WHERE status IN ('queued', 'running')
             AND kind NOT IN ('maintenance.prune', 'agents.followup')) AS jobs`;
      return row.status === "completed" && row.waiting === 0 && row.jobs === 0;
    };
    await waitFor(settled, 180_000 + options.recipients * 20);
    const campaignSeconds = Number(
      (
        await sql`SELECT (max(accepted_at) - min(accepted_at)) / 1000.0 AS s FROM sandbox_sends s
                  JOIN messages m ON m.id = s.message_id WHERE m.campaign_id = ${campaign.id}`
      )[0].s,
    );
    say(`settled ${Math.round(performance.now() - launchedAt)} ms after the launch`);
    await Bun.sleep(1500); // the last webhook deliveries
    await Promise.all(
      live().map(async (n) => {
        n.proc.kill("SIGTERM");
        await n.proc.exited;
      }),
    );
    receiver.stop();

    // 7. The audit, in SQL.
    const one = async (query: Promise<postgres.RowList<postgres.Row[]>>) => Number((await query)[0].n);
    const oneOffIds = [...accepted.values()];
    const audit: ClusterAudit = {
      recipients: options.recipients,
      seconds: Math.round((performance.now() - started) / 100) / 10,
      campaignSeconds,
      bootstrapAnnouncements: announcements.filter(Boolean).length,
      workspaces: await one(sql`SELECT count(*)::int AS n FROM workspaces`),
      campaignStatus: String((await sql`SELECT status FROM campaigns WHERE id = ${campaign.id}`)[0].status),
      campaignMessages: await one(
        sql`SELECT count(*)::int AS n FROM messages WHERE campaign_id = ${campaign.id}`,
      ),
      campaignDuplicates: await one(sql`SELECT count(*)::int AS n FROM (SELECT contact_id FROM messages
          WHERE campaign_id = ${campaign.id} GROUP BY contact_id HAVING count(*) > 1) d`),
      sendable:
        await one(sql`SELECT count(*)::int AS n FROM campaign_recipients r JOIN contacts c ON c.id = r.contact_id
          WHERE r.campaign_id = ${campaign.id} AND c.opted_in
            AND NOT EXISTS (SELECT 1 FROM suppressions s WHERE s.workspace_id = c.workspace_id AND s.phone_number = c.phone_number)`),
      campaignRecipients: await one(
        sql`SELECT count(*)::int AS n FROM campaign_recipients WHERE campaign_id = ${campaign.id}`,
      ),
      wronglySent:
        await one(sql`SELECT count(*)::int AS n FROM messages m JOIN contacts c ON c.id = m.contact_id
          WHERE m.campaign_id = ${campaign.id} AND (c.opted_in = false
            OR EXISTS (SELECT 1 FROM suppressions s WHERE s.workspace_id = c.workspace_id AND s.phone_number = c.phone_number))`),
      // The carrier keeps one row per message id; a repeated hand-off only adds to its handoffs.
      duplicateHandOffs: await one(sql`SELECT count(*)::int AS n FROM sandbox_sends WHERE handoffs > 1`),
      missingHandOffs: await one(sql`SELECT count(*)::int AS n FROM messages m WHERE m.direction = 'outbound'
          AND m.status NOT IN ('FAILED', 'CALL') AND NOT EXISTS (SELECT 1 FROM sandbox_sends s WHERE s.message_id = m.id)`),
      unsettled: await one(
        sql`SELECT count(*)::int AS n FROM messages WHERE status IN ('PENDING', 'QUEUED', 'SENT')`,
      ),
      oneOffsAccepted: accepted.size,
      oneOffMessages: await one(
        sql`SELECT count(*)::int AS n FROM messages WHERE from_number = ${oneOffFrom}`,
      ),
      oneOffIdsRepeated: oneOffIds.length - new Set(oneOffIds).size,
      openThreadDuplicates: await one(sql`SELECT count(*)::int AS n FROM (SELECT contact_id FROM conversations
          WHERE status = 'open' GROUP BY workspace_id, contact_id HAVING count(*) > 1) d`),
      agentThreads: await one(sql`SELECT count(DISTINCT conversation_id)::int AS n FROM messages
          WHERE sender = 'agent'`),
      agentReplies: await one(sql`SELECT count(*)::int AS n FROM messages WHERE sender = 'agent'`),
      extraAgentReplies:
        await one(sql`SELECT coalesce(sum(n - 1), 0)::int AS n FROM (SELECT count(*) AS n FROM messages
          WHERE sender = 'agent' GROUP BY conversation_id HAVING count(*) > 1) d`),
      duplicateEvents: await one(sql`SELECT count(*)::int AS n FROM (SELECT type, data->>'id' FROM events
          WHERE type IN ('message.sent', 'message.delivered') GROUP BY 1, 2 HAVING count(*) > 1) d`),
      duplicateWebhookDeliveries:
        await one(sql`SELECT count(*)::int AS n FROM (SELECT webhook_id, message_id FROM webhook_deliveries
          GROUP BY 1, 2 HAVING count(*) > 1) d`),
      webhookRedeliveries: receiver.redeliveries(),
      capsExceeded:
        await one(sql`SELECT count(*)::int AS n FROM number_daily_usage u JOIN numbers n ON n.id = u.number_id
          WHERE n.daily_limit IS NOT NULL AND u.count > n.daily_limit`),
      throttleExceeded: throttleWindowsOver(
        (
          await sql`SELECT created_at FROM messages WHERE campaign_id = ${campaign.id} ORDER BY created_at`
        ).map((r) => Number(r.created_at)),
        throttle,
      ),
      deadJobs: await one(sql`SELECT count(*)::int AS n FROM jobs WHERE status = 'dead'`),
      serverErrors,
      unavailable,
      revocationMs,
      faults,
    };
    return audit;
  } finally {
    for (const n of nodes) if (n.proc.exitCode === null) n.proc.kill("SIGKILL");
    await sql.end();
    if (process.env.CLUSTER_KEEP) console.log(`kept ${dir} and ${databaseUrl}`);
    else {
      await dropDatabase(adminUrl, databaseUrl).catch(() => {});
      rmSync(dir, { recursive: true, force: true });
    }
    await cluster?.stop();
  }
}

/** Whether the audit is clean: what must hold after any of the faults. */
export function clusterAuditClean(audit: ClusterAudit): boolean {
  return (
    audit.bootstrapAnnouncements === 1 &&
    audit.workspaces === 1 &&
    audit.campaignStatus === "completed" &&
    audit.campaignRecipients >= audit.recipients &&
    audit.campaignMessages === audit.sendable &&
    audit.campaignDuplicates === 0 &&
    audit.wronglySent === 0 &&
    audit.duplicateHandOffs === 0 &&
    audit.missingHandOffs === 0 &&
    audit.unsettled === 0 &&
    audit.oneOffMessages === audit.oneOffsAccepted &&
    audit.oneOffIdsRepeated === 0 &&
    audit.openThreadDuplicates === 0 &&
    audit.extraAgentReplies === 0 &&
    audit.duplicateEvents === 0 &&
    audit.duplicateWebhookDeliveries === 0 &&
    audit.capsExceeded === 0 &&
    audit.throttleExceeded === 0 &&
    audit.deadJobs === 0 &&
    audit.serverErrors === 0 &&
    audit.revocationMs.every((ms) => ms <= 1000)
  );
}

/**
 * Fixed one-minute windows, as the dispatcher keeps them (a window opens at the first hand-off
 * after the last one closed): how many hold more than `limit` sends.
 */
export function throttleWindowsOver(times: number[], limit: number): number {
  let over = 0;
  let start = Number.NEGATIVE_INFINITY;
  let count = 0;
  for (const t of times) {
    if (t - start >= 60_000) {
      if (count > limit) over++;
      start = t;
      count = 0;
    }
    count++;
  }
  return count > limit ? over + 1 : over;
}

/**
 * A key made through `through` and revoked through it (or with `outreach keys revoke` on
 * `databaseUrl`); answers how long `others` still accepted it (ms), polling every 20 ms.
 */
async function revocation(
  through: Node,
  others: Node | Node[],
  must: (node: Node, method: string, path: string, body?: unknown) => Promise<Json>,
  databaseUrl?: string,
): Promise<number> {
  const made = (await must(through, "POST", "/v1/api-keys", {
    name: "short-lived",
    scopes: ["read"],
  })) as Json & {
    api_key?: { id: string; key: string };
    key?: { id: string; key: string };
  };
  const created = made.api_key ?? made.key;
  if (!created) throw new Error(`no key in ${JSON.stringify(made)}`);
  const nodes = Array.isArray(others) ? others : [others];
  const statuses = async () =>
    await Promise.all(
      nodes.map(
        async (node) =>
          (await fetch(`${node.url}/v1/me`, { headers: { authorization: `Bearer ${created.key}` } })).status,
      ),
    );
  await waitFor(async () => (await statuses()).every((status) => status === 200), 10_000);
  if (databaseUrl) {
    const cli = spawn([bun, "run", "src/main.ts", "keys", "revoke", created.id], {
      cwd: root,
      env: { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: "error" },
      stdout: "ignore",
      stderr: "inherit",
    });
    if ((await cli.exited) !== 0) throw new Error("outreach keys revoke failed");
  } else await must(through, "DELETE", `/v1/api-keys/${created.id}`);
  const revokedAt = performance.now();
  await waitFor(async () => (await statuses()).every((status) => status === 401), 10_000, 20);
  return Math.round(performance.now() - revokedAt);
}

/** A webhook receiver that answers 200 and counts each `webhook-id` it is sent. */
function startReceiver() {
  const seen = new Map<string, number>();
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(request) {
      await request.text();
      const id = request.headers.get("webhook-id") ?? "";
      seen.set(id, (seen.get(id) ?? 0) + 1);
      return new Response("ok");
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}/hooks`,
    redeliveries: () => [...seen.values()].reduce((sum, n) => sum + n - 1, 0),
    stop: () => server.stop(true),
  };
}

async function startNode(name: string, databaseUrl: string, dir: string): Promise<Node> {
  return await startServeNode([bun, "run", "src/main.ts"], name, databaseUrl, dir, {
    RATE_LIMIT_RPS: "0",
    LOG_LEVEL: "warn",
    SIMULATED_DELIVERY_MS: String(DELIVERY_MS),
    JOB_LEASE_SCALE: LEASE_SCALE,
    SHUTDOWN_GRACE_SEC: "2",
    WEBHOOK_ALLOW_PRIVATE: "true",
  });
}

async function waitFor(done: () => Promise<boolean>, timeoutMs: number, everyMs = 100) {
  const deadline = performance.now() + timeoutMs;
  while (performance.now() < deadline) {
    if (await done()) return;
    await Bun.sleep(everyMs);
  }
  throw new Error(`timed out after ${timeoutMs} ms`);
}

if (import.meta.main) {
  const arg = (name: string, fallback: string) => {
    const i = process.argv.indexOf(`--${name}`);
    return i > 0 ? process.argv[i + 1] : fallback;
  };
  const audit = await runClusterTest({
    recipients: Number(arg("recipients", "10000")),
    oneOffs: Number(arg("one-offs", "300")),
    agentThreads: Number(arg("agent-threads", "30")),
    restartKilled: arg("restart", "true") !== "false",
    adminUrl: process.env.CLUSTER_PG_URL,
    log: (line) => console.log(line),
  });
  console.log(JSON.stringify(audit, null, 2));
  const clean = clusterAuditClean(audit);
  console.log(clean ? "OK: nothing lost, nothing twice" : "FAILED: the audit is not clean");
  process.exit(clean ? 0 : 1);
}
