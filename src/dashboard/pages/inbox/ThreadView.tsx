import { type FormEvent, type RefObject, useCallback, useEffect, useRef, useState } from "react";
import { useLocation } from "wouter";
import { ApiError, call, client } from "../../api";
import { ContactPanel } from "./ContactPanel";
import { type Assignee, contactName, type InboxRow, SENDER_WORDS, type Thread } from "./types";

const POLL_MS = 3000;

/**
 * One thread: its messages and notes, the actions (assign, close or reopen, clear attention), the
 * agent's draft and the composer (a reply, or a private note), with the contact's panel beside it.
 * An opted-out contact's state shows above the composer before anyone types.
 */
export function ThreadView(props: {
  id: string;
  row: InboxRow | undefined;
  me: string;
  replyRef: RefObject<HTMLTextAreaElement | null>;
  onChanged: () => void;
  /** Incremented by the `e` key: close (or reopen) this thread. */
  toggleSignal: number;
}) {
  const { id, onChanged } = props;
  const [thread, setThread] = useState<Thread | null>(null);
  const [assignees, setAssignees] = useState<Assignee[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [mode, setMode] = useState<"reply" | "note">("reply");
  const [body, setBody] = useState("");
  const [busy, setBusy] = useState(false);
  const [, navigate] = useLocation();

  const load = useCallback(async () => {
    try {
      setThread(
        (await call(client.GET("/v1/conversations/{id}", { params: { path: { id } } }))).conversation,
      );
    } catch (e) {
      if (e instanceof ApiError && e.status === 404) navigate("/inbox");
    }
  }, [id, navigate]);
  useEffect(() => {
    setThread(null);
    setError(null);
    void load();
    const timer = setInterval(() => void load(), POLL_MS);
    return () => clearInterval(timer);
  }, [load]);
  useEffect(() => {
    call(client.GET("/v1/conversations/assignees"))
      .then((a) => setAssignees(a.assignees))
      .catch(() => setAssignees([]));
  }, []);

  const change = useCallback(
    async (fields: { status?: string; assigned_to?: string | null; needs_attention?: boolean }) => {
      setError(null);
      try {
        await call(client.PATCH("/v1/conversations/{id}", { params: { path: { id } }, body: fields }));
        await load();
        onChanged();
      } catch (e) {
        setError(e instanceof ApiError ? e.message : "Could not update the thread");
      }
    },
    [id, load, onChanged],
  );

  // The `e` key: a signal newer than the one this thread was opened with closes or reopens it.
  const { toggleSignal } = props;
  const handledSignal = useRef(toggleSignal);
  const status = thread?.status;
  useEffect(() => {
    if (toggleSignal === handledSignal.current || !status) return;
    handledSignal.current = toggleSignal;
    void change({ status: status === "open" ? "closed" : "open" });
  }, [toggleSignal, status, change]);
  const [panelContact, setPanelContact] = useState<InboxRow["contact"]>(null);

  if (!thread) return <p className="muted thread-loading">Loading the thread…</p>;
  const contact = props.row?.contact ?? panelContact;
  const optedOut = contact ? !contact.opted_in : false;

  async function send(event: FormEvent) {
    event.preventDefault();
    if (!body.trim()) return;
    setError(null);
    setBusy(true);
    try {
      if (mode === "note")
        await call(client.POST("/v1/conversations/{id}/notes", { params: { path: { id } }, body: { body } }));
      else await call(client.POST("/v1/conversations/{id}", { params: { path: { id } }, body: { body } }));
      setBody("");
      await load();
      onChanged();
    } catch (e) {
      setError(e instanceof ApiError ? e.message : "Could not send");
    } finally {
      setBusy(false);
    }
  }

  return (
    <div className="thread-layout">
      <div className="thread-view">
        <header>
          <div>
            <h2 className="thread-title">{contactName(contact ?? null)}</h2>
            {contact && <span className="muted">{contact.phone_number}</span>}
          </div>
          <div className="actions">
            <label>
              Assigned to
              <select
                value={thread.assigned_to ?? ""}
                onChange={(e) => void change({ assigned_to: e.target.value || null })}
              >
                <option value="">Nobody</option>
                {assignees.map((a) => (
                  <option key={a.id} value={a.id}>
                    {a.id === props.me ? `${a.name || a.email} (me)` : a.name || a.email}
                  </option>
                ))}
              </select>
            </label>
            {thread.assigned_to !== props.me && (
              <button type="button" className="secondary" onClick={() => change({ assigned_to: props.me })}>
                Assign to me
              </button>
            )}
            {thread.needs_attention && (
              <button type="button" className="secondary" onClick={() => change({ needs_attention: false })}>
                Mark handled
              </button>
            )}
            {thread.status === "open" ? (
              <button type="button" onClick={() => change({ status: "closed" })} title="Close (e)">
                Close
              </button>
            ) : (
              <button type="button" onClick={() => change({ status: "open" })} title="Reopen (e)">
                Reopen
              </button>
            )}
          </div>
        </header>
        <ol className="messages">
          {thread.messages.map((m) => (
            <li
              key={m.id}
              className={`message ${m.sender === "note" ? "note" : m.direction}${m.status === "CALL" ? " call" : ""}`}
            >
              <span className="sender">
                {m.sender === "note"
                  ? `Private note · ${m.author?.name ?? ""}`
                  : (SENDER_WORDS[m.sender] ?? m.sender)}
              </span>
              <p>{m.body}</p>
              <span className="muted small">
                {m.sender === "note" || m.status === "CALL" ? "" : `${m.status.toLowerCase()} · `}
                {new Date(m.created_at).toLocaleString()}
              </span>
            </li>
          ))}
        </ol>
        {thread.draft_reply && (
          <div className="draft">
            <span className="muted">The agent's draft</span>
            <p>{thread.draft_reply}</p>
            <button
              type="button"
              onClick={() => {
                setMode("reply");
                setBody(thread.draft_reply ?? "");
              }}
            >
              Use draft
            </button>
          </div>
        )}
        {optedOut && mode === "reply" && (
          <p className="opted-out" role="status">
            This contact opted out. A reply cannot be sent until they text START; you can still leave a
            private note.
          </p>
        )}
        <form onSubmit={send} className={`reply ${mode}`} aria-label="Reply">
          <div className="tabs" role="tablist" aria-label="Write">
            <button
              type="button"
              role="tab"
              aria-selected={mode === "reply"}
              className={mode === "reply" ? "tab active" : "tab"}
              onClick={() => setMode("reply")}
            >
              Reply
            </button>
            <button
              type="button"
              role="tab"
              aria-selected={mode === "note"}
              className={mode === "note" ? "tab active" : "tab"}
              onClick={() => setMode("note")}
            >
              Private note
            </button>
          </div>
          <label>
            {mode === "reply" ? "Reply by SMS (r)" : "Note for the team (never sent)"}
            <textarea
              ref={props.replyRef}
              name="body"
              value={body}
              onChange={(e) => setBody(e.target.value)}
              disabled={mode === "reply" && optedOut}
              maxLength={mode === "reply" ? 1600 : 2000}
            />
          </label>
          {error && (
            <p className="error" role="alert">
              {error}
            </p>
          )}
          <div className="row">
            <button type="submit" disabled={busy || !body.trim() || (mode === "reply" && optedOut)}>
              {mode === "reply" ? "Send reply" : "Add note"}
            </button>
            <span className="muted small">{body.length} characters</span>
          </div>
        </form>
      </div>
      {thread.contact_id && <ContactPanel contactId={thread.contact_id} onContact={setPanelContact} />}
    </div>
  );
}
