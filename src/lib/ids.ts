/** Time-ordered UUID v7 ids for every resource (API.md §1). */
export function newId(): string {
  return Bun.randomUUIDv7();
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** True when `value` has the shape of a UUID; malformed path ids answer 404 without a query. */
export function isUuid(value: string): boolean {
  return UUID_RE.test(value);
}
