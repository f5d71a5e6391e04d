import { and, eq } from "drizzle-orm";
import type { DbOrTx } from "../db/client";
import { contacts, suppressions } from "../db/schema";

export type SendBlock = "opted_out" | "suppressed";

export type SendPermission = { allowed: true } | { allowed: false; reason: SendBlock; message: string };

/**
 * The one check every send path calls, at accept time and again at send time: a number with a
 * suppression entry, or whose contact has `opted_in=false`, receives nothing.
 */
export function canSendTo(db: DbOrTx, workspaceId: string, phone: string): SendPermission {
  const contact = db
    .select({ optedIn: contacts.optedIn })
    .from(contacts)
    .where(and(eq(contacts.workspaceId, workspaceId), eq(contacts.phoneNumber, phone)))
    .get();
  if (contact && !contact.optedIn)
    return { allowed: false, reason: "opted_out", message: "Recipient has opted out" };
  const suppressed = db
    .select({ reason: suppressions.reason })
    .from(suppressions)
    .where(and(eq(suppressions.workspaceId, workspaceId), eq(suppressions.phoneNumber, phone)))
    .get();
  if (suppressed) {
    return suppressed.reason === "opt_out"
      ? { allowed: false, reason: "opted_out", message: "Recipient has opted out" }
      : { allowed: false, reason: "suppressed", message: "Recipient is suppressed" };
  }
  return { allowed: true };
}
