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
