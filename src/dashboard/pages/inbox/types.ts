import type { Answer } from "../../api";

/** An inbox row as `GET /v1/conversations` answers it. */
export type InboxRow = Answer<"/v1/conversations">["conversations"][number];
/** A thread as `GET /v1/conversations/{id}` answers it. */
export type Thread = Answer<"/v1/conversations/{id}">["conversation"];
export type ThreadEntry = Thread["messages"][number];
export type Assignee = Answer<"/v1/conversations/assignees">["assignees"][number];

/** The inbox's filters, in words. */
export const FILTERS = [
  { value: "all", label: "All threads" },
  { value: "mine", label: "Assigned to me" },
  { value: "needs_attention", label: "Needs attention" },
  { value: "open", label: "Open" },
  { value: "closed", label: "Closed" },
  { value: "unassigned", label: "Unassigned" },
  { value: "assigned", label: "Assigned" },
  { value: "agent", label: "Handled by an agent" },
] as const;
export type Filter = (typeof FILTERS)[number]["value"];

export function contactName(contact: InboxRow["contact"]): string {
  if (!contact) return "Deleted contact";
  const name = [contact.first_name, contact.last_name].filter(Boolean).join(" ");
  return name || contact.phone_number;
}

/** "14:05" today, "Mon" this week, "3 Nov" before. */
export function shortTime(iso: string | null | undefined, now = Date.now()): string {
  if (!iso) return "";
  const at = new Date(iso);
  const ageDays = (now - at.getTime()) / 86_400_000;
  if (new Date(now).toDateString() === at.toDateString())
    return at.toLocaleTimeString(undefined, { hour: "2-digit", minute: "2-digit" });
  if (ageDays < 6) return at.toLocaleDateString(undefined, { weekday: "short" });
  return at.toLocaleDateString(undefined, { day: "numeric", month: "short" });
}

/** Who wrote an entry of the thread, in words. */
export const SENDER_WORDS: Record<string, string> = {
  contact: "Contact",
  agent: "AI agent",
  human: "Team",
  campaign: "Campaign",
  flow: "Flow",
  system: "Automatic",
  api: "API",
  note: "Private note",
};
