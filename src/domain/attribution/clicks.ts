import { eq, sql } from "drizzle-orm";
import { changeWatchOf, type Db, type DbOrTx, memo, synchronousReader } from "../../db/client";
import { CommitCheckedCaches } from "../../db/commit-watch";
import { groupAppend } from "../../db/group-commit";
import { insertRows, preparedPerConnection } from "../../db/prepared";
import { type ClickRow, clicks, offers, trackedLinks } from "../../db/schema";
import { newId } from "../../lib/ids";
import { emitEvents } from "../events";

/** Link codes are base62; anything else is not looked up at all. */
const CODE_RE = /^[0-9A-Za-z]{4,32}$/;

const findLink = preparedPerConnection((db: DbOrTx) =>
  db
    .select({
      workspaceId: trackedLinks.workspaceId,
      offerId: trackedLinks.offerId,
      contactId: trackedLinks.contactId,
      campaignId: trackedLinks.campaignId,
      messageId: trackedLinks.messageId,
      numberId: trackedLinks.numberId,
      destinationUrl: offers.destinationUrl,
      status: offers.status,
    })
    .from(trackedLinks)
    .innerJoin(offers, eq(offers.id, trackedLinks.offerId))
    .where(eq(trackedLinks.code, sql.placeholder("code")))
    .prepare(),
);

type Link = NonNullable<Awaited<ReturnType<ReturnType<typeof findLink>["get"]>>>;

/** The most links remembered per database; past it the cache starts over. */
const LINK_CACHE_SIZE = 50_000;

const linkCaches = new CommitCheckedCaches<string, Link>();
const linkCache = (db: Db) =>
  memo(db, linkCaches, () => {
    // Read at once when the cache is checked (the cache's check is synchronous). Inside another
    // request's open transaction it may see that transaction's bump: the cache then starts over
    // once more. PostgreSQL notifies only the changes of links, so it needs no such read.
    const version = synchronousReader<{ version: number }>(
      db,
      "SELECT version FROM link_versions WHERE id = 1",
    );
    return linkCaches.create(changeWatchOf(db), LINK_CACHE_SIZE, version && (() => version()?.version ?? 0));
  });

/**
 * Forgets every remembered link: called by whatever changes an offer or deletes links in this
 * process (pausing an offer must stop its links at once).
 */
export function invalidateLinkCache() {
  linkCaches.clear();
}

/**
 * A link by its code, remembered per database: every click used to look its link and offer up
 * again. Only found links are remembered (an unknown code is looked up each time, so a link
 * written a moment ago is found). Never stale: emptied by `invalidateLinkCache` when this process
 * changes an offer, and when another connection or process commits a change or removal of an
 * offer or a link (`link_versions`, kept by triggers). Other commits (the background thread's
 * sends while a campaign's clicks come in) leave it warm.
 */
async function linkByCode(db: Db, code: string): Promise<Link | undefined> {
  const cache = linkCache(db);
  let link = cache.get(code);
  if (!link) {
    link = await findLink(db).get({ code });
    if (!link) return undefined;
    cache.set(code, link);
  }
  return link;
}

/**
 * A group's clicks (groupAppend): their rows in one statement, then `link.clicked` for each, per
 * workspace, through emitEvents (its outbox rows in one prepared insert, its listeners in order).
 */
async function writeClicks(tx: DbOrTx, rows: ClickRow[]) {
  await insertRows(tx, clicks, rows);
  const byWorkspace = new Map<string, ClickRow[]>();
  for (const row of rows) {
    const ofWorkspace = byWorkspace.get(row.workspaceId);
    if (ofWorkspace) ofWorkspace.push(row);
    else byWorkspace.set(row.workspaceId, [row]);
  }
  // The events of one turn's clicks share its first click's time (they are a millisecond apart).
  for (const [workspaceId, ofWorkspace] of byWorkspace)
    await emitEvents(
      tx,
      workspaceId,
      "link.clicked",
      ofWorkspace.map((row) => ({
        click_id: row.id,
        offer_id: row.offerId,
        contact_id: row.contactId,
        campaign_id: row.campaignId,
        message_id: row.messageId,
      })),
      (ofWorkspace[0] as ClickRow).createdAt,
    );
}

/**
 * The destination with `vcx=<click id>` appended to its own query string, which is kept byte for
 * byte (a fragment stays last), less a `vcx` of its own: the landing page reads the first one.
 */
export function withClickId(destination: string, clickId: string): string {
  const hash = destination.indexOf("#");
  let base = hash === -1 ? destination : destination.slice(0, hash);
  const fragment = hash === -1 ? "" : destination.slice(hash);
  const mark = base.indexOf("?");
  if (mark !== -1) {
    const parts = base.slice(mark + 1).split("&");
    const kept = parts.filter((part) => part.split("=")[0] !== "vcx");
    if (kept.length !== parts.length) base = `${base.slice(0, mark + 1)}${kept.join("&")}`;
  }
  const separator = mark === -1 ? "?" : base.endsWith("?") || base.endsWith("&") ? "" : "&";
  return `${base}${separator}vcx=${clickId}${fragment}`;
}

/**
 * `HEAD /r/<code>`: where the link leads, without a click (link checkers and previews ask HEAD
 * before, or instead of, a person following it); null as for `recordClick`.
 */
export async function linkDestination(db: Db, code: string): Promise<string | null> {
  return (await activeLink(db, code))?.destinationUrl ?? null;
}

/** The link of a well-formed code whose offer is active, or undefined (the caller answers 404). */
async function activeLink(db: Db, code: string): Promise<Link | undefined> {
  if (!CODE_RE.test(code)) return undefined;
  const link = await linkByCode(db, code);
  return link?.status === "active" ? link : undefined;
}

/**
 * `GET /r/<code>`: records a click (event `link.clicked`) and answers where to send the browser,
 * or null for an unknown code or a paused offer (the caller answers 404 and redirects nowhere).
 * Clicks are written by group commit: a burst of clicks right after a campaign shares commits.
 */
export async function recordClick(db: Db, code: string, now = Date.now()): Promise<string | null> {
  const link = await activeLink(db, code);
  if (!link) return null;
  const row: ClickRow = {
    id: newId(),
    workspaceId: link.workspaceId,
    offerId: link.offerId,
    code,
    contactId: link.contactId,
    campaignId: link.campaignId,
    messageId: link.messageId,
    numberId: link.numberId,
    createdAt: now,
  };
  await groupAppend(db, "clicks", row, writeClicks);
  return withClickId(link.destinationUrl, row.id);
}

const findClick = preparedPerConnection((db: DbOrTx) =>
  db
    .select()
    .from(clicks)
    .where(eq(clicks.id, sql.placeholder("id")))
    .prepare(),
);

/** A click by its id (the `vcx` value), whatever its workspace; callers check the workspace. */
export async function clickById(db: DbOrTx, id: string): Promise<ClickRow | undefined> {
  return await findClick(db).get({ id });
}
