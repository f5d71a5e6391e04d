import { index, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { idColumn, timestampColumn } from "./columns";

/**
 * Failed sign-ins, one row each, for the login rate limit (per client address and per e-mail,
 * across every process sharing the database). `subject` is the hex SHA-256 of `address:<ip>` or
 * `email:<email>`, so the table holds neither. Rows older than the window are deleted as new ones
 * are written.
 */
export const loginFailures = sqliteTable(
  "login_failures",
  {
    id: idColumn(),
    subject: text("subject").notNull(),
    failedAt: timestampColumn("failed_at").notNull(),
  },
  (t) => [
    index("login_failures_subject_idx").on(t.subject, t.failedAt),
    index("login_failures_failed_at_idx").on(t.failedAt),
  ],
);
