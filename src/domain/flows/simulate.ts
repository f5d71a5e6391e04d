/**
 * `POST /v1/flows/{id}/simulate` (API.md §6.6): the flow's real runner on a virtual clock, inside
 * a transaction that is always rolled back, so the very same node logic runs (compliance windows,
 * conditions in SQL, senders, merge fields) and nothing is written or sent. Scripted events (a
 * reply, a click, a conversion) happen at their minute; the trace says what each node did when.
 */
import { and, eq } from "drizzle-orm";
import type { Db, DbOrTx } from "../../db/client";
import { type ContactRow, contacts, flowRuns, RUN_IS_ACTIVE } from "../../db/schema";
import { workspaceRow } from "../../db/workspace-row";
import { invalid } from "../../lib/errors";
import { newId } from "../../lib/ids";
import { normalizePhone } from "../../lib/phone";
import { isPossibleOptOut, keywordOf } from "../messaging/inbound";
import { exitOnPurchase, findFlow, markReplied } from "./flows";
import { advanceRun, flowGraph, RunEnv, type TraceEntry } from "./runner";

export const SIMULATION_EVENTS = ["reply", "click", "conversion"] as const;
const MAX_EVENTS = 100;
const DEFAULT_DAYS = 30;
const MAX_DAYS = 365;
/** A contact with no number given is simulated with this one (a California number: no state rule). */
const PLACEHOLDER_PHONE = "+14155550199";

export interface SimulationInput {
  contact_id?: string;
  contact?: {
    phone_number?: string;
    first_name?: string | null;
    last_name?: string | null;
    email?: string | null;
    timezone?: string | null;
    fields?: Record<string, unknown>;
  };
  events?: { after_minutes: number; type: string; body?: string; event?: string }[];
  max_days?: number;
}

export interface TraceLine {
  at_minutes: number;
  node_id: string | null;
  type: string;
  action: string;
  detail: string | null;
}

class Rollback extends Error {}

function checkInput(input: SimulationInput) {
  const hasId = input.contact_id !== undefined;
  const hasContact = input.contact !== undefined;
  if (hasId === hasContact) throw invalid("contact_id or contact is required (one of them)");
  const maxDays = input.max_days ?? DEFAULT_DAYS;
  if (!Number.isFinite(maxDays) || maxDays <= 0 || maxDays > MAX_DAYS)
    throw invalid(`max_days must be between 1 and ${MAX_DAYS}`);
  const events = input.events ?? [];
  if (events.length > MAX_EVENTS) throw invalid(`events must have at most ${MAX_EVENTS} items`);
  events.forEach((e, i) => {
    if (!(SIMULATION_EVENTS as readonly string[]).includes(e.type))
      throw invalid(`events[${i}].type must be one of ${SIMULATION_EVENTS.join(", ")}`);
    if (!Number.isFinite(e.after_minutes) || e.after_minutes < 0)
      throw invalid(`events[${i}].after_minutes must be a number ≥ 0`);
  });
  let phone: string | undefined;
  if (input.contact?.phone_number !== undefined) {
    phone = normalizePhone(input.contact.phone_number) ?? undefined;
    if (!phone) throw invalid("contact.phone_number must be a valid phone number");
  }
  return { maxDays, events: [...events].sort((a, b) => a.after_minutes - b.after_minutes), phone };
}

/** The contact the simulation follows: the real one, or the given one written inside the rollback. */
async function simulatedContact(
  tx: DbOrTx,
  workspaceId: string,
  input: SimulationInput,
  phone: string | undefined,
  now: number,
): Promise<ContactRow> {
  if (input.contact_id !== undefined) {
    const row = await workspaceRow(tx, contacts, workspaceId, input.contact_id);
    if (!row) throw invalid("contact_id does not exist");
    return row;
  }
  const given = input.contact ?? {};
  const number = phone ?? PLACEHOLDER_PHONE;
  const existing = await tx
    .select()
    .from(contacts)
    .where(and(eq(contacts.workspaceId, workspaceId), eq(contacts.phoneNumber, number)))
    .get();
  const row: ContactRow = {
    ...(existing ?? {
      id: newId(),
      workspaceId,
      phoneNumber: number,
      externalId: null,
      source: "api",
      optedIn: true,
      createdAt: now,
    }),
    firstName: given.first_name ?? null,
    lastName: given.last_name ?? null,
    email: given.email ?? null,
    timezone: given.timezone ?? null,
    fields: (given.fields ?? {}) as ContactRow["fields"],
    updatedAt: now,
  } as ContactRow;
  if (existing) await tx.update(contacts).set(row).where(eq(contacts.id, row.id)).run();
  else await tx.insert(contacts).values(row).run();
  return row;
}

export async function simulateFlow(
  db: Db,
  workspaceId: string,
  id: string,
  input: SimulationInput,
  now = Date.now(),
) {
  const { maxDays, events, phone } = checkInput(input);
  const trace: TraceEntry[] = [];
  try {
    await db.transaction(async (tx) => {
      const flow = await findFlow(tx, workspaceId, id);
      const graph = flowGraph(flow);
      if (!graph.trigger) throw invalid("definition has no trigger node");
      const contact = await simulatedContact(tx, workspaceId, input, phone, now);
      // A real active run of this contact is set aside (inside the rollback) for the simulated one.
      await tx
        .update(flowRuns)
        .set({ status: "exited" })
        .where(and(eq(flowRuns.flowId, flow.id), eq(flowRuns.contactId, contact.id), RUN_IS_ACTIVE))
        .run();
      const runId = newId();
      await tx
        .insert(flowRuns)
        .values({
          id: runId,
          workspaceId,
          flowId: flow.id,
          contactId: contact.id,
          status: "active",
          currentNodeId: graph.trigger.id,
          currentStepId: null,
          waitingUntil: now,
          waitKind: null,
          repliedAt: null,
          exitReason: null,
          startedAt: now,
          endedAt: null,
          updatedAt: now,
        })
        .run();
      const env = new RunEnv(trace);
      const end = now + maxDays * 86_400_000;
      const pending = [...events];
      let t = now;
      for (let guard = 0; guard < 10_000; guard++) {
        const run = await tx.select().from(flowRuns).where(eq(flowRuns.id, runId)).get();
        if (run?.status !== "active") {
          if (run?.status === "exited")
            trace.push({
              at: t,
              node_id: run.currentNodeId ?? "",
              type: "run",
              action: "exited",
              detail: run.exitReason,
            });
          break;
        }
        if ((run.waitingUntil ?? Number.POSITIVE_INFINITY) <= t) {
          const current = await tx.select().from(contacts).where(eq(contacts.id, contact.id)).get();
          await advanceRun(tx, flow, run, current, t, env);
          continue;
        }
        const nextEvent = pending.length ? now + pending[0].after_minutes * 60_000 : Number.POSITIVE_INFINITY;
        const nextDue = run.waitingUntil ?? Number.POSITIVE_INFINITY;
        if (Math.min(nextEvent, nextDue) > end) {
          trace.push({
            at: end,
            node_id: run.currentNodeId ?? "",
            type: "run",
            action: "max_days_reached",
            detail: null,
          });
          break;
        }
        if (nextEvent <= nextDue) {
          t = Math.max(t, nextEvent);
          const event = pending.shift() as (typeof events)[number];
          trace.push({
            at: t,
            node_id: run.currentNodeId ?? "",
            type: "event",
            action: event.type,
            detail: event.body ?? event.event ?? null,
          });
          // As live: a CTIA keyword (STOP, YES, HELP ...) or a possible opt-out is not a reply a flow hears.
          if (
            event.type === "reply" &&
            keywordOf(event.body ?? "") === null &&
            !isPossibleOptOut(event.body ?? "")
          )
            await markReplied(tx, workspaceId, contact.id, t);
          else if (event.type === "conversion" && (event.event ?? "purchase") === "purchase")
            await exitOnPurchase(tx, workspaceId, contact.id, t);
        } else t = nextDue;
      }
      throw new Rollback();
    });
  } catch (error) {
    if (!(error instanceof Rollback)) throw error;
  }
  return trace.map(
    (entry): TraceLine => ({
      at_minutes: Math.round(((entry.at - now) / 60_000) * 100) / 100,
      node_id: entry.node_id || null,
      type: entry.type,
      action: entry.action,
      detail: entry.detail,
    }),
  );
}
