import type { BatchScope } from "./types";

/** One write as a batch of its own: its collected values are finished right after it. */
export async function writeAlone<T, R>(
  tx: T,
  fn: (tx: T, batch: BatchScope<T>) => Promise<R> | R,
): Promise<R> {
  const values = new Map<
    string,
    { value: unknown; finish: (tx: T, value: unknown) => Promise<void> | void }
  >();
  const scope: BatchScope<T> = {
    collect(key, create, finish) {
      let entry = values.get(key);
      if (!entry) {
        entry = { value: create(), finish: finish as (tx: T, value: unknown) => Promise<void> | void };
        values.set(key, entry);
      }
      return entry.value as never;
    },
  };
  const result = await fn(tx, scope);
  for (const { value, finish } of values.values()) await finish(tx, value);
  return result;
}

/** A select builder limited to one row (`first`); raw SQL and other queries as they are. */
export function limitedToOne<R>(query: PromiseLike<R[]>): PromiseLike<R[]> {
  const limit = (query as { limit?: unknown }).limit;
  return typeof limit === "function" ? (limit as (n: number) => PromiseLike<R[]>).call(query, 1) : query;
}
