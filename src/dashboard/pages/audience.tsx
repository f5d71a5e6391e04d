import { useEffect, useState } from "react";
import { ApiError, get, type Json, post } from "../api";
import { ResourceSection } from "../components/resource";

const OPS = [
  "eq",
  "neq",
  "in",
  "not_in",
  "contains",
  "starts_with",
  "gt",
  "gte",
  "lt",
  "lte",
  "exists",
  "not_exists",
  "within_last_days",
  "before",
  "after",
];
interface RuleRow {
  field: string;
  op: string;
  value: string;
}

/** Lists, and segments with a rule builder whose count is live (POST /v1/segments/preview). */
export function AudiencePage() {
  return (
    <div className="page">
      <h1>Lists and segments</h1>
      <ResourceSection
        title="Lists"
        path="/v1/lists"
        many="lists"
        fields={[{ name: "name", label: "Name", required: true }]}
        columns={[
          { label: "Name", cell: (r) => r.name },
          { label: "Contacts", cell: (r) => r.contacts ?? r.members ?? "" },
        ]}
        canDelete
      />
      <SegmentBuilder />
      <ResourceSection
        title="Segments"
        path="/v1/segments"
        many="segments"
        columns={[
          { label: "Name", cell: (r) => r.name },
          { label: "Rules", cell: (r) => <code className="small">{JSON.stringify(r.rules)}</code> },
        ]}
        canDelete
      />
    </div>
  );
}

function ruleValue(row: RuleRow): unknown {
  if (row.op === "exists" || row.op === "not_exists") return undefined;
  if (row.op === "in" || row.op === "not_in") return row.value.split(",").map((v) => v.trim());
  if (row.value === "true" || row.value === "false") return row.value === "true";
  const n = Number(row.value);
  return row.value !== "" && Number.isFinite(n) && !row.field.startsWith("fields.") ? n : row.value;
}

function SegmentBuilder() {
  const [join, setJoin] = useState<"all" | "any">("all");
  const [rows, setRows] = useState<RuleRow[]>([{ field: "opted_in", op: "eq", value: "true" }]);
  const [count, setCount] = useState<number | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [name, setName] = useState("");
  const rules = {
    [join]: rows.map((r) => ({
      field: r.field,
      op: r.op,
      ...(ruleValue(r) === undefined ? {} : { value: ruleValue(r) }),
    })),
  };
  const key = JSON.stringify(rules);
  useEffect(() => {
    const timer = setTimeout(async () => {
      try {
        const answer = await post("/v1/segments/preview", { rules: JSON.parse(key) });
        setCount(answer.count);
        setError(null);
      } catch (e) {
        setCount(null);
        setError(e instanceof ApiError ? e.message : "Invalid rules");
      }
    }, 250);
    return () => clearTimeout(timer);
  }, [key]);
  const update = (i: number, patch: Partial<RuleRow>) =>
    setRows(rows.map((r, j) => (i === j ? { ...r, ...patch } : r)));
  return (
    <section className="card" aria-label="Segment builder">
      <h2>New segment</h2>
      <label>
        Match
        <select value={join} onChange={(e) => setJoin(e.target.value as "all" | "any")}>
          <option value="all">all of these</option>
          <option value="any">any of these</option>
        </select>
      </label>
      {rows.map((row, i) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: rows have no identity beyond their place
        <div className="row" key={i}>
          <input
            aria-label="Field"
            value={row.field}
            onChange={(e) => update(i, { field: e.target.value })}
            placeholder="first_name or fields.plan"
          />
          <select aria-label="Operator" value={row.op} onChange={(e) => update(i, { op: e.target.value })}>
            {OPS.map((op) => (
              <option key={op}>{op}</option>
            ))}
          </select>
          <input
            aria-label="Value"
            value={row.value}
            onChange={(e) => update(i, { value: e.target.value })}
          />
          <button
            type="button"
            onClick={() => setRows(rows.filter((_, j) => j !== i))}
            aria-label="Remove condition"
          >
            ×
          </button>
        </div>
      ))}
      <div className="row">
        <button type="button" onClick={() => setRows([...rows, { field: "", op: "eq", value: "" }])}>
          Add condition
        </button>
        <span role="status" data-testid="segment-count">
          {count === null ? "" : `${count} contacts match`}
        </span>
      </div>
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
      <div className="row">
        <label>
          Name
          <input value={name} onChange={(e) => setName(e.target.value)} />
        </label>
        <button
          type="button"
          disabled={!name || count === null}
          onClick={() =>
            post("/v1/segments", { name, rules }).then(
              () => window.location.reload(),
              (e) => setError(e.message),
            )
          }
        >
          Save segment
        </button>
      </div>
    </section>
  );
}

export function useLists(): Json[] {
  const [lists, setLists] = useState<Json[]>([]);
  useEffect(() => {
    void get("/v1/lists?limit=200").then((a) => setLists(a.lists));
  }, []);
  return lists;
}
