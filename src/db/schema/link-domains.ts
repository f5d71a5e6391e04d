import { sql } from "drizzle-orm";
import { index, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { boolValue } from "../dialect";
import {
  boolColumn,
  createdAtColumn,
  idColumn,
  timestampColumn,
  updatedAtColumn,
  workspaceIdColumn,
} from "./columns";

/**
 * Branded link domains (API.md §7.5): a host name of the workspace's own (`go.acmebikes.com`) that
 * points at this server, so tracked links go out as `https://<domain>/r/<code>`. status: pending |
 * verified | failed. A domain belongs to one workspace of the server (`link_domains_domain_idx`);
 * a workspace has at most one default (`link_domains_default_idx`). `token` is what the server
 * answers at `/.well-known/outreach/<token>` so a check can tell the domain reaches it.
 */
export const linkDomains = sqliteTable(
  "link_domains",
  {
    id: idColumn(),
    workspaceId: workspaceIdColumn(),
    /** Lower case, no trailing dot. */
    domain: text("domain").notNull(),
    status: text("status").notNull(),
    isDefault: boolColumn("is_default").notNull().default(false),
    token: text("token").notNull(),
    verifiedAt: timestampColumn("verified_at"),
    /** Why the last check failed (`the check URL answered 404`); null unless status is failed. */
    failureReason: text("failure_reason"),
    checkedAt: timestampColumn("checked_at"),
    createdAt: createdAtColumn(),
    updatedAt: updatedAtColumn(),
  },
  (t) => [
    uniqueIndex("link_domains_domain_idx").on(t.domain),
    uniqueIndex("link_domains_token_idx").on(t.token),
    uniqueIndex("link_domains_default_idx").on(t.workspaceId).where(sql`is_default = 1`),
    index("link_domains_workspace_created_idx").on(t.workspaceId, t.createdAt, t.id),
  ],
);

export type LinkDomainRow = typeof linkDomains.$inferSelect;

/** Literal conditions (compiled once, see src/db/bound-parameters.ts): a usable domain, the default. */
export const LINK_DOMAIN_IS_VERIFIED = sql`${linkDomains.status} = 'verified'`;
export const LINK_DOMAIN_IS_DEFAULT = sql`${linkDomains.isDefault} = ${boolValue(true)}`;
