-- Thread search for GET /v1/conversations?q= (replaces messages_fts of 0002). One FTS5 table,
-- queried only through src/db/message-search.ts (another dialect swaps that one module):
--   rowid = search_key * 2^20 + n, where search_key is the thread's stable numeric key
--   (conversations.search_key) and n = 0 is the thread's contact label (name and the phone's digit
--   suffixes, so "5550123" finds "+14155550123"), n >= 1 its messages in order.
-- A query needs only rowids (rowid >> 20 is the thread), never the stored text, so matching many
-- messages stays cheap.
DROP TRIGGER IF EXISTS `messages_fts_insert`;
--> statement-breakpoint
DROP TRIGGER IF EXISTS `messages_fts_delete`;
--> statement-breakpoint
DROP TABLE IF EXISTS `messages_fts`;
--> statement-breakpoint
CREATE VIRTUAL TABLE `conversation_search` USING fts5(
  text,
  message_id UNINDEXED,
  tokenize = 'unicode61 remove_diacritics 2'
);
--> statement-breakpoint
UPDATE `conversations` SET `search_key` = rowid;
--> statement-breakpoint
INSERT INTO conversation_search (rowid, text, message_id)
SELECT cv.search_key * 1048576, coalesce(c.first_name, '') || ' ' || coalesce(c.last_name, '') || ' ' || replace(replace(c.phone_number, '+', ''), ' ', '') || ' ' || substr(replace(replace(c.phone_number, '+', ''), ' ', ''), 2) || ' ' || substr(replace(replace(c.phone_number, '+', ''), ' ', ''), 3) || ' ' || substr(replace(replace(c.phone_number, '+', ''), ' ', ''), 4) || ' ' || substr(replace(replace(c.phone_number, '+', ''), ' ', ''), 5) || ' ' || substr(replace(replace(c.phone_number, '+', ''), ' ', ''), 6) || ' ' || substr(replace(replace(c.phone_number, '+', ''), ' ', ''), 7) || ' ' || substr(replace(replace(c.phone_number, '+', ''), ' ', ''), 8) || ' ' || substr(replace(replace(c.phone_number, '+', ''), ' ', ''), 9) || ' ' || substr(replace(replace(c.phone_number, '+', ''), ' ', ''), 10) || ' ' || substr(replace(replace(c.phone_number, '+', ''), ' ', ''), 11), NULL
FROM conversations cv JOIN contacts c ON c.id = cv.contact_id;
--> statement-breakpoint
INSERT INTO conversation_search (rowid, text, message_id)
SELECT cv.search_key * 1048576 + row_number() OVER (PARTITION BY m.conversation_id ORDER BY m.rowid), m.body, m.id
FROM messages m JOIN conversations cv ON cv.id = m.conversation_id;
--> statement-breakpoint
CREATE TRIGGER `conversations_search_insert` AFTER INSERT ON `conversations`
BEGIN
  UPDATE conversations SET search_key = new.rowid WHERE rowid = new.rowid;
  INSERT INTO conversation_search (rowid, text, message_id)
  SELECT new.rowid * 1048576, coalesce(c.first_name, '') || ' ' || coalesce(c.last_name, '') || ' ' || replace(replace(c.phone_number, '+', ''), ' ', '') || ' ' || substr(replace(replace(c.phone_number, '+', ''), ' ', ''), 2) || ' ' || substr(replace(replace(c.phone_number, '+', ''), ' ', ''), 3) || ' ' || substr(replace(replace(c.phone_number, '+', ''), ' ', ''), 4) || ' ' || substr(replace(replace(c.phone_number, '+', ''), ' ', ''), 5) || ' ' || substr(replace(replace(c.phone_number, '+', ''), ' ', ''), 6) || ' ' || substr(replace(replace(c.phone_number, '+', ''), ' ', ''), 7) || ' ' || substr(replace(replace(c.phone_number, '+', ''), ' ', ''), 8) || ' ' || substr(replace(replace(c.phone_number, '+', ''), ' ', ''), 9) || ' ' || substr(replace(replace(c.phone_number, '+', ''), ' ', ''), 10) || ' ' || substr(replace(replace(c.phone_number, '+', ''), ' ', ''), 11), NULL FROM contacts c WHERE c.id = new.contact_id;
END;
--> statement-breakpoint
CREATE TRIGGER `conversations_search_delete` AFTER DELETE ON `conversations`
BEGIN
  DELETE FROM conversation_search WHERE rowid BETWEEN old.search_key * 1048576 AND old.search_key * 1048576 + 1048575;
END;
--> statement-breakpoint
CREATE TRIGGER `messages_search_insert` AFTER INSERT ON `messages`
WHEN new.conversation_id IS NOT NULL
BEGIN
  INSERT INTO conversation_search (rowid, text, message_id)
  SELECT coalesce(
      (SELECT max(s.rowid) FROM conversation_search s
       WHERE s.rowid BETWEEN cv.search_key * 1048576 AND cv.search_key * 1048576 + 1048575),
      cv.search_key * 1048576
    ) + 1, new.body, new.id
  FROM conversations cv WHERE cv.id = new.conversation_id;
END;
--> statement-breakpoint
CREATE TRIGGER `messages_search_delete` AFTER DELETE ON `messages`
WHEN old.conversation_id IS NOT NULL
BEGIN
  DELETE FROM conversation_search
  WHERE rowid IN (
    SELECT s.rowid FROM conversation_search s, conversations cv
    WHERE cv.id = old.conversation_id
      AND s.rowid BETWEEN cv.search_key * 1048576 + 1 AND cv.search_key * 1048576 + 1048575
      AND s.message_id = old.id
  );
END;
--> statement-breakpoint
CREATE TRIGGER `contacts_search_update` AFTER UPDATE OF first_name, last_name, phone_number ON `contacts`
BEGIN
  DELETE FROM conversation_search
  WHERE rowid IN (SELECT search_key * 1048576 FROM conversations WHERE workspace_id = new.workspace_id AND contact_id = new.id);
  INSERT INTO conversation_search (rowid, text, message_id)
  SELECT cv.search_key * 1048576, coalesce(new.first_name, '') || ' ' || coalesce(new.last_name, '') || ' ' || replace(replace(new.phone_number, '+', ''), ' ', '') || ' ' || substr(replace(replace(new.phone_number, '+', ''), ' ', ''), 2) || ' ' || substr(replace(replace(new.phone_number, '+', ''), ' ', ''), 3) || ' ' || substr(replace(replace(new.phone_number, '+', ''), ' ', ''), 4) || ' ' || substr(replace(replace(new.phone_number, '+', ''), ' ', ''), 5) || ' ' || substr(replace(replace(new.phone_number, '+', ''), ' ', ''), 6) || ' ' || substr(replace(replace(new.phone_number, '+', ''), ' ', ''), 7) || ' ' || substr(replace(replace(new.phone_number, '+', ''), ' ', ''), 8) || ' ' || substr(replace(replace(new.phone_number, '+', ''), ' ', ''), 9) || ' ' || substr(replace(replace(new.phone_number, '+', ''), ' ', ''), 10) || ' ' || substr(replace(replace(new.phone_number, '+', ''), ' ', ''), 11), NULL
  FROM conversations cv WHERE cv.workspace_id = new.workspace_id AND cv.contact_id = new.id;
END;
