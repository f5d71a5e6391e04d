import { integer, text } from "drizzle-orm/sqlite-core";

/**
 * Shared column helpers. Timestamps are epoch milliseconds (integer here, bigint on PostgreSQL);
 * the API renders them as ISO 8601. Ids are UUID v7 strings made by the application.
 */
export const idColumn = () => text("id").primaryKey();
export const workspaceIdColumn = () => text("workspace_id").notNull();
export const createdAtColumn = () => integer("created_at", { mode: "number" }).notNull();
export const updatedAtColumn = () => integer("updated_at", { mode: "number" }).notNull();
export const timestampColumn = (name: string) => integer(name, { mode: "number" });
export const boolColumn = (name: string) => integer(name, { mode: "boolean" });
export const jsonColumn = <T>(name: string) => text(name, { mode: "json" }).$type<T>();
