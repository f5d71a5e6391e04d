-- The trigger-kept counters and the search backlog, written once per statement instead of once
-- per row. Batched writes (a dispatch step's messages, a batch of status changes, a group of
-- one-off sends) change tens of rows a statement: a row trigger ran a PL/pgSQL call and appended
-- one or two rows for each, a message leaving about seven delta rows behind (its insert and two
-- for each of three status changes). A statement trigger reads the statement's rows from its
-- transition tables and appends one delta row per (workspace, day, status) it changed. The sums
-- the views answer are the same.

-- Messages: daily counts per status.
DROP TRIGGER messages_daily_insert ON messages;
--> statement-breakpoint
DROP TRIGGER messages_daily_update ON messages;
--> statement-breakpoint
DROP TRIGGER messages_daily_delete ON messages;
--> statement-breakpoint
DROP FUNCTION message_daily_counts_track();
--> statement-breakpoint
CREATE FUNCTION message_daily_counts_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO message_daily_count_deltas (workspace_id, day, status, n)
  SELECT workspace_id, created_at / 86400000, status, count(*) FROM new_rows GROUP BY 1, 2, 3;
  RETURN NULL;
END
$$;
--> statement-breakpoint
-- A transition table cannot go with a column list (UPDATE OF status): every update statement
-- fires it, and only the rows whose status, workspace or day changed count.
CREATE FUNCTION message_daily_counts_updated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO message_daily_count_deltas (workspace_id, day, status, n)
  SELECT delta.workspace_id, delta.day, delta.status, sum(delta.n) FROM (
    SELECT o.workspace_id AS old_workspace_id, o.created_at / 86400000 AS old_day, o.status AS old_status,
           nw.workspace_id AS new_workspace_id, nw.created_at / 86400000 AS new_day, nw.status AS new_status
    FROM old_rows o JOIN new_rows nw ON nw.id = o.id
    WHERE o.status IS DISTINCT FROM nw.status
       OR o.workspace_id IS DISTINCT FROM nw.workspace_id
       OR o.created_at IS DISTINCT FROM nw.created_at
  ) changed
  CROSS JOIN LATERAL (
    VALUES (changed.old_workspace_id, changed.old_day, changed.old_status, -1),
           (changed.new_workspace_id, changed.new_day, changed.new_status, 1)
  ) AS delta (workspace_id, day, status, n)
  GROUP BY 1, 2, 3;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE FUNCTION message_daily_counts_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO message_daily_count_deltas (workspace_id, day, status, n)
  SELECT workspace_id, created_at / 86400000, status, -count(*) FROM old_rows GROUP BY 1, 2, 3;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER messages_daily_insert AFTER INSERT ON messages REFERENCING NEW TABLE AS new_rows
FOR EACH STATEMENT EXECUTE FUNCTION message_daily_counts_inserted();
--> statement-breakpoint
CREATE TRIGGER messages_daily_update AFTER UPDATE ON messages REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
FOR EACH STATEMENT EXECUTE FUNCTION message_daily_counts_updated();
--> statement-breakpoint
CREATE TRIGGER messages_daily_delete AFTER DELETE ON messages REFERENCING OLD TABLE AS old_rows
FOR EACH STATEMENT EXECUTE FUNCTION message_daily_counts_deleted();
--> statement-breakpoint

-- Audience versions: one write counted per row written, contacts added and removed.
DROP TRIGGER contacts_audience_insert ON contacts;
--> statement-breakpoint
DROP TRIGGER contacts_audience_update ON contacts;
--> statement-breakpoint
DROP TRIGGER contacts_audience_delete ON contacts;
--> statement-breakpoint
DROP TRIGGER list_members_audience_insert ON list_members;
--> statement-breakpoint
DROP TRIGGER list_members_audience_update ON list_members;
--> statement-breakpoint
DROP TRIGGER list_members_audience_delete ON list_members;
--> statement-breakpoint
DROP FUNCTION audience_versions_bump();
--> statement-breakpoint
-- TG_ARGV[0]: what a row of the statement adds to contact_count (contacts: 1 inserted, -1
-- deleted; list members: 0).
CREATE FUNCTION audience_versions_written() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO audience_version_deltas (workspace_id, writes, contacts)
  SELECT workspace_id, count(*), count(*) * TG_ARGV[0]::integer FROM new_rows GROUP BY 1;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE FUNCTION audience_versions_removed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO audience_version_deltas (workspace_id, writes, contacts)
  SELECT workspace_id, count(*), count(*) * TG_ARGV[0]::integer FROM old_rows GROUP BY 1;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER contacts_audience_insert AFTER INSERT ON contacts REFERENCING NEW TABLE AS new_rows
FOR EACH STATEMENT EXECUTE FUNCTION audience_versions_written('1');
--> statement-breakpoint
CREATE TRIGGER contacts_audience_update AFTER UPDATE ON contacts REFERENCING NEW TABLE AS new_rows
FOR EACH STATEMENT EXECUTE FUNCTION audience_versions_written('0');
--> statement-breakpoint
CREATE TRIGGER contacts_audience_delete AFTER DELETE ON contacts REFERENCING OLD TABLE AS old_rows
FOR EACH STATEMENT EXECUTE FUNCTION audience_versions_removed('-1');
--> statement-breakpoint
CREATE TRIGGER list_members_audience_insert AFTER INSERT ON list_members REFERENCING NEW TABLE AS new_rows
FOR EACH STATEMENT EXECUTE FUNCTION audience_versions_written('0');
--> statement-breakpoint
CREATE TRIGGER list_members_audience_update AFTER UPDATE ON list_members REFERENCING NEW TABLE AS new_rows
FOR EACH STATEMENT EXECUTE FUNCTION audience_versions_written('0');
--> statement-breakpoint
CREATE TRIGGER list_members_audience_delete AFTER DELETE ON list_members REFERENCING OLD TABLE AS old_rows
FOR EACH STATEMENT EXECUTE FUNCTION audience_versions_removed('0');
--> statement-breakpoint

-- The search backlog: new threads and messages, a row each, appended once per statement.
DROP TRIGGER conversations_search_insert ON conversations;
--> statement-breakpoint
DROP TRIGGER messages_search_insert ON messages;
--> statement-breakpoint
CREATE FUNCTION search_backlog_threads_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO search_backlog (kind, ref) SELECT 0, id FROM new_rows;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE FUNCTION search_backlog_messages_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO search_backlog (kind, ref) SELECT 1, id FROM new_rows WHERE conversation_id IS NOT NULL;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER conversations_search_insert AFTER INSERT ON conversations REFERENCING NEW TABLE AS new_rows
FOR EACH STATEMENT EXECUTE FUNCTION search_backlog_threads_inserted();
--> statement-breakpoint
CREATE TRIGGER messages_search_insert AFTER INSERT ON messages REFERENCING NEW TABLE AS new_rows
FOR EACH STATEMENT EXECUTE FUNCTION search_backlog_messages_inserted();
