-- Link change counter (see src/db/schema/link-versions.ts): every change or removal of an offer or
-- a tracked link bumps it, whoever makes it, so the redirect's link cache is emptied exactly when a
-- cached link may have changed. PostgreSQL: the same as row-level AFTER triggers calling one function.
CREATE TRIGGER `offers_link_version_update` AFTER UPDATE ON `offers`
BEGIN
  INSERT INTO link_versions (id, version) VALUES (1, 1) ON CONFLICT(id) DO UPDATE SET version = version + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `offers_link_version_delete` AFTER DELETE ON `offers`
BEGIN
  INSERT INTO link_versions (id, version) VALUES (1, 1) ON CONFLICT(id) DO UPDATE SET version = version + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `tracked_links_link_version_update` AFTER UPDATE ON `tracked_links`
BEGIN
  INSERT INTO link_versions (id, version) VALUES (1, 1) ON CONFLICT(id) DO UPDATE SET version = version + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `tracked_links_link_version_delete` AFTER DELETE ON `tracked_links`
BEGIN
  INSERT INTO link_versions (id, version) VALUES (1, 1) ON CONFLICT(id) DO UPDATE SET version = version + 1;
END;
