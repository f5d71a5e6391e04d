CREATE TABLE `flow_runs` (
	`id` text PRIMARY KEY NOT NULL,
	`workspace_id` text NOT NULL,
	`flow_id` text NOT NULL,
	`contact_id` text NOT NULL,
	`status` text NOT NULL,
	`current_node_id` text,
	`current_step_id` text,
	`waiting_until` integer,
	`wait_kind` text,
	`replied_at` integer,
	`exit_reason` text,
	`started_at` integer NOT NULL,
	`ended_at` integer,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `flow_runs_active_contact_idx` ON `flow_runs` (`flow_id`,`contact_id`) WHERE status = 'active';--> statement-breakpoint
CREATE INDEX `flow_runs_due_idx` ON `flow_runs` (`flow_id`,`waiting_until`) WHERE status = 'active';--> statement-breakpoint
CREATE INDEX `flow_runs_flow_status_idx` ON `flow_runs` (`flow_id`,`status`,`started_at`);--> statement-breakpoint
CREATE INDEX `flow_runs_flow_contact_idx` ON `flow_runs` (`flow_id`,`contact_id`);--> statement-breakpoint
CREATE INDEX `flow_runs_workspace_contact_idx` ON `flow_runs` (`workspace_id`,`contact_id`,`status`);--> statement-breakpoint
CREATE TABLE `flow_steps` (
	`id` text PRIMARY KEY NOT NULL,
	`workspace_id` text NOT NULL,
	`flow_id` text NOT NULL,
	`run_id` text NOT NULL,
	`node_id` text NOT NULL,
	`node_type` text NOT NULL,
	`outcome` text,
	`detail` text,
	`message_id` text,
	`call_id` text,
	`entered_at` integer NOT NULL,
	`finished_at` integer
);
--> statement-breakpoint
CREATE INDEX `flow_steps_flow_node_idx` ON `flow_steps` (`flow_id`,`entered_at`,`node_id`);--> statement-breakpoint
CREATE INDEX `flow_steps_run_idx` ON `flow_steps` (`run_id`,`entered_at`);--> statement-breakpoint
CREATE TABLE `flows` (
	`id` text PRIMARY KEY NOT NULL,
	`workspace_id` text NOT NULL,
	`name` text NOT NULL,
	`status` text NOT NULL,
	`definition` text NOT NULL,
	`settings` text NOT NULL,
	`trigger_event` text NOT NULL,
	`trigger_list_id` text,
	`exit_on_purchase` integer DEFAULT false NOT NULL,
	`dispatch_generation` integer DEFAULT 0 NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `flows_workspace_created_idx` ON `flows` (`workspace_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `flows_workspace_trigger_idx` ON `flows` (`workspace_id`,`status`,`trigger_event`);