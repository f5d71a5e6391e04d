CREATE TABLE `api_keys` (
	`id` text PRIMARY KEY NOT NULL,
	`workspace_id` text NOT NULL,
	`name` text NOT NULL,
	`prefix` text NOT NULL,
	`hash` text NOT NULL,
	`scopes` text NOT NULL,
	`created_at` integer NOT NULL,
	`last_used_at` integer,
	`revoked_at` integer,
	FOREIGN KEY (`workspace_id`) REFERENCES `workspaces`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `api_keys_hash_idx` ON `api_keys` (`hash`);--> statement-breakpoint
CREATE INDEX `api_keys_workspace_idx` ON `api_keys` (`workspace_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `contacts` (
	`id` text PRIMARY KEY NOT NULL,
	`workspace_id` text NOT NULL,
	`phone_number` text NOT NULL,
	`first_name` text,
	`last_name` text,
	`email` text,
	`external_id` text,
	`source` text NOT NULL,
	`opted_in` integer DEFAULT true NOT NULL,
	`timezone` text,
	`fields` text NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `contacts_workspace_phone_idx` ON `contacts` (`workspace_id`,`phone_number`);--> statement-breakpoint
CREATE INDEX `contacts_workspace_created_idx` ON `contacts` (`workspace_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `contacts_workspace_email_idx` ON `contacts` (`workspace_id`,`email`);--> statement-breakpoint
CREATE INDEX `contacts_workspace_external_idx` ON `contacts` (`workspace_id`,`external_id`);--> statement-breakpoint
CREATE TABLE `events` (
	`id` text PRIMARY KEY NOT NULL,
	`workspace_id` text NOT NULL,
	`type` text NOT NULL,
	`data` text NOT NULL,
	`created_at` integer NOT NULL,
	`dispatched_at` integer
);
--> statement-breakpoint
CREATE INDEX `events_workspace_idx` ON `events` (`workspace_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `events_undispatched_idx` ON `events` (`dispatched_at`);--> statement-breakpoint
CREATE TABLE `idempotency_keys` (
	`workspace_id` text NOT NULL,
	`key` text NOT NULL,
	`request_hash` text NOT NULL,
	`status_code` integer,
	`response_body` text,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`workspace_id`, `key`)
);
--> statement-breakpoint
CREATE TABLE `jobs` (
	`id` text PRIMARY KEY NOT NULL,
	`workspace_id` text,
	`kind` text NOT NULL,
	`payload` text NOT NULL,
	`status` text DEFAULT 'queued' NOT NULL,
	`run_at` integer NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`max_attempts` integer NOT NULL,
	`lease_until` integer,
	`locked_by` text,
	`last_error` text,
	`dedupe_key` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	`finished_at` integer
);
--> statement-breakpoint
CREATE INDEX `jobs_due_idx` ON `jobs` (`status`,`run_at`);--> statement-breakpoint
CREATE UNIQUE INDEX `jobs_dedupe_idx` ON `jobs` (`dedupe_key`);--> statement-breakpoint
CREATE INDEX `jobs_workspace_idx` ON `jobs` (`workspace_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `suppressions` (
	`id` text PRIMARY KEY NOT NULL,
	`workspace_id` text NOT NULL,
	`phone_number` text NOT NULL,
	`reason` text NOT NULL,
	`source` text,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `suppressions_workspace_phone_idx` ON `suppressions` (`workspace_id`,`phone_number`);--> statement-breakpoint
CREATE INDEX `suppressions_workspace_created_idx` ON `suppressions` (`workspace_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `workspaces` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`timezone` text DEFAULT 'America/New_York' NOT NULL,
	`default_number_id` text,
	`conversion_tracking_enabled` integer DEFAULT true NOT NULL,
	`help_reply` text NOT NULL,
	`opt_out_reply` text NOT NULL,
	`opt_in_reply` text NOT NULL,
	`quiet_hours_enabled` integer DEFAULT true NOT NULL,
	`quiet_start_hour` integer DEFAULT 21 NOT NULL,
	`quiet_end_hour` integer DEFAULT 8 NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
