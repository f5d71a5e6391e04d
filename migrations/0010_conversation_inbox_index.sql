DROP INDEX `conversations_workspace_last_idx`;--> statement-breakpoint
CREATE INDEX `conversations_workspace_inbox_idx` ON `conversations` (`workspace_id`,`last_message_at`,`id`,`search_key`);