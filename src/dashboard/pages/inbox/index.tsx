import { useCallback, useEffect, useRef, useState } from "react";
import { useLocation } from "wouter";
import { ThreadList } from "./ThreadList";
import { ThreadView } from "./ThreadView";
import type { Filter } from "./types";
import { useInbox } from "./useInbox";

/** Keys typed into a field are the field's, not shortcuts. */
function typing(target: EventTarget | null): boolean {
  const element = target as HTMLElement | null;
  return (
    !!element && (["INPUT", "TEXTAREA", "SELECT"].includes(element.tagName) || element.isContentEditable)
  );
}

/**
 * The inbox (API.md §6.7, §7.4): the threads (one request per page: each row carries its contact,
 * latest message, unread count and assignee), the open thread with the contact beside it, and the
 * keyboard: j/k move between threads, r writes a reply, e closes (or reopens) the thread.
 */
export function InboxPage({ threadId, me }: { threadId: string | null; me: string }) {
  const [filter, setFilter] = useState<Filter>("all");
  const [q, setQ] = useState("");
  const inbox = useInbox(filter, q);
  const [, navigate] = useLocation();
  const replyRef = useRef<HTMLTextAreaElement | null>(null);
  const [toggle, setToggle] = useState(0);

  const { rows, refresh } = inbox;
  const onKey = useCallback(
    (event: KeyboardEvent) => {
      if (event.metaKey || event.ctrlKey || event.altKey || typing(event.target)) return;
      const at = rows.findIndex((r) => r.id === threadId);
      if (event.key === "j" || event.key === "k") {
        const next = rows[event.key === "j" ? Math.min(rows.length - 1, at + 1) : Math.max(0, at - 1)];
        if (next) navigate(`/inbox/${next.id}`);
      } else if (event.key === "r" && threadId) {
        event.preventDefault();
        replyRef.current?.focus();
      } else if (event.key === "e" && threadId) setToggle((n) => n + 1);
      else return;
      event.preventDefault();
    },
    [rows, threadId, navigate],
  );
  useEffect(() => {
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [onKey]);

  return (
    <div className="inbox">
      <ThreadList
        rows={inbox.rows}
        total={inbox.total}
        loaded={inbox.loaded}
        error={inbox.error}
        selected={threadId}
        filter={filter}
        q={q}
        onFilter={setFilter}
        onSearch={setQ}
        onMore={inbox.more}
      />
      <section className="thread" aria-label="Thread">
        {threadId ? (
          <ThreadView
            key={threadId}
            id={threadId}
            row={rows.find((r) => r.id === threadId)}
            me={me}
            replyRef={replyRef}
            onChanged={refresh}
            toggleSignal={toggle}
          />
        ) : (
          <p className="muted thread-empty">Choose a thread, or press j to open the first one.</p>
        )}
      </section>
    </div>
  );
}
