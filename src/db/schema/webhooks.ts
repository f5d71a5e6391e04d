import { index, sqliteTable, text } from "drizzle-orm/sqlite-core";
import {
  boolColumn,
  createdAtColumn,
  idColumn,
  jsonColumn,
  timestampColumn,
  updatedAtColumn,
  workspaceIdColumn,
} from "./columns";

/**
 * Webhook subscriptions: where a workspace's events are delivered. `events` holds event kinds or
 * `*`. After a rotation the previous secret keeps signing (beside the new one) until
 * `previous_secret_expires_at`, so receivers can roll over without dropping deliveries.
 */
export const webhooks = sqliteTable(
  "webhooks",
  {
    id: idColumn(),
    workspaceId: workspaceIdColumn(),
    url: text("url").notNull(),
    events: jsonColumn<string[]>("events").notNull(),
    description: text("description"),
    enabled: boolColumn("enabled").notNull().default(true),
    /** `whsec_` + base64 of the signing key. */
    secret: text("secret").notNull(),
    previousSecret: text("previous_secret"),
    previousSecretExpiresAt: timestampColumn("previous_secret_expires_at"),
    /** Start of the current run of failed attempts; null after any success. */
    failingSince: timestampColumn("failing_since"),
    /** Why the service disabled the endpoint (410, 5 days of failures); null when enabled by hand. */
    disabledReason: text("disabled_reason"),
    createdAt: createdAtColumn(),
    updatedAt: updatedAtColumn(),
  },
  (t) => [
    index("webhooks_workspace_enabled_idx").on(t.workspaceId, t.enabled),
    index("webhooks_workspace_created_idx").on(t.workspaceId, t.createdAt),
  ],
);

export type WebhookRow = typeof webhooks.$inferSelect;
