/**
 * Statements that read more than one table are compiled once, not on every run.
 *
 * SQLite propagates constants through the WHERE clause of a join: with `a.id = ?` and
 * `b.a_id = a.id`, it may substitute the bound value for `b.a_id`. Because the plan then depends
 * on the value, SQLite marks the statement to be compiled again whenever that parameter is bound,
 * and bun:sqlite binds every parameter on every run. A join looked up by rowid cost ~7 µs where
 * the same lookup as a subquery cost ~1.6 µs (SQLite 3.54 in Bun 1.4); joins with several such
 * terms cost 15–20 µs a run (the search indexer's reads, conversion attribution's lookups).
 *
 * `= +?` means what `= ?` means: unary plus returns its operand unchanged, and a parameter has no
 * affinity either way, so the column's affinity decides the comparison as before. It still
 * drives an index on the column (the plus is on the value's side). But it is not a bare
 * parameter, so it is not propagated and the statement keeps its first compilation.
 *
 * Only statements with a join are rewritten. On one table nothing is propagated; such a statement
 * may still be compiled again for other reasons (an ORDER BY over an index bound by `= ?`, a
 * partial index chosen by a bound value; docs/benchmarks.md), but there a bound value may
 * legitimately select a partial index (`status = ?` against `WHERE status = 'active'`), which the
 * plus would forbid, and rewriting every statement measured no faster end to end.
 */

/**
 * A statement that names a join, lists tables with commas in a FROM clause, or updates from
 * another table (`UPDATE … FROM`; a FROM after a parenthesis is a subquery's, and a subquery on
 * one table is not a join).
 */
const JOIN = /\bjoin\b|\bfrom\s+("[^"]+"|`[^`]+`|\w+)(\s+(as\s+)?\w+)?\s*,|^\s*update\b[^()]*\bfrom\b/i;
/** `=` (not `<=`, `>=`, `!=`, `==`) followed by a bare positional parameter. */
const EQUALS_PARAMETER = /(^|[^<>!=])=(\s*)\?(?![\d\w])/g;

export function bindJoinParametersOnce(sql: string): string {
  if (!JOIN.test(sql)) return sql;
  return sql.replace(EQUALS_PARAMETER, "$1=$2+?");
}
