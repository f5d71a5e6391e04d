import { eq, sql } from "drizzle-orm";
import type { Db, DbOrTx } from "../../db/client";
import { groupCommit } from "../../db/group-commit";
import { preparedPerConnection, rowPlaceholders } from "../../db/prepared";
import { type ClickRow, clicks, offers, trackedLinks } from "../../db/schema";
import { newId } from "../../lib/ids";
import { emitEvent } from "../events";

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

const insertClick = preparedPerConnection((db: DbOrTx) =>
  db.insert(clicks).values(rowPlaceholders(clicks)).prepare(),
);

/**
 * The destination with `vcx=<click id>` appended to its own query string, which is kept byte for
 * byte (a fragment stays last).
 */
export function withClickId(destination: string, clickId: string): string {
  const hash = destination.indexOf("#");
  const base = hash === -1 ? destination : destination.slice(0, hash);
  const fragment = hash === -1 ? "" : destination.slice(hash);
  const separator = !base.includes("?") ? "?" : base.endsWith("?") || base.endsWith("&") ? "" : "&";
  return `${base}${separator}vcx=${clickId}${fragment}`;
}

/**
 * `GET /r/<code>`: records a click (event `link.clicked`) and answers where to send the browser,
 * or null for an unknown code or a paused offer (the caller answers 404 and redirects nowhere).
 * Clicks are written by group commit: a burst of clicks right after a campaign shares commits.
 */
export async function recordClick(db: Db, code: string, now = Date.now()): Promise<string | null> {
  if (!CODE_RE.test(code)) return null;
  const link = findLink(db).get({ code });
  if (link?.status !== "active") return null;
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
  await groupCommit(db, (tx) => {
    insertClick(tx).run(row);
    emitEvent(
      tx,
      row.workspaceId,
      "link.clicked",
      {
        click_id: row.id,
        offer_id: row.offerId,
        contact_id: row.contactId,
        campaign_id: row.campaignId,
        message_id: row.messageId,
      },
      now,
    );
  });
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
export function clickById(db: DbOrTx, id: string): ClickRow | undefined {
  return findClick(db).get({ id });
}
