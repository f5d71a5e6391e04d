DROP INDEX "messages_workspace_campaign_idx";--> statement-breakpoint
DROP INDEX "messages_carrier_id_idx";--> statement-breakpoint
CREATE INDEX "messages_carrier_id_idx" ON "messages" USING btree ("carrier_message_id") WHERE carrier_message_id IS NOT NULL;