import { useCallback, useEffect, useState } from "react";
import { Link } from "wouter";
import { type Answer, ApiError, call, client } from "../api";
import { ConfirmButton } from "../components/feedback";
import { RULE_FIELDS, RULE_OPS, RuleBuilder, rowsOf } from "../components/RuleBuilder";
import { ResourceSection } from "../components/resource";

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
          { label: "Contacts", cell: (r) => r.contacts },
        ]}
        extra={(row) => <ListMembers list={row} />}
        canDelete
      />
      <SegmentBuilder />
      <ResourceSection
        title="Segments"
        path="/v1/segments"
        many="segments"
        columns={[
          { label: "Name", cell: (r) => r.name },
          { label: "Who", cell: (r) => rulesInWords(r.rules) },
        ]}
        canDelete
      />
    </div>
  );
}

/** A segment from rules picked in words, with the live count of matching contacts. */
function SegmentBuilder() {
  const [rules, setRules] = useState<unknown>({ all: [{ field: "opted_in", op: "eq", value: true }] });
  const [count, setCount] = useState<number | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [name, setName] = useState("");
  const key = JSON.stringify(rules);
  useEffect(() => {
    const timer = setTimeout(async () => {
      try {
        const body = { rules: JSON.parse(key) };
        const answer = await call(client.POST("/v1/segments/preview", { body }));
        setCount(answer.count);
        setError(null);
      } catch (e) {
        setCount(null);
        setError(e instanceof ApiError ? e.message : "Invalid rules");
      }
    }, 250);
    return () => clearTimeout(timer);
  }, [key]);
  return (
    <section className="card" aria-label="Segment builder">
      <h2>New segment</h2>
      <RuleBuilder rules={rules} onChange={setRules} label="Contacts who match" />
      <p role="status" data-testid="segment-count" className="count">
        {count === null ? "" : `${count} contacts match`}
      </p>
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
            call(client.POST("/v1/segments", { body: { name, rules } })).then(
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

type List = Answer<"/v1/lists">["lists"][number];
type Member = Answer<"/v1/lists/{id}/contacts">["contacts"][number];

/** A segment's rules in words: "First name is Ada and Opted in is true". */
function rulesInWords(rules: unknown): string {
  const { join, rows } = rowsOf(rules);
  if (rows.length === 0) return "Custom rules";
  return rows
    .map((r) => {
      const field = RULE_FIELDS.find((f) => f.value === r.field)?.label ?? r.field.replace(/^fields\./, "");
      const op = RULE_OPS.find((o) => o.value === r.op)?.label ?? r.op;
      return `${field} ${op}${r.value ? ` ${r.value}` : ""}`;
    })
    .join(join === "all" ? " and " : " or ");
}

/** A list opened: its members a page at a time, each removable (after a confirmation). */
function ListMembers({ list }: { list: List }) {
  const [open, setOpen] = useState(false);
  const [rows, setRows] = useState<Member[] | null>(null);
  const [total, setTotal] = useState(0);
  const load = useCallback(async () => {
    const params = { path: { id: list.id }, query: { limit: 50 } };
    const answer = await call(client.GET("/v1/lists/{id}/contacts", { params }));
    setRows(answer.contacts);
    setTotal(answer.total);
  }, [list.id]);
  useEffect(() => {
    if (open) void load();
  }, [open, load]);
  if (!open)
    return (
      <button type="button" className="secondary" onClick={() => setOpen(true)}>
        Members
      </button>
    );
  return (
    <div className="members">
      <button type="button" className="secondary" onClick={() => setOpen(false)}>
        Close
      </button>
      {rows === null ? (
        <p className="muted small">Loading…</p>
      ) : rows.length === 0 ? (
        <p className="muted small">No one is on this list.</p>
      ) : (
        <ul className="plain">
          {rows.map((c) => (
            <li key={c.id} className="row">
              <Link href={`/contacts/${c.id}`}>
                {[c.first_name, c.last_name].filter(Boolean).join(" ") || c.phone_number}
              </Link>
              <ConfirmButton
                className="danger"
                question={`Remove ${c.phone_number} from “${list.name}”?`}
                onConfirm={async () => {
                  const params = { path: { id: list.id } };
                  await call(
                    client.DELETE("/v1/lists/{id}/contacts", { params, body: { contact_ids: [c.id] } }),
                  );
                  await load();
                }}
              >
                Remove
              </ConfirmButton>
            </li>
          ))}
        </ul>
      )}
      {total > (rows?.length ?? 0) && <p className="muted small">The first 50 of {total}.</p>}
    </div>
  );
}
