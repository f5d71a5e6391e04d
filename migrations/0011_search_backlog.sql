-- Thread search indexing leaves the sending transaction: instead of writing the FTS5 index
-- (conversation_search, migration 0009) inside every INSERT of a message or a thread, the triggers
-- now note the new row in `search_backlog`, a plain table (one small b-tree insert). The backlog is
-- drained into the index in batches by drainSearchBacklog (src/db/message-search.ts): every server
-- runs it about once a second, and a search drains what is left before it reads, so a search still
-- sees every message written before it. SQLite-only, like the index itself.
CREATE TABLE `search_backlog` (
  `seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
  -- 0: the thread's contact label (ref = conversations.rowid); 1: a message (ref = messages.rowid)
  `kind` integer NOT NULL,
  `ref` integer NOT NULL
);
--> statement-breakpoint
DROP TRIGGER IF EXISTS `conversations_search_insert`;
--> statement-breakpoint
CREATE TRIGGER `conversations_search_insert` AFTER INSERT ON `conversations`
BEGIN
  UPDATE conversations SET search_key = new.rowid WHERE rowid = new.rowid;
  INSERT INTO search_backlog (kind, ref) VALUES (0, new.rowid);
END;
--> statement-breakpoint
DROP TRIGGER IF EXISTS `messages_search_insert`;
--> statement-breakpoint
CREATE TRIGGER `messages_search_insert` AFTER INSERT ON `messages`
WHEN new.conversation_id IS NOT NULL
BEGIN
  INSERT INTO search_backlog (kind, ref) VALUES (1, new.rowid);
END;
