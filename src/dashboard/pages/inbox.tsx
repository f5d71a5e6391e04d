import { type FormEvent, useCallback, useEffect, useRef, useState } from "react";
import { Link, useLocation } from "wouter";
import { ApiError, get, type Json, patch, post } from "../api";

const FILTERS = ["all", "open", "closed", "needs_attention", "assigned", "unassigned", "agent"] as const;
const PAGE = 50;
const POLL_MS = 3000;

/** Contacts by id, fetched once each: a thread row shows its contact's name and number. */
const contactCache = new Map<string, Promise<Json>>();
function contactOf(id: string): Promise<Json> {
  let found = contactCache.get(id);
  if (!found) {
    found = get(`/v1/contacts/${id}`)
      .then((answer) => answer.contact)
      .catch(() => null);
    contactCache.set(id, found);
  }
  return found;
}

function ContactLabel({ id }: { id: string }) {
  const [contact, setContact] = useState<Json>(null);
  useEffect(() => {
    let live = true;
    void contactOf(id).then((c) => live && setContact(c));
    return () => {
      live = false;
    };
  }, [id]);
  if (!contact) return <span className="muted">…</span>;
  const name = [contact.first_name, contact.last_name].filter(Boolean).join(" ");
  // Always text: names come from contacts and are never interpreted as markup.
  return (
    <span>
      {name || contact.phone_number}
      {name && <span className="muted"> {contact.phone_number}</span>}
    </span>
  );
}

/**
 * The inbox (API.md §6.7): threads with filters and search, a page at a time (scrolling loads the
 * next page, never the whole inbox), and the open thread with reply, assign, close and the agent's
 * draft. Both refresh every few seconds.
 */
export function InboxPage({ threadId }: { threadId: string | null }) {
  const [filter, setFilter] = useState<(typeof FILTERS)[number]>("all");
  const [q, setQ] = useState("");
  const [rows, setRows] = useState<Json[]>([]);
  const [total, setTotal] = useState(0);
  const [error, setError] = useState<string | null>(null);
  const sentinel = useRef<HTMLLIElement | null>(null);

  const query = useCallback(
    (offset: number, limit: number) =>
      `/v1/conversations?filter=${filter}&limit=${limit}&offset=${offset}${q ? `&q=${encodeURIComponent(q)}` : ""}`,
    [filter, q],
  );

  // The first page, again every few seconds (as many rows as are shown).
  const refresh = useCallback(
    async (count: number) => {
      try {
        const answer = await get(query(0, Math.max(PAGE, Math.min(count, 200))));
        setRows(answer.conversations);
        setTotal(answer.total);
        setError(null);
      } catch (e) {
        setError(e instanceof ApiError ? e.message : "Could not load the inbox");
      }
    },
    [query],
  );
  useEffect(() => {
    void refresh(PAGE);
  }, [refresh]);
  useEffect(() => {
    const timer = setInterval(() => void refresh(rows.length), POLL_MS);
    return () => clearInterval(timer);
  }, [refresh, rows.length]);

  // Scrolling to the end loads the next page.
  useEffect(() => {
    const node = sentinel.current;
    if (!node) return;
    const observer = new IntersectionObserver(async (entries) => {
      if (!entries[0]?.isIntersecting || rows.length >= total) return;
      const answer = await get(query(rows.length, PAGE));
      setRows((current) => [
        ...current,
        ...answer.conversations.filter((c: Json) => !current.some((r) => r.id === c.id)),
      ]);
    });
    observer.observe(node);
    return () => observer.disconnect();
  }, [query, rows.length, total]);

  return (
    <div className="inbox">
      <section className="threads" aria-label="Threads">
        <div className="toolbar">
          <label>
            Show
            <select value={filter} onChange={(e) => setFilter(e.target.value as (typeof FILTERS)[number])}>
              {FILTERS.map((f) => (
                <option key={f} value={f}>
                  {f.replace("_", " ")}
                </option>
              ))}
            </select>
          </label>
          <input
            type="search"
            placeholder="Search names, numbers, messages"
            value={q}
            onChange={(e) => setQ(e.target.value)}
          />
        </div>
        {error && (
          <p className="error" role="alert">
            {error}
          </p>
        )}
        <p className="muted">{total} threads</p>
        <ul className="thread-list">
          {rows.map((row) => (
            <li key={row.id} className={row.id === threadId ? "selected" : ""}>
              <Link href={`/inbox/${row.id}`}>
                <ContactLabel id={row.contact_id} />
                <span className="badges">
                  {row.needs_attention && <span className="badge warn">needs attention</span>}
                  {row.agent_active && <span className="badge">agent</span>}
                  {row.status === "closed" && <span className="badge muted">closed</span>}
                </span>
              </Link>
            </li>
          ))}
          <li ref={sentinel} aria-hidden="true" className="sentinel" />
        </ul>
      </section>
      <section className="thread" aria-label="Thread">
        {threadId ? <Thread id={threadId} /> : <p className="muted">Choose a thread.</p>}
      </section>
    </div>
  );
}

function Thread({ id }: { id: string }) {
  const [conversation, setConversation] = useState<Json>(null);
  const [error, setError] = useState<string | null>(null);
  const [body, setBody] = useState("");
  const [, navigate] = useLocation();
  const load = useCallback(async () => {
    try {
      setConversation((await get(`/v1/conversations/${id}`)).conversation);
    } catch (e) {
      if (e instanceof ApiError && e.status === 404) navigate("/inbox");
    }
  }, [id, navigate]);
  useEffect(() => {
    void load();
    const timer = setInterval(() => void load(), POLL_MS);
    return () => clearInterval(timer);
  }, [load]);
  if (!conversation) return <p className="muted">Loading…</p>;

  async function reply(event: FormEvent) {
    event.preventDefault();
    setError(null);
    try {
      await post(`/v1/conversations/${id}`, { body });
      setBody("");
      await load();
    } catch (e) {
      setError(e instanceof ApiError ? e.message : "Could not send");
    }
  }
  async function change(fields: Json) {
    setError(null);
    try {
      await patch(`/v1/conversations/${id}`, fields);
      await load();
    } catch (e) {
      setError(e instanceof ApiError ? e.message : "Could not update the thread");
    }
  }
  return (
    <div className="thread-view">
      <header>
        <h2>
          <ContactLabel id={conversation.contact_id} />
        </h2>
        <div className="actions">
          {conversation.status === "open" ? (
            <button type="button" onClick={() => change({ status: "closed" })}>
              Close
            </button>
          ) : (
            <button type="button" onClick={() => change({ status: "open" })}>
              Reopen
            </button>
          )}
          {conversation.needs_attention && (
            <button type="button" onClick={() => change({ needs_attention: false })}>
              Clear attention
            </button>
          )}
          <label>
            Assigned to
            <input
              defaultValue={conversation.assigned_to ?? ""}
              onBlur={(e) => {
                const value = e.target.value.trim();
                if (value !== (conversation.assigned_to ?? "")) void change({ assigned_to: value || null });
              }}
            />
          </label>
        </div>
      </header>
      <ol className="messages">
        {conversation.messages.map((m: Json) => (
          <li key={m.id} className={`message ${m.direction}`}>
            <span className="sender">{m.sender}</span>
            <p>{m.body}</p>
            <span className="muted">
              {m.status} · {new Date(m.created_at).toLocaleString()}
            </span>
          </li>
        ))}
      </ol>
      {conversation.draft_reply && (
        <div className="draft">
          <span className="muted">The agent's draft</span>
          <p>{conversation.draft_reply}</p>
          <button type="button" onClick={() => setBody(conversation.draft_reply)}>
            Use draft
          </button>
        </div>
      )}
      <form onSubmit={reply} className="reply" aria-label="Reply">
        <textarea
          name="body"
          value={body}
          onChange={(e) => setBody(e.target.value)}
          required
          maxLength={1600}
        />
        {error && (
          <p className="error" role="alert">
            {error}
          </p>
        )}
        <button type="submit">Send reply</button>
      </form>
    </div>
  );
}
