-- What drizzle-kit cannot express, written by hand: the PostgreSQL twins of the SQLite triggers
-- (migrations 0007, 0015, 0017, 0026 of the SQLite list) and of the FTS5 thread search (0009, 0011,
-- 0028). Trigger names are the SQLite ones.
--
-- The counters (audience_versions, link_versions, message_daily_counts) are row-level AFTER
-- triggers equivalent to SQLite's. They are hot rows on PostgreSQL: every concurrent write of a
-- workspace's contacts, of any link, or of a workspace's messages of a day and status updates the
-- same row, which serializes those transactions until commit, and a status move touches two
-- counter rows in data-dependent order (deadlock cycles between batches). A later step replaces
-- them (append-only delta rows rolled up by a job, versions as sequences): design survey §1 Tier C.

-- audience_versions: every write to contacts or list_members bumps its workspace's version; the
-- insert and delete of a contact also keep contact_count.
CREATE FUNCTION audience_versions_bump() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  ws text;
  delta integer := 0;
BEGIN
  IF TG_OP = 'DELETE' THEN ws := OLD.workspace_id; ELSE ws := NEW.workspace_id; END IF;
  IF TG_TABLE_NAME = 'contacts' AND TG_OP = 'INSERT' THEN delta := 1; END IF;
  IF TG_TABLE_NAME = 'contacts' AND TG_OP = 'DELETE' THEN delta := -1; END IF;
  INSERT INTO audience_versions (workspace_id, version, contact_count) VALUES (ws, 1, greatest(delta, 0))
  ON CONFLICT (workspace_id) DO UPDATE
    SET version = audience_versions.version + 1, contact_count = audience_versions.contact_count + delta;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER contacts_audience_insert AFTER INSERT ON contacts FOR EACH ROW EXECUTE FUNCTION audience_versions_bump();
--> statement-breakpoint
CREATE TRIGGER contacts_audience_update AFTER UPDATE ON contacts FOR EACH ROW EXECUTE FUNCTION audience_versions_bump();
--> statement-breakpoint
CREATE TRIGGER contacts_audience_delete AFTER DELETE ON contacts FOR EACH ROW EXECUTE FUNCTION audience_versions_bump();
--> statement-breakpoint
CREATE TRIGGER list_members_audience_insert AFTER INSERT ON list_members FOR EACH ROW EXECUTE FUNCTION audience_versions_bump();
--> statement-breakpoint
CREATE TRIGGER list_members_audience_update AFTER UPDATE ON list_members FOR EACH ROW EXECUTE FUNCTION audience_versions_bump();
--> statement-breakpoint
CREATE TRIGGER list_members_audience_delete AFTER DELETE ON list_members FOR EACH ROW EXECUTE FUNCTION audience_versions_bump();
--> statement-breakpoint

-- link_versions: one global counter (id 1) bumped by every change or removal of an offer or a
-- tracked link.
CREATE FUNCTION link_versions_bump() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO link_versions (id, version) VALUES (1, 1)
  ON CONFLICT (id) DO UPDATE SET version = link_versions.version + 1;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER offers_link_version_update AFTER UPDATE ON offers FOR EACH ROW EXECUTE FUNCTION link_versions_bump();
--> statement-breakpoint
CREATE TRIGGER offers_link_version_delete AFTER DELETE ON offers FOR EACH ROW EXECUTE FUNCTION link_versions_bump();
--> statement-breakpoint
CREATE TRIGGER tracked_links_link_version_update AFTER UPDATE ON tracked_links FOR EACH ROW EXECUTE FUNCTION link_versions_bump();
--> statement-breakpoint
CREATE TRIGGER tracked_links_link_version_delete AFTER DELETE ON tracked_links FOR EACH ROW EXECUTE FUNCTION link_versions_bump();
--> statement-breakpoint

-- message_daily_counts: messages per workspace, UTC day of created_at (days since 1970-01-01) and
-- status, whoever writes them.
CREATE FUNCTION message_daily_counts_add(ws text, at_ms bigint, st text) RETURNS void LANGUAGE sql AS $$
  INSERT INTO message_daily_counts (workspace_id, day, status, n) VALUES (ws, at_ms / 86400000, st, 1)
  ON CONFLICT (workspace_id, day, status) DO UPDATE SET n = message_daily_counts.n + 1;
$$;
--> statement-breakpoint
CREATE FUNCTION message_daily_counts_remove(ws text, at_ms bigint, st text) RETURNS void LANGUAGE sql AS $$
  UPDATE message_daily_counts SET n = n - 1
  WHERE workspace_id = ws AND day = at_ms / 86400000 AND status = st;
$$;
--> statement-breakpoint
CREATE FUNCTION message_daily_counts_track() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP IN ('UPDATE', 'DELETE') THEN
    PERFORM message_daily_counts_remove(OLD.workspace_id, OLD.created_at, OLD.status);
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') THEN
    PERFORM message_daily_counts_add(NEW.workspace_id, NEW.created_at, NEW.status);
  END IF;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER messages_daily_insert AFTER INSERT ON messages FOR EACH ROW EXECUTE FUNCTION message_daily_counts_track();
--> statement-breakpoint
CREATE TRIGGER messages_daily_update AFTER UPDATE OF status, workspace_id, created_at ON messages FOR EACH ROW
WHEN (OLD.status IS DISTINCT FROM NEW.status OR OLD.workspace_id IS DISTINCT FROM NEW.workspace_id OR OLD.created_at IS DISTINCT FROM NEW.created_at)
EXECUTE FUNCTION message_daily_counts_track();
--> statement-breakpoint
CREATE TRIGGER messages_daily_delete AFTER DELETE ON messages FOR EACH ROW EXECUTE FUNCTION message_daily_counts_track();
--> statement-breakpoint

-- conversations.search_key: an identity column (the baseline), so no trigger: a thread inserted
-- without a key gets the sequence's next one, and concurrent inserts never pick the same key.

-- Thread search, the twin of the FTS5 table conversation_search. One row per thread for its
-- contact's label (message_id NULL: name and the phone's digit suffixes, so "5550123" finds
-- "+14155550123") and one per message. `tsv` is the text's 'simple' tsvector without accents (FTS5:
-- unicode61 remove_diacritics 2), searched through the GIN index with prefix terms
-- (to_tsquery('simple', 'w1:* & w2:*')). As on SQLite, inserts go through search_backlog and the
-- search module fills the table (drained with FOR UPDATE SKIP LOCKED on PostgreSQL); deletes and a
-- contact's new name or number are applied here at once.
CREATE EXTENSION IF NOT EXISTS unaccent;
--> statement-breakpoint
-- unaccent() is STABLE (it reads its dictionary through search_path); a generated column needs an
-- IMMUTABLE function, so this one names the extension's schema and dictionary itself.
DO $$
DECLARE
  s text;
BEGIN
  SELECT n.nspname INTO s FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'unaccent';
  EXECUTE format(
    'CREATE FUNCTION search_unaccent(text) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT AS %L',
    format('SELECT %I.unaccent(%L::regdictionary, $1)', s, quote_ident(s) || '.unaccent')
  );
END
$$;
--> statement-breakpoint
CREATE TABLE conversation_search (
  id bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY,
  conversation_id text NOT NULL,
  -- NULL: the thread's contact label.
  message_id text,
  text text NOT NULL,
  tsv tsvector GENERATED ALWAYS AS (to_tsvector('simple'::regconfig, search_unaccent(text))) STORED
);
--> statement-breakpoint
CREATE INDEX conversation_search_tsv_idx ON conversation_search USING gin (tsv);
--> statement-breakpoint
CREATE UNIQUE INDEX conversation_search_label_idx ON conversation_search (conversation_id) WHERE message_id IS NULL;
--> statement-breakpoint
CREATE UNIQUE INDEX conversation_search_message_idx ON conversation_search (conversation_id, message_id) WHERE message_id IS NOT NULL;
--> statement-breakpoint
-- A contact's label text, the same words as SQLite's (migration 0009).
CREATE FUNCTION conversation_search_label(first_name text, last_name text, phone_number text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT coalesce(first_name, '') || ' ' || coalesce(last_name, '') || ' ' || d || ' ' || substr(d, 2) || ' '
    || substr(d, 3) || ' ' || substr(d, 4) || ' ' || substr(d, 5) || ' ' || substr(d, 6) || ' ' || substr(d, 7)
    || ' ' || substr(d, 8) || ' ' || substr(d, 9) || ' ' || substr(d, 10) || ' ' || substr(d, 11)
  FROM (SELECT replace(replace(phone_number, '+', ''), ' ', '') AS d) AS digits;
$$;
--> statement-breakpoint
-- Rows waiting to be indexed: kind 0 is a thread's contact label (ref = conversations.id), kind 1 a
-- message (ref = messages.id). SQLite keys them by rowid; PostgreSQL has none, so by id.
CREATE TABLE search_backlog (
  seq bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY,
  kind integer NOT NULL,
  ref text NOT NULL
);
--> statement-breakpoint
CREATE FUNCTION conversation_search_track() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_TABLE_NAME = 'conversations' AND TG_OP = 'INSERT' THEN
    INSERT INTO search_backlog (kind, ref) VALUES (0, NEW.id);
  ELSIF TG_TABLE_NAME = 'conversations' AND TG_OP = 'DELETE' THEN
    DELETE FROM conversation_search WHERE conversation_id = OLD.id;
  ELSIF TG_TABLE_NAME = 'messages' AND TG_OP = 'INSERT' THEN
    INSERT INTO search_backlog (kind, ref) VALUES (1, NEW.id);
  ELSIF TG_TABLE_NAME = 'messages' AND TG_OP = 'DELETE' THEN
    DELETE FROM conversation_search WHERE conversation_id = OLD.conversation_id AND message_id = OLD.id;
  ELSIF TG_TABLE_NAME = 'contacts' AND TG_OP = 'UPDATE' THEN
    INSERT INTO conversation_search (conversation_id, message_id, text)
    SELECT cv.id, NULL, conversation_search_label(NEW.first_name, NEW.last_name, NEW.phone_number)
    FROM conversations cv WHERE cv.workspace_id = NEW.workspace_id AND cv.contact_id = NEW.id
    ON CONFLICT (conversation_id) WHERE message_id IS NULL DO UPDATE SET text = excluded.text;
  END IF;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER conversations_search_insert AFTER INSERT ON conversations FOR EACH ROW EXECUTE FUNCTION conversation_search_track();
--> statement-breakpoint
CREATE TRIGGER conversations_search_delete AFTER DELETE ON conversations FOR EACH ROW EXECUTE FUNCTION conversation_search_track();
--> statement-breakpoint
CREATE TRIGGER messages_search_insert AFTER INSERT ON messages FOR EACH ROW
WHEN (NEW.conversation_id IS NOT NULL) EXECUTE FUNCTION conversation_search_track();
--> statement-breakpoint
CREATE TRIGGER messages_search_delete AFTER DELETE ON messages FOR EACH ROW
WHEN (OLD.conversation_id IS NOT NULL) EXECUTE FUNCTION conversation_search_track();
--> statement-breakpoint
CREATE TRIGGER contacts_search_update AFTER UPDATE OF first_name, last_name, phone_number ON contacts FOR EACH ROW
EXECUTE FUNCTION conversation_search_track();
