import { useEffect, useState } from "react";

/**
 * Rows a form picks from (lists, numbers, offers…), loaded once: `load` is a module-level function
 * over the typed client, so the rows carry the OpenAPI document's types. Empty until loaded, and on
 * an error (the form still works without them).
 */
export function useRows<T>(load: () => Promise<T[]>): T[] {
  const [rows, setRows] = useState<T[]>([]);
  useEffect(() => {
    let live = true;
    load().then(
      (r) => live && setRows(r),
      () => live && setRows([]),
    );
    return () => {
      live = false;
    };
  }, [load]);
  return rows;
}
