// Every table, one file each. drizzle-kit reads this module to generate migrations.
export * from "./api-keys";
export * from "./contacts";
export * from "./conversations";
export * from "./events";
export * from "./idempotency-keys";
export * from "./jobs";
export * from "./messages";
export * from "./number-daily-usage";
export * from "./numbers";
export * from "./pool-sticky-senders";
export * from "./pools";
export * from "./sandbox-sends";
export * from "./suppressions";
export * from "./webhook-attempts";
export * from "./webhook-deliveries";
export * from "./webhooks";
export * from "./workspaces";
