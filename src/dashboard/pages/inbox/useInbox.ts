import { useCallback, useEffect, useRef, useState } from "react";
import { ApiError, call, client } from "../../api";
import type { Filter, InboxRow } from "./types";

const PAGE = 50;
const POLL_MS = 3000;

/**
 * The inbox's list state: the first page, refreshed every few seconds (as many rows as are shown),
 * more pages as the list scrolls. `loaded` stays false until the first answer, so the page never
 * shows "0 threads" while it is still asking.
 */
export function useInbox(filter: Filter, q: string) {
  const [rows, setRows] = useState<InboxRow[]>([]);
  const [total, setTotal] = useState(0);
  const [loaded, setLoaded] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const shown = useRef(PAGE);

  const page = useCallback(
    (offset: number, limit: number) =>
      call(
        client.GET("/v1/conversations", {
          params: { query: { filter, limit, offset, ...(q.trim() ? { q: q.trim() } : {}) } },
        }),
      ),
    [filter, q],
  );

  const refresh = useCallback(async () => {
    try {
      const answer = await page(0, Math.max(PAGE, Math.min(shown.current, 200)));
      setRows(answer.conversations);
      setTotal(answer.total);
      setError(null);
    } catch (e) {
      setError(e instanceof ApiError ? e.message : "Could not load the inbox");
    } finally {
      setLoaded(true);
    }
  }, [page]);

  useEffect(() => {
    setLoaded(false);
    shown.current = PAGE;
    void refresh();
    const timer = setInterval(() => void refresh(), POLL_MS);
    return () => clearInterval(timer);
  }, [refresh]);

  const more = useCallback(async () => {
    if (rows.length >= total) return;
    const answer = await page(rows.length, PAGE);
    shown.current = rows.length + answer.conversations.length;
    setRows((current) => [
      ...current,
      ...answer.conversations.filter((c) => !current.some((r) => r.id === c.id)),
    ]);
  }, [page, rows.length, total]);

  return { rows, total, loaded, error, refresh, more };
}
