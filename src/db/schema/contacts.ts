import { type Column, type SQL, sql } from "drizzle-orm";
import { index, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import {
  boolColumn,
  createdAtColumn,
  idColumn,
  jsonColumn,
  onPostgres,
  updatedAtColumn,
  workspaceIdColumn,
} from "./columns";

/**
 * What the send-time rules read of a phone number (API.md §6.1): a +1 number of twelve characters
 * by its "+1NPA" (the area code alone decides its state and zone), any other number whole. It is
 * indexed with the zone and opted_in (contacts_workspace_send_class_idx), so the campaign preview
 * counts a million contacts by what decides their send without sorting them; a query must write
 * the same expression for SQLite to read the index.
 */
export const sendClassArea = (phone: Column | SQL): SQL =>
  sql`(CASE WHEN length(${phone}) = 12 AND substr(${phone}, 1, 2) = '+1' THEN substr(${phone}, 1, 5) ELSE ${phone} END)`;

/** People the workspace reaches. `phone_number` is E.164 and unique per workspace. */
export const contacts = sqliteTable(
  "contacts",
  {
    id: idColumn(),
    workspaceId: workspaceIdColumn(),
    phoneNumber: text("phone_number").notNull(),
    firstName: text("first_name"),
    lastName: text("last_name"),
    email: text("email"),
    externalId: text("external_id"),
    /** Where the contact came from: api, import, inbound, ... */
    source: text("source").notNull(),
    optedIn: boolColumn("opted_in").notNull().default(true),
    /**
     * The IANA zone the caller or an import gave (`timezone_source: given`), used alone by the
     * send-time rules. Null: the number decides (`area_code`): the API shows the area code's main
     * zone and the rules check every zone the area code spans (API.md §7.1).
     */
    timezone: text("timezone"),
    /**
     * US state / Canadian province (two letters) the caller or an import gave; the state rules
     * use it before the area code's state. Null: the area code decides.
     */
    state: text("state"),
    /** Custom fields. Segment rules query them by key (src/db/dialect.ts): jsonb on PostgreSQL. */
    fields: onPostgres(jsonColumn<Record<string, unknown>>("fields").notNull(), "jsonb"),
    createdAt: createdAtColumn(),
    updatedAt: updatedAtColumn(),
  },
  (t) => [
    uniqueIndex("contacts_workspace_phone_idx").on(t.workspaceId, t.phoneNumber),
    index("contacts_workspace_created_idx").on(t.workspaceId, t.createdAt, t.id),
    index("contacts_workspace_email_idx").on(t.workspaceId, t.email),
    // Conversions match an email case-insensitively and an external id, oldest contact first
    // (POST /v1/conversion): created_at in the index answers the ORDER BY, so the planner never
    // walks contacts_workspace_created_idx over the whole workspace instead.
    index("contacts_workspace_email_lower_idx").on(t.workspaceId, sql`lower(email)`, t.createdAt),
    index("contacts_workspace_external_idx").on(t.workspaceId, t.externalId, t.createdAt),
    index("contacts_workspace_send_class_idx").on(
      t.workspaceId,
      t.timezone,
      t.state,
      sendClassArea(t.phoneNumber),
      t.optedIn,
      // Not read by the grouping; it makes the index cover the query (no row read per contact).
      t.phoneNumber,
    ),
  ],
);

export type ContactRow = typeof contacts.$inferSelect;
