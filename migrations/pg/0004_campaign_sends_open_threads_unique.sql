CREATE TABLE "number_order_claims" (
	"number" text PRIMARY KEY NOT NULL,
	"claimed_at" bigint NOT NULL
);
--> statement-breakpoint
DROP INDEX "sandbox_sends_message_idx";--> statement-breakpoint
ALTER TABLE "sandbox_sends" ADD COLUMN "handoffs" integer DEFAULT 1 NOT NULL;--> statement-breakpoint
CREATE UNIQUE INDEX "calls_campaign_contact_idx" ON "calls" USING btree ("campaign_id","contact_id") WHERE campaign_id IS NOT NULL;--> statement-breakpoint
-- A contact has at most one open thread: of several (a closed thread reopened by PATCH while
-- another was open), the newest stays open.
UPDATE "conversations" SET "status" = 'closed' WHERE "status" = 'open' AND EXISTS (SELECT 1 FROM "conversations" AS c
  WHERE c."workspace_id" = "conversations"."workspace_id" AND c."contact_id" = "conversations"."contact_id" AND c."status" = 'open'
  AND (c."created_at" > "conversations"."created_at" OR (c."created_at" = "conversations"."created_at" AND c."id" > "conversations"."id")));--> statement-breakpoint
CREATE UNIQUE INDEX "conversations_open_contact_idx" ON "conversations" USING btree ("workspace_id","contact_id") WHERE status = 'open';--> statement-breakpoint
CREATE UNIQUE INDEX "messages_campaign_contact_idx" ON "messages" USING btree ("campaign_id","contact_id") WHERE campaign_id IS NOT NULL;--> statement-breakpoint
-- The ledger keeps one row per message (a repeated hand-off counts in handoffs): duplicates
-- written before this migration fold into the first row.
UPDATE "sandbox_sends" SET "handoffs" = (SELECT count(*) FROM "sandbox_sends" AS s WHERE s."message_id" = "sandbox_sends"."message_id")
WHERE "message_id" IN (SELECT "message_id" FROM "sandbox_sends" GROUP BY "message_id" HAVING count(*) > 1);--> statement-breakpoint
DELETE FROM "sandbox_sends" WHERE EXISTS (SELECT 1 FROM "sandbox_sends" AS s WHERE s."message_id" = "sandbox_sends"."message_id"
  AND (s."accepted_at" < "sandbox_sends"."accepted_at" OR (s."accepted_at" = "sandbox_sends"."accepted_at" AND s."id" < "sandbox_sends"."id")));--> statement-breakpoint
CREATE UNIQUE INDEX "sandbox_sends_message_idx" ON "sandbox_sends" USING btree ("message_id");
