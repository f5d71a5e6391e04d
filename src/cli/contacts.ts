import { statSync } from "node:fs";
import { eq } from "drizzle-orm";
import { databaseUrlFrom, dbPathFrom } from "../config";
import { workspaces } from "../db/schema";
import { importContactsCsv } from "../domain/audience/contact-import";
import { openConfiguredDatabase } from "../server";
import { type ParsedArgs, requireFlag, UsageError } from "./args";

/** A one-line progress bar on stderr (only when stderr is a terminal, else a line every 5%). */
function progressBar(total: number) {
  const tty = process.stderr.isTTY;
  let lastPct = -1;
  const started = performance.now();
  return (rows: number, bytes: number, done = false) => {
    const pct = total > 0 ? Math.min(100, Math.floor((bytes / total) * 100)) : 100;
    if (!done && !tty && pct - lastPct < 5) return;
    if (!done && pct === lastPct) return;
    lastPct = pct;
    const width = 30;
    const filled = Math.round((pct / 100) * width);
    const secs = (performance.now() - started) / 1000;
    const rate = secs > 0 ? Math.round(rows / secs) : 0;
    const line = `[${"#".repeat(filled)}${"-".repeat(width - filled)}] ${String(pct).padStart(3)}%  ${rows.toLocaleString("en-US")} rows  ${rate.toLocaleString("en-US")} rows/s`;
    process.stderr.write(tty ? `\r${line}${done ? "\n" : ""}` : `${line}\n`);
  };
}

/** `outreach contacts import FILE --workspace ID [--list ID] [--db PATH] [--json]` */
export async function runContactsCommand(
  sub: string | undefined,
  positionals: string[],
  flags: ParsedArgs["flags"],
) {
  if (sub !== "import")
    throw new UsageError("usage: outreach contacts import FILE --workspace ID [--list ID]");
  const file = positionals[2];
  if (!file) throw new UsageError("usage: outreach contacts import FILE --workspace ID [--list ID]");
  const workspaceId = requireFlag(flags, "workspace");
  const listId = typeof flags.list === "string" ? flags.list : undefined;
  let size: number;
  try {
    size = statSync(file).size;
  } catch {
    throw new UsageError(`cannot read ${file}`);
  }
  const handle = await openConfiguredDatabase({
    dbPath: dbPathFrom(flags),
    databaseUrl: databaseUrlFrom(flags),
  });
  try {
    if (
      !(await handle.db
        .select({ id: workspaces.id })
        .from(workspaces)
        .where(eq(workspaces.id, workspaceId))
        .get())
    )
      throw new UsageError(`workspace ${workspaceId} does not exist`);
    const bar = progressBar(size);
    const result = await importContactsCsv(handle.db, workspaceId, Bun.file(file).stream(), {
      listId,
      onProgress: (rows, bytes) => bar(rows, bytes),
    });
    bar(result.created + result.updated + result.skipped + result.errors.length, size, true);
    if (flags.json) {
      console.log(JSON.stringify(result, null, 2));
    } else {
      console.log(
        `created ${result.created}, updated ${result.updated}, skipped ${result.skipped}, errors ${result.errors.length}`,
      );
      for (const e of result.errors.slice(0, 20)) console.log(`  line ${e.row}: ${e.error}`);
      if (result.errors.length > 20) console.log(`  ... ${result.errors.length - 20} more (use --json)`);
    }
    return 0;
  } finally {
    await handle.close();
  }
}
