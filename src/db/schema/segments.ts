import { index, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { createdAtColumn, idColumn, jsonColumn, updatedAtColumn, workspaceIdColumn } from "./columns";

/** Live, rule-based audiences. `rules` is the validated rule tree; members are computed on read. */
export const segments = sqliteTable(
  "segments",
  {
    id: idColumn(),
    workspaceId: workspaceIdColumn(),
    name: text("name").notNull(),
    description: text("description").notNull().default(""),
    rules: jsonColumn<unknown>("rules").notNull(),
    createdAt: createdAtColumn(),
    updatedAt: updatedAtColumn(),
  },
  (t) => [index("segments_workspace_created_idx").on(t.workspaceId, t.createdAt)],
);

export type SegmentRow = typeof segments.$inferSelect;
