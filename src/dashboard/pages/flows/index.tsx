/**
 * Flows: the list and the editor (React Flow; this chunk only loads on this page). The editor saves
 * exactly the seed's definition fields: nodes `{id, type, position, data}` and edges `{id, source,
 * target, sourceHandle}`.
 */
import { ReactFlowProvider } from "@xyflow/react";
import { useEffect, useState } from "react";
import { Link, useLocation } from "wouter";
import { type Answer, ApiError, call, client } from "../../api";
import { Editor } from "./Editor";
import { TRIGGER_WORDS } from "./kinds";

/** The event of a flow's trigger node. */
type FlowRow = Answer<"/v1/flows">["flows"][number];

function triggerOf(flow: FlowRow): string {
  const event = flow.definition.nodes.find((n) => n.type === "trigger")?.data?.event;
  return typeof event === "string" ? event : "";
}

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
  const [rows, setRows] = useState<FlowRow[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [name, setName] = useState("");
  const [, navigate] = useLocation();
  useEffect(() => {
    call(client.GET("/v1/flows", { params: { query: { limit: 100 } } })).then(
      (a) => setRows(a.flows),
      (e) => setError(e instanceof ApiError ? e.message : "Could not load the flows"),
    );
  }, []);
  async function create() {
    try {
      const body = {
        name: name.trim() || "New flow",
        definition: {
          nodes: [{ id: "trigger", type: "trigger", position: { x: 200, y: 40 }, data: { event: "manual" } }],
          edges: [],
        },
      };
      const answer = await call(client.POST("/v1/flows", { body }));
      navigate(`/flows/${answer.flow.id}`);
    } catch (e) {
      setError(e instanceof ApiError ? e.message : "Could not create the flow");
    }
  }
  return (
    <div className="page">
      <h1>Flows</h1>
      <p className="muted">
        Journeys that text, wait, branch and hand over to agents, one contact at a time.
      </p>
      <div className="row">
        <label>
          Name
          <input value={name} placeholder="Welcome series" onChange={(e) => setName(e.target.value)} />
        </label>
        <button type="button" onClick={create}>
          New flow
        </button>
      </div>
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
      {rows === null ? (
        <p className="muted">Loading flows…</p>
      ) : rows.length === 0 ? (
        <p className="muted">No flows yet. Name one and press “New flow”.</p>
      ) : (
        <table>
          <thead>
            <tr>
              <th>Name</th>
              <th>Status</th>
              <th>Starts when</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((f) => (
              <tr key={f.id}>
                <td>
                  <Link href={`/flows/${f.id}`}>{f.name}</Link>
                </td>
                <td>
                  <span className={`badge status-${f.status}`}>{f.status}</span>
                </td>
                <td>{TRIGGER_WORDS[triggerOf(f)] ?? "—"}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}
