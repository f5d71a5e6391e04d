DROP INDEX `campaign_recipients_due_idx`;--> statement-breakpoint
CREATE INDEX `campaign_recipients_pending_idx` ON `campaign_recipients` (`campaign_id`,`due_at`,`contact_id`) WHERE (message_id IS NULL AND outcome = 'queued') OR outcome = 'deferred';--> statement-breakpoint
ALTER TABLE `workspaces` ADD `state_rules` integer DEFAULT true NOT NULL;--> statement-breakpoint
ALTER TABLE `workspaces` ADD `frequency_cap_enabled` integer DEFAULT true NOT NULL;--> statement-breakpoint
ALTER TABLE `workspaces` ADD `frequency_cap_max_messages` integer DEFAULT 3 NOT NULL;--> statement-breakpoint
ALTER TABLE `workspaces` ADD `frequency_cap_window_hours` integer DEFAULT 24 NOT NULL;--> statement-breakpoint
ALTER TABLE `workspaces` ADD `frequency_cap_apply_to_all` integer DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE `workspaces` ADD `paused_states` text DEFAULT '[]' NOT NULL;