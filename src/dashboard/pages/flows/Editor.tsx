import { Background, Controls, ReactFlow, useReactFlow } from "@xyflow/react";
import { type DragEvent, useCallback, useEffect, useMemo, useState } from "react";
import { Link } from "wouter";
import { type Answer, call, client } from "../../api";
import { ConfirmButton } from "../../components/feedback";
import { handlesOf, KINDS, TYPES } from "./kinds";
import { NodeCard } from "./NodeCard";
import { NodeForm } from "./NodeForm";
import { Simulate } from "./Simulate";
import { useFlow } from "./useFlow";

const nodeTypes = Object.fromEntries(TYPES.map((t) => [t, NodeCard]));
const LEAVE = "This flow has unsaved changes. Leave without saving?";

/**
 * Asks before leaving with unsaved changes: closing or reloading the tab, and following a link
 * of the dashboard (the navigation included).
 */
function useLeaveGuard(dirty: boolean) {
  useEffect(() => {
    if (!dirty) return;
    const beforeUnload = (event: BeforeUnloadEvent) => {
      event.preventDefault();
    };
    const click = (event: MouseEvent) => {
      const link = (event.target as HTMLElement | null)?.closest?.("a[href]");
      if (!link || link.getAttribute("href") === window.location.pathname) return;
      if (!window.confirm(LEAVE)) {
        event.preventDefault();
        event.stopPropagation();
      }
    };
    window.addEventListener("beforeunload", beforeUnload);
    document.addEventListener("click", click, true);
    return () => {
      window.removeEventListener("beforeunload", beforeUnload);
      document.removeEventListener("click", click, true);
    };
  }, [dirty]);
}

/**
 * The flow editor: a palette of node kinds (a new node follows the selected one, connected to
 * it), the canvas with labelled edges and per-node stats, the selected node's form, the flow's
 * name, save, activate and a simulation told in words.
 */
export function Editor({ id }: { id: string }) {
  const f = useFlow(id);
  const [selected, setSelected] = useState<string | null>(null);
  const [name, setName] = useState("");
  const { screenToFlowPosition } = useReactFlow();
  useLeaveGuard(f.dirty);
  useEffect(() => {
    if (f.flow) setName(f.flow.name);
  }, [f.flow]);

  const { addNode } = f;
  const add = useCallback(
    (type: string, at: { x: number; y: number } | null) => setSelected(addNode(type, at, selected)),
    [addNode, selected],
  );
  const onDrop = useCallback(
    (event: DragEvent) => {
      event.preventDefault();
      const type = event.dataTransfer.getData("application/x-flow-node");
      if (type) add(type, screenToFlowPosition({ x: event.clientX, y: event.clientY }));
    },
    [add, screenToFlowPosition],
  );
  const selectedNode = useMemo(() => f.nodes.find((n) => n.id === selected), [f.nodes, selected]);

  if (!f.flow)
    return f.error ? (
      <p className="error" role="alert">
        {f.error}
      </p>
    ) : (
      <p className="muted">Loading the flow…</p>
    );
  const flow = f.flow;
  const active = flow.status === "active";
  return (
    <div className="editor">
      <header className="row editor-head">
        <Link href="/flows">← Flows</Link>
        <form
          className="rename"
          onSubmit={(e) => {
            e.preventDefault();
            if (name.trim() && name !== flow.name) void f.rename(name.trim());
          }}
        >
          <label>
            Flow name
            <input value={name} maxLength={200} onChange={(e) => setName(e.target.value)} />
          </label>
          {name !== f.flow.name && (
            <button type="submit" className="secondary">
              Rename
            </button>
          )}
        </form>
        <span className={`badge status-${f.flow.status}`} data-testid="flow-status">
          {f.flow.status}
        </span>
        <button type="button" onClick={() => void f.save()} disabled={active}>
          Save
        </button>
        {f.dirty && <span className="warn small">Unsaved changes</span>}
        {active ? (
          <button type="button" className="secondary" onClick={() => void f.setStatus("paused")}>
            Pause
          </button>
        ) : (
          <button
            type="button"
            className="secondary"
            onClick={() => void f.setStatus("active")}
            disabled={f.dirty}
          >
            Activate
          </button>
        )}
        {f.message && <span role="status">{f.message}</span>}
      </header>
      {active && <p className="muted small">An active flow cannot be edited: pause it first.</p>}
      {f.error && (
        <p className="error" role="alert">
          {f.error}
        </p>
      )}
      <div className="editor-body">
        <aside className="palette" aria-label="Node palette">
          <p className="muted small">
            {selectedNode ? `Adds after “${KINDS[selectedNode.type ?? ""]?.label}”` : "Click or drag to add"}
          </p>
          {TYPES.filter((t) => t !== "trigger").map((type) => (
            <button
              key={type}
              type="button"
              className="palette-item"
              draggable
              data-testid={`palette-${type}`}
              title={KINDS[type]?.help || "Drag onto the canvas, or press to add"}
              onClick={() => add(type, null)}
              onDragStart={(e) => {
                e.dataTransfer.setData("application/x-flow-node", type);
                e.dataTransfer.effectAllowed = "move";
              }}
            >
              <span className="node-icon" aria-hidden="true" style={{ background: KINDS[type]?.color }}>
                {KINDS[type]?.icon}
              </span>
              {KINDS[type]?.label}
            </button>
          ))}
        </aside>
        <div
          className="canvas"
          role="application"
          aria-label="Flow canvas"
          onDragOver={(e) => e.preventDefault()}
          onDrop={onDrop}
          data-testid="canvas"
        >
          <ReactFlow
            nodes={f.nodes}
            edges={f.edges}
            nodeTypes={nodeTypes}
            onNodesChange={f.onNodesChange}
            onEdgesChange={f.onEdgesChange}
            onConnect={f.connect}
            onNodeClick={(_, node) => setSelected(node.id)}
            // Keyboard selection (Tab to a node, Enter) selects it too.
            onSelectionChange={({ nodes: chosen }) => {
              if (chosen[0]) setSelected(chosen[0].id);
            }}
            onPaneClick={() => setSelected(null)}
            fitView
            fitViewOptions={{ maxZoom: 1 }}
          >
            <Background />
            <Controls />
          </ReactFlow>
        </div>
        <aside className="inspector" aria-label="Node settings">
          {selectedNode ? (
            <>
              <h2>
                <span
                  className="node-icon"
                  aria-hidden="true"
                  style={{ background: KINDS[selectedNode.type ?? ""]?.color }}
                >
                  {KINDS[selectedNode.type ?? ""]?.icon}
                </span>{" "}
                {KINDS[selectedNode.type ?? ""]?.label ?? selectedNode.type}
              </h2>
              <NodeForm
                key={selectedNode.id}
                type={selectedNode.type ?? ""}
                data={selectedNode.data.data}
                onChange={(data) => f.setData(selectedNode.id, data)}
              />
              <ConnectForm
                source={selectedNode}
                targets={f.nodes.filter((n) => n.id !== selectedNode.id && n.type !== "trigger")}
                onConnect={(handle, target) =>
                  f.connect({
                    source: selectedNode.id,
                    sourceHandle: handle === "out" ? null : handle,
                    target,
                    targetHandle: null,
                  })
                }
              />
              {selectedNode.type !== "trigger" && (
                <ConfirmButton
                  className="danger"
                  question="Remove this step and its connections?"
                  onConfirm={() => {
                    f.removeNode(selectedNode.id);
                    setSelected(null);
                  }}
                >
                  Remove this step
                </ConfirmButton>
              )}
            </>
          ) : (
            <p className="muted">Select a step to change its settings.</p>
          )}
          <Simulate id={id} nodes={f.nodes} />
          <Runs id={id} />
        </aside>
      </div>
    </div>
  );
}

/** The flow's latest runs: who is where, and how they ended. */
function Runs({ id }: { id: string }) {
  const [runs, setRuns] = useState<Answer<"/v1/flows/{id}/runs">["runs"]>([]);
  useEffect(() => {
    const params = { path: { id }, query: { limit: 20 } };
    const load = () =>
      call(client.GET("/v1/flows/{id}/runs", { params })).then(
        (a) => setRuns(a.runs),
        () => undefined,
      );
    void load();
    const timer = setInterval(load, 5000);
    return () => clearInterval(timer);
  }, [id]);
  if (runs.length === 0) return null;
  return (
    <>
      <h2>Runs</h2>
      <ul className="small" aria-label="Runs">
        {runs.map((r) => (
          <li key={r.id}>
            {r.status} at {r.current_node_id ?? "—"}
            {r.waiting_until ? ` until ${new Date(r.waiting_until).toLocaleString()}` : ""}
            {r.exit_reason ? ` (${r.exit_reason})` : ""}
          </li>
        ))}
      </ul>
    </>
  );
}

/** Connects the selected node to another without a pointer: a handle, a target, a button. */
function ConnectForm(props: {
  source: { id: string; type?: string };
  targets: { id: string; type?: string }[];
  onConnect: (handle: string, target: string) => void;
}) {
  const handles = handlesOf(props.source.type ?? "");
  const [handle, setHandle] = useState(handles[0]?.id ?? "out");
  const [target, setTarget] = useState("");
  if (handles.length === 0 || props.targets.length === 0) return null;
  return (
    <div className="connect">
      <h3>Connect</h3>
      {handles.length > 1 && (
        <label>
          From
          <select value={handle} onChange={(e) => setHandle(e.target.value)}>
            {handles.map((h) => (
              <option key={h.id} value={h.id}>
                {h.label}
              </option>
            ))}
          </select>
        </label>
      )}
      <label>
        To node
        <select value={target} onChange={(e) => setTarget(e.target.value)}>
          <option value="">Choose a node</option>
          {props.targets.map((n) => (
            <option key={n.id} value={n.id}>
              {KINDS[n.type ?? ""]?.label ?? n.type} ({n.id})
            </option>
          ))}
        </select>
      </label>
      <button type="button" disabled={!target} onClick={() => props.onConnect(handle, target)}>
        Add edge
      </button>
    </div>
  );
}
