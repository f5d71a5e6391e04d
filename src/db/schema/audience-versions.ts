import { integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { onPostgres } from "./columns";

/**
 * A per-workspace counter bumped by triggers on every write to `contacts` and `list_members`
 * (migration `audience_versions_triggers`), whoever makes it. Segment counts are cached against
 * it, so a cached total is exact until the next audience write. `contact_count` is the number of
 * the workspace's contacts, kept by the same insert and delete triggers (migration
 * `contact_count`): the contacts list's total without counting the index on every page.
 */
export const audienceVersions = sqliteTable("audience_versions", {
  workspaceId: text("workspace_id").primaryKey(),
  version: onPostgres(integer("version").notNull().default(0), "bigint"),
  contactCount: integer("contact_count").notNull().default(0),
});
