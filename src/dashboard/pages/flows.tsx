/**
 * Flows: the list and the editor (React Flow, this chunk only loads on this page). The editor saves
 * exactly the seed's definition fields: nodes `{id, type, position, data}` and edges `{id, source,
 * target, sourceHandle}`. Nodes are dragged from the palette onto the canvas and connected by their
 * handles; the selected node's `data` is edited as JSON; per-node stats are drawn on the nodes.
 */
import {
  addEdge,
  Background,
  type Connection,
  Controls,
  type Edge,
  Handle,
  type Node,
  type NodeProps,
  Position,
  ReactFlow,
  ReactFlowProvider,
  useEdgesState,
  useNodesState,
  useReactFlow,
} from "@xyflow/react";
import { type DragEvent, useCallback, useEffect, useMemo, useState } from "react";
import { Link, useLocation } from "wouter";
import { ApiError, get, type Json, patch, post } from "../api";

const TYPES = [
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

const DEFAULT_DATA: Record<string, Json> = {
  trigger: { event: "manual" },
  send_sms: { body: "Hi {{first_name|there}}!" },
  wait: { hours: 1 },
  wait_for_reply: { timeout_hours: 24 },
  condition: { rules: { all: [] } },
  agent: { agent_id: "" },
  add_to_list: { list_id: "" },
  remove_from_list: { list_id: "" },
  update_contact: { fields: { first_name: "" } },
  webhook: { url: "https://example.com/hook" },
  call: { say: "Hello!" },
  end: {},
};

const HANDLES: Record<string, string[]> = {
  condition: ["true", "false"],
  wait_for_reply: ["replied", "timeout"],
  end: [],
};

type FlowNodeData = { data: Json; stats?: Json };

function FlowNodeView({ type, data, selected }: NodeProps<Node<FlowNodeData>>) {
  const handles = HANDLES[type] ?? ["out"];
  const stats = data.stats;
  return (
    <div className={`flow-node ${selected ? "selected" : ""}`} data-testid={`node-${type}`}>
      {type !== "trigger" && <Handle type="target" position={Position.Top} />}
      <strong>{type.replaceAll("_", " ")}</strong>
      <span className="muted small">{summary(type, data.data)}</span>
      {stats && (
        <span className="small stats-line" data-testid="node-stats">
          {stats.entered} in · {stats.sent} sent · {stats.waiting} waiting
        </span>
      )}
      {handles.map((handle, i) => (
        <Handle
          key={handle}
          id={handle === "out" ? undefined : handle}
          type="source"
          position={Position.Bottom}
          style={{ left: `${((i + 1) / (handles.length + 1)) * 100}%` }}
          title={handle}
        />
      ))}
    </div>
  );
}

function summary(type: string, data: Json): string {
  if (type === "send_sms") return String(data?.body ?? "").slice(0, 40);
  if (type === "trigger") return String(data?.event ?? "");
  if (type === "wait")
    return `${data?.minutes ?? ""}${data?.minutes ? " min" : ""}${data?.hours ?? ""}${data?.hours ? " h" : ""}${data?.days ?? ""}${data?.days ? " d" : ""}`;
  return "";
}

const nodeTypes = Object.fromEntries(TYPES.map((t) => [t, FlowNodeView]));

export default function FlowsPage({ flowId }: { flowId: string | null }) {
  return flowId ? (
    <ReactFlowProvider>
      <Editor id={flowId} />
    </ReactFlowProvider>
  ) : (
    <FlowList />
  );
}

function FlowList() {
  const [rows, setRows] = useState<Json[]>([]);
  const [, navigate] = useLocation();
  useEffect(() => {
    void get("/v1/flows?limit=100").then((a) => setRows(a.flows));
  }, []);
  async function create() {
    const answer = await post("/v1/flows", {
      name: `Flow ${new Date().toLocaleString()}`,
      definition: {
        nodes: [{ id: "trigger", type: "trigger", position: { x: 200, y: 40 }, data: { event: "manual" } }],
        edges: [],
      },
    });
    navigate(`/flows/${answer.flow.id}`);
  }
  return (
    <div className="page">
      <h1>Flows</h1>
      <button type="button" onClick={create}>
        New flow
      </button>
      <ul>
        {rows.map((f) => (
          <li key={f.id}>
            <Link href={`/flows/${f.id}`}>{f.name}</Link> <span className="muted">{f.status}</span>
          </li>
        ))}
      </ul>
    </div>
  );
}

let seq = 0;

function Editor({ id }: { id: string }) {
  const [flow, setFlow] = useState<Json>(null);
  const [nodes, setNodes, onNodesChange] = useNodesState<Node<FlowNodeData>>([]);
  const [edges, setEdges, onEdgesChange] = useEdgesState<Edge>([]);
  const [selected, setSelected] = useState<string | null>(null);
  const [dataText, setDataText] = useState("");
  const [message, setMessage] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [trace, setTrace] = useState<Json[] | null>(null);
  const { screenToFlowPosition } = useReactFlow();

  const load = useCallback(async () => {
    const answer = await get(`/v1/flows/${id}`);
    const stats = (await get(`/v1/flows/${id}/stats`).catch(() => null))?.stats?.nodes ?? {};
    setFlow(answer.flow);
    setNodes(
      answer.flow.definition.nodes.map((n: Json) => ({
        id: n.id,
        type: n.type,
        position: n.position,
        data: { data: n.data ?? {}, stats: stats[n.id] },
      })),
    );
    setEdges(
      answer.flow.definition.edges.map((e: Json) => ({
        id: e.id,
        source: e.source,
        target: e.target,
        sourceHandle: e.sourceHandle ?? null,
      })),
    );
  }, [id, setNodes, setEdges]);
  useEffect(() => {
    void load();
  }, [load]);

  const onConnect = useCallback(
    (c: Connection) =>
      setEdges((current) =>
        addEdge({ ...c, id: `e-${c.source}-${c.sourceHandle ?? "out"}-${c.target}` }, current),
      ),
    [setEdges],
  );
  /** A new node of `type` where it was dropped, or below the others (the keyboard's way). */
  const addNode = useCallback(
    (type: string, at: { x: number; y: number } | null) => {
      const nodeId = `${type}-${Date.now().toString(36)}${seq++}`;
      setNodes((current) => {
        const position = at ?? { x: 200, y: 40 + 120 * current.length };
        return [...current, { id: nodeId, type, position, data: { data: DEFAULT_DATA[type] ?? {} } }];
      });
    },
    [setNodes],
  );
  const onDrop = useCallback(
    (event: DragEvent) => {
      event.preventDefault();
      const type = event.dataTransfer.getData("application/x-flow-node");
      if (type) addNode(type, screenToFlowPosition({ x: event.clientX, y: event.clientY }));
    },
    [addNode, screenToFlowPosition],
  );
  const selectedNode = useMemo(() => nodes.find((n) => n.id === selected), [nodes, selected]);
  useEffect(() => {
    setDataText(selectedNode ? JSON.stringify(selectedNode.data.data, null, 2) : "");
  }, [selectedNode]);

  if (!flow) return <p className="muted">Loading…</p>;

  function definition() {
    return {
      nodes: nodes.map((n) => ({
        id: n.id,
        type: n.type,
        position: { x: Math.round(n.position.x), y: Math.round(n.position.y) },
        data: n.data.data,
      })),
      edges: edges.map((e) => ({
        id: e.id,
        source: e.source,
        target: e.target,
        ...(e.sourceHandle ? { sourceHandle: e.sourceHandle } : {}),
      })),
    };
  }
  async function save() {
    setError(null);
    setMessage(null);
    try {
      await patch(`/v1/flows/${id}`, { definition: definition() });
      setMessage("Saved");
      await load();
    } catch (e) {
      setError(e instanceof ApiError ? e.message : "Could not save");
    }
  }
  async function setStatus(status: string) {
    setError(null);
    try {
      await patch(`/v1/flows/${id}`, { status });
      await load();
    } catch (e) {
      setError(e instanceof ApiError ? e.message : "Could not change the status");
    }
  }
  async function simulate() {
    setError(null);
    try {
      setTrace((await post(`/v1/flows/${id}/simulate`, { contact: { first_name: "Sam" } })).trace);
    } catch (e) {
      setError(e instanceof ApiError ? e.message : "Could not simulate");
    }
  }
  function applyData() {
    try {
      const parsed = JSON.parse(dataText);
      setNodes((current) =>
        current.map((n) => (n.id === selected ? { ...n, data: { ...n.data, data: parsed } } : n)),
      );
      setError(null);
    } catch {
      setError("data must be valid JSON");
    }
  }
  return (
    <div className="editor">
      <header className="row">
        <Link href="/flows">← Flows</Link>
        <h1>{flow.name}</h1>
        <span className="badge" data-testid="flow-status">
          {flow.status}
        </span>
        <button type="button" onClick={save} disabled={flow.status === "active"}>
          Save
        </button>
        {flow.status === "active" ? (
          <button type="button" onClick={() => setStatus("paused")}>
            Pause
          </button>
        ) : (
          <button type="button" onClick={() => setStatus("active")}>
            Activate
          </button>
        )}
        <button type="button" onClick={simulate}>
          Simulate
        </button>
        {message && <span role="status">{message}</span>}
      </header>
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
      <div className="editor-body">
        <aside className="palette" aria-label="Node palette">
          {TYPES.filter((t) => t !== "trigger").map((type) => (
            <button
              key={type}
              type="button"
              className="palette-item"
              draggable
              data-testid={`palette-${type}`}
              title="Drag onto the canvas, or press to add"
              onClick={() => addNode(type, null)}
              onDragStart={(e) => {
                e.dataTransfer.setData("application/x-flow-node", type);
                e.dataTransfer.effectAllowed = "move";
              }}
            >
              {type.replaceAll("_", " ")}
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
            nodes={nodes}
            edges={edges}
            nodeTypes={nodeTypes}
            onNodesChange={onNodesChange}
            onEdgesChange={onEdgesChange}
            onConnect={onConnect}
            onNodeClick={(_, node) => setSelected(node.id)}
            // Keyboard selection (Tab to a node, Enter) selects it too.
            onSelectionChange={({ nodes: chosen }) => {
              if (chosen[0]) setSelected(chosen[0].id);
            }}
            onPaneClick={() => setSelected(null)}
            fitView
          >
            <Background />
            <Controls />
          </ReactFlow>
        </div>
        <aside className="inspector" aria-label="Node data">
          {selectedNode ? (
            <>
              <h2>{selectedNode.type}</h2>
              <p className="muted small">{selectedNode.id}</p>
              <textarea
                value={dataText}
                onChange={(e) => setDataText(e.target.value)}
                rows={10}
                aria-label="Node data JSON"
              />
              <button type="button" onClick={applyData}>
                Apply
              </button>
              <ConnectForm
                source={selectedNode}
                targets={nodes.filter((n) => n.id !== selectedNode.id && n.type !== "trigger")}
                onConnect={(handle, target) =>
                  onConnect({
                    source: selectedNode.id,
                    sourceHandle: handle === "out" ? null : handle,
                    target,
                    targetHandle: null,
                  })
                }
              />
            </>
          ) : (
            <p className="muted">Select a node to edit its data.</p>
          )}
          <Runs id={id} />
          {trace && (
            <>
              <h2>Simulation</h2>
              <ol className="trace">
                {trace.map((t) => (
                  <li key={`${t.at_minutes}-${t.node_id}-${t.action}-${t.detail ?? ""}`}>
                    +{t.at_minutes} min · {t.node_id} · {t.action}
                  </li>
                ))}
              </ol>
            </>
          )}
        </aside>
      </div>
    </div>
  );
}

/** The flow's latest runs: who is where, and how they ended. */
function Runs({ id }: { id: string }) {
  const [runs, setRuns] = useState<Json[]>([]);
  useEffect(() => {
    const load = () =>
      get(`/v1/flows/${id}/runs?limit=20`).then(
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
  source: Node<FlowNodeData>;
  targets: Node<FlowNodeData>[];
  onConnect: (handle: string, target: string) => void;
}) {
  const handles = HANDLES[props.source.type ?? ""] ?? ["out"];
  const [handle, setHandle] = useState(handles[0] ?? "out");
  const [target, setTarget] = useState("");
  if (handles.length === 0 || props.targets.length === 0) return null;
  return (
    <div className="connect">
      <h2>Connect</h2>
      {handles.length > 1 && (
        <label>
          From handle
          <select value={handle} onChange={(e) => setHandle(e.target.value)}>
            {handles.map((h) => (
              <option key={h}>{h}</option>
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
              {n.type} ({n.id})
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
