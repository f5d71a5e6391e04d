DROP INDEX `conversations_workspace_last_idx`;--> statement-breakpoint
ALTER TABLE `conversations` ADD `search_key` integer;--> statement-breakpoint
CREATE UNIQUE INDEX `conversations_search_key_idx` ON `conversations` (`search_key`);--> statement-breakpoint
CREATE INDEX `conversations_workspace_last_idx` ON `conversations` (`workspace_id`,`last_message_at`,`id`);