CREATE TABLE `short_code_requests` (
	`id` text PRIMARY KEY NOT NULL,
	`workspace_id` text NOT NULL,
	`type` text NOT NULL,
	`vanity_code` text,
	`use_case` text NOT NULL,
	`monthly_volume` integer NOT NULL,
	`sample_messages` text NOT NULL,
	`status` text NOT NULL,
	`short_code` text,
	`rejection_reasons` text NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `short_code_requests_workspace_created_idx` ON `short_code_requests` (`workspace_id`,`created_at`,`id`);--> statement-breakpoint
CREATE TABLE `tendlc_brands` (
	`id` text PRIMARY KEY NOT NULL,
	`workspace_id` text NOT NULL,
	`legal_name` text NOT NULL,
	`ein` text,
	`entity_type` text NOT NULL,
	`vertical` text NOT NULL,
	`website` text,
	`email` text NOT NULL,
	`phone` text NOT NULL,
	`address` text NOT NULL,
	`status` text NOT NULL,
	`failure_reasons` text NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	`reviewed_at` integer
);
--> statement-breakpoint
CREATE INDEX `tendlc_brands_workspace_created_idx` ON `tendlc_brands` (`workspace_id`,`created_at`,`id`);--> statement-breakpoint
CREATE TABLE `tendlc_campaign_numbers` (
	`campaign_id` text NOT NULL,
	`number_id` text NOT NULL,
	`workspace_id` text NOT NULL,
	PRIMARY KEY(`campaign_id`, `number_id`)
);
--> statement-breakpoint
CREATE INDEX `tendlc_campaign_numbers_number_idx` ON `tendlc_campaign_numbers` (`workspace_id`,`number_id`);--> statement-breakpoint
CREATE TABLE `tendlc_campaigns` (
	`id` text PRIMARY KEY NOT NULL,
	`workspace_id` text NOT NULL,
	`brand_id` text NOT NULL,
	`use_case` text NOT NULL,
	`description` text NOT NULL,
	`message_flow` text NOT NULL,
	`sample_messages` text NOT NULL,
	`help_message` text NOT NULL,
	`optout_message` text NOT NULL,
	`has_embedded_links` integer NOT NULL,
	`has_embedded_phone` integer NOT NULL,
	`number_ids` text NOT NULL,
	`status` text NOT NULL,
	`rejection_reasons` text NOT NULL,
	`warnings` text NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	`reviewed_at` integer
);
--> statement-breakpoint
CREATE INDEX `tendlc_campaigns_workspace_created_idx` ON `tendlc_campaigns` (`workspace_id`,`created_at`,`id`);--> statement-breakpoint
ALTER TABLE `workspaces` ADD `require_registration` integer DEFAULT false NOT NULL;