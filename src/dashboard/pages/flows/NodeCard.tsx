import { Handle, type Node, type NodeProps, Position } from "@xyflow/react";
import { handlesOf, KINDS, type NodeData, summary } from "./kinds";

export type FlowNodeData = { data: NodeData; stats?: { entered: number; sent: number; waiting: number } };

/** A node on the canvas: its kind's icon and colour, what it does, its labelled handles and its stats. */
export function NodeCard({ type, data, selected }: NodeProps<Node<FlowNodeData>>) {
  const kind = KINDS[type];
  const handles = handlesOf(type);
  const stats = data.stats;
  return (
    <div
      className={`flow-node ${selected ? "selected" : ""}`}
      data-testid={`node-${type}`}
      style={{ borderTopColor: kind?.color }}
    >
      {type !== "trigger" && <Handle type="target" position={Position.Top} />}
      <span className="node-title">
        <span className="node-icon" aria-hidden="true" style={{ background: kind?.color }}>
          {kind?.icon}
        </span>
        <strong>{kind?.label ?? type}</strong>
      </span>
      <span className="muted small node-summary">{summary(type, data.data)}</span>
      {stats && (
        <span className="small stats-line" data-testid="node-stats">
          {stats.entered} in · {stats.sent} sent · {stats.waiting} waiting
        </span>
      )}
      {handles.length > 1 && (
        <span className="handle-labels" aria-hidden="true">
          {handles.map((h) => (
            <span key={h.id}>{h.label}</span>
          ))}
        </span>
      )}
      {handles.map((handle, i) => (
        <Handle
          key={handle.id}
          id={handle.id === "out" ? undefined : handle.id}
          type="source"
          position={Position.Bottom}
          style={{ left: `${((i + 1) / (handles.length + 1)) * 100}%` }}
          title={handle.label || "next"}
        />
      ))}
    </div>
  );
}
