CREATE TABLE "agent_threads" (
	"conversation_id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"agent_id" text NOT NULL,
	"reply_due_at" bigint,
	"turns" integer DEFAULT 0 NOT NULL,
	"replies_day" text,
	"replies_today" integer DEFAULT 0 NOT NULL,
	"followups_sent" integer DEFAULT 0 NOT NULL,
	"last_agent_message_at" bigint,
	"goal_reached" boolean DEFAULT false NOT NULL,
	"handoff_reason" text,
	"handed_off_at" bigint,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "agents" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"name" text NOT NULL,
	"system_prompt" text NOT NULL,
	"channel" text NOT NULL,
	"status" text NOT NULL,
	"goal" text,
	"greeting" text,
	"max_turns" integer,
	"handoff_keywords" json NOT NULL,
	"voice_id" text,
	"language" text,
	"model_tier" text NOT NULL,
	"sms" json NOT NULL,
	"voice" json NOT NULL,
	"inbox" json NOT NULL,
	"voice_sync" json,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "api_keys" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"name" text NOT NULL,
	"prefix" text NOT NULL,
	"hash" text NOT NULL,
	"scopes" json NOT NULL,
	"created_at" bigint NOT NULL,
	"last_used_at" bigint,
	"revoked_at" bigint
);
--> statement-breakpoint
CREATE TABLE "audience_versions" (
	"workspace_id" text PRIMARY KEY NOT NULL,
	"version" bigint DEFAULT 0 NOT NULL,
	"contact_count" integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE TABLE "calls" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"direction" text NOT NULL,
	"from_number" text NOT NULL,
	"to_number" text NOT NULL,
	"number_id" text,
	"status" text NOT NULL,
	"agent_id" text,
	"say" text,
	"contact_id" text,
	"conversation_id" text,
	"campaign_id" text,
	"flow_id" text,
	"via" text NOT NULL,
	"provider_call_id" text,
	"duration_sec" integer,
	"transcript" json NOT NULL,
	"recording_url" text,
	"summary" text,
	"sentiment" text,
	"ended_reason" text,
	"handoff_started_at" bigint,
	"created_at" bigint NOT NULL,
	"started_at" bigint,
	"ended_at" bigint,
	"updated_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "sandbox_calls" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"call_id" text NOT NULL,
	"line" text NOT NULL,
	"from_number" text NOT NULL,
	"to_number" text NOT NULL,
	"provider_call_id" text NOT NULL,
	"accepted_at" bigint NOT NULL,
	"report_at" bigint NOT NULL,
	"outcome" json NOT NULL,
	"reported_at" bigint
);
--> statement-breakpoint
CREATE TABLE "webhook_receipts" (
	"signature" text PRIMARY KEY NOT NULL,
	"received_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "campaign_recipients" (
	"campaign_id" text NOT NULL,
	"contact_id" text NOT NULL,
	"workspace_id" text NOT NULL,
	"phone_number" text NOT NULL,
	"variant" text,
	"outcome" text NOT NULL,
	"reason" text,
	"send_at" bigint,
	"due_at" bigint NOT NULL,
	"message_id" text,
	"call_id" text,
	"handed_off_at" bigint,
	"replied_at" bigint,
	"opted_out_at" bigint,
	"created_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "campaigns" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"name" text NOT NULL,
	"campaign_type" text NOT NULL,
	"status" text NOT NULL,
	"audience" json NOT NULL,
	"message" json,
	"say" text,
	"agent_id" text,
	"from_number" text,
	"pool_id" text,
	"offer_id" text,
	"link_domain_id" text,
	"send_at" bigint,
	"quiet_hours" json,
	"throttle_per_minute" integer,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL,
	"launched_at" bigint,
	"completed_at" bigint,
	"canceled_at" bigint,
	"resolved_at" bigint,
	"dispatch_generation" integer DEFAULT 0 NOT NULL,
	"throttle_window_start" bigint,
	"throttle_window_count" integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE TABLE "clicks" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"offer_id" text NOT NULL,
	"code" text NOT NULL,
	"contact_id" text,
	"campaign_id" text,
	"message_id" text,
	"number_id" text,
	"created_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "contacts" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"phone_number" text NOT NULL,
	"first_name" text,
	"last_name" text,
	"email" text,
	"external_id" text,
	"source" text NOT NULL,
	"opted_in" boolean DEFAULT true NOT NULL,
	"timezone" text,
	"state" text,
	"fields" jsonb NOT NULL,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "conversation_notes" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"conversation_id" text NOT NULL,
	"body" text NOT NULL,
	"author_user_id" text,
	"author_name" text NOT NULL,
	"created_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "conversation_reads" (
	"conversation_id" text NOT NULL,
	"user_id" text NOT NULL,
	"workspace_id" text NOT NULL,
	"read_at" bigint NOT NULL,
	CONSTRAINT "conversation_reads_conversation_id_user_id_pk" PRIMARY KEY("conversation_id","user_id")
);
--> statement-breakpoint
CREATE TABLE "conversations" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"contact_id" text NOT NULL,
	"status" text NOT NULL,
	"needs_attention" boolean DEFAULT false NOT NULL,
	"attention_reason" text,
	"assigned_to" text,
	"agent_id" text,
	"agent_paused" boolean DEFAULT false NOT NULL,
	"last_message_at" bigint,
	"draft_reply" text,
	"intent" text,
	"search_key" bigint GENERATED BY DEFAULT AS IDENTITY (sequence name "conversations_search_key_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "conversions" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"txn" text NOT NULL,
	"event" text NOT NULL,
	"value" double precision,
	"currency" text NOT NULL,
	"contact_id" text NOT NULL,
	"click_id" text,
	"offer_id" text,
	"campaign_id" text,
	"message_id" text,
	"number_id" text,
	"agent_id" text,
	"flow_id" text,
	"created_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "daily_budget_usage" (
	"workspace_id" text NOT NULL,
	"budget" text NOT NULL,
	"day" integer NOT NULL,
	"count" integer NOT NULL,
	CONSTRAINT "daily_budget_usage_workspace_id_budget_day_pk" PRIMARY KEY("workspace_id","budget","day")
);
--> statement-breakpoint
CREATE TABLE "events" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"type" text NOT NULL,
	"data" json NOT NULL,
	"created_at" bigint NOT NULL,
	"dispatched_at" bigint
);
--> statement-breakpoint
CREATE TABLE "flow_reentry_skips" (
	"flow_id" text NOT NULL,
	"workspace_id" text NOT NULL,
	"day" integer NOT NULL,
	"count" integer NOT NULL,
	CONSTRAINT "flow_reentry_skips_workspace_id_flow_id_day_pk" PRIMARY KEY("workspace_id","flow_id","day")
);
--> statement-breakpoint
CREATE TABLE "flow_runs" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"flow_id" text NOT NULL,
	"contact_id" text NOT NULL,
	"status" text NOT NULL,
	"current_node_id" text,
	"current_step_id" text,
	"waiting_until" bigint,
	"wait_kind" text,
	"replied_at" bigint,
	"exit_reason" text,
	"started_at" bigint NOT NULL,
	"ended_at" bigint,
	"updated_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "flow_steps" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"flow_id" text NOT NULL,
	"run_id" text NOT NULL,
	"node_id" text NOT NULL,
	"node_type" text NOT NULL,
	"outcome" text,
	"detail" text,
	"message_id" text,
	"call_id" text,
	"entered_at" bigint NOT NULL,
	"finished_at" bigint
);
--> statement-breakpoint
CREATE TABLE "flows" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"name" text NOT NULL,
	"status" text NOT NULL,
	"definition" json NOT NULL,
	"settings" json NOT NULL,
	"trigger_event" text NOT NULL,
	"trigger_list_id" text,
	"exit_on_purchase" boolean DEFAULT false NOT NULL,
	"dispatch_generation" integer DEFAULT 0 NOT NULL,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "idempotency_keys" (
	"workspace_id" text NOT NULL,
	"key" text NOT NULL,
	"request_hash" text NOT NULL,
	"status_code" integer,
	"response_body" text,
	"created_at" bigint NOT NULL,
	CONSTRAINT "idempotency_keys_workspace_id_key_pk" PRIMARY KEY("workspace_id","key")
);
--> statement-breakpoint
CREATE TABLE "jobs" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text,
	"kind" text NOT NULL,
	"payload" json NOT NULL,
	"status" text DEFAULT 'queued' NOT NULL,
	"run_at" bigint NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"max_attempts" integer NOT NULL,
	"lease_until" bigint,
	"locked_by" text,
	"last_error" text,
	"dedupe_key" text,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL,
	"finished_at" bigint
);
--> statement-breakpoint
CREATE TABLE "link_domains" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"domain" text NOT NULL,
	"status" text NOT NULL,
	"is_default" boolean DEFAULT false NOT NULL,
	"token" text NOT NULL,
	"verified_at" bigint,
	"failure_reason" text,
	"checked_at" bigint,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "link_versions" (
	"id" bigint PRIMARY KEY GENERATED BY DEFAULT AS IDENTITY (sequence name "link_versions_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"version" bigint DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE TABLE "list_members" (
	"list_id" text NOT NULL,
	"contact_id" text NOT NULL,
	"workspace_id" text NOT NULL,
	"created_at" bigint NOT NULL,
	CONSTRAINT "list_members_list_id_contact_id_pk" PRIMARY KEY("list_id","contact_id")
);
--> statement-breakpoint
CREATE TABLE "lists" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"name" text NOT NULL,
	"description" text DEFAULT '' NOT NULL,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "login_failures" (
	"id" text PRIMARY KEY NOT NULL,
	"subject" text NOT NULL,
	"failed_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "memberships" (
	"user_id" text NOT NULL,
	"workspace_id" text NOT NULL,
	"role" text NOT NULL,
	"created_at" bigint NOT NULL,
	CONSTRAINT "memberships_user_id_workspace_id_pk" PRIMARY KEY("user_id","workspace_id")
);
--> statement-breakpoint
CREATE TABLE "message_daily_counts" (
	"workspace_id" text NOT NULL,
	"day" integer NOT NULL,
	"status" text NOT NULL,
	"n" integer DEFAULT 0 NOT NULL,
	CONSTRAINT "message_daily_counts_workspace_id_day_status_pk" PRIMARY KEY("workspace_id","day","status")
);
--> statement-breakpoint
CREATE TABLE "messages" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"direction" text NOT NULL,
	"sender" text NOT NULL,
	"from_number" text NOT NULL,
	"to_number" text NOT NULL,
	"body" text NOT NULL,
	"status" text NOT NULL,
	"segments" integer NOT NULL,
	"encoding" text NOT NULL,
	"contact_id" text,
	"conversation_id" text,
	"campaign_id" text,
	"call_id" text,
	"followup" boolean DEFAULT false NOT NULL,
	"number_id" text,
	"carrier_message_id" text,
	"error_code" text,
	"error_message" text,
	"handoff_started_at" bigint,
	"send_at" bigint,
	"created_at" bigint NOT NULL,
	"sent_at" bigint,
	"delivered_at" bigint,
	"updated_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "number_daily_usage" (
	"number_id" text NOT NULL,
	"workspace_id" text NOT NULL,
	"day" text NOT NULL,
	"count" integer NOT NULL,
	CONSTRAINT "number_daily_usage_number_id_day_pk" PRIMARY KEY("number_id","day")
);
--> statement-breakpoint
CREATE TABLE "numbers" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"number" text NOT NULL,
	"pool_id" text,
	"daily_limit" integer,
	"agent_id" text,
	"voice_capable" boolean DEFAULT true NOT NULL,
	"status" text NOT NULL,
	"carrier_number_id" text,
	"timezone" text NOT NULL,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL,
	"released_at" bigint
);
--> statement-breakpoint
CREATE TABLE "offers" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"name" text NOT NULL,
	"destination_url" text NOT NULL,
	"value" double precision,
	"currency" text NOT NULL,
	"status" text NOT NULL,
	"code" text NOT NULL,
	"link_domain_id" text,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "pool_sticky_senders" (
	"workspace_id" text NOT NULL,
	"pool_id" text NOT NULL,
	"contact_id" text NOT NULL,
	"number_id" text NOT NULL,
	"created_at" bigint NOT NULL,
	CONSTRAINT "pool_sticky_senders_pool_id_contact_id_pk" PRIMARY KEY("pool_id","contact_id")
);
--> statement-breakpoint
CREATE TABLE "pools" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"name" text NOT NULL,
	"description" text,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "short_code_requests" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"type" text NOT NULL,
	"vanity_code" text,
	"use_case" text NOT NULL,
	"monthly_volume" integer NOT NULL,
	"sample_messages" json NOT NULL,
	"status" text NOT NULL,
	"short_code" text,
	"rejection_reasons" json NOT NULL,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "tendlc_brands" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"legal_name" text NOT NULL,
	"ein" text,
	"entity_type" text NOT NULL,
	"vertical" text NOT NULL,
	"website" text,
	"email" text NOT NULL,
	"phone" text NOT NULL,
	"address" json NOT NULL,
	"status" text NOT NULL,
	"failure_reasons" json NOT NULL,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL,
	"reviewed_at" bigint
);
--> statement-breakpoint
CREATE TABLE "tendlc_campaign_numbers" (
	"campaign_id" text NOT NULL,
	"number_id" text NOT NULL,
	"workspace_id" text NOT NULL,
	CONSTRAINT "tendlc_campaign_numbers_campaign_id_number_id_pk" PRIMARY KEY("campaign_id","number_id")
);
--> statement-breakpoint
CREATE TABLE "tendlc_campaigns" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"brand_id" text NOT NULL,
	"use_case" text NOT NULL,
	"description" text NOT NULL,
	"message_flow" text NOT NULL,
	"sample_messages" json NOT NULL,
	"help_message" text NOT NULL,
	"optout_message" text NOT NULL,
	"has_embedded_links" boolean NOT NULL,
	"has_embedded_phone" boolean NOT NULL,
	"number_ids" json NOT NULL,
	"status" text NOT NULL,
	"rejection_reasons" json NOT NULL,
	"warnings" json NOT NULL,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL,
	"reviewed_at" bigint
);
--> statement-breakpoint
CREATE TABLE "sandbox_sends" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"message_id" text NOT NULL,
	"from_number" text NOT NULL,
	"to_number" text NOT NULL,
	"body" text NOT NULL,
	"carrier_message_id" text NOT NULL,
	"accepted_at" bigint NOT NULL,
	"deliver_at" bigint NOT NULL,
	"outcome" text NOT NULL,
	"error_code" text,
	"error_message" text,
	"delivered_at" bigint
);
--> statement-breakpoint
CREATE TABLE "segments" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"name" text NOT NULL,
	"description" text DEFAULT '' NOT NULL,
	"rules" json NOT NULL,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "sessions" (
	"id" text PRIMARY KEY NOT NULL,
	"user_id" text NOT NULL,
	"workspace_id" text NOT NULL,
	"created_at" bigint NOT NULL,
	"expires_at" bigint NOT NULL,
	"last_seen_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "setup_tokens" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"user_id" text,
	"email" text,
	"role" text NOT NULL,
	"expires_at" bigint NOT NULL,
	"used_at" bigint,
	"created_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "suppressions" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"phone_number" text NOT NULL,
	"reason" text NOT NULL,
	"source" text,
	"created_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "tracked_links" (
	"code" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"offer_id" text NOT NULL,
	"contact_id" text,
	"campaign_id" text,
	"message_id" text,
	"number_id" text,
	"created_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "users" (
	"id" text PRIMARY KEY NOT NULL,
	"email" text NOT NULL,
	"name" text NOT NULL,
	"password_hash" text,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "visitors" (
	"workspace_id" text NOT NULL,
	"vid" text NOT NULL,
	"contact_id" text,
	"click_id" text,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL,
	CONSTRAINT "visitors_workspace_id_vid_pk" PRIMARY KEY("workspace_id","vid")
);
--> statement-breakpoint
CREATE TABLE "webhook_attempts" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"webhook_id" text NOT NULL,
	"delivery_id" text NOT NULL,
	"attempt" integer NOT NULL,
	"status" text NOT NULL,
	"response_status" integer,
	"response_body" text,
	"error" text,
	"duration_ms" integer NOT NULL,
	"created_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "webhook_deliveries" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"webhook_id" text NOT NULL,
	"message_id" text NOT NULL,
	"event_type" text NOT NULL,
	"payload" text NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"last_response_status" integer,
	"next_attempt_at" bigint,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "webhooks" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"url" text NOT NULL,
	"events" json NOT NULL,
	"description" text,
	"enabled" boolean DEFAULT true NOT NULL,
	"secret" text NOT NULL,
	"previous_secret" text,
	"previous_secret_expires_at" bigint,
	"failing_since" bigint,
	"disabled_reason" text,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "workspaces" (
	"id" text PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"timezone" text DEFAULT 'America/New_York' NOT NULL,
	"default_number_id" text,
	"conversion_tracking_enabled" boolean DEFAULT true NOT NULL,
	"help_reply" text NOT NULL,
	"opt_out_reply" text NOT NULL,
	"opt_in_reply" text NOT NULL,
	"quiet_hours_enabled" boolean DEFAULT true NOT NULL,
	"quiet_start_hour" integer DEFAULT 21 NOT NULL,
	"quiet_end_hour" integer DEFAULT 8 NOT NULL,
	"state_rules" boolean DEFAULT true NOT NULL,
	"require_registration" boolean DEFAULT false NOT NULL,
	"frequency_cap_enabled" boolean DEFAULT true NOT NULL,
	"frequency_cap_max_messages" integer DEFAULT 3 NOT NULL,
	"frequency_cap_window_hours" integer DEFAULT 24 NOT NULL,
	"frequency_cap_apply_to_all" boolean DEFAULT false NOT NULL,
	"paused_states" json DEFAULT '[]'::json NOT NULL,
	"public_id" text,
	"cost_sms_segment" double precision DEFAULT 0.0079 NOT NULL,
	"cost_call_minute" double precision DEFAULT 0.014 NOT NULL,
	"cost_currency" text DEFAULT 'USD' NOT NULL,
	"one_off_daily_limit" integer DEFAULT 5000,
	"number_orders_daily_limit" integer DEFAULT 50,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL
);
--> statement-breakpoint
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "list_members" ADD CONSTRAINT "list_members_list_id_lists_id_fk" FOREIGN KEY ("list_id") REFERENCES "public"."lists"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "list_members" ADD CONSTRAINT "list_members_contact_id_contacts_id_fk" FOREIGN KEY ("contact_id") REFERENCES "public"."contacts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "memberships" ADD CONSTRAINT "memberships_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "memberships" ADD CONSTRAINT "memberships_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sessions" ADD CONSTRAINT "sessions_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sessions" ADD CONSTRAINT "sessions_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "setup_tokens" ADD CONSTRAINT "setup_tokens_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "setup_tokens" ADD CONSTRAINT "setup_tokens_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "agent_threads_agent_idx" ON "agent_threads" USING btree ("workspace_id","agent_id");--> statement-breakpoint
CREATE INDEX "agents_workspace_created_idx" ON "agents" USING btree ("workspace_id","created_at","id");--> statement-breakpoint
CREATE UNIQUE INDEX "api_keys_hash_idx" ON "api_keys" USING btree ("hash");--> statement-breakpoint
CREATE INDEX "api_keys_workspace_idx" ON "api_keys" USING btree ("workspace_id","created_at");--> statement-breakpoint
CREATE INDEX "calls_workspace_created_idx" ON "calls" USING btree ("workspace_id","created_at","id");--> statement-breakpoint
CREATE INDEX "calls_workspace_status_idx" ON "calls" USING btree ("workspace_id","status","created_at");--> statement-breakpoint
CREATE INDEX "calls_workspace_contact_idx" ON "calls" USING btree ("workspace_id","contact_id","created_at");--> statement-breakpoint
CREATE INDEX "calls_workspace_campaign_idx" ON "calls" USING btree ("workspace_id","campaign_id","status");--> statement-breakpoint
CREATE INDEX "calls_provider_id_idx" ON "calls" USING btree ("provider_call_id") WHERE provider_call_id IS NOT NULL;--> statement-breakpoint
CREATE INDEX "sandbox_calls_workspace_accepted_idx" ON "sandbox_calls" USING btree ("workspace_id","accepted_at");--> statement-breakpoint
CREATE INDEX "sandbox_calls_call_idx" ON "sandbox_calls" USING btree ("call_id");--> statement-breakpoint
CREATE INDEX "sandbox_calls_pending_idx" ON "sandbox_calls" USING btree ("line","report_at") WHERE reported_at IS NULL;--> statement-breakpoint
CREATE INDEX "webhook_receipts_received_idx" ON "webhook_receipts" USING btree ("received_at");--> statement-breakpoint
CREATE UNIQUE INDEX "campaign_recipients_campaign_contact_idx" ON "campaign_recipients" USING btree ("campaign_id","contact_id");--> statement-breakpoint
CREATE INDEX "campaign_recipients_stats_idx" ON "campaign_recipients" USING btree ("campaign_id","outcome","variant","handed_off_at","replied_at","opted_out_at");--> statement-breakpoint
CREATE INDEX "campaign_recipients_pending_idx" ON "campaign_recipients" USING btree ("campaign_id","due_at","contact_id") WHERE (message_id IS NULL AND call_id IS NULL AND outcome = 'queued') OR outcome = 'deferred';--> statement-breakpoint
CREATE INDEX "campaign_recipients_workspace_contact_idx" ON "campaign_recipients" USING btree ("workspace_id","contact_id");--> statement-breakpoint
CREATE INDEX "campaigns_workspace_created_idx" ON "campaigns" USING btree ("workspace_id","created_at","id");--> statement-breakpoint
CREATE INDEX "campaigns_workspace_status_idx" ON "campaigns" USING btree ("workspace_id","status","created_at");--> statement-breakpoint
CREATE INDEX "clicks_workspace_created_idx" ON "clicks" USING btree ("workspace_id","created_at");--> statement-breakpoint
CREATE INDEX "clicks_workspace_contact_idx" ON "clicks" USING btree ("workspace_id","contact_id","created_at");--> statement-breakpoint
CREATE INDEX "clicks_workspace_campaign_idx" ON "clicks" USING btree ("workspace_id","campaign_id","contact_id");--> statement-breakpoint
CREATE UNIQUE INDEX "contacts_workspace_phone_idx" ON "contacts" USING btree ("workspace_id","phone_number");--> statement-breakpoint
CREATE INDEX "contacts_workspace_created_idx" ON "contacts" USING btree ("workspace_id","created_at","id");--> statement-breakpoint
CREATE INDEX "contacts_workspace_email_idx" ON "contacts" USING btree ("workspace_id","email");--> statement-breakpoint
CREATE INDEX "contacts_workspace_email_lower_idx" ON "contacts" USING btree ("workspace_id",lower(email),"created_at");--> statement-breakpoint
CREATE INDEX "contacts_workspace_external_idx" ON "contacts" USING btree ("workspace_id","external_id","created_at");--> statement-breakpoint
CREATE INDEX "contacts_workspace_send_class_idx" ON "contacts" USING btree ("workspace_id","timezone","state",(CASE WHEN length("phone_number") = 12 AND substr("phone_number", 1, 2) = '+1' THEN substr("phone_number", 1, 5) ELSE "phone_number" END),"opted_in","phone_number");--> statement-breakpoint
CREATE INDEX "conversation_notes_thread_idx" ON "conversation_notes" USING btree ("workspace_id","conversation_id","created_at");--> statement-breakpoint
CREATE INDEX "conversations_workspace_inbox_idx" ON "conversations" USING btree ("workspace_id","last_message_at","id","search_key");--> statement-breakpoint
CREATE INDEX "conversations_workspace_contact_idx" ON "conversations" USING btree ("workspace_id","contact_id","status");--> statement-breakpoint
CREATE INDEX "conversations_workspace_status_idx" ON "conversations" USING btree ("workspace_id","status","last_message_at");--> statement-breakpoint
CREATE UNIQUE INDEX "conversations_search_key_idx" ON "conversations" USING btree ("search_key");--> statement-breakpoint
CREATE UNIQUE INDEX "conversions_workspace_txn_idx" ON "conversions" USING btree ("workspace_id","txn");--> statement-breakpoint
CREATE INDEX "conversions_workspace_created_idx" ON "conversions" USING btree ("workspace_id","created_at","value");--> statement-breakpoint
CREATE INDEX "conversions_workspace_contact_idx" ON "conversions" USING btree ("workspace_id","contact_id","event","created_at");--> statement-breakpoint
CREATE INDEX "conversions_workspace_campaign_idx" ON "conversions" USING btree ("workspace_id","campaign_id","value");--> statement-breakpoint
CREATE INDEX "events_workspace_idx" ON "events" USING btree ("workspace_id","created_at");--> statement-breakpoint
CREATE INDEX "events_undispatched_idx" ON "events" USING btree ("created_at") WHERE dispatched_at IS NULL;--> statement-breakpoint
CREATE UNIQUE INDEX "flow_runs_active_contact_idx" ON "flow_runs" USING btree ("flow_id","contact_id") WHERE status = 'active';--> statement-breakpoint
CREATE INDEX "flow_runs_due_idx" ON "flow_runs" USING btree ("flow_id","waiting_until") WHERE status = 'active';--> statement-breakpoint
CREATE INDEX "flow_runs_flow_status_idx" ON "flow_runs" USING btree ("flow_id","status","started_at");--> statement-breakpoint
CREATE INDEX "flow_runs_flow_contact_idx" ON "flow_runs" USING btree ("flow_id","contact_id");--> statement-breakpoint
CREATE INDEX "flow_runs_workspace_contact_idx" ON "flow_runs" USING btree ("workspace_id","contact_id","status");--> statement-breakpoint
CREATE INDEX "flow_steps_flow_node_idx" ON "flow_steps" USING btree ("flow_id","entered_at","node_id");--> statement-breakpoint
CREATE INDEX "flow_steps_run_idx" ON "flow_steps" USING btree ("run_id","entered_at");--> statement-breakpoint
CREATE INDEX "flows_workspace_created_idx" ON "flows" USING btree ("workspace_id","created_at","id");--> statement-breakpoint
CREATE INDEX "flows_workspace_trigger_idx" ON "flows" USING btree ("workspace_id","status","trigger_event");--> statement-breakpoint
CREATE INDEX "jobs_due_idx" ON "jobs" USING btree ("status","run_at");--> statement-breakpoint
CREATE UNIQUE INDEX "jobs_dedupe_idx" ON "jobs" USING btree ("dedupe_key");--> statement-breakpoint
CREATE INDEX "jobs_workspace_idx" ON "jobs" USING btree ("workspace_id","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "link_domains_domain_idx" ON "link_domains" USING btree ("domain");--> statement-breakpoint
CREATE UNIQUE INDEX "link_domains_token_idx" ON "link_domains" USING btree ("token");--> statement-breakpoint
CREATE UNIQUE INDEX "link_domains_default_idx" ON "link_domains" USING btree ("workspace_id") WHERE is_default = true;--> statement-breakpoint
CREATE INDEX "link_domains_workspace_created_idx" ON "link_domains" USING btree ("workspace_id","created_at","id");--> statement-breakpoint
CREATE INDEX "list_members_contact_idx" ON "list_members" USING btree ("contact_id");--> statement-breakpoint
CREATE INDEX "list_members_workspace_list_idx" ON "list_members" USING btree ("workspace_id","list_id");--> statement-breakpoint
CREATE INDEX "lists_workspace_created_idx" ON "lists" USING btree ("workspace_id","created_at");--> statement-breakpoint
CREATE INDEX "login_failures_subject_idx" ON "login_failures" USING btree ("subject","failed_at");--> statement-breakpoint
CREATE INDEX "login_failures_failed_at_idx" ON "login_failures" USING btree ("failed_at");--> statement-breakpoint
CREATE INDEX "memberships_workspace_idx" ON "memberships" USING btree ("workspace_id","created_at");--> statement-breakpoint
CREATE INDEX "messages_workspace_contact_idx" ON "messages" USING btree ("workspace_id","contact_id","direction","created_at");--> statement-breakpoint
CREATE INDEX "messages_workspace_conversation_idx" ON "messages" USING btree ("workspace_id","conversation_id","created_at");--> statement-breakpoint
CREATE INDEX "messages_workspace_campaign_idx" ON "messages" USING btree ("workspace_id","campaign_id");--> statement-breakpoint
CREATE INDEX "messages_workspace_status_idx" ON "messages" USING btree ("workspace_id","status","created_at");--> statement-breakpoint
CREATE INDEX "messages_carrier_id_idx" ON "messages" USING btree ("carrier_message_id");--> statement-breakpoint
CREATE INDEX "messages_workspace_analytics_idx" ON "messages" USING btree ("workspace_id","created_at","direction","status","number_id","segments");--> statement-breakpoint
CREATE INDEX "number_daily_usage_workspace_day_idx" ON "number_daily_usage" USING btree ("workspace_id","day");--> statement-breakpoint
CREATE INDEX "numbers_workspace_created_idx" ON "numbers" USING btree ("workspace_id","created_at","id");--> statement-breakpoint
CREATE INDEX "numbers_workspace_pool_idx" ON "numbers" USING btree ("workspace_id","pool_id");--> statement-breakpoint
CREATE UNIQUE INDEX "numbers_active_number_idx" ON "numbers" USING btree ("number") WHERE status = 'active';--> statement-breakpoint
CREATE INDEX "offers_workspace_created_idx" ON "offers" USING btree ("workspace_id","created_at","id");--> statement-breakpoint
CREATE INDEX "pool_sticky_senders_workspace_pool_idx" ON "pool_sticky_senders" USING btree ("workspace_id","pool_id");--> statement-breakpoint
CREATE INDEX "pool_sticky_senders_number_idx" ON "pool_sticky_senders" USING btree ("number_id");--> statement-breakpoint
CREATE INDEX "pools_workspace_created_idx" ON "pools" USING btree ("workspace_id","created_at");--> statement-breakpoint
CREATE INDEX "short_code_requests_workspace_created_idx" ON "short_code_requests" USING btree ("workspace_id","created_at","id");--> statement-breakpoint
CREATE INDEX "tendlc_brands_workspace_created_idx" ON "tendlc_brands" USING btree ("workspace_id","created_at","id");--> statement-breakpoint
CREATE INDEX "tendlc_campaign_numbers_number_idx" ON "tendlc_campaign_numbers" USING btree ("workspace_id","number_id");--> statement-breakpoint
CREATE INDEX "tendlc_campaigns_workspace_created_idx" ON "tendlc_campaigns" USING btree ("workspace_id","created_at","id");--> statement-breakpoint
CREATE INDEX "sandbox_sends_workspace_accepted_idx" ON "sandbox_sends" USING btree ("workspace_id","accepted_at");--> statement-breakpoint
CREATE INDEX "sandbox_sends_message_idx" ON "sandbox_sends" USING btree ("message_id");--> statement-breakpoint
CREATE INDEX "sandbox_sends_pending_idx" ON "sandbox_sends" USING btree ("deliver_at") WHERE delivered_at IS NULL;--> statement-breakpoint
CREATE INDEX "segments_workspace_created_idx" ON "segments" USING btree ("workspace_id","created_at");--> statement-breakpoint
CREATE INDEX "sessions_workspace_user_idx" ON "sessions" USING btree ("workspace_id","user_id");--> statement-breakpoint
CREATE INDEX "sessions_user_idx" ON "sessions" USING btree ("user_id");--> statement-breakpoint
CREATE INDEX "sessions_expires_idx" ON "sessions" USING btree ("expires_at");--> statement-breakpoint
CREATE INDEX "setup_tokens_workspace_idx" ON "setup_tokens" USING btree ("workspace_id","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "suppressions_workspace_phone_idx" ON "suppressions" USING btree ("workspace_id","phone_number");--> statement-breakpoint
CREATE INDEX "suppressions_workspace_created_idx" ON "suppressions" USING btree ("workspace_id","created_at");--> statement-breakpoint
CREATE INDEX "tracked_links_workspace_offer_idx" ON "tracked_links" USING btree ("workspace_id","offer_id");--> statement-breakpoint
CREATE UNIQUE INDEX "users_email_idx" ON "users" USING btree ("email");--> statement-breakpoint
CREATE INDEX "webhook_attempts_workspace_webhook_idx" ON "webhook_attempts" USING btree ("workspace_id","webhook_id","created_at");--> statement-breakpoint
CREATE INDEX "webhook_attempts_delivery_idx" ON "webhook_attempts" USING btree ("delivery_id");--> statement-breakpoint
CREATE INDEX "webhook_deliveries_workspace_webhook_idx" ON "webhook_deliveries" USING btree ("workspace_id","webhook_id","created_at");--> statement-breakpoint
CREATE INDEX "webhooks_workspace_enabled_idx" ON "webhooks" USING btree ("workspace_id","enabled");--> statement-breakpoint
CREATE INDEX "webhooks_workspace_created_idx" ON "webhooks" USING btree ("workspace_id","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "workspaces_public_id_idx" ON "workspaces" USING btree ("public_id");