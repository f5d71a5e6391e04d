-- A thread's label in the search index is written by the server, as on SQLite (migration 0038 of
-- the SQLite list): the drain reads the contact and writes `contactLabel` (src/db/search/text.ts),
-- so one function makes the label's words on both databases. Until now the database made them
-- here (conversation_search_label), a second spelling of the same rules.
--
-- A contact's new name or number no longer writes its threads' labels in this trigger: it notes
-- the threads in the backlog (kind 0), and only when the name or number really changed. The drain
-- locks the contact while it reads it (FOR SHARE), so a rename committed after that read waits for
-- the drain's commit, and its backlog rows are drained after it: the newest label is written last.
-- A contact another transaction is changing at that moment is skipped (SKIP LOCKED) and its thread
-- put back in the backlog: the drain never waits while holding other contacts.
DROP TRIGGER contacts_search_update ON contacts;
--> statement-breakpoint
CREATE FUNCTION search_backlog_contact_renamed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO search_backlog (kind, ref)
  SELECT 0, cv.id FROM conversations cv WHERE cv.workspace_id = NEW.workspace_id AND cv.contact_id = NEW.id;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER contacts_search_update AFTER UPDATE OF first_name, last_name, phone_number ON contacts FOR EACH ROW
WHEN (OLD.first_name IS DISTINCT FROM NEW.first_name
   OR OLD.last_name IS DISTINCT FROM NEW.last_name
   OR OLD.phone_number IS DISTINCT FROM NEW.phone_number)
EXECUTE FUNCTION search_backlog_contact_renamed();
--> statement-breakpoint
-- The deletes stay here (a thread's or a message's rows leave the index with it).
CREATE OR REPLACE FUNCTION conversation_search_track() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_TABLE_NAME = 'conversations' AND TG_OP = 'DELETE' THEN
    DELETE FROM conversation_search WHERE conversation_id = OLD.id;
  ELSIF TG_TABLE_NAME = 'messages' AND TG_OP = 'DELETE' THEN
    DELETE FROM conversation_search WHERE conversation_id = OLD.conversation_id AND message_id = OLD.id;
  END IF;
  RETURN NULL;
END
$$;
--> statement-breakpoint
DROP FUNCTION conversation_search_label(text, text, text);
--> statement-breakpoint
-- Every thread's label is written again by the server's drain (in the background after the
-- upgrade; a search drains first).
INSERT INTO search_backlog (kind, ref) SELECT 0, id FROM conversations ORDER BY created_at, id;
