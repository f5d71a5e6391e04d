/**
 * Statements are compiled once, not on every run: bare parameters that SQLite's planner reads are
 * given as `+?`.
 *
 * SQLite (3.54 in Bun 1.4) reads some bound values while it plans, and then marks the statement
 * to be compiled again whenever that parameter is bound. bun:sqlite binds every parameter on
 * every run, so such a statement is compiled on every run (5–25 µs each time):
 * - a join's `column = ?`: the value is propagated through the WHERE clause (`a.id = ?` and
 *   `b.a_id = a.id`). A join looked up by rowid cost ~7 µs a run instead of ~2 µs;
 * - `LIMIT ?` and `OFFSET ?`: the planner weighs the limit's value. A primary-key read with
 *   `LIMIT ?` cost 7.6 µs instead of 3.9 µs, a join with ORDER BY and `LIMIT ?` 18 µs instead of 5;
 * - a one-table `column = ?` with an ORDER BY over the index it binds: a contact's last click
 *   (`… ORDER BY created_at DESC LIMIT ?`) cost 18–30 µs instead of 6–8 µs, and only with both its
 *   `= ?` terms and its limit as `+?`.
 *
 * `+?` means what `?` means: unary plus returns its operand unchanged, and a parameter has no
 * affinity either way, so the column's affinity decides a comparison as before. It still drives an
 * index on the column (the plus is on the value's side). But it is not a bare parameter, so the
 * planner does not read it and the statement keeps its first compilation.
 *
 * One exception: on one table, a bound value may legitimately decide whether a partial index
 * applies (`status = ?` against `… WHERE status = 'active'`), so a column that a partial index's
 * condition names (PARTIAL_INDEX_COLUMNS) keeps its bare parameter there. A query that means a
 * constant value of such a column writes it as a literal instead (`NUMBER_IS_ACTIVE`,
 * `RUN_IS_ACTIVE` in ./schema), which is compiled once; drizzle's `eq(column, "active")` binds it.
 */

/**
 * Every column named in a partial index's condition (test/bound-parameters.test.ts checks this
 * list against the migrated schema).
 */
export const PARTIAL_INDEX_COLUMNS: ReadonlySet<string> = new Set([
  "call_id",
  "campaign_id",
  "carrier_message_id",
  "delivered_at",
  "dispatched_at",
  "is_default",
  "message_id",
  "outcome",
  "provider_call_id",
  "reported_at",
  "status",
]);

/**
 * A statement that names a join, lists tables with commas in a FROM clause, or updates from
 * another table (`UPDATE … FROM`; a FROM after a parenthesis is a subquery's, and a subquery on
 * one table is not a join).
 */
const JOIN = /\bjoin\b|\bfrom\s+("[^"]+"|`[^`]+`|\w+)(\s+(as\s+)?\w+)?\s*,|^\s*update\b[^()]*\bfrom\b/i;
/** `=` (not `<=`, `>=`, `!=`, `==`) followed by a bare positional parameter. */
const EQUALS_PARAMETER = /(^|[^<>!=])=(\s*)\?(?![\d\w])/g;
/** `LIMIT ?` or `OFFSET ?` with a bare positional parameter. */
const LIMIT_PARAMETER = /\b(limit|offset)(\s+)\?(?![\d\w])/gi;
/** The column name just before an operator: `"t"."col"`, `t.col`, `"col"` or `col`. */
const TRAILING_COLUMN = /(?:^|[\s(.,])["`]?(\w+)["`]?\s*$/;

export function bindParametersOnce(sql: string): string {
  const join = JOIN.test(sql);
  return sql
    .replace(LIMIT_PARAMETER, "$1$2+?")
    .replace(EQUALS_PARAMETER, (match, before: string, space: string, offset: number) => {
      if (!join) {
        const column = TRAILING_COLUMN.exec(sql.slice(0, offset + before.length))?.[1];
        if (column !== undefined && PARTIAL_INDEX_COLUMNS.has(column.toLowerCase())) return match;
      }
      return `${before}=${space}+?`;
    });
}
