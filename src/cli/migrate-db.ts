import { dbPathFrom, describeDatabaseUrl, postgresUrlFrom } from "../config";
import { type CopyProgress, copySqliteToPostgres, DatabaseCopyError } from "../db/migrate-db";
import { type ParsedArgs, requireFlag, UsageError } from "./args";

const USAGE =
  "usage: outreach migrate-db --to postgres://USER:PASSWORD@HOST:PORT/DATABASE [--db PATH] [--json]";

const count = (n: number) => n.toLocaleString("en-US");
const rows = (n: number) => `${count(n)} row${n === 1 ? "" : "s"}`;

/**
 * The copy's progress on stderr: on a terminal one line redrawn (all rows and the current
 * table's), at most every 100 ms; otherwise a plain line when a table with rows is done.
 */
function progressReporter() {
  const tty = process.stderr.isTTY;
  let drawn = 0;
  let shown = false;
  return {
    update(p: CopyProgress) {
      if (!tty) {
        if (p.tableTotal > 0 && p.tableRows === p.tableTotal)
          process.stderr.write(
            `copied ${p.table}: ${rows(p.tableRows)} (${count(p.copied)}/${count(p.total)})\n`,
          );
        return;
      }
      const now = performance.now();
      if (now - drawn < 100 && p.copied < p.total) return;
      drawn = now;
      const width = 30;
      const filled = p.total > 0 ? Math.floor((p.copied / p.total) * width) : width;
      const pct = p.total > 0 ? Math.floor((p.copied / p.total) * 100) : 100;
      process.stderr.write(
        `\r\x1b[K[${"#".repeat(filled)}${"-".repeat(width - filled)}] ${String(pct).padStart(3)}%  ${count(p.copied)}/${count(p.total)} rows  ${p.table} ${count(p.tableRows)}/${count(p.tableTotal)}`,
      );
      shown = true;
    },
    end() {
      if (tty && shown) process.stderr.write("\n");
    },
  };
}

/** `outreach migrate-db --to postgres://… [--db PATH] [--json]` */
export async function runMigrateDbCommand(
  positionals: string[],
  flags: ParsedArgs["flags"],
): Promise<number> {
  if (positionals.length > 1) throw new UsageError(USAGE);
  const url = postgresUrlFrom(requireFlag(flags, "to"), "--to", "");
  const source = dbPathFrom(flags);
  const target = describeDatabaseUrl(url);
  const progress = progressReporter();
  let report: Awaited<ReturnType<typeof copySqliteToPostgres>>;
  try {
    report = await copySqliteToPostgres(source, url, {
      target: { name: "--to", where: target },
      onProgress: progress.update,
    });
  } finally {
    progress.end();
  }
  const { tables, mismatches } = report;
  if (flags.json) {
    console.log(
      JSON.stringify(
        {
          ok: mismatches.length === 0,
          source,
          target,
          rows: report.rows,
          duration_ms: report.durationMs,
          tables,
          mismatches,
        },
        null,
        2,
      ),
    );
  } else {
    const listed = tables.filter((t) => t.source > 0 || t.target > 0 || mismatches.includes(t.table));
    const width = Math.max(5, ...listed.map((t) => t.table.length));
    const lines =
      listed.length === 0
        ? []
        : [
            `${"table".padEnd(width)}  ${"sqlite".padStart(9)}  ${"postgres".padStart(9)}`,
            ...listed.map(
              (t) =>
                `${t.table.padEnd(width)}  ${count(t.source).padStart(9)}  ${count(t.target).padStart(9)}${mismatches.includes(t.table) ? "  differs" : ""}`,
            ),
          ];
    const empty = tables.length - listed.length;
    if (mismatches.length === 0)
      lines.push(
        `copied ${rows(report.rows)} from ${source} to ${target} in ${(report.durationMs / 1000).toFixed(1)} s; the row counts of all ${tables.length} tables match (${empty} empty, not listed)`,
      );
    console.log(lines.join("\n"));
  }
  if (mismatches.length > 0)
    throw new DatabaseCopyError(
      `the row counts of ${mismatches.join(", ")} differ: the copy was rolled back (the target is migrated and empty)`,
    );
  return 0;
}
