CREATE TABLE `calls` (
	`id` text PRIMARY KEY NOT NULL,
	`workspace_id` text NOT NULL,
	`direction` text NOT NULL,
	`from_number` text NOT NULL,
	`to_number` text NOT NULL,
	`number_id` text,
	`status` text NOT NULL,
	`agent_id` text,
	`say` text,
	`contact_id` text,
	`conversation_id` text,
	`campaign_id` text,
	`via` text NOT NULL,
	`provider_call_id` text,
	`duration_sec` integer,
	`transcript` text NOT NULL,
	`recording_url` text,
	`summary` text,
	`sentiment` text,
	`ended_reason` text,
	`handoff_started_at` integer,
	`created_at` integer NOT NULL,
	`started_at` integer,
	`ended_at` integer,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `calls_workspace_created_idx` ON `calls` (`workspace_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `calls_workspace_status_idx` ON `calls` (`workspace_id`,`status`,`created_at`);--> statement-breakpoint
CREATE INDEX `calls_workspace_contact_idx` ON `calls` (`workspace_id`,`contact_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `calls_workspace_campaign_idx` ON `calls` (`workspace_id`,`campaign_id`,`status`);--> statement-breakpoint
CREATE INDEX `calls_provider_id_idx` ON `calls` (`provider_call_id`) WHERE provider_call_id IS NOT NULL;--> statement-breakpoint
CREATE TABLE `sandbox_calls` (
	`id` text PRIMARY KEY NOT NULL,
	`workspace_id` text NOT NULL,
	`call_id` text NOT NULL,
	`line` text NOT NULL,
	`from_number` text NOT NULL,
	`to_number` text NOT NULL,
	`provider_call_id` text NOT NULL,
	`accepted_at` integer NOT NULL,
	`report_at` integer NOT NULL,
	`outcome` text NOT NULL,
	`reported_at` integer
);
--> statement-breakpoint
CREATE INDEX `sandbox_calls_workspace_accepted_idx` ON `sandbox_calls` (`workspace_id`,`accepted_at`);--> statement-breakpoint
CREATE INDEX `sandbox_calls_call_idx` ON `sandbox_calls` (`call_id`);--> statement-breakpoint
CREATE INDEX `sandbox_calls_pending_idx` ON `sandbox_calls` (`line`,`report_at`) WHERE reported_at IS NULL;--> statement-breakpoint
CREATE TABLE `webhook_receipts` (
	`signature` text PRIMARY KEY NOT NULL,
	`received_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `webhook_receipts_received_idx` ON `webhook_receipts` (`received_at`);--> statement-breakpoint
DROP INDEX `campaign_recipients_pending_idx`;--> statement-breakpoint
CREATE INDEX `campaign_recipients_pending_idx` ON `campaign_recipients` (`campaign_id`,`due_at`,`contact_id`) WHERE (message_id IS NULL AND call_id IS NULL AND outcome = 'queued') OR outcome = 'deferred';--> statement-breakpoint
ALTER TABLE `agents` ADD `voice_sync` text;--> statement-breakpoint
ALTER TABLE `messages` ADD `call_id` text;--> statement-breakpoint
ALTER TABLE `numbers` ADD `voice_capable` integer DEFAULT true NOT NULL;