CREATE TABLE `audience_versions` (
	`workspace_id` text PRIMARY KEY NOT NULL,
	`version` integer DEFAULT 0 NOT NULL
);
