/**
 * Flows cannot loop without bound (API.md §7.2). A flow's `add_to_list` nodes start every active
 * flow whose trigger is `added_to_list` on that list; a chain of such starts that comes back to the
 * flow it began with would send to the same contact again and again. Activation refuses a flow
 * that would close such a loop. Pure: plain data in, the loop's flow names out.
 */
import type { FlowDefinition } from "./types";

/** What the loop check needs of a flow. */
export interface FlowListLinks {
  id: string;
  name: string;
  /** The list whose additions start the flow (an `added_to_list` trigger), else null. */
  triggerListId: string | null;
  /** The lists the flow's `add_to_list` nodes add to. */
  addsTo: readonly string[];
}

/** The list links of a definition: its `added_to_list` trigger's list and its add_to_list nodes' lists. */
export function listLinksOf(flow: { id: string; name: string; definition: unknown }): FlowListLinks {
  const nodes = ((flow.definition ?? {}) as Partial<FlowDefinition>).nodes ?? [];
  let triggerListId: string | null = null;
  const addsTo = new Set<string>();
  for (const node of nodes) {
    const data = (node.data ?? {}) as Record<string, unknown>;
    if (node.type === "trigger" && data.event === "added_to_list" && typeof data.list_id === "string")
      triggerListId = data.list_id;
    if (node.type === "add_to_list" && typeof data.list_id === "string") addsTo.add(data.list_id);
  }
  return { id: flow.id, name: flow.name, triggerListId, addsTo: [...addsTo] };
}

/**
 * The shortest chain of flows by which `start` would start itself again through `others` (the
 * other active flows), as names from `start` back to `start` (`["A", "B", "A"]`, or `["A", "A"]`
 * when it adds to its own trigger list); null when there is none.
 */
export function findFlowLoop(start: FlowListLinks, others: readonly FlowListLinks[]): string[] | null {
  const flows = [start, ...others.filter((flow) => flow.id !== start.id)];
  const startedBy = new Map<string, FlowListLinks[]>();
  for (const flow of flows) {
    if (flow.triggerListId === null) continue;
    const list = startedBy.get(flow.triggerListId) ?? [];
    list.push(flow);
    startedBy.set(flow.triggerListId, list);
  }
  // Breadth first from `start`: the first time `start` is reached again, the path is shortest.
  const cameFrom = new Map<string, FlowListLinks>();
  const queue: FlowListLinks[] = [start];
  const seen = new Set<string>([start.id]);
  while (queue.length > 0) {
    const flow = queue.shift() as FlowListLinks;
    for (const listId of flow.addsTo) {
      for (const next of startedBy.get(listId) ?? []) {
        if (next.id === start.id) {
          const between: string[] = [];
          for (let at: FlowListLinks | undefined = flow; at && at.id !== start.id; at = cameFrom.get(at.id))
            between.unshift(at.name);
          return [start.name, ...between, start.name];
        }
        if (seen.has(next.id)) continue;
        seen.add(next.id);
        cameFrom.set(next.id, flow);
        queue.push(next);
      }
    }
  }
  return null;
}
