-- A thread's search_key is written with the thread (the next key after the largest, see
-- threadStatements in src/domain/messaging/conversations.ts) instead of by an UPDATE of the row
-- just inserted, which rewrote it and two of its index entries on every new thread. A thread
-- inserted without one (a script writing the file) still gets the next key here. Keys need only be
-- unique: existing threads keep theirs (their rowids). SQLite-only, like the search index.
DROP TRIGGER IF EXISTS `conversations_search_insert`;
--> statement-breakpoint
CREATE TRIGGER `conversations_search_insert` AFTER INSERT ON `conversations`
BEGIN
  INSERT INTO search_backlog (kind, ref) VALUES (0, new.rowid);
END;
--> statement-breakpoint
CREATE TRIGGER `conversations_search_key` AFTER INSERT ON `conversations`
WHEN new.search_key IS NULL
BEGIN
  UPDATE conversations SET search_key = (SELECT coalesce(max(search_key), 0) + 1 FROM conversations)
  WHERE rowid = new.rowid;
END;
