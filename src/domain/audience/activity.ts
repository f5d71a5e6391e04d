import { and, count, desc, eq, isNotNull, ne } from "drizzle-orm";
import type { Db } from "../../db/client";
import {
  type ContactRow,
  calls,
  clicks,
  conversions,
  flowRuns,
  flows,
  listMembers,
  lists,
  messages,
  offers,
  suppressions,
} from "../../db/schema";
import { toIso } from "../../lib/time";
import { getContact } from "./contacts";

/** Kinds of entries in a contact's activity (API.md §7.4). */
export const ACTIVITY_TYPES = [
  "message",
  "call",
  "click",
  "conversion",
  "flow_entry",
  "flow_exit",
  "list_added",
  "opt_out",
] as const;
export type ActivityType = (typeof ACTIVITY_TYPES)[number];

/** One thing that happened to a contact, in words, with the ids of what it concerns. */
export interface ActivityJson {
  type: ActivityType;
  at: string;
  summary: string;
  ids: Record<string, string>;
}

interface Entry {
  type: ActivityType;
  at: number;
  summary: string;
  ids: Record<string, string | null>;
}

/** A source of entries: its newest `take` entries for the contact, and how many it has. */
interface Source {
  newest(take: number): Promise<Entry[]>;
  total(): Promise<number>;
}

const OPT_OUT_WORDS: Record<string, string> = {
  opt_out: "Opted out",
  manual: "Suppressed by hand",
  carrier: "Suppressed: the carrier reports the number unreachable",
  complaint: "Suppressed after a complaint",
};

const preview = (text: string, max = 80) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

function sources(db: Db, workspaceId: string, contact: ContactRow): Source[] {
  const ofMessages = and(
    eq(messages.workspaceId, workspaceId),
    eq(messages.contactId, contact.id),
    // A call's entry in the thread (status CALL) is listed as the call itself.
    ne(messages.status, "CALL"),
  );
  const ofCalls = and(eq(calls.workspaceId, workspaceId), eq(calls.contactId, contact.id));
  const ofClicks = and(eq(clicks.workspaceId, workspaceId), eq(clicks.contactId, contact.id));
  const ofConversions = and(eq(conversions.workspaceId, workspaceId), eq(conversions.contactId, contact.id));
  const ofRuns = and(eq(flowRuns.workspaceId, workspaceId), eq(flowRuns.contactId, contact.id));
  const ofEndedRuns = and(ofRuns, isNotNull(flowRuns.endedAt));
  const ofLists = and(eq(listMembers.workspaceId, workspaceId), eq(listMembers.contactId, contact.id));
  const ofOptOuts = and(
    eq(suppressions.workspaceId, workspaceId),
    eq(suppressions.phoneNumber, contact.phoneNumber),
  );
  return [
    {
      newest: async (take) =>
        (
          await db
            .select()
            .from(messages)
            .where(ofMessages)
            .orderBy(desc(messages.createdAt), desc(messages.id))
            .limit(take)
            .all()
        ).map((m) => ({
          type: "message",
          at: m.createdAt,
          summary:
            m.direction === "inbound"
              ? `Replied: "${preview(m.body)}"`
              : `Sent by ${m.sender} (${m.status.toLowerCase()}): "${preview(m.body)}"`,
          ids: { message_id: m.id, conversation_id: m.conversationId, campaign_id: m.campaignId },
        })),
      total: async () => (await db.select({ n: count() }).from(messages).where(ofMessages).get())?.n ?? 0,
    },
    {
      newest: async (take) =>
        (
          await db
            .select()
            .from(calls)
            .where(ofCalls)
            .orderBy(desc(calls.createdAt), desc(calls.id))
            .limit(take)
            .all()
        ).map((c) => ({
          type: "call",
          at: c.createdAt,
          summary: `${c.direction === "inbound" ? "Called in" : "Was called"} (${c.status.toLowerCase()}${
            c.durationSec ? `, ${c.durationSec} s` : ""
          })${c.summary ? `: ${preview(c.summary)}` : ""}`,
          ids: { call_id: c.id, conversation_id: c.conversationId, campaign_id: c.campaignId },
        })),
      total: async () => (await db.select({ n: count() }).from(calls).where(ofCalls).get())?.n ?? 0,
    },
    {
      newest: async (take) =>
        (
          await db
            .select({ click: clicks, offer: offers.name })
            .from(clicks)
            .leftJoin(offers, and(eq(offers.id, clicks.offerId), eq(offers.workspaceId, workspaceId)))
            .where(ofClicks)
            .orderBy(desc(clicks.createdAt), desc(clicks.id))
            .limit(take)
            .all()
        ).map(({ click, offer }) => ({
          type: "click",
          at: click.createdAt,
          summary: `Clicked the link of ${offer ? `offer "${offer}"` : "an offer"}`,
          ids: {
            click_id: click.id,
            offer_id: click.offerId,
            campaign_id: click.campaignId,
            message_id: click.messageId,
          },
        })),
      total: async () => (await db.select({ n: count() }).from(clicks).where(ofClicks).get())?.n ?? 0,
    },
    {
      newest: async (take) =>
        (
          await db
            .select()
            .from(conversions)
            .where(ofConversions)
            .orderBy(desc(conversions.createdAt), desc(conversions.id))
            .limit(take)
            .all()
        ).map((c) => ({
          type: "conversion",
          at: c.createdAt,
          summary: `Converted: ${c.event}${c.value !== null ? ` (${c.value} ${c.currency})` : ""}`,
          ids: {
            conversion_id: c.id,
            offer_id: c.offerId,
            campaign_id: c.campaignId,
            flow_id: c.flowId,
            agent_id: c.agentId,
          },
        })),
      total: async () =>
        (await db.select({ n: count() }).from(conversions).where(ofConversions).get())?.n ?? 0,
    },
    {
      newest: async (take) =>
        (
          await db
            .select({ run: flowRuns, flow: flows.name })
            .from(flowRuns)
            .leftJoin(flows, eq(flows.id, flowRuns.flowId))
            .where(ofRuns)
            .orderBy(desc(flowRuns.startedAt), desc(flowRuns.id))
            .limit(take)
            .all()
        ).map(({ run, flow }) => ({
          type: "flow_entry",
          at: run.startedAt,
          summary: `Entered flow "${flow ?? "deleted flow"}"`,
          ids: { flow_id: run.flowId, run_id: run.id },
        })),
      total: async () => (await db.select({ n: count() }).from(flowRuns).where(ofRuns).get())?.n ?? 0,
    },
    {
      newest: async (take) =>
        (
          await db
            .select({ run: flowRuns, flow: flows.name })
            .from(flowRuns)
            .leftJoin(flows, eq(flows.id, flowRuns.flowId))
            .where(ofEndedRuns)
            .orderBy(desc(flowRuns.endedAt), desc(flowRuns.id))
            .limit(take)
            .all()
        ).map(({ run, flow }) => ({
          type: "flow_exit",
          at: run.endedAt as number,
          summary: `Left flow "${flow ?? "deleted flow"}" (${run.exitReason ?? run.status})`,
          ids: { flow_id: run.flowId, run_id: run.id },
        })),
      total: async () => (await db.select({ n: count() }).from(flowRuns).where(ofEndedRuns).get())?.n ?? 0,
    },
    {
      newest: async (take) =>
        (
          await db
            .select({ member: listMembers, list: lists.name })
            .from(listMembers)
            .leftJoin(lists, eq(lists.id, listMembers.listId))
            .where(ofLists)
            .orderBy(desc(listMembers.createdAt))
            .limit(take)
            .all()
        ).map(({ member, list }) => ({
          type: "list_added",
          at: member.createdAt,
          summary: `Added to list "${list ?? "deleted list"}"`,
          ids: { list_id: member.listId },
        })),
      total: async () => (await db.select({ n: count() }).from(listMembers).where(ofLists).get())?.n ?? 0,
    },
    {
      newest: async (take) =>
        (
          await db
            .select()
            .from(suppressions)
            .where(ofOptOuts)
            .orderBy(desc(suppressions.createdAt), desc(suppressions.id))
            .limit(take)
            .all()
        ).map((row) => ({
          type: "opt_out",
          at: row.createdAt,
          summary: `${OPT_OUT_WORDS[row.reason] ?? `Suppressed (${row.reason})`}${row.source ? ` via ${row.source}` : ""}`,
          ids: { suppression_id: row.id },
        })),
      total: async () => (await db.select({ n: count() }).from(suppressions).where(ofOptOuts).get())?.n ?? 0,
    },
  ];
}

/**
 * A contact's activity, newest first (API.md §7.4). Each source reads at most `offset + limit` of
 * its newest entries through its contact index, and the page is cut from their merge. List
 * removals are not recorded anywhere, so only additions (current memberships) are listed.
 */
export async function contactActivity(
  db: Db,
  workspaceId: string,
  contactId: string,
  page: { limit: number; offset: number },
) {
  const contact = await getContact(db, workspaceId, contactId);
  const all = sources(db, workspaceId, contact);
  const take = page.offset + page.limit;
  const newest: Entry[] = [];
  let total = 0;
  for (const source of all) {
    newest.push(...(await source.newest(take)));
    total += await source.total();
  }
  const merged = newest.sort((a, b) => b.at - a.at || (a.type < b.type ? -1 : a.type > b.type ? 1 : 0));
  const activity: ActivityJson[] = merged.slice(page.offset, take).map((entry) => ({
    type: entry.type,
    at: toIso(entry.at) as string,
    summary: entry.summary,
    ids: Object.fromEntries(
      Object.entries(entry.ids).filter((pair): pair is [string, string] => pair[1] !== null),
    ),
  }));
  return { activity, total, limit: page.limit, offset: page.offset };
}
