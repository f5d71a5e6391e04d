import { type FormEvent, useCallback, useEffect, useState } from "react";
import { Link } from "wouter";
import { ApiError, get, type Json, patch, post } from "../api";
import { fieldOfError } from "../components/resource";

/** Agents: the list, a form for every field of one agent (its sms, voice and inbox objects too), and the test chat. */
export function AgentsPage({ agentId }: { agentId: string | null }) {
  return agentId ? <AgentEditor id={agentId} /> : <AgentList />;
}

function AgentList() {
  const [rows, setRows] = useState<Json[]>([]);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    void get("/v1/agents?limit=200").then((a) => setRows(a.agents));
  }, []);
  async function create(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    setError(null);
    try {
      const answer = await post("/v1/agents", {
        name: form.get("name"),
        system_prompt: form.get("system_prompt"),
      });
      window.location.assign(`/agents/${answer.agent.id}`);
    } catch (e) {
      setError(e instanceof ApiError ? e.message : "Could not create");
    }
  }
  return (
    <div className="page">
      <h1>Agents</h1>
      <form onSubmit={create} className="card grid" aria-label="New agent">
        <label>
          Name
          <input name="name" required />
        </label>
        <label className="wide">
          System prompt
          <textarea name="system_prompt" required />
        </label>
        {error && (
          <p className="error" role="alert">
            {error}
          </p>
        )}
        <button type="submit">Create agent</button>
      </form>
      <ul>
        {rows.map((a) => (
          <li key={a.id}>
            <Link href={`/agents/${a.id}`}>{a.name}</Link>{" "}
            <span className="muted">
              {a.channel} · {a.status}
            </span>
          </li>
        ))}
      </ul>
    </div>
  );
}

const TOP = [
  "name",
  "system_prompt",
  "channel",
  "status",
  "goal",
  "greeting",
  "max_turns",
  "handoff_keywords",
  "model_tier",
];

function fieldInput(path: string, value: unknown) {
  if (typeof value === "boolean")
    return <input type="checkbox" id={`agent-${path}`} name={path} defaultChecked={value} />;
  if (typeof value === "number")
    return <input type="number" step="any" id={`agent-${path}`} name={path} defaultValue={value} />;
  if (Array.isArray(value))
    return (
      <input id={`agent-${path}`} name={path} defaultValue={value.join(", ")} placeholder="comma-separated" />
    );
  if (path.endsWith("system_prompt") || path.endsWith("knowledge"))
    return <textarea id={`agent-${path}`} name={path} defaultValue={String(value ?? "")} />;
  return <input id={`agent-${path}`} name={path} defaultValue={value === null ? "" : String(value)} />;
}

function readField(form: FormData, path: string, original: unknown): unknown {
  if (typeof original === "boolean") return form.get(path) === "on";
  const raw = String(form.get(path) ?? "");
  if (typeof original === "number") return raw === "" ? null : Number(raw);
  if (Array.isArray(original))
    return raw
      .split(",")
      .map((s) => s.trim())
      .filter(Boolean);
  if (original === null && raw === "") return null;
  if (path === "max_turns") return raw === "" ? null : Number(raw);
  return raw;
}

function AgentEditor({ id }: { id: string }) {
  const [agent, setAgent] = useState<Json>(null);
  const [error, setError] = useState<string | null>(null);
  const [saved, setSaved] = useState(false);
  const load = useCallback(async () => setAgent((await get(`/v1/agents/${id}`)).agent), [id]);
  useEffect(() => {
    void load();
  }, [load]);
  if (!agent) return <p className="muted">Loading…</p>;
  // The API names the field at fault (`sms.tone must be one of …`): its error shows next to it.
  const errorField = fieldOfError(error, [
    ...TOP,
    ...["sms", "voice", "inbox"].flatMap((group) =>
      Object.keys(agent[group]).map((key) => `${group}.${key}`),
    ),
  ]);
  async function save(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const body: Record<string, unknown> = {};
    for (const key of TOP) body[key] = readField(form, key, agent[key]);
    for (const group of ["sms", "voice", "inbox"])
      body[group] = Object.fromEntries(
        Object.entries(agent[group]).map(([k, v]) => [k, readField(form, `${group}.${k}`, v)]),
      );
    setError(null);
    setSaved(false);
    try {
      setAgent((await patch(`/v1/agents/${id}`, body)).agent);
      setSaved(true);
    } catch (e) {
      setError(e instanceof ApiError ? e.message : "Could not save");
    }
  }
  return (
    <div className="page">
      <p>
        <Link href="/agents">← Agents</Link>
      </p>
      <h1>{agent.name}</h1>
      <form onSubmit={save} aria-label="Agent settings">
        <section className="card grid">
          {TOP.map((key) => (
            <label key={key} htmlFor={`agent-${key}`} className={key === "system_prompt" ? "wide" : ""}>
              {key}
              {fieldInput(key, agent[key])}
              {errorField === key && (
                <span className="error" role="alert">
                  {error}
                </span>
              )}
            </label>
          ))}
        </section>
        {["sms", "voice", "inbox"].map((group) => (
          <section className="card grid" key={group} aria-label={group}>
            <h2 className="wide">{group}</h2>
            {Object.entries(agent[group]).map(([key, value]) => (
              <label
                key={key}
                htmlFor={`agent-${group}.${key}`}
                className={typeof value === "boolean" ? "check" : key === "knowledge" ? "wide" : ""}
              >
                {key}
                {fieldInput(`${group}.${key}`, value)}
                {errorField === `${group}.${key}` && (
                  <span className="error" role="alert">
                    {error}
                  </span>
                )}
              </label>
            ))}
          </section>
        ))}
        {error && errorField === null && (
          <p className="error" role="alert">
            {error}
          </p>
        )}
        {saved && <p role="status">Saved</p>}
        <button type="submit">Save agent</button>
      </form>
      <TestChat id={id} />
    </div>
  );
}

function TestChat({ id }: { id: string }) {
  const [messages, setMessages] = useState<{ role: string; text: string }[]>([]);
  const [text, setText] = useState("");
  const [last, setLast] = useState<Json>(null);
  const [error, setError] = useState<string | null>(null);
  async function send(event: FormEvent) {
    event.preventDefault();
    const next = [...messages, { role: "contact", text }];
    setError(null);
    try {
      const answer = await post(`/v1/agents/${id}/test`, { messages: next });
      setLast(answer.reply);
      setMessages(answer.reply.text ? [...next, { role: "agent", text: answer.reply.text }] : next);
      setText("");
    } catch (e) {
      setError(e instanceof ApiError ? e.message : "The test chat failed");
    }
  }
  return (
    <section className="card" aria-label="Test chat">
      <h2>Test chat</h2>
      <ol className="messages">
        {messages.map((m, i) => (
          // biome-ignore lint/suspicious/noArrayIndexKey: a chat's lines are only ever appended
          <li key={i} className={`message ${m.role === "agent" ? "outbound" : "inbound"}`}>
            <span className="sender">{m.role}</span>
            <p>{m.text}</p>
          </li>
        ))}
      </ol>
      {last && (
        <p className="muted small">
          intent {last.intent} · sentiment {last.sentiment} · confidence {last.confidence}
          {last.handoff ? ` · hands off (${last.handoff.reason})` : ""}
        </p>
      )}
      <form onSubmit={send} className="row">
        <input
          aria-label="Message as the contact"
          value={text}
          onChange={(e) => setText(e.target.value)}
          required
        />
        <button type="submit">Send</button>
      </form>
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
    </section>
  );
}
