CREATE TABLE `number_daily_usage` (
	`number_id` text NOT NULL,
	`workspace_id` text NOT NULL,
	`day` text NOT NULL,
	`count` integer NOT NULL,
	PRIMARY KEY(`number_id`, `day`)
);
--> statement-breakpoint
CREATE INDEX `number_daily_usage_workspace_day_idx` ON `number_daily_usage` (`workspace_id`,`day`);--> statement-breakpoint
CREATE TABLE `numbers` (
	`id` text PRIMARY KEY NOT NULL,
	`workspace_id` text NOT NULL,
	`number` text NOT NULL,
	`pool_id` text,
	`daily_limit` integer,
	`agent_id` text,
	`status` text NOT NULL,
	`carrier_number_id` text,
	`timezone` text NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	`released_at` integer
);
--> statement-breakpoint
CREATE INDEX `numbers_workspace_created_idx` ON `numbers` (`workspace_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `numbers_workspace_pool_idx` ON `numbers` (`workspace_id`,`pool_id`);--> statement-breakpoint
CREATE UNIQUE INDEX `numbers_active_number_idx` ON `numbers` (`number`) WHERE status = 'active';--> statement-breakpoint
CREATE TABLE `pool_sticky_senders` (
	`workspace_id` text NOT NULL,
	`pool_id` text NOT NULL,
	`contact_id` text NOT NULL,
	`number_id` text NOT NULL,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`pool_id`, `contact_id`)
);
--> statement-breakpoint
CREATE INDEX `pool_sticky_senders_workspace_pool_idx` ON `pool_sticky_senders` (`workspace_id`,`pool_id`);--> statement-breakpoint
CREATE INDEX `pool_sticky_senders_number_idx` ON `pool_sticky_senders` (`number_id`);--> statement-breakpoint
CREATE TABLE `pools` (
	`id` text PRIMARY KEY NOT NULL,
	`workspace_id` text NOT NULL,
	`name` text NOT NULL,
	`description` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `pools_workspace_created_idx` ON `pools` (`workspace_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `sandbox_sends` (
	`id` text PRIMARY KEY NOT NULL,
	`workspace_id` text NOT NULL,
	`message_id` text NOT NULL,
	`from_number` text NOT NULL,
	`to_number` text NOT NULL,
	`body` text NOT NULL,
	`carrier_message_id` text NOT NULL,
	`accepted_at` integer NOT NULL,
	`deliver_at` integer NOT NULL,
	`outcome` text NOT NULL,
	`error_code` text,
	`error_message` text,
	`delivered_at` integer
);
--> statement-breakpoint
CREATE INDEX `sandbox_sends_workspace_accepted_idx` ON `sandbox_sends` (`workspace_id`,`accepted_at`);--> statement-breakpoint
CREATE INDEX `sandbox_sends_message_idx` ON `sandbox_sends` (`message_id`);--> statement-breakpoint
CREATE INDEX `sandbox_sends_pending_idx` ON `sandbox_sends` (`deliver_at`) WHERE delivered_at IS NULL;