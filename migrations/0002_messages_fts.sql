-- Full-text index over message bodies, for GET /v1/conversations?q=. SQLite-only: queried through
-- src/db/message-search.ts alone, so another dialect swaps that one function (e.g. tsvector).
CREATE VIRTUAL TABLE `messages_fts` USING fts5(
  body,
  message_id UNINDEXED,
  workspace_id UNINDEXED,
  conversation_id UNINDEXED,
  tokenize = 'unicode61 remove_diacritics 2'
);
--> statement-breakpoint
CREATE TRIGGER `messages_fts_insert` AFTER INSERT ON `messages`
WHEN new.conversation_id IS NOT NULL
BEGIN
  INSERT INTO messages_fts (body, message_id, workspace_id, conversation_id)
  VALUES (new.body, new.id, new.workspace_id, new.conversation_id);
END;
--> statement-breakpoint
CREATE TRIGGER `messages_fts_delete` AFTER DELETE ON `messages`
BEGIN
  DELETE FROM messages_fts WHERE message_id = old.id;
END;
