import { type FormEvent, useEffect, useState } from "react";
import { ApiError, get, type Json, post } from "../../api";
import { ACTION_WORDS, KINDS } from "./kinds";

/** "+1 d 2 h", "+15 min", "at once" for a trace line's virtual time. */
function when(minutes: number): string {
  if (minutes <= 0) return "At once";
  const days = Math.floor(minutes / 1440);
  const hours = Math.floor((minutes % 1440) / 60);
  const mins = Math.round(minutes % 60);
  return `After ${[days && `${days} d`, hours && `${hours} h`, mins && `${mins} min`].filter(Boolean).join(" ")}`;
}

/**
 * Simulates the flow for a chosen contact (or a made-up one), with an optional scripted reply,
 * and tells the trace in words. Nothing is sent or written (the API rolls it all back).
 */
export function Simulate({ id, nodes }: { id: string; nodes: { id: string; type?: string }[] }) {
  const [q, setQ] = useState("");
  const [found, setFound] = useState<Json[]>([]);
  const [contactId, setContactId] = useState("");
  const [replyAfter, setReplyAfter] = useState("");
  const [replyBody, setReplyBody] = useState("Yes please");
  const [trace, setTrace] = useState<Json[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    const timer = setTimeout(() => {
      get(`/v1/contacts?limit=20${q ? `&q=${encodeURIComponent(q)}` : ""}`).then(
        (a) => setFound(a.contacts),
        () => setFound([]),
      );
    }, 200);
    return () => clearTimeout(timer);
  }, [q]);
  async function run(event: FormEvent) {
    event.preventDefault();
    setError(null);
    try {
      const events =
        replyAfter !== "" ? [{ type: "reply", after_minutes: Number(replyAfter), body: replyBody }] : [];
      const who = contactId ? { contact_id: contactId } : { contact: { first_name: "Sam" } };
      setTrace((await post(`/v1/flows/${id}/simulate`, { ...who, events })).trace);
    } catch (e) {
      setError(e instanceof ApiError ? e.message : "Could not simulate");
    }
  }
  const label = (nodeId: string | null) => {
    const node = nodes.find((n) => n.id === nodeId);
    return node ? (KINDS[node.type ?? ""]?.label ?? node.type) : "";
  };
  return (
    <section className="simulate" aria-label="Simulate">
      <h2>Try it with a contact</h2>
      <form onSubmit={run} className="node-form">
        <label>
          Find a contact
          <input
            type="search"
            value={q}
            placeholder="Name or number"
            onChange={(e) => setQ(e.target.value)}
          />
        </label>
        <label>
          Contact
          <select value={contactId} onChange={(e) => setContactId(e.target.value)}>
            <option value="">A made-up contact (Sam)</option>
            {found.map((c) => (
              <option key={c.id} value={c.id}>
                {[c.first_name, c.last_name].filter(Boolean).join(" ") || c.phone_number} · {c.phone_number}
              </option>
            ))}
          </select>
        </label>
        <label>
          They reply after (minutes; empty: never)
          <input type="number" min={0} value={replyAfter} onChange={(e) => setReplyAfter(e.target.value)} />
        </label>
        {replyAfter !== "" && (
          <label>
            Their reply
            <input value={replyBody} onChange={(e) => setReplyBody(e.target.value)} />
          </label>
        )}
        <button type="submit">Simulate</button>
      </form>
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
      {trace && (
        <ol className="trace" aria-label="Simulation">
          {trace.length === 0 && <li>Nothing happened: the contact did not enter the flow.</li>}
          {trace.map((t, i) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: a trace is shown once, in order
            <li key={i}>
              <strong>{when(t.at_minutes)}</strong>: {label(t.node_id) ? `${label(t.node_id)} — ` : ""}the
              contact {ACTION_WORDS[t.action] ?? t.action.replaceAll("_", " ")}
              {t.detail ? ` (${t.detail})` : ""}.
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}
