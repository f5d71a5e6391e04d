import { integer, sqliteTable } from "drizzle-orm/sqlite-core";
import { onPostgres } from "./columns";

/**
 * One counter bumped by triggers on every change or removal of an offer or a tracked link
 * (migration `link_versions_triggers`), whoever makes it. The redirect's link cache is checked
 * against it when another connection commits, so the background thread's writes (sends, filed
 * clicks) no longer empty it, while an offer paused by another process still stops its links at
 * once. New offers and links do not bump it: only found links are cached.
 */
export const linkVersions = sqliteTable("link_versions", {
  id: onPostgres(integer("id").primaryKey(), "identity"),
  version: onPostgres(integer("version").notNull().default(0), "bigint"),
});
