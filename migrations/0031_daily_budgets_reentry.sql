CREATE TABLE `daily_budget_usage` (
	`workspace_id` text NOT NULL,
	`budget` text NOT NULL,
	`day` integer NOT NULL,
	`count` integer NOT NULL,
	PRIMARY KEY(`workspace_id`, `budget`, `day`)
);
--> statement-breakpoint
CREATE TABLE `flow_reentry_skips` (
	`flow_id` text NOT NULL,
	`workspace_id` text NOT NULL,
	`day` integer NOT NULL,
	`count` integer NOT NULL,
	PRIMARY KEY(`workspace_id`, `flow_id`, `day`)
);
--> statement-breakpoint
ALTER TABLE `workspaces` ADD `one_off_daily_limit` integer DEFAULT 5000;--> statement-breakpoint
ALTER TABLE `workspaces` ADD `number_orders_daily_limit` integer DEFAULT 50;