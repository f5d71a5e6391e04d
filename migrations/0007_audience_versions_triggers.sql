-- Audience write counter (see src/db/schema/audience-versions.ts): every write to contacts or
-- list_members bumps its workspace's version, whoever makes it, so cached segment counts are exact
-- until the next write. PostgreSQL: the same as row-level AFTER triggers calling one function.
CREATE TRIGGER `contacts_audience_insert` AFTER INSERT ON `contacts`
BEGIN
  INSERT INTO audience_versions (workspace_id, version) VALUES (new.workspace_id, 1)
  ON CONFLICT(workspace_id) DO UPDATE SET version = version + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `contacts_audience_update` AFTER UPDATE ON `contacts`
BEGIN
  INSERT INTO audience_versions (workspace_id, version) VALUES (new.workspace_id, 1)
  ON CONFLICT(workspace_id) DO UPDATE SET version = version + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `contacts_audience_delete` AFTER DELETE ON `contacts`
BEGIN
  INSERT INTO audience_versions (workspace_id, version) VALUES (old.workspace_id, 1)
  ON CONFLICT(workspace_id) DO UPDATE SET version = version + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `list_members_audience_insert` AFTER INSERT ON `list_members`
BEGIN
  INSERT INTO audience_versions (workspace_id, version) VALUES (new.workspace_id, 1)
  ON CONFLICT(workspace_id) DO UPDATE SET version = version + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `list_members_audience_update` AFTER UPDATE ON `list_members`
BEGIN
  INSERT INTO audience_versions (workspace_id, version) VALUES (new.workspace_id, 1)
  ON CONFLICT(workspace_id) DO UPDATE SET version = version + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `list_members_audience_delete` AFTER DELETE ON `list_members`
BEGIN
  INSERT INTO audience_versions (workspace_id, version) VALUES (old.workspace_id, 1)
  ON CONFLICT(workspace_id) DO UPDATE SET version = version + 1;
END;
