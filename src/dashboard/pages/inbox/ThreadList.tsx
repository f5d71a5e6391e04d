import { useEffect, useRef } from "react";
import { Link } from "wouter";
import { contactName, FILTERS, type Filter, type InboxRow, shortTime } from "./types";

/** The list of threads: filter, search, and one row per thread with everything it needs. */
export function ThreadList(props: {
  rows: InboxRow[];
  total: number;
  loaded: boolean;
  error: string | null;
  selected: string | null;
  filter: Filter;
  q: string;
  onFilter: (filter: Filter) => void;
  onSearch: (q: string) => void;
  onMore: () => void;
}) {
  const sentinel = useRef<HTMLLIElement | null>(null);
  const { onMore, rows, total } = props;
  useEffect(() => {
    const node = sentinel.current;
    if (!node) return;
    const observer = new IntersectionObserver((entries) => {
      if (entries[0]?.isIntersecting && rows.length < total) onMore();
    });
    observer.observe(node);
    return () => observer.disconnect();
  }, [onMore, rows.length, total]);

  return (
    <section className="threads" aria-label="Threads">
      <div className="toolbar">
        <label>
          Show
          <select value={props.filter} onChange={(e) => props.onFilter(e.target.value as Filter)}>
            {FILTERS.map((f) => (
              <option key={f.value} value={f.value}>
                {f.label}
              </option>
            ))}
          </select>
        </label>
        <label className="grow">
          Search
          <input
            type="search"
            placeholder="Names, numbers, messages"
            value={props.q}
            onChange={(e) => props.onSearch(e.target.value)}
          />
        </label>
      </div>
      {props.error && (
        <p className="error" role="alert">
          {props.error}
        </p>
      )}
      <p className="muted small" aria-live="polite">
        {props.loaded ? `${props.total} ${props.total === 1 ? "thread" : "threads"}` : "Loading threads…"}
        <span className="keys"> · j/k move · r reply · e close</span>
      </p>
      <ul className="thread-list">
        {props.loaded && props.rows.length === 0 && !props.error && (
          <li className="empty">{props.q ? "No thread matches this search." : "No threads here yet."}</li>
        )}
        {props.rows.map((row) => (
          <ThreadRow key={row.id} row={row} selected={row.id === props.selected} />
        ))}
        <li ref={sentinel} aria-hidden="true" className="sentinel" />
      </ul>
    </section>
  );
}

/** Who sent the latest message, before its first line (inbound messages have none). */
const OUTBOUND_PREFIX: Record<string, string> = {
  human: "Team: ",
  agent: "Agent: ",
  campaign: "Campaign: ",
  flow: "Flow: ",
  system: "Auto: ",
};

function ThreadRow({ row, selected }: { row: InboxRow; selected: boolean }) {
  const firstLine = row.last_message?.body.split("\n")[0] ?? "";
  const unread = row.unread > 0;
  const prefix =
    row.last_message && row.last_message.direction === "outbound"
      ? (OUTBOUND_PREFIX[row.last_message.sender] ?? "")
      : "";
  return (
    <li className={`${selected ? "selected" : ""} ${unread ? "unread" : ""}`}>
      <Link href={`/inbox/${row.id}`} aria-current={selected ? "true" : undefined}>
        <span className="row-top">
          <span className="name">{contactName(row.contact)}</span>
          <time dateTime={row.last_message_at ?? undefined}>{shortTime(row.last_message_at)}</time>
        </span>
        <span className="preview">
          {prefix}
          {firstLine || <em>No messages</em>}
        </span>
        <span className="row-bottom">
          <span className="badges">
            {unread && <span className="badge unread-count">{row.unread} new</span>}
            {row.needs_attention && <span className="badge warn">needs attention</span>}
            {row.agent_active && <span className="badge">agent</span>}
            {row.contact && !row.contact.opted_in && <span className="badge danger">opted out</span>}
            {row.status === "closed" && <span className="badge muted">closed</span>}
          </span>
          <span className="assignee">{row.assignee ? row.assignee.name || row.assignee.email : ""}</span>
        </span>
      </Link>
    </li>
  );
}
