/** Flags that never take a value. */
const BOOLEAN_FLAGS = new Set(["json", "help", "no-worker", "force", "password-stdin"]);

export interface ParsedArgs {
  positionals: string[];
  flags: Record<string, string | boolean>;
}

export class UsageError extends Error {}

/** `a b --x 1 --y=2 --json` → positionals [a, b], flags {x: "1", y: "2", json: true}. */
export function parseArgs(argv: string[]): ParsedArgs {
  const positionals: string[] = [];
  const flags: Record<string, string | boolean> = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "-h") {
      flags.help = true;
    } else if (arg.startsWith("--")) {
      const eq = arg.indexOf("=");
      const name = eq === -1 ? arg.slice(2) : arg.slice(2, eq);
      if (eq !== -1) flags[name] = arg.slice(eq + 1);
      else if (BOOLEAN_FLAGS.has(name)) flags[name] = true;
      else if (i + 1 < argv.length && !argv[i + 1].startsWith("--")) flags[name] = argv[++i];
      else throw new UsageError(`--${name} needs a value`);
    } else {
      positionals.push(arg);
    }
  }
  return { positionals, flags };
}

export function requireFlag(flags: ParsedArgs["flags"], name: string): string {
  const value = flags[name];
  if (typeof value !== "string" || value === "") throw new UsageError(`--${name} is required`);
  return value;
}
