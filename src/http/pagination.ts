import { invalid } from "../lib/errors";
import { IntegerQuery } from "./schemas";

export const MAX_LIMIT = 200;
export const DEFAULT_LIMIT = 50;

/** Query schema fragment for list endpoints (integers in the document); checked by `parsePagination`. */
export const paginationQuery = {
  limit: IntegerQuery({
    description: `Items per page (default ${DEFAULT_LIMIT}, values above ${MAX_LIMIT} are clamped)`,
    minimum: 0,
    default: DEFAULT_LIMIT,
    example: DEFAULT_LIMIT,
  }),
  offset: IntegerQuery({ description: "Items to skip (default 0)", minimum: 0, default: 0, example: 0 }),
};

export interface Page {
  limit: number;
  offset: number;
}

function nonNegativeInteger(name: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined || raw === "") return fallback;
  if (!/^\d+$/.test(raw.trim())) throw invalid(`${name} must be a non-negative integer`);
  // Digits only: a valid integer, however large (limit clamps to 200; a huge offset is past the end).
  return Math.min(Number(raw), Number.MAX_SAFE_INTEGER);
}

/** limit/offset from a query: default 50, clamped to 200; junk or negatives → 422. */
export function parsePagination(
  query: { limit?: string; offset?: string },
  defaults: Partial<Page> = {},
): Page {
  const limit = Math.min(
    MAX_LIMIT,
    nonNegativeInteger("limit", query.limit, defaults.limit ?? DEFAULT_LIMIT),
  );
  const offset = nonNegativeInteger("offset", query.offset, defaults.offset ?? 0);
  return { limit, offset };
}
