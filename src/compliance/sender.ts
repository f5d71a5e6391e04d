/**
 * The sender check of `settings.require_registration` (the 10DLC rule, API.md §3 10DLC): since 2025
 * US carriers block A2P traffic from local (10DLC) numbers that are in no approved campaign. Toll-free
 * numbers and short codes are registered by other programmes and are not held to it here.
 */

/** North American toll-free prefixes (NPA). */
export const TOLL_FREE_AREA_CODES: readonly string[] = ["800", "833", "844", "855", "866", "877", "888"];

/** A US/Canada local number: +1, ten digits, not toll-free. */
export function isUsLocalNumber(number: string): boolean {
  return /^\+1[2-9]\d{9}$/.test(number) && !TOLL_FREE_AREA_CODES.includes(number.slice(2, 5));
}

/**
 * `unregistered_number` when registration is required and the sender is a US local number that is
 * in no APPROVED 10DLC campaign; null when it may send.
 */
export function unregisteredSender(input: {
  required: boolean;
  number: string;
  registered: boolean;
}): "unregistered_number" | null {
  if (!input.required || input.registered || !isUsLocalNumber(input.number)) return null;
  return "unregistered_number";
}
