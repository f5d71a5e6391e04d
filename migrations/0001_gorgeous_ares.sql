CREATE TABLE `conversations` (
	`id` text PRIMARY KEY NOT NULL,
	`workspace_id` text NOT NULL,
	`contact_id` text NOT NULL,
	`status` text NOT NULL,
	`needs_attention` integer DEFAULT false NOT NULL,
	`assigned_to` text,
	`agent_id` text,
	`agent_paused` integer DEFAULT false NOT NULL,
	`last_message_at` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `conversations_workspace_last_idx` ON `conversations` (`workspace_id`,`last_message_at`);--> statement-breakpoint
CREATE INDEX `conversations_workspace_contact_idx` ON `conversations` (`workspace_id`,`contact_id`,`status`);--> statement-breakpoint
CREATE INDEX `conversations_workspace_status_idx` ON `conversations` (`workspace_id`,`status`,`last_message_at`);--> statement-breakpoint
CREATE TABLE `messages` (
	`id` text PRIMARY KEY NOT NULL,
	`workspace_id` text NOT NULL,
	`direction` text NOT NULL,
	`sender` text NOT NULL,
	`from_number` text NOT NULL,
	`to_number` text NOT NULL,
	`body` text NOT NULL,
	`status` text NOT NULL,
	`segments` integer NOT NULL,
	`encoding` text NOT NULL,
	`contact_id` text,
	`conversation_id` text,
	`campaign_id` text,
	`number_id` text,
	`carrier_message_id` text,
	`error_code` text,
	`error_message` text,
	`handoff_started_at` integer,
	`created_at` integer NOT NULL,
	`sent_at` integer,
	`delivered_at` integer,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `messages_workspace_created_idx` ON `messages` (`workspace_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `messages_workspace_contact_idx` ON `messages` (`workspace_id`,`contact_id`,`direction`,`created_at`);--> statement-breakpoint
CREATE INDEX `messages_workspace_conversation_idx` ON `messages` (`workspace_id`,`conversation_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `messages_workspace_campaign_idx` ON `messages` (`workspace_id`,`campaign_id`);--> statement-breakpoint
CREATE INDEX `messages_workspace_status_idx` ON `messages` (`workspace_id`,`status`,`created_at`);--> statement-breakpoint
CREATE INDEX `messages_carrier_id_idx` ON `messages` (`carrier_message_id`);