import { useEffect, useState } from "react";
import { Link, useLocation } from "wouter";
import { type Answer, ApiError, call, client } from "../../api";
import { CampaignForm } from "./CampaignForm";
import { CampaignView } from "./CampaignView";

/** Campaigns: the list with the full create form, and one campaign (CampaignView). */
export function CampaignsPage({ campaignId }: { campaignId: string | null }) {
  return campaignId ? <CampaignView id={campaignId} /> : <CampaignList />;
}

type CampaignRow = Answer<"/v1/campaigns">["campaigns"][number];

function CampaignList() {
  const [rows, setRows] = useState<CampaignRow[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [creating, setCreating] = useState(false);
  const [, navigate] = useLocation();
  useEffect(() => {
    call(client.GET("/v1/campaigns", { params: { query: { limit: 100 } } })).then(
      (a) => setRows(a.campaigns),
      (e) => setError(e instanceof ApiError ? e.message : "Could not load the campaigns"),
    );
  }, []);
  return (
    <div className="page">
      <h1>Campaigns</h1>
      {!creating ? (
        <button type="button" onClick={() => setCreating(true)}>
          New campaign
        </button>
      ) : (
        <section className="card" aria-label="New campaign">
          <h2>New campaign</h2>
          <CampaignForm
            submitLabel="Create draft"
            onSubmit={async (body) => {
              const answer = await call(client.POST("/v1/campaigns", { body }));
              navigate(`/campaigns/${answer.campaign.id}`);
            }}
          />
        </section>
      )}
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
      {rows === null ? (
        <p className="muted">Loading campaigns…</p>
      ) : rows.length === 0 ? (
        <p className="muted">No campaigns yet.</p>
      ) : (
        <table>
          <thead>
            <tr>
              <th>Name</th>
              <th>Status</th>
              <th>Recipients</th>
              <th>Sent</th>
              <th>Delivered</th>
              <th>Clicked</th>
              <th>Conversions</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((c) => (
              <tr key={c.id}>
                <td>
                  <Link href={`/campaigns/${c.id}`}>{c.name}</Link>
                </td>
                <td>
                  <span className={`badge status-${c.status}`}>{c.status}</span>
                </td>
                <td>{c.stats.recipients}</td>
                <td>{c.stats.sent}</td>
                <td>{c.stats.delivered}</td>
                <td>{c.stats.clicked}</td>
                <td>{c.stats.conversions}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}
