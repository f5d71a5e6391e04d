import { useCallback, useEffect, useState } from "react";
import { type Answer, ApiError, call, client } from "../api";
import { ErrorAlert, SecretOnce } from "../components/feedback";
import { ResourceSection } from "../components/resource";

type Delivery = Answer<"/v1/webhooks/{id}/deliveries">["deliveries"][number];

/** Webhook endpoints (the signing secret shown once), their deliveries, and replay. */
export function WebhooksPage() {
  const [secret, setSecret] = useState<string | null>(null);
  const [open, setOpen] = useState<string | null>(null);
  return (
    <div className="page">
      <h1>Webhooks</h1>
      {secret && (
        <SecretOnce
          message="The endpoint's signing secret, shown only once:"
          secret={secret}
          onDone={() => setSecret(null)}
        />
      )}
      <ResourceSection
        title="Endpoints"
        path="/v1/webhooks"
        many="webhooks"
        fields={[
          { name: "url", label: "URL", type: "url", required: true },
          {
            name: "events",
            label: "Events (comma-separated, * for all)",
            required: true,
            parse: (v) => v.split(",").map((s) => s.trim()),
          },
        ]}
        onCreated={(answer) => setSecret(answer.webhook.secret)}
        columns={[
          { label: "URL", cell: (r) => r.url },
          { label: "Events", cell: (r) => r.events.join(", ") },
          { label: "Enabled", cell: (r) => (r.enabled ? "yes" : "no") },
        ]}
        extra={(row) => (
          <button type="button" onClick={() => setOpen(row.id)}>
            Deliveries
          </button>
        )}
        canDelete
      />
      {open && <Deliveries webhookId={open} />}
    </div>
  );
}

function Deliveries({ webhookId }: { webhookId: string }) {
  const [rows, setRows] = useState<Delivery[]>([]);
  const [error, setError] = useState<string | null>(null);
  const load = useCallback(async () => {
    const params = { path: { id: webhookId }, query: { limit: 50 } };
    setRows((await call(client.GET("/v1/webhooks/{id}/deliveries", { params }))).deliveries);
  }, [webhookId]);
  useEffect(() => {
    void load();
  }, [load]);
  async function replay(id: string) {
    setError(null);
    try {
      const params = { path: { id: webhookId, delivery_id: id } };
      await call(client.POST("/v1/webhooks/{id}/deliveries/{delivery_id}/retry", { params }));
      await load();
    } catch (e) {
      setError(e instanceof ApiError ? e.message : "Replay failed");
    }
  }
  return (
    <section className="card" aria-label="Deliveries">
      <h2>Deliveries</h2>
      <div className="row">
        <button
          type="button"
          onClick={() =>
            call(client.POST("/v1/webhooks/{id}/test", { params: { path: { id: webhookId } } })).then(
              load,
              (e) => setError(e.message),
            )
          }
        >
          Send a test event
        </button>
      </div>
      <ErrorAlert error={error} />
      <table>
        <thead>
          <tr>
            <th>Event</th>
            <th>Status</th>
            <th>Response</th>
            <th>Attempt</th>
            <th>When</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {rows.map((d) => (
            <tr key={d.id}>
              <td>{d.event}</td>
              <td>{d.status}</td>
              <td>{d.response_status ?? ""}</td>
              <td>{d.attempt}</td>
              <td>{new Date(d.created_at).toLocaleString()}</td>
              <td>
                <button type="button" onClick={() => replay(d.id)}>
                  Replay
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
