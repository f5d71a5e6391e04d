ALTER TABLE `audience_versions` ADD `contact_count` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
-- contact_count (see src/db/schema/audience-versions.ts): the insert and delete triggers on
-- contacts also keep the workspace's number of contacts, whoever writes them. PostgreSQL: the same
-- row-level AFTER triggers.
DROP TRIGGER `contacts_audience_insert`;
--> statement-breakpoint
DROP TRIGGER `contacts_audience_delete`;
--> statement-breakpoint
CREATE TRIGGER `contacts_audience_insert` AFTER INSERT ON `contacts`
BEGIN
  INSERT INTO audience_versions (workspace_id, version, contact_count) VALUES (new.workspace_id, 1, 1)
  ON CONFLICT(workspace_id) DO UPDATE SET version = version + 1, contact_count = contact_count + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `contacts_audience_delete` AFTER DELETE ON `contacts`
BEGIN
  INSERT INTO audience_versions (workspace_id, version, contact_count) VALUES (old.workspace_id, 1, 0)
  ON CONFLICT(workspace_id) DO UPDATE SET version = version + 1, contact_count = contact_count - 1;
END;
--> statement-breakpoint
INSERT INTO audience_versions (workspace_id, version, contact_count)
  SELECT workspace_id, 1, count(*) FROM contacts WHERE true GROUP BY workspace_id
  ON CONFLICT(workspace_id) DO UPDATE SET version = version + 1, contact_count = excluded.contact_count;
