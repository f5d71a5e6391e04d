DROP INDEX `numbers_workspace_created_idx`;--> statement-breakpoint
CREATE INDEX `numbers_workspace_created_idx` ON `numbers` (`workspace_id`,`created_at`,`id`);