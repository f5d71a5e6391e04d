/**
 * A flow's definition: React Flow's node/edge format (seed: Flow), with the node types and `data`
 * of API.md §3 Flows. Edges out of `condition` carry `sourceHandle` `true`/`false`, out of
 * `wait_for_reply` `replied`/`timeout`; elsewhere the handle is absent or null and means `out`.
 */
export const NODE_TYPES = [
  "trigger",
  "send_sms",
  "wait",
  "wait_for_reply",
  "condition",
  "agent",
  "add_to_list",
  "remove_from_list",
  "update_contact",
  "webhook",
  "call",
  "end",
] as const;
export type NodeType = (typeof NODE_TYPES)[number];

export const TRIGGER_EVENTS = [
  "contact_created",
  "added_to_list",
  "inbound_keyword",
  "link_clicked",
  "conversion",
  "manual",
] as const;
export type TriggerEvent = (typeof TRIGGER_EVENTS)[number];

export interface FlowNode {
  id: string;
  type: NodeType;
  position: { x: number; y: number };
  data: Record<string, unknown>;
}

export interface FlowEdge {
  id: string;
  source: string;
  target: string;
  sourceHandle?: string | null;
}

export interface FlowDefinition {
  nodes: FlowNode[];
  edges: FlowEdge[];
}

/** The handles a node type has; `out` for every type not listed. */
export const HANDLES: Partial<Record<NodeType, readonly string[]>> = {
  condition: ["true", "false"],
  wait_for_reply: ["replied", "timeout"],
  end: [],
};

export const MAX_NODES = 200;
export const MAX_WAIT_MINUTES = 365 * 24 * 60;
