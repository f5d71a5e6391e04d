/** Structured one-line JSON logs on stderr. Request-scoped lines carry `request_id`. */
type Level = "debug" | "info" | "warn" | "error";
const ORDER: Record<Level, number> = { debug: 10, info: 20, warn: 30, error: 40 };
let threshold: number = ORDER[(process.env.LOG_LEVEL as Level) ?? "info"] ?? ORDER.info;

export function setLogLevel(level: Level) {
  threshold = ORDER[level];
}

function write(level: Level, message: string, fields?: Record<string, unknown>) {
  if (ORDER[level] < threshold) return;
  process.stderr.write(
    `${JSON.stringify({ at: new Date().toISOString(), level, msg: message, ...fields })}\n`,
  );
}

export const log = {
  debug: (message: string, fields?: Record<string, unknown>) => write("debug", message, fields),
  info: (message: string, fields?: Record<string, unknown>) => write("info", message, fields),
  warn: (message: string, fields?: Record<string, unknown>) => write("warn", message, fields),
  error: (message: string, fields?: Record<string, unknown>) => write("error", message, fields),
};

/**
 * What went wrong, in one line for a log field: the innermost cause's message (a failed query's
 * error wraps the database's own, and its own message is the statement and its parameters), with
 * its code when it has one and the message does not say it. Never the error's class name: the
 * built binary's are minified ("ti: database … does not exist").
 */
export function errorText(error: unknown): string {
  let inner = error;
  for (let depth = 0; depth < 8; depth++) {
    const cause = (inner as { cause?: unknown } | null | undefined)?.cause;
    if (cause === undefined || cause === null) break;
    inner = cause;
  }
  if (typeof inner !== "object" || inner === null) return String(inner).split("\n")[0];
  const { message, code } = inner as { message?: unknown; code?: unknown };
  const text = (typeof message === "string" && message.split("\n")[0]) || String(inner).split("\n")[0];
  return typeof code === "string" && code !== "" && !text.includes(code) ? `${text} (${code})` : text;
}
