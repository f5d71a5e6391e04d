import { type FormEvent, useState } from "react";
import { ApiError, call, client, type Posted } from "../../api";
import { ContactPicker } from "../../components/ContactPicker";
import { ACTION_WORDS, KINDS } from "./kinds";

type Trace = Posted<"/v1/flows/{id}/simulate">["trace"];

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
  const [contactId, setContactId] = useState("");
  const [replyAfter, setReplyAfter] = useState("");
  const [replyBody, setReplyBody] = useState("Yes please");
  const [trace, setTrace] = useState<Trace | null>(null);
  const [error, setError] = useState<string | null>(null);
  async function run(event: FormEvent) {
    event.preventDefault();
    setError(null);
    try {
      const events =
        replyAfter !== ""
          ? [{ type: "reply" as const, after_minutes: Number(replyAfter), body: replyBody }]
          : [];
      const who = contactId ? { contact_id: contactId } : { contact: { first_name: "Sam" } };
      const body = { ...who, events };
      setTrace(
        (await call(client.POST("/v1/flows/{id}/simulate", { params: { path: { id } }, body }))).trace,
      );
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
        <ContactPicker value={contactId} onChange={setContactId} none="A made-up contact (Sam)" />
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
