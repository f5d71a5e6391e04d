CREATE TABLE `conversation_notes` (
	`id` text PRIMARY KEY NOT NULL,
	`workspace_id` text NOT NULL,
	`conversation_id` text NOT NULL,
	`body` text NOT NULL,
	`author_user_id` text,
	`author_name` text NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `conversation_notes_thread_idx` ON `conversation_notes` (`workspace_id`,`conversation_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `conversation_reads` (
	`conversation_id` text NOT NULL,
	`user_id` text NOT NULL,
	`workspace_id` text NOT NULL,
	`read_at` integer NOT NULL,
	PRIMARY KEY(`conversation_id`, `user_id`)
);
--> statement-breakpoint
-- hand-written: assignees were free text; one that names a member of the thread's workspace by
-- e-mail becomes that user's id (API.md §7.4). Other values are left as they were.
UPDATE `conversations` SET `assigned_to` = (
	SELECT `users`.`id` FROM `users`
	JOIN `memberships` ON `memberships`.`user_id` = `users`.`id`
		AND `memberships`.`workspace_id` = `conversations`.`workspace_id`
	WHERE `users`.`email` = lower(`conversations`.`assigned_to`)
) WHERE `assigned_to` LIKE '%@%' AND EXISTS (
	SELECT 1 FROM `users`
	JOIN `memberships` ON `memberships`.`user_id` = `users`.`id`
		AND `memberships`.`workspace_id` = `conversations`.`workspace_id`
	WHERE `users`.`email` = lower(`conversations`.`assigned_to`)
);
