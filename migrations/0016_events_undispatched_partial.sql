DROP INDEX `events_undispatched_idx`;--> statement-breakpoint
CREATE INDEX `events_undispatched_idx` ON `events` (`created_at`) WHERE dispatched_at IS NULL;