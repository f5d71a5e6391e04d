import { index, real, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { createdAtColumn, idColumn, updatedAtColumn, workspaceIdColumn } from "./columns";

/**
 * A destination a tracked link leads to (API.md §3 Offers & tracking). status: active | paused; a
 * paused offer's links answer 404. `code` is the offer's own link (`/r/<code>`, its `tracking_url`);
 * campaign messages get per-recipient links in `tracked_links` instead.
 */
export const offers = sqliteTable(
  "offers",
  {
    id: idColumn(),
    workspaceId: workspaceIdColumn(),
    name: text("name").notNull(),
    destinationUrl: text("destination_url").notNull(),
    /** Nominal value of one conversion (informational; conversions carry their own value). */
    value: real("value"),
    currency: text("currency").notNull(),
    status: text("status").notNull(),
    code: text("code").notNull(),
    /** Branded link domain of its links; null: the workspace's default, else PUBLIC_URL. */
    linkDomainId: text("link_domain_id"),
    createdAt: createdAtColumn(),
    updatedAt: updatedAtColumn(),
  },
  (t) => [index("offers_workspace_created_idx").on(t.workspaceId, t.createdAt, t.id)],
);

export type OfferRow = typeof offers.$inferSelect;
