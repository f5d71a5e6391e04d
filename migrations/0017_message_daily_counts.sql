CREATE TABLE `message_daily_counts` (
	`workspace_id` text NOT NULL,
	`day` integer NOT NULL,
	`status` text NOT NULL,
	`n` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`workspace_id`, `day`, `status`)
);
--> statement-breakpoint
-- Kept by triggers (see src/db/schema/message-daily-counts.ts), whoever writes messages.
-- PostgreSQL: the same as row-level AFTER triggers.
INSERT INTO message_daily_counts (workspace_id, day, status, n)
  SELECT workspace_id, created_at / 86400000, status, count(*) FROM messages GROUP BY 1, 2, 3;
--> statement-breakpoint
CREATE TRIGGER `messages_daily_insert` AFTER INSERT ON `messages`
BEGIN
  INSERT INTO message_daily_counts (workspace_id, day, status, n)
  VALUES (new.workspace_id, new.created_at / 86400000, new.status, 1)
  ON CONFLICT(workspace_id, day, status) DO UPDATE SET n = n + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `messages_daily_update` AFTER UPDATE OF status, workspace_id, created_at ON `messages`
WHEN old.status IS NOT new.status OR old.workspace_id IS NOT new.workspace_id OR old.created_at IS NOT new.created_at
BEGIN
  UPDATE message_daily_counts SET n = n - 1
  WHERE workspace_id = old.workspace_id AND day = old.created_at / 86400000 AND status = old.status;
  INSERT INTO message_daily_counts (workspace_id, day, status, n)
  VALUES (new.workspace_id, new.created_at / 86400000, new.status, 1)
  ON CONFLICT(workspace_id, day, status) DO UPDATE SET n = n + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `messages_daily_delete` AFTER DELETE ON `messages`
BEGIN
  UPDATE message_daily_counts SET n = n - 1
  WHERE workspace_id = old.workspace_id AND day = old.created_at / 86400000 AND status = old.status;
END;
