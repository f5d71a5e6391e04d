CREATE TABLE `agent_threads` (
	`conversation_id` text PRIMARY KEY NOT NULL,
	`workspace_id` text NOT NULL,
	`agent_id` text NOT NULL,
	`reply_due_at` integer,
	`turns` integer DEFAULT 0 NOT NULL,
	`replies_day` text,
	`replies_today` integer DEFAULT 0 NOT NULL,
	`followups_sent` integer DEFAULT 0 NOT NULL,
	`last_agent_message_at` integer,
	`goal_reached` integer DEFAULT false NOT NULL,
	`handoff_reason` text,
	`handed_off_at` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `agent_threads_agent_idx` ON `agent_threads` (`workspace_id`,`agent_id`);--> statement-breakpoint
CREATE TABLE `agents` (
	`id` text PRIMARY KEY NOT NULL,
	`workspace_id` text NOT NULL,
	`name` text NOT NULL,
	`system_prompt` text NOT NULL,
	`channel` text NOT NULL,
	`status` text NOT NULL,
	`goal` text,
	`greeting` text,
	`max_turns` integer,
	`handoff_keywords` text NOT NULL,
	`voice_id` text,
	`language` text,
	`model_tier` text NOT NULL,
	`sms` text NOT NULL,
	`voice` text NOT NULL,
	`inbox` text NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `agents_workspace_created_idx` ON `agents` (`workspace_id`,`created_at`,`id`);--> statement-breakpoint
ALTER TABLE `conversations` ADD `draft_reply` text;--> statement-breakpoint
ALTER TABLE `conversations` ADD `intent` text;