import { index, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { createdAtColumn, idColumn, jsonColumn, timestampColumn, workspaceIdColumn } from "./columns";
import { workspaces } from "./workspaces";

/**
 * API keys. Only the SHA-256 of the key is stored, with the first 8 random characters as a
 * display prefix. A revoked key keeps its row (for the audit trail) with `revoked_at` set.
 */
export const apiKeys = sqliteTable(
  "api_keys",
  {
    id: idColumn(),
    workspaceId: workspaceIdColumn().references(() => workspaces.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    prefix: text("prefix").notNull(),
    hash: text("hash").notNull(),
    scopes: jsonColumn<string[]>("scopes").notNull(),
    createdAt: createdAtColumn(),
    /** Updated at most once a minute per key, so auth stays a read on the hot path. */
    lastUsedAt: timestampColumn("last_used_at"),
    revokedAt: timestampColumn("revoked_at"),
  },
  (t) => [
    uniqueIndex("api_keys_hash_idx").on(t.hash),
    index("api_keys_workspace_idx").on(t.workspaceId, t.createdAt),
  ],
);

export type ApiKeyRow = typeof apiKeys.$inferSelect;
