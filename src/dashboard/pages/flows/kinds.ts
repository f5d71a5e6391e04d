/** A node's data: its keys are per type (the flow definition of API.md §3); each form reads its own. */
export type NodeData = Record<string, unknown>;

/** What each node type looks like and starts with: label, icon, colour, help, handles. */
export interface Kind {
  label: string;
  icon: string;
  color: string;
  help: string;
  data: NodeData;
  /** Outgoing handles with their labels; [] for none; absent means one unlabelled `out`. */
  handles?: { id: string; label: string }[];
}

export const KINDS: Record<string, Kind> = {
  trigger: {
    label: "Start",
    icon: "▶",
    color: "#2454d6",
    help: "What puts a contact into the flow.",
    data: { event: "manual" },
  },
  send_sms: {
    label: "Send a text",
    icon: "✉",
    color: "#0f7b6c",
    help: "Sends an SMS; the sending rules (quiet hours, caps) apply.",
    data: { body: "Hi {{first_name|there}}!" },
  },
  wait: {
    label: "Wait",
    icon: "◔",
    color: "#8a5a00",
    help: "Pauses the contact for a while.",
    data: { hours: 1 },
  },
  wait_for_reply: {
    label: "Wait for a reply",
    icon: "↩",
    color: "#8a5a00",
    help: "Goes one way if the contact replies in time, the other way if not.",
    data: { timeout_hours: 24 },
    handles: [
      { id: "replied", label: "replied" },
      { id: "timeout", label: "no reply" },
    ],
  },
  condition: {
    label: "Check a condition",
    icon: "◆",
    color: "#6b3fa0",
    help: "Splits on the contact's fields.",
    data: { rules: { all: [{ field: "opted_in", op: "eq", value: true }] } },
    handles: [
      { id: "true", label: "yes" },
      { id: "false", label: "no" },
    ],
  },
  agent: {
    label: "Hand to an AI agent",
    icon: "✦",
    color: "#a0306b",
    help: "An SMS agent takes over the conversation.",
    data: { agent_id: "" },
  },
  add_to_list: { label: "Add to a list", icon: "+", color: "#3a6ea5", help: "", data: { list_id: "" } },
  remove_from_list: {
    label: "Remove from a list",
    icon: "−",
    color: "#3a6ea5",
    help: "",
    data: { list_id: "" },
  },
  update_contact: {
    label: "Update the contact",
    icon: "✎",
    color: "#3a6ea5",
    help: "Sets fields of the contact.",
    data: { fields: { first_name: "" } },
  },
  webhook: {
    label: "Call a webhook",
    icon: "⇢",
    color: "#505560",
    help: "POSTs the contact and the run to a URL.",
    data: { url: "https://example.com/hook" },
  },
  call: {
    label: "Phone call",
    icon: "☎",
    color: "#b4540a",
    help: "Places a call: a voice agent talks, or a message is read out.",
    data: { say: "Hello! This is a reminder from us." },
  },
  end: { label: "End", icon: "■", color: "#333", help: "The run ends here.", data: {}, handles: [] },
};

export const TYPES = Object.keys(KINDS);

export function handlesOf(type: string): { id: string; label: string }[] {
  return KINDS[type]?.handles ?? [{ id: "out", label: "" }];
}

/** One line saying what the node does, for its card. */
export function summary(type: string, data: NodeData): string {
  switch (type) {
    case "trigger":
      return TRIGGER_WORDS[String(data.event)] ?? String(data.event ?? "");
    case "send_sms":
      return String(data.body ?? "").slice(0, 60);
    case "wait":
      return data.minutes
        ? `${data.minutes} minutes`
        : data.hours
          ? `${data.hours} hours`
          : data.days
            ? `${data.days} days`
            : "";
    case "wait_for_reply":
      return `up to ${data.timeout_hours ?? "?"} hours`;
    case "call":
      return data.agent_id ? "voice agent" : String(data.say ?? "").slice(0, 50);
    case "webhook":
      return String(data.url ?? "");
    default:
      return "";
  }
}

export const TRIGGER_WORDS: Record<string, string> = {
  manual: "Started by hand or by the API",
  contact_created: "A contact is created",
  added_to_list: "A contact is added to a list",
  inbound_keyword: "A contact texts a keyword",
  link_clicked: "A contact clicks a tracked link",
  conversion: "A contact converts",
};

/** A simulation trace's actions, in words. */
export const ACTION_WORDS: Record<string, string> = {
  enrolled: "entered the flow",
  sent: "was sent a text",
  deferred: "had the text held back by the sending rules",
  skipped: "was skipped",
  waited: "waited",
  waiting: "started waiting",
  waiting_for_reply: "waited for a reply",
  replied: "replied",
  timeout: "did not reply in time",
  added_to_list: "was added to a list",
  removed_from_list: "was removed from a list",
  updated_contact: "had their details updated",
  webhook_queued: "was sent to the webhook",
  call_queued: "was queued for a call",
  handed_to_agent: "was handed to an AI agent",
  completed: "finished the flow",
  exited: "left the flow",
  max_days_reached: "was still in the flow when the simulation stopped",
  click: "clicked the link",
  conversion: "converted",
  reply: "replied",
};
