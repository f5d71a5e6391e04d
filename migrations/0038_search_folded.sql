-- Thread search keeps folded text (src/db/search/text.ts, foldForSearch), the folding PostgreSQL's
-- unaccent does: ø, ß, æ, œ, ł, đ, þ (and the rest of its letters without a decomposition),
-- ligatures, full-width letters and Greek accents, which FTS5's own diacritic removal leaves as
-- they are. The server folds, so the index is written by the server alone:
-- 1. A contact renamed (or renumbered) notes its threads in the backlog instead of writing their
--    labels here; the drain rewrites each label from the contact as it is then. Only a real change
--    notes them: an import that writes the same name again costs nothing.
-- 2. The index is made again, empty (dropping it is quicker than deleting its rows), and every
--    thread and message noted again, in the order they were written, so the drain rebuilds it
--    folded: the server's indexer drains it in the background (500 rows a batch), and a search
--    drains up to 20,000 rows before it reads.
DROP TRIGGER IF EXISTS `contacts_search_update`;
--> statement-breakpoint
CREATE TRIGGER `contacts_search_update` AFTER UPDATE OF first_name, last_name, phone_number ON `contacts`
WHEN old.first_name IS NOT new.first_name OR old.last_name IS NOT new.last_name OR old.phone_number IS NOT new.phone_number
BEGIN
  INSERT INTO search_backlog (kind, ref)
  SELECT 0, rowid FROM conversations WHERE workspace_id = new.workspace_id AND contact_id = new.id;
END;
--> statement-breakpoint
DROP TABLE `conversation_search`;
--> statement-breakpoint
CREATE VIRTUAL TABLE `conversation_search` USING fts5(
  text,
  message_id UNINDEXED,
  tokenize = 'unicode61 remove_diacritics 2'
);
--> statement-breakpoint
DELETE FROM `search_backlog`;
--> statement-breakpoint
INSERT INTO `search_backlog` (kind, ref) SELECT 0, rowid FROM `conversations` ORDER BY rowid;
--> statement-breakpoint
INSERT INTO `search_backlog` (kind, ref)
SELECT 1, rowid FROM `messages` WHERE conversation_id IS NOT NULL ORDER BY rowid;
