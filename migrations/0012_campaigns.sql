CREATE TABLE `campaign_recipients` (
	`campaign_id` text NOT NULL,
	`contact_id` text NOT NULL,
	`workspace_id` text NOT NULL,
	`phone_number` text NOT NULL,
	`variant` text,
	`outcome` text NOT NULL,
	`reason` text,
	`send_at` integer,
	`due_at` integer NOT NULL,
	`message_id` text,
	`call_id` text,
	`handed_off_at` integer,
	`replied_at` integer,
	`opted_out_at` integer,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `campaign_recipients_campaign_contact_idx` ON `campaign_recipients` (`campaign_id`,`contact_id`);--> statement-breakpoint
CREATE INDEX `campaign_recipients_stats_idx` ON `campaign_recipients` (`campaign_id`,`outcome`,`variant`,`handed_off_at`,`replied_at`,`opted_out_at`);--> statement-breakpoint
CREATE INDEX `campaign_recipients_due_idx` ON `campaign_recipients` (`campaign_id`,`due_at`,`contact_id`) WHERE message_id IS NULL AND outcome IN ('queued', 'deferred');--> statement-breakpoint
CREATE INDEX `campaign_recipients_workspace_contact_idx` ON `campaign_recipients` (`workspace_id`,`contact_id`);--> statement-breakpoint
CREATE TABLE `campaigns` (
	`id` text PRIMARY KEY NOT NULL,
	`workspace_id` text NOT NULL,
	`name` text NOT NULL,
	`campaign_type` text NOT NULL,
	`status` text NOT NULL,
	`audience` text NOT NULL,
	`message` text,
	`say` text,
	`agent_id` text,
	`from_number` text,
	`pool_id` text,
	`offer_id` text,
	`send_at` integer,
	`quiet_hours` text,
	`throttle_per_minute` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	`launched_at` integer,
	`completed_at` integer,
	`canceled_at` integer,
	`resolved_at` integer,
	`dispatch_generation` integer DEFAULT 0 NOT NULL,
	`throttle_window_start` integer,
	`throttle_window_count` integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE INDEX `campaigns_workspace_created_idx` ON `campaigns` (`workspace_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `campaigns_workspace_status_idx` ON `campaigns` (`workspace_id`,`status`,`created_at`);--> statement-breakpoint
ALTER TABLE `messages` ADD `send_at` integer;