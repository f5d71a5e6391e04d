CREATE TABLE `webhook_attempts` (
	`id` text PRIMARY KEY NOT NULL,
	`workspace_id` text NOT NULL,
	`webhook_id` text NOT NULL,
	`delivery_id` text NOT NULL,
	`attempt` integer NOT NULL,
	`status` text NOT NULL,
	`response_status` integer,
	`response_body` text,
	`error` text,
	`duration_ms` integer NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `webhook_attempts_workspace_webhook_idx` ON `webhook_attempts` (`workspace_id`,`webhook_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `webhook_attempts_delivery_idx` ON `webhook_attempts` (`delivery_id`);--> statement-breakpoint
CREATE TABLE `webhook_deliveries` (
	`id` text PRIMARY KEY NOT NULL,
	`workspace_id` text NOT NULL,
	`webhook_id` text NOT NULL,
	`message_id` text NOT NULL,
	`event_type` text NOT NULL,
	`payload` text NOT NULL,
	`status` text DEFAULT 'pending' NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`last_response_status` integer,
	`next_attempt_at` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `webhook_deliveries_workspace_webhook_idx` ON `webhook_deliveries` (`workspace_id`,`webhook_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `webhooks` (
	`id` text PRIMARY KEY NOT NULL,
	`workspace_id` text NOT NULL,
	`url` text NOT NULL,
	`events` text NOT NULL,
	`description` text,
	`enabled` integer DEFAULT true NOT NULL,
	`secret` text NOT NULL,
	`previous_secret` text,
	`previous_secret_expires_at` integer,
	`failing_since` integer,
	`disabled_reason` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `webhooks_workspace_enabled_idx` ON `webhooks` (`workspace_id`,`enabled`);--> statement-breakpoint
CREATE INDEX `webhooks_workspace_created_idx` ON `webhooks` (`workspace_id`,`created_at`);