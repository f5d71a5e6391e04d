/** Flags that never take a value. */
const BOOLEAN_FLAGS = new Set(["json", "help", "version", "no-worker", "force", "password-stdin"]);

/** Flags every command takes. */
const COMMON_FLAGS = ["help", "version"];

/** The flags each command takes; any other is a usage error (a typo is never silently ignored). */
export const COMMAND_FLAGS: Record<string, readonly string[]> = {
  serve: ["port", "host", "db", "database-url", "carrier", "no-worker"],
  migrate: ["db", "database-url", "json"],
  workspaces: ["name", "db", "database-url", "json"],
  keys: ["workspace", "name", "scopes", "db", "database-url", "json"],
  users: ["email", "workspace", "name", "role", "password-stdin", "db", "database-url", "json"],
  contacts: ["workspace", "list", "db", "database-url", "json"],
  backup: ["out", "force", "db", "database-url", "json"],
  restore: ["db", "database-url", "json"],
  "migrate-db": ["to", "db", "json"],
  help: [],
};

/**
 * Refuses a flag `command` does not take — `outreach serve --prot 9000` is exit 2 naming `--prot`,
 * not a server on the default port — then a flag without its value. Without a command only
 * --help and --version are known.
 */
export function checkFlags(command: string | undefined, parsed: ParsedArgs) {
  const known = command === undefined ? [] : COMMAND_FLAGS[command];
  if (known === undefined) return; // an unknown command is refused by name instead
  for (const name of Object.keys(parsed.flags)) {
    if (COMMON_FLAGS.includes(name) || known.includes(name)) continue;
    if (command === undefined) throw new UsageError(`unknown option --${name} (see outreach --help)`);
    const takes = [...known, ...COMMON_FLAGS].map((flag) => `--${flag}`).join(", ");
    throw new UsageError(`unknown option --${name} for ${command} (it takes ${takes})`);
  }
  const [missing] = parsed.missingValues;
  if (missing !== undefined) throw new UsageError(`--${missing} needs a value`);
}

export interface ParsedArgs {
  positionals: string[];
  flags: Record<string, string | boolean>;
  /** Flags given last, or before another flag, without the value they take. */
  missingValues: string[];
}

export class UsageError extends Error {}

/** `a b --x 1 --y=2 --json` → positionals [a, b], flags {x: "1", y: "2", json: true}. */
export function parseArgs(argv: string[]): ParsedArgs {
  const positionals: string[] = [];
  const flags: Record<string, string | boolean> = {};
  const missingValues: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "-h") {
      flags.help = true;
    } else if (arg === "-v" || arg === "-V") {
      flags.version = true;
    } else if (arg.startsWith("-") && !arg.startsWith("--") && arg.length > 1) {
      throw new UsageError(`unknown option ${arg}`);
    } else if (arg.startsWith("--")) {
      const eq = arg.indexOf("=");
      const name = eq === -1 ? arg.slice(2) : arg.slice(2, eq);
      if (eq !== -1) flags[name] = arg.slice(eq + 1);
      else if (BOOLEAN_FLAGS.has(name)) flags[name] = true;
      else if (i + 1 < argv.length && !argv[i + 1].startsWith("--")) flags[name] = argv[++i];
      else {
        // Said once the command is known: an unknown flag is named as such first.
        flags[name] = true;
        missingValues.push(name);
      }
    } else {
      positionals.push(arg);
    }
  }
  return { positionals, flags, missingValues };
}

export function requireFlag(flags: ParsedArgs["flags"], name: string): string {
  const value = flags[name];
  if (typeof value !== "string" || value === "") throw new UsageError(`--${name} is required`);
  return value;
}
