CREATE TABLE `link_domains` (
	`id` text PRIMARY KEY NOT NULL,
	`workspace_id` text NOT NULL,
	`domain` text NOT NULL,
	`status` text NOT NULL,
	`is_default` integer DEFAULT false NOT NULL,
	`token` text NOT NULL,
	`verified_at` integer,
	`failure_reason` text,
	`checked_at` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `link_domains_domain_idx` ON `link_domains` (`domain`);--> statement-breakpoint
CREATE UNIQUE INDEX `link_domains_token_idx` ON `link_domains` (`token`);--> statement-breakpoint
CREATE UNIQUE INDEX `link_domains_default_idx` ON `link_domains` (`workspace_id`) WHERE is_default = 1;--> statement-breakpoint
CREATE INDEX `link_domains_workspace_created_idx` ON `link_domains` (`workspace_id`,`created_at`,`id`);--> statement-breakpoint
ALTER TABLE `campaigns` ADD `link_domain_id` text;--> statement-breakpoint
ALTER TABLE `offers` ADD `link_domain_id` text;