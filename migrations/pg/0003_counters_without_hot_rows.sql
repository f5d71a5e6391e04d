-- The trigger-kept counters without hot rows (design survey §1 Tier C). In 0001 every concurrent
-- write of a workspace's contacts, of any link, or of a workspace's messages of a day and status
-- updated the same counter row, which serialized those transactions until commit, and a status
-- move locked two rows in data-dependent order (deadlocks between batches). Here no write updates
-- a shared row: the triggers append delta rows (or take a sequence's next value), and the names
-- the domain reads are views answering as SQLite's tables do (same columns, same values; a
-- workspace that was never written still has no row). outreach_roll_up_counters(), run by the
-- daily maintenance job, folds the deltas into one row per key.
--
-- The pg-core twins (src/db/schema/pg) still declare the three names as tables, so reads type as
-- on SQLite; drizzle-kit's snapshots do too. A change to those SQLite tables needs a hand-written
-- migration here, not a generated ALTER TABLE.

-- message_daily_counts: one delta row per change (+1 for the new workspace/day/status of a
-- message, -1 for its old one), indexed for analytics' sum over (workspace, status, day range).
CREATE TABLE message_daily_count_deltas (
  id bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY,
  workspace_id text NOT NULL,
  day integer NOT NULL,
  status text NOT NULL,
  n integer NOT NULL
);
--> statement-breakpoint
INSERT INTO message_daily_count_deltas (workspace_id, day, status, n)
  SELECT workspace_id, day, status, n FROM message_daily_counts;
--> statement-breakpoint
CREATE INDEX message_daily_count_deltas_read_idx ON message_daily_count_deltas (workspace_id, status, day) INCLUDE (n);
--> statement-breakpoint
DROP TABLE message_daily_counts;
--> statement-breakpoint
CREATE VIEW message_daily_counts AS
  SELECT workspace_id, day, status, sum(n)::integer AS n
  FROM message_daily_count_deltas GROUP BY workspace_id, day, status;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION message_daily_counts_track() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP IN ('UPDATE', 'DELETE') THEN
    INSERT INTO message_daily_count_deltas (workspace_id, day, status, n)
    VALUES (OLD.workspace_id, OLD.created_at / 86400000, OLD.status, -1);
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') THEN
    INSERT INTO message_daily_count_deltas (workspace_id, day, status, n)
    VALUES (NEW.workspace_id, NEW.created_at / 86400000, NEW.status, 1);
  END IF;
  RETURN NULL;
END
$$;
--> statement-breakpoint
DROP FUNCTION message_daily_counts_add(text, bigint, text);
--> statement-breakpoint
DROP FUNCTION message_daily_counts_remove(text, bigint, text);
--> statement-breakpoint

-- audience_versions: one delta row per write of contacts or list_members (writes 1; contacts +1
-- for a contact's insert, -1 for its delete). The version is the number of the workspace's
-- committed audience writes, as on SQLite: every commit that writes raises it, and a reader sees
-- it only once committed. (max(nextval) would not do: a transaction that took a smaller value but
-- commits later would leave the version unchanged, and a count cached against it stale.)
CREATE TABLE audience_version_deltas (
  id bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY,
  workspace_id text NOT NULL,
  writes bigint NOT NULL,
  contacts integer NOT NULL
);
--> statement-breakpoint
INSERT INTO audience_version_deltas (workspace_id, writes, contacts)
  SELECT workspace_id, version, contact_count FROM audience_versions;
--> statement-breakpoint
CREATE INDEX audience_version_deltas_workspace_idx ON audience_version_deltas (workspace_id) INCLUDE (writes, contacts);
--> statement-breakpoint
DROP TABLE audience_versions;
--> statement-breakpoint
CREATE VIEW audience_versions AS
  SELECT workspace_id, sum(writes)::bigint AS version, sum(contacts)::integer AS contact_count
  FROM audience_version_deltas GROUP BY workspace_id;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION audience_versions_bump() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  ws text;
  delta integer := 0;
BEGIN
  IF TG_OP = 'DELETE' THEN ws := OLD.workspace_id; ELSE ws := NEW.workspace_id; END IF;
  IF TG_TABLE_NAME = 'contacts' AND TG_OP = 'INSERT' THEN delta := 1; END IF;
  IF TG_TABLE_NAME = 'contacts' AND TG_OP = 'DELETE' THEN delta := -1; END IF;
  INSERT INTO audience_version_deltas (workspace_id, writes, contacts) VALUES (ws, 1, delta);
  RETURN NULL;
END
$$;
--> statement-breakpoint

-- link_versions: a sequence, taken by every change or removal of an offer or a tracked link (no
-- row lock). The view has SQLite's one row (id 1) once the first change is made. A sequence moves
-- when a value is taken, not at commit, so the version is no cache key here: PostgreSQL's link
-- cache empties on the change notifications, which move from link_versions (a view carries no
-- trigger) to the writes that bump it.
CREATE SEQUENCE link_versions_seq AS bigint;
--> statement-breakpoint
SELECT setval('link_versions_seq', version) FROM link_versions WHERE id = 1 AND version > 0;
--> statement-breakpoint
DROP TABLE link_versions;
--> statement-breakpoint
CREATE VIEW link_versions AS
  SELECT 1::bigint AS id, last_value AS version FROM link_versions_seq WHERE is_called;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION link_versions_bump() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM nextval('link_versions_seq');
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER offers_changes AFTER UPDATE OR DELETE ON offers FOR EACH STATEMENT EXECUTE FUNCTION outreach_notify_change();
--> statement-breakpoint
CREATE TRIGGER tracked_links_changes AFTER UPDATE OR DELETE ON tracked_links FOR EACH STATEMENT EXECUTE FUNCTION outreach_notify_change();
--> statement-breakpoint

-- The roll-up: each delta table folded into one row per key, one statement per table. A statement
-- deletes only the rows its snapshot sees and inserts their sums, so deltas that concurrent
-- writers append meanwhile stay as they are, readers see the rows before or after (never both),
-- and a concurrent roll-up skips the rows this one deleted. Keys with one row are left alone; a
-- key whose sum is 0 keeps its row, as SQLite's tables do.
CREATE FUNCTION outreach_roll_up_counters() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  WITH gone AS (
    DELETE FROM message_daily_count_deltas
    WHERE (workspace_id, day, status) IN (
      SELECT workspace_id, day, status FROM message_daily_count_deltas
      GROUP BY workspace_id, day, status HAVING count(*) > 1)
    RETURNING workspace_id, day, status, n
  )
  INSERT INTO message_daily_count_deltas (workspace_id, day, status, n)
  SELECT workspace_id, day, status, sum(n) FROM gone GROUP BY workspace_id, day, status;

  WITH gone AS (
    DELETE FROM audience_version_deltas
    WHERE workspace_id IN (
      SELECT workspace_id FROM audience_version_deltas GROUP BY workspace_id HAVING count(*) > 1)
    RETURNING workspace_id, writes, contacts
  )
  INSERT INTO audience_version_deltas (workspace_id, writes, contacts)
  SELECT workspace_id, sum(writes), sum(contacts) FROM gone GROUP BY workspace_id;
END
$$;
