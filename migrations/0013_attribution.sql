CREATE TABLE `clicks` (
	`id` text PRIMARY KEY NOT NULL,
	`workspace_id` text NOT NULL,
	`offer_id` text NOT NULL,
	`code` text NOT NULL,
	`contact_id` text,
	`campaign_id` text,
	`message_id` text,
	`number_id` text,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `clicks_workspace_created_idx` ON `clicks` (`workspace_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `clicks_workspace_contact_idx` ON `clicks` (`workspace_id`,`contact_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `clicks_workspace_campaign_idx` ON `clicks` (`workspace_id`,`campaign_id`,`contact_id`);--> statement-breakpoint
CREATE TABLE `conversions` (
	`id` text PRIMARY KEY NOT NULL,
	`workspace_id` text NOT NULL,
	`txn` text NOT NULL,
	`event` text NOT NULL,
	`value` real,
	`currency` text NOT NULL,
	`contact_id` text NOT NULL,
	`click_id` text,
	`offer_id` text,
	`campaign_id` text,
	`message_id` text,
	`number_id` text,
	`agent_id` text,
	`flow_id` text,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `conversions_workspace_txn_idx` ON `conversions` (`workspace_id`,`txn`);--> statement-breakpoint
CREATE INDEX `conversions_workspace_created_idx` ON `conversions` (`workspace_id`,`created_at`,`value`);--> statement-breakpoint
CREATE INDEX `conversions_workspace_contact_idx` ON `conversions` (`workspace_id`,`contact_id`,`event`,`created_at`);--> statement-breakpoint
CREATE INDEX `conversions_workspace_campaign_idx` ON `conversions` (`workspace_id`,`campaign_id`,`value`);--> statement-breakpoint
CREATE TABLE `offers` (
	`id` text PRIMARY KEY NOT NULL,
	`workspace_id` text NOT NULL,
	`name` text NOT NULL,
	`destination_url` text NOT NULL,
	`value` real,
	`currency` text NOT NULL,
	`status` text NOT NULL,
	`code` text NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `offers_workspace_created_idx` ON `offers` (`workspace_id`,`created_at`,`id`);--> statement-breakpoint
CREATE TABLE `tracked_links` (
	`code` text PRIMARY KEY NOT NULL,
	`workspace_id` text NOT NULL,
	`offer_id` text NOT NULL,
	`contact_id` text,
	`campaign_id` text,
	`message_id` text,
	`number_id` text,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `tracked_links_workspace_offer_idx` ON `tracked_links` (`workspace_id`,`offer_id`);--> statement-breakpoint
CREATE TABLE `visitors` (
	`workspace_id` text NOT NULL,
	`vid` text NOT NULL,
	`contact_id` text,
	`click_id` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	PRIMARY KEY(`workspace_id`, `vid`)
);
--> statement-breakpoint
DROP INDEX `contacts_workspace_external_idx`;--> statement-breakpoint
CREATE INDEX `contacts_workspace_email_lower_idx` ON `contacts` (`workspace_id`,lower(email),`created_at`);--> statement-breakpoint
CREATE INDEX `contacts_workspace_external_idx` ON `contacts` (`workspace_id`,`external_id`,`created_at`);--> statement-breakpoint
ALTER TABLE `workspaces` ADD `public_id` text;--> statement-breakpoint
ALTER TABLE `workspaces` ADD `cost_sms_segment` real DEFAULT 0.0079 NOT NULL;--> statement-breakpoint
ALTER TABLE `workspaces` ADD `cost_call_minute` real DEFAULT 0.014 NOT NULL;--> statement-breakpoint
ALTER TABLE `workspaces` ADD `cost_currency` text DEFAULT 'USD' NOT NULL;--> statement-breakpoint
CREATE UNIQUE INDEX `workspaces_public_id_idx` ON `workspaces` (`public_id`);--> statement-breakpoint
CREATE INDEX `messages_workspace_analytics_idx` ON `messages` (`workspace_id`,`created_at`,`direction`,`status`,`number_id`,`segments`);