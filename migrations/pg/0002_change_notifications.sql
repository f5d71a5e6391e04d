-- Cache invalidation across processes: a write to a table whose rows a process caches (API keys
-- and workspaces for authentication, tracked links and offers for redirects, webhooks for the
-- fan-out, workspaces' conversion tracking switch) notifies channel outreach_changes once per
-- statement. NOTIFY is transactional: a rolled-back write notifies nobody, and the notifications
-- of one transaction with the same payload arrive once. Every process LISTENs and empties its
-- caches on a notification and on every (re)connection of its listener.
CREATE FUNCTION outreach_notify_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('outreach_changes', TG_TABLE_NAME);
  RETURN NULL;
END;
$$;
--> statement-breakpoint
CREATE TRIGGER api_keys_changes AFTER INSERT OR UPDATE OR DELETE ON api_keys FOR EACH STATEMENT EXECUTE FUNCTION outreach_notify_change();
--> statement-breakpoint
CREATE TRIGGER workspaces_changes AFTER INSERT OR UPDATE OR DELETE ON workspaces FOR EACH STATEMENT EXECUTE FUNCTION outreach_notify_change();
--> statement-breakpoint
CREATE TRIGGER link_versions_changes AFTER INSERT OR UPDATE OR DELETE ON link_versions FOR EACH STATEMENT EXECUTE FUNCTION outreach_notify_change();
--> statement-breakpoint
CREATE TRIGGER webhooks_changes AFTER INSERT OR UPDATE OR DELETE ON webhooks FOR EACH STATEMENT EXECUTE FUNCTION outreach_notify_change();
