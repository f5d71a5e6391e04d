import { type FormEvent, useState } from "react";
import { type Answer, ApiError, call, client } from "../../api";

type Agent = Answer<"/v1/agents/{id}">["agent"];

import { fieldOfError } from "../../components/resource";
import { type FieldCopy, GROUPS } from "./copy";

/** A setting by its copy's path (`name`, `sms.handoff_on_low_confidence`). */
function read(agent: Agent, path: string): unknown {
  const [head, tail] = path.split(".") as [string, string | undefined];
  const value = (agent as Record<string, unknown>)[head];
  return tail ? (value as Record<string, unknown> | null | undefined)?.[tail] : value;
}

/** The input's text for a value. */
function text(field: FieldCopy, value: unknown): string {
  if (field.kind === "list") return Array.isArray(value) ? value.join("\n") : "";
  return value === null || value === undefined ? "" : String(value);
}

/** The API's value for the input's text. */
function parse(field: FieldCopy, raw: string | boolean): unknown {
  if (field.kind === "bool") return raw === true;
  const s = String(raw);
  if (field.kind === "list")
    return s
      .split("\n")
      .map((x) => x.trim())
      .filter(Boolean);
  if (field.kind === "number" || field.kind === "hour")
    return s === "" ? (field.nullable ? null : 0) : Number(s);
  if (field.nullable && s.trim() === "") return null;
  return s;
}

/**
 * An agent's settings grouped by purpose (persona, conversation, handoff, timing, follow-ups,
 * voice), labelled in words with help text; voice settings only for voice agents. Saves the whole
 * agent; the API's field error shows next to its field.
 */
export function AgentForm({ agent, onSaved }: { agent: Agent; onSaved: (agent: Agent) => void }) {
  const groups = GROUPS.filter((g) => !g.only || g.only === agent.channel);
  const [values, setValues] = useState<Record<string, string | boolean>>(() =>
    Object.fromEntries(
      groups.flatMap((g) =>
        g.fields.map((f) => [
          f.path,
          f.kind === "bool" ? Boolean(read(agent, f.path)) : text(f, read(agent, f.path)),
        ]),
      ),
    ),
  );
  const [error, setError] = useState<string | null>(null);
  const [saved, setSaved] = useState(false);
  const paths = groups.flatMap((g) => g.fields.map((f) => f.path));
  const errorField = fieldOfError(error, paths);

  async function save(event: FormEvent) {
    event.preventDefault();
    // The copy's paths back into the API's shape: `sms.x` goes into the `sms` object.
    const body: Record<string, unknown> = {};
    const groupOf = (head: string) => {
      const group = (body[head] ?? {}) as Record<string, unknown>;
      body[head] = group;
      return group;
    };
    for (const g of groups)
      for (const f of g.fields) {
        const value = parse(f, values[f.path] ?? "");
        const [head, tail] = f.path.split(".") as [string, string | undefined];
        if (tail) groupOf(head)[tail] = value;
        else body[head] = value;
      }
    setError(null);
    setSaved(false);
    try {
      const params = { path: { id: agent.id } };
      onSaved((await call(client.PATCH("/v1/agents/{id}", { params, body }))).agent);
      setSaved(true);
    } catch (e) {
      setError(e instanceof ApiError ? e.message : "Could not save");
    }
  }

  return (
    <form onSubmit={save} aria-label="Agent settings" className="agent-form">
      {groups.map((g) => (
        <fieldset key={g.id} className="card group">
          <legend>{g.title}</legend>
          <p className="muted small">{g.intro}</p>
          {g.fields.map((f) => {
            const id = `agent-${f.path}`;
            const helpId = f.help ? `${id}-help` : undefined;
            const value = values[f.path];
            const change = (v: string | boolean) => setValues((current) => ({ ...current, [f.path]: v }));
            return (
              <div
                key={f.path}
                className={`field ${f.kind === "long" ? "wide" : ""} ${f.kind === "bool" ? "bool" : ""}`}
              >
                {f.kind === "bool" ? (
                  <label className="check" htmlFor={id}>
                    <input
                      id={id}
                      type="checkbox"
                      checked={value === true}
                      aria-describedby={helpId}
                      onChange={(e) => change(e.target.checked)}
                    />
                    {f.label}
                  </label>
                ) : (
                  <>
                    <label htmlFor={id}>{f.label}</label>
                    {f.kind === "long" || f.kind === "list" ? (
                      <textarea
                        id={id}
                        rows={f.kind === "long" ? 6 : 3}
                        value={String(value ?? "")}
                        aria-describedby={helpId}
                        onChange={(e) => change(e.target.value)}
                      />
                    ) : f.kind === "select" || f.kind === "hour" ? (
                      <select
                        id={id}
                        value={String(value ?? "")}
                        aria-describedby={helpId}
                        onChange={(e) => change(e.target.value)}
                      >
                        {(f.options ?? []).map((o) => (
                          <option key={o.value} value={o.value}>
                            {o.label}
                          </option>
                        ))}
                      </select>
                    ) : (
                      <input
                        id={id}
                        type={f.kind === "number" ? "number" : "text"}
                        min={f.min}
                        max={f.max}
                        step={f.step ?? (f.kind === "number" ? 1 : undefined)}
                        value={String(value ?? "")}
                        aria-describedby={helpId}
                        onChange={(e) => change(e.target.value)}
                      />
                    )}
                  </>
                )}
                {f.help && (
                  <span id={helpId} className="help">
                    {f.help}
                  </span>
                )}
                {errorField === f.path && (
                  <span className="error" role="alert">
                    {error}
                  </span>
                )}
              </div>
            );
          })}
        </fieldset>
      ))}
      {error && errorField === null && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
      <div className="row save-bar">
        <button type="submit">Save agent</button>
        {saved && <span role="status">Saved</span>}
      </div>
    </form>
  );
}
