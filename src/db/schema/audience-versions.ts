import { integer, sqliteTable, text } from "drizzle-orm/sqlite-core";

/**
 * A per-workspace counter bumped by triggers on every write to `contacts` and `list_members`
 * (migration `audience_versions_triggers`), whoever makes it. Segment counts are cached against
 * it, so a cached total is exact until the next audience write.
 */
export const audienceVersions = sqliteTable("audience_versions", {
  workspaceId: text("workspace_id").primaryKey(),
  version: integer("version").notNull().default(0),
});
