import { useState } from "react";

/** Contact fields a rule can test (API.md §3 segments), in words; custom fields are `fields.<key>`. */
export const RULE_FIELDS: { value: string; label: string }[] = [
  { value: "first_name", label: "First name" },
  { value: "last_name", label: "Last name" },
  { value: "email", label: "E-mail" },
  { value: "phone_number", label: "Phone number" },
  { value: "timezone", label: "Time zone" },
  { value: "opted_in", label: "Opted in" },
  { value: "source", label: "Source" },
  { value: "external_id", label: "External id" },
  { value: "created_at", label: "Created" },
  { value: "fields.state", label: "State (custom field)" },
];

/** The operators, in words. */
export const RULE_OPS: { value: string; label: string; noValue?: boolean }[] = [
  { value: "eq", label: "is" },
  { value: "neq", label: "is not" },
  { value: "contains", label: "contains" },
  { value: "starts_with", label: "starts with" },
  { value: "in", label: "is one of (comma-separated)" },
  { value: "not_in", label: "is none of (comma-separated)" },
  { value: "gt", label: "is more than" },
  { value: "gte", label: "is at least" },
  { value: "lt", label: "is less than" },
  { value: "lte", label: "is at most" },
  { value: "exists", label: "is set", noValue: true },
  { value: "not_exists", label: "is not set", noValue: true },
  { value: "within_last_days", label: "is within the last … days" },
  { value: "before", label: "is before (date)" },
  { value: "after", label: "is after (date)" },
];

export interface RuleRow {
  field: string;
  op: string;
  value: string;
}

/** A row's value as the API wants it: lists split, booleans and numbers typed. */
export function ruleValue(row: RuleRow): unknown {
  if (row.op === "exists" || row.op === "not_exists") return undefined;
  if (row.op === "in" || row.op === "not_in") return row.value.split(",").map((v) => v.trim());
  if (row.value === "true" || row.value === "false") return row.value === "true";
  const n = Number(row.value);
  return row.value !== "" && Number.isFinite(n) && !row.field.startsWith("fields.") ? n : row.value;
}

/** `{all|any: [{field, op, value}]}` from the builder's rows. */
export function rulesOf(join: "all" | "any", rows: RuleRow[]) {
  return {
    [join]: rows.map((r) => {
      const value = ruleValue(r);
      return { field: r.field, op: r.op, ...(value === undefined ? {} : { value }) };
    }),
  };
}

/** The builder's rows back from `{all|any: [...]}` (anything else starts empty). */
export function rowsOf(rules: unknown): { join: "all" | "any"; rows: RuleRow[] } {
  const r = (rules ?? {}) as Record<string, unknown>;
  const join = Array.isArray(r.any) ? "any" : "all";
  const list = (Array.isArray(r[join]) ? r[join] : []) as Record<string, unknown>[];
  return {
    join,
    rows: list
      .filter((x) => typeof x.field === "string")
      .map((x) => ({
        field: String(x.field),
        op: String(x.op ?? "eq"),
        value: Array.isArray(x.value) ? x.value.join(", ") : x.value === undefined ? "" : String(x.value),
      })),
  };
}

/**
 * Conditions on contact fields: a field picker (standard fields, state, any custom field), the
 * operator in words, and the value. Calls `onChange` with the API's rules on every edit.
 */
export function RuleBuilder(props: { rules: unknown; onChange: (rules: unknown) => void; label?: string }) {
  const initial = rowsOf(props.rules);
  const [join, setJoin] = useState<"all" | "any">(initial.join);
  const [rows, setRows] = useState<RuleRow[]>(initial.rows);
  const commit = (nextJoin: "all" | "any", next: RuleRow[]) => {
    setJoin(nextJoin);
    setRows(next);
    props.onChange(rulesOf(nextJoin, next));
  };
  const update = (i: number, patch: Partial<RuleRow>) =>
    commit(
      join,
      rows.map((r, j) => (i === j ? { ...r, ...patch } : r)),
    );
  return (
    <fieldset className="rules">
      <legend>{props.label ?? "Conditions"}</legend>
      <label>
        Match
        <select value={join} onChange={(e) => commit(e.target.value as "all" | "any", rows)}>
          <option value="all">all of these</option>
          <option value="any">any of these</option>
        </select>
      </label>
      {rows.map((row, i) => {
        const known = RULE_FIELDS.some((f) => f.value === row.field);
        const custom = !known;
        const noValue = RULE_OPS.find((o) => o.value === row.op)?.noValue;
        return (
          // biome-ignore lint/suspicious/noArrayIndexKey: rows have no identity beyond their place
          <div className="rule" key={i}>
            <select
              aria-label={`Field of condition ${i + 1}`}
              value={custom ? "custom" : row.field}
              onChange={(e) => update(i, { field: e.target.value === "custom" ? "fields." : e.target.value })}
            >
              {RULE_FIELDS.map((f) => (
                <option key={f.value} value={f.value}>
                  {f.label}
                </option>
              ))}
              <option value="custom">Custom field…</option>
            </select>
            {custom && (
              <input
                aria-label={`Custom field name of condition ${i + 1}`}
                placeholder="plan"
                value={row.field.replace(/^fields\./, "")}
                onChange={(e) => update(i, { field: `fields.${e.target.value}` })}
              />
            )}
            <select
              aria-label={`Operator of condition ${i + 1}`}
              value={row.op}
              onChange={(e) => update(i, { op: e.target.value })}
            >
              {RULE_OPS.map((op) => (
                <option key={op.value} value={op.value}>
                  {op.label}
                </option>
              ))}
            </select>
            {!noValue && (
              <input
                aria-label={`Value of condition ${i + 1}`}
                value={row.value}
                onChange={(e) => update(i, { value: e.target.value })}
              />
            )}
            <button
              type="button"
              className="secondary"
              onClick={() =>
                commit(
                  join,
                  rows.filter((_, j) => j !== i),
                )
              }
              aria-label={`Remove condition ${i + 1}`}
            >
              Remove
            </button>
          </div>
        );
      })}
      <button
        type="button"
        className="secondary"
        onClick={() => commit(join, [...rows, { field: "first_name", op: "eq", value: "" }])}
      >
        Add condition
      </button>
    </fieldset>
  );
}
