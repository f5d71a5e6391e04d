/**
 * The largest count a setting, a limit or a request takes (daily budgets, throttles, caps,
 * volumes): the columns that keep them are 32-bit on PostgreSQL, so a larger one is refused (422)
 * on both databases instead of being stored on one and failing on the other.
 */
export const MAX_COUNT = 1_000_000_000;
