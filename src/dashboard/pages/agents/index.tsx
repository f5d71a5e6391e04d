import { type FormEvent, useCallback, useEffect, useState } from "react";
import { Link } from "wouter";
import { type Answer, ApiError, call, client, type Posted } from "../../api";
import { useSubmit } from "../../components/useSubmit";

type Agent = Answer<"/v1/agents/{id}">["agent"];
type AgentRow = Answer<"/v1/agents">["agents"][number];
type Reply = Posted<"/v1/agents/{id}/test">["reply"];

import { ErrorAlert } from "../../components/feedback";
import { AgentForm } from "./AgentForm";

/** Agents: the list, one agent's settings grouped by purpose (AgentForm), and the test chat beside them. */
export function AgentsPage({ agentId }: { agentId: string | null }) {
  return agentId ? <AgentEditor id={agentId} /> : <AgentList />;
}

function AgentList() {
  const [rows, setRows] = useState<AgentRow[]>([]);
  useEffect(() => {
    void call(client.GET("/v1/agents", { params: { query: { limit: 200 } } })).then((a) => setRows(a.agents));
  }, []);
  const { error, onSubmit: create } = useSubmit(async (form) => {
    const body = {
      name: String(form.get("name") ?? ""),
      channel: form.get("channel") === "voice" ? ("voice" as const) : ("sms" as const),
      system_prompt: String(form.get("system_prompt") ?? ""),
    };
    const answer = await call(client.POST("/v1/agents", { body }));
    window.location.assign(`/agents/${answer.agent.id}`);
  }, "Could not create");
  return (
    <div className="page">
      <h1>Agents</h1>
      <form onSubmit={create} className="card grid" aria-label="New agent">
        <label>
          Name
          <input name="name" required />
        </label>
        <label>
          Kind
          <select name="channel" defaultValue="sms">
            <option value="sms">SMS agent: answers texts</option>
            <option value="voice">Voice agent: makes and takes calls</option>
          </select>
        </label>
        <label className="wide">
          Instructions (who the agent is, what it sells, how it talks)
          <textarea name="system_prompt" required />
        </label>
        <ErrorAlert error={error} />
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

function AgentEditor({ id }: { id: string }) {
  const [agent, setAgent] = useState<Agent | null>(null);
  const [error, setError] = useState<string | null>(null);
  const load = useCallback(async () => {
    try {
      setAgent((await call(client.GET("/v1/agents/{id}", { params: { path: { id } } }))).agent);
    } catch (e) {
      setError(e instanceof ApiError ? e.message : "Could not load the agent");
    }
  }, [id]);
  useEffect(() => {
    void load();
  }, [load]);
  if (!agent)
    return error ? (
      <p className="error" role="alert">
        {error}
      </p>
    ) : (
      <p className="muted">Loading the agent…</p>
    );
  return (
    <div className="agent-page">
      <p>
        <Link href="/agents">← Agents</Link>
      </p>
      <h1>
        {agent.name} <span className="badge">{agent.channel === "voice" ? "Voice agent" : "SMS agent"}</span>{" "}
        <span className={`badge status-${agent.status}`}>{agent.status}</span>
      </h1>
      <div className="agent-layout">
        <AgentForm agent={agent} onSaved={setAgent} />
        <TestChat id={id} />
      </div>
    </div>
  );
}

function TestChat({ id }: { id: string }) {
  const [messages, setMessages] = useState<{ role: "agent" | "contact"; text: string }[]>([]);
  const [text, setText] = useState("");
  const [last, setLast] = useState<Reply | null>(null);
  const [error, setError] = useState<string | null>(null);
  async function send(event: FormEvent) {
    event.preventDefault();
    const next = [...messages, { role: "contact" as const, text }];
    setError(null);
    try {
      const answer = await call(
        client.POST("/v1/agents/{id}/test", { params: { path: { id } }, body: { messages: next } }),
      );
      setLast(answer.reply);
      setMessages(answer.reply.text ? [...next, { role: "agent" as const, text: answer.reply.text }] : next);
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
      <ErrorAlert error={error} />
    </section>
  );
}
