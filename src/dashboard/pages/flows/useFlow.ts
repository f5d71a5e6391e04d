import {
  addEdge,
  type Connection,
  type Edge,
  MarkerType,
  type Node,
  useEdgesState,
  useNodesState,
} from "@xyflow/react";
import { useCallback, useEffect, useState } from "react";
import { type Answer, ApiError, call, client } from "../../api";
import { handlesOf, KINDS, type NodeData } from "./kinds";

type Flow = Answer<"/v1/flows/{id}">["flow"];

import type { FlowNodeData } from "./NodeCard";

let seq = 0;

/** An edge as drawn: an arrow, and its handle's label in words (yes/no, replied/no reply). */
function drawn(edge: Edge, nodes: Node<FlowNodeData>[]): Edge {
  const source = nodes.find((n) => n.id === edge.source);
  const label = source
    ? handlesOf(source.type ?? "").find((h) => h.id === (edge.sourceHandle ?? "out"))?.label
    : undefined;
  return {
    ...edge,
    label: label || undefined,
    markerEnd: { type: MarkerType.ArrowClosed, width: 18, height: 18 },
    labelBgPadding: [4, 2],
    labelBgBorderRadius: 4,
  };
}

/**
 * The flow editor's state: the flow, its nodes and edges as React Flow holds them, whether there
 * are unsaved changes, and the edits (add after the selected node, connect, change data, rename,
 * save, activate).
 */
export function useFlow(id: string) {
  const [flow, setFlow] = useState<Flow | null>(null);
  const [nodes, setNodes, onNodesChange] = useNodesState<Node<FlowNodeData>>([]);
  const [edges, setEdges, onEdgesChange] = useEdgesState<Edge>([]);
  const [dirty, setDirty] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [message, setMessage] = useState<string | null>(null);

  const load = useCallback(async () => {
    const params = { path: { id } };
    const answer = await call(client.GET("/v1/flows/{id}", { params }));
    const stats =
      (await call(client.GET("/v1/flows/{id}/stats", { params })).catch(() => null))?.stats.nodes ?? {};
    const loaded: Node<FlowNodeData>[] = answer.flow.definition.nodes.map((n) => ({
      id: n.id,
      type: n.type,
      position: n.position,
      data: { data: n.data ?? {}, stats: stats[n.id] },
    }));
    setFlow(answer.flow);
    setNodes(loaded);
    setEdges(
      answer.flow.definition.edges.map((e) =>
        drawn({ id: e.id, source: e.source, target: e.target, sourceHandle: e.sourceHandle ?? null }, loaded),
      ),
    );
    setDirty(false);
  }, [id, setNodes, setEdges]);
  useEffect(() => {
    load().catch((e) => setError(e instanceof ApiError ? e.message : "Could not load the flow"));
  }, [load]);

  const connect = useCallback(
    (c: Connection) => {
      setEdges((current) =>
        addEdge(
          drawn(
            {
              ...c,
              id: `e-${c.source}-${c.sourceHandle ?? "out"}-${c.target}`,
              sourceHandle: c.sourceHandle ?? null,
            } as Edge,
            nodes,
          ),
          current,
        ),
      );
      setDirty(true);
    },
    [setEdges, nodes],
  );

  /**
   * A new node of `type`: where it was dropped, else below the node it follows. With a node
   * selected, the new node is connected after it (from its first handle with nothing attached).
   * Answers the new node's id.
   */
  const addNode = useCallback(
    (type: string, at: { x: number; y: number } | null, after: string | null) => {
      const nodeId = `${type}-${Date.now().toString(36)}${seq++}`;
      const previous = after ? nodes.find((n) => n.id === after) : undefined;
      const position =
        at ??
        (previous
          ? { x: previous.position.x, y: previous.position.y + 140 }
          : { x: 200, y: 40 + 120 * nodes.length });
      const node: Node<FlowNodeData> = {
        id: nodeId,
        type,
        position,
        data: { data: structuredClone(KINDS[type]?.data ?? {}) },
      };
      setNodes((current) => [
        ...current.map((n) => ({ ...n, selected: false })),
        { ...node, selected: true },
      ]);
      if (previous) {
        const handles = handlesOf(previous.type ?? "");
        const free = handles.find(
          (h) => !edges.some((e) => e.source === previous.id && (e.sourceHandle ?? "out") === h.id),
        );
        const handle = free ?? handles[0];
        if (handle)
          setEdges((current) =>
            addEdge(
              drawn(
                {
                  id: `e-${previous.id}-${handle.id}-${nodeId}`,
                  source: previous.id,
                  sourceHandle: handle.id === "out" ? null : handle.id,
                  target: nodeId,
                },
                [...nodes, node],
              ),
              current,
            ),
          );
      }
      setDirty(true);
      return nodeId;
    },
    [nodes, edges, setNodes, setEdges],
  );

  const setData = useCallback(
    (nodeId: string, data: NodeData) => {
      setNodes((current) => current.map((n) => (n.id === nodeId ? { ...n, data: { ...n.data, data } } : n)));
      setDirty(true);
    },
    [setNodes],
  );

  const removeNode = useCallback(
    (nodeId: string) => {
      setNodes((current) => current.filter((n) => n.id !== nodeId));
      setEdges((current) => current.filter((e) => e.source !== nodeId && e.target !== nodeId));
      setDirty(true);
    },
    [setNodes, setEdges],
  );

  const definition = useCallback(
    () => ({
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
    }),
    [nodes, edges],
  );

  const run = useCallback(async (what: string, work: () => Promise<unknown>, done?: string) => {
    setError(null);
    setMessage(null);
    try {
      await work();
      if (done) setMessage(done);
      return true;
    } catch (e) {
      setError(e instanceof ApiError ? e.message : `Could not ${what}`);
      return false;
    }
  }, []);

  const save = useCallback(
    () =>
      run(
        "save",
        async () => {
          const body = { definition: definition() };
          await call(client.PATCH("/v1/flows/{id}", { params: { path: { id } }, body }));
          await load();
        },
        "Saved",
      ),
    [run, id, definition, load],
  );
  const rename = useCallback(
    (name: string) =>
      run(
        "rename the flow",
        async () => {
          await call(client.PATCH("/v1/flows/{id}", { params: { path: { id } }, body: { name } }));
          setFlow((f) => (f ? { ...f, name } : f));
        },
        "Renamed",
      ),
    [run, id],
  );
  const setStatus = useCallback(
    (status: "active" | "paused") =>
      run("change the status", async () => {
        const params = { path: { id } };
        await call(client.PATCH("/v1/flows/{id}", { params, body: { status } }));
        const answer = await call(client.GET("/v1/flows/{id}", { params }));
        setFlow(answer.flow);
      }),
    [run, id],
  );

  /** Moving nodes counts as a change; selecting does not. */
  const onNodesChangeTracked: typeof onNodesChange = useCallback(
    (changes) => {
      if (changes.some((c) => c.type === "position" || c.type === "remove")) setDirty(true);
      onNodesChange(changes);
    },
    [onNodesChange],
  );
  const onEdgesChangeTracked: typeof onEdgesChange = useCallback(
    (changes) => {
      if (changes.some((c) => c.type === "remove")) setDirty(true);
      onEdgesChange(changes);
    },
    [onEdgesChange],
  );

  return {
    flow,
    nodes,
    edges,
    dirty,
    error,
    message,
    setError,
    onNodesChange: onNodesChangeTracked,
    onEdgesChange: onEdgesChangeTracked,
    connect,
    addNode,
    setData,
    removeNode,
    save,
    rename,
    setStatus,
  };
}
