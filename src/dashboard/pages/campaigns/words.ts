/** A preview's planned outcomes and a recipient's real ones, in words. */
export const OUTCOME_WORDS: Record<string, string> = {
  send: "would be sent",
  defer: "would wait",
  skip: "would be skipped",
  queued: "queued",
  deferred: "waiting",
  sent: "sent",
  delivered: "delivered",
  failed: "failed",
  skipped: "skipped",
};

export function money(value: number | null | undefined, currency: string) {
  if (value === null || value === undefined) return "—";
  return new Intl.NumberFormat(undefined, { style: "currency", currency }).format(value);
}
