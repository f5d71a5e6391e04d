/**
 * Triggers that enroll by themselves (API.md §6.6), and the events that move runs: each listens
 * inside the transaction that emits the event, so an enrolment commits with its cause.
 *   contact.created     → `contact_created` flows (API, import, inbound)
 *   list additions      → `added_to_list {list_id}` flows (the API, imports into a list, flow nodes)
 *   message.received    → `inbound_keyword {keywords}` flows (first word; CTIA keywords never), and
 *                         runs waiting for a reply go on by `replied`; neither for a keyword (STOP,
 *                         HELP, YES ...) nor for a possible opt-out (API.md §7.1: a person reads it,
 *                         the flow does not answer it and keeps waiting)
 *   link.clicked        → `link_clicked {offer_id?}` flows
 *   conversion.recorded → `conversion {conversion_event?}` flows; a purchase exits flows with exit_on_purchase
 * Only `active` flows enroll; activation does not catch up on what happened before.
 */
import type { DbOrTx } from "../../db/client";
import { onListMembersAdded } from "../audience/lists";
import { type EmittedEvent, onEventsEmitted } from "../events";
import { isPossibleOptOut, keywordOf } from "../messaging/inbound";
import { contactsInActiveRuns, enrollContacts, exitOnPurchase, flowsTriggeredBy, markReplied } from "./flows";
import { onFlowAddedToList } from "./runner";

interface Data {
  id?: string;
  contact_id?: string | null;
  direction?: string;
  body?: string;
  offer_id?: string | null;
  event?: string;
}

async function enrollOne(
  tx: DbOrTx,
  flows: Awaited<ReturnType<typeof flowsTriggeredBy>>,
  contactId: string,
  now: number,
  match: (data: Record<string, unknown>) => boolean,
) {
  for (const flow of flows) {
    const trigger = (
      flow.definition as { nodes?: { type: string; data?: Record<string, unknown> }[] }
    ).nodes?.find((n) => n.type === "trigger");
    if (match(trigger?.data ?? {})) await enrollContacts(tx, flow, [contactId], now);
  }
}

async function enrollIntoListFlows(
  tx: DbOrTx,
  workspaceId: string,
  listId: string,
  contactIds: string[],
  now: number,
) {
  for (const flow of await flowsTriggeredBy(tx, workspaceId, "added_to_list"))
    if (flow.triggerListId === listId) await enrollContacts(tx, flow, contactIds, now);
}

/**
 * For a batch with several purchases (a group of conversions): whether a purchaser may be in an
 * active run, from one probe of all of them, so that the many in no flow skip `exitOnPurchase`'s
 * own probe. A contact the batch enrolls (`enrolled`) may be, whatever the probe said.
 */
async function purchasersInRuns(tx: DbOrTx, events: EmittedEvent[]) {
  const purchases = events.flatMap((event) => {
    const data = (event.data ?? {}) as Data;
    return event.type === "conversion.recorded" && data.event === "purchase" && data.contact_id
      ? [{ workspaceId: event.workspaceId, contactId: data.contact_id }]
      : [];
  });
  const inRuns = new Map<string, Set<string>>();
  for (const [workspaceId, ofWorkspace] of Map.groupBy(purchases, (purchase) => purchase.workspaceId))
    if (ofWorkspace.length > 1)
      inRuns.set(
        workspaceId,
        await contactsInActiveRuns(
          tx,
          workspaceId,
          ofWorkspace.map((purchase) => purchase.contactId),
        ),
      );
  const enrolled = new Set<string>();
  const key = (workspaceId: string, contactId: string) => `${workspaceId} ${contactId}`;
  const mayBeInRun = (workspaceId: string, contactId: string) => {
    const probed = inRuns.get(workspaceId);
    return !probed || probed.has(contactId) || enrolled.has(key(workspaceId, contactId));
  };
  mayBeInRun.enrolled = (workspaceId: string, contactId: string) => {
    enrolled.add(key(workspaceId, contactId));
  };
  return mayBeInRun;
}

let started = false;

/** Registers the listeners once per process. */
export function startFlowTriggers() {
  if (started) return;
  started = true;
  onListMembersAdded(enrollIntoListFlows);
  onFlowAddedToList(enrollIntoListFlows);
  onEventsEmitted(async (tx, events) => {
    // A batch (an import's contact.created events) asks which flows a trigger starts once.
    const triggered = new Map<string, Awaited<ReturnType<typeof flowsTriggeredBy>>>();
    const flowsFor = async (workspaceId: string, kind: string) => {
      const key = `${workspaceId}:${kind}`;
      let found = triggered.get(key);
      if (!found) {
        found = await flowsTriggeredBy(tx, workspaceId, kind);
        triggered.set(key, found);
      }
      return found;
    };
    const mayBeInRun = await purchasersInRuns(tx, events);
    for (const event of events) {
      const data = (event.data ?? {}) as Data;
      const now = event.createdAt;
      switch (event.type) {
        case "contact.created": {
          if (!data.id) break;
          for (const flow of await flowsFor(event.workspaceId, "contact_created"))
            await enrollContacts(tx, flow, [data.id], now);
          break;
        }
        case "message.received": {
          if (!data.contact_id) break;
          const body = (data.body ?? "").trim();
          if (keywordOf(body) !== null || isPossibleOptOut(body)) break;
          await markReplied(tx, event.workspaceId, data.contact_id, now);
          const first = body.split(/\s+/)[0]?.toLowerCase() ?? "";
          if (!first) break;
          await enrollOne(
            tx,
            await flowsFor(event.workspaceId, "inbound_keyword"),
            data.contact_id,
            now,
            (trigger) => ((trigger.keywords ?? []) as string[]).some((k) => k.toLowerCase() === first),
          );
          break;
        }
        case "link.clicked": {
          if (!data.contact_id) break;
          await enrollOne(
            tx,
            await flowsFor(event.workspaceId, "link_clicked"),
            data.contact_id,
            now,
            (trigger) => !trigger.offer_id || trigger.offer_id === data.offer_id,
          );
          break;
        }
        case "conversion.recorded": {
          if (!data.contact_id) break;
          if (data.event === "purchase" && mayBeInRun(event.workspaceId, data.contact_id))
            await exitOnPurchase(tx, event.workspaceId, data.contact_id, now);
          const enrolling = await flowsFor(event.workspaceId, "conversion");
          // A later purchase of this batch must find the run this one may start.
          if (enrolling.length > 0) mayBeInRun.enrolled(event.workspaceId, data.contact_id);
          await enrollOne(
            tx,
            enrolling,
            data.contact_id,
            now,
            (trigger) => !trigger.conversion_event || trigger.conversion_event === data.event,
          );
          break;
        }
      }
    }
  });
}
