import { type FormEvent, useCallback, useEffect, useState } from "react";
import { Link, useLocation } from "wouter";
import { ApiError, get, type Json, post } from "../api";

/** Campaigns: the list, a create form, and one campaign with its preview, launch and live stats. */
export function CampaignsPage({ campaignId }: { campaignId: string | null }) {
  return campaignId ? <Campaign id={campaignId} /> : <CampaignList />;
}

function CampaignList() {
  const [rows, setRows] = useState<Json[]>([]);
  const [lists, setLists] = useState<Json[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [, navigate] = useLocation();
  useEffect(() => {
    void get("/v1/campaigns?limit=100").then((a) => setRows(a.campaigns));
    void get("/v1/lists?limit=200").then((a) => setLists(a.lists));
  }, []);
  async function create(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    setError(null);
    const listId = String(form.get("list_id") ?? "");
    try {
      const answer = await post("/v1/campaigns", {
        name: form.get("name"),
        message: { body: form.get("body") },
        audience: listId ? { list_ids: [listId] } : { contact_ids: [] },
      });
      navigate(`/campaigns/${answer.campaign.id}`);
    } catch (e) {
      setError(e instanceof ApiError ? e.message : "Could not create the campaign");
    }
  }
  return (
    <div className="page">
      <h1>Campaigns</h1>
      <section className="card" aria-label="New campaign">
        <h2>New campaign</h2>
        <form onSubmit={create} className="grid">
          <label>
            Name
            <input name="name" required />
          </label>
          <label>
            Audience (list)
            <select name="list_id">
              <option value="">Choose a list</option>
              {lists.map((l) => (
                <option key={l.id} value={l.id}>
                  {l.name}
                </option>
              ))}
            </select>
          </label>
          <label className="wide">
            Message
            <textarea name="body" required defaultValue={"Hi {{first_name|there}}! Reply STOP to opt out."} />
          </label>
          {error && (
            <p className="error" role="alert">
              {error}
            </p>
          )}
          <button type="submit">Create draft</button>
        </form>
      </section>
      <table>
        <thead>
          <tr>
            <th>Name</th>
            <th>Status</th>
            <th>Recipients</th>
            <th>Sent</th>
            <th>Delivered</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((c) => (
            <tr key={c.id}>
              <td>
                <Link href={`/campaigns/${c.id}`}>{c.name}</Link>
              </td>
              <td>{c.status}</td>
              <td>{c.stats.recipients}</td>
              <td>{c.stats.sent}</td>
              <td>{c.stats.delivered}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function Campaign({ id }: { id: string }) {
  const [campaign, setCampaign] = useState<Json>(null);
  const [preview, setPreview] = useState<Json>(null);
  const [error, setError] = useState<string | null>(null);
  const load = useCallback(async () => setCampaign((await get(`/v1/campaigns/${id}`)).campaign), [id]);
  useEffect(() => {
    void load();
    const timer = setInterval(() => void load(), 2000);
    return () => clearInterval(timer);
  }, [load]);
  if (!campaign) return <p className="muted">Loading…</p>;
  async function act(action: string) {
    setError(null);
    try {
      await post(`/v1/campaigns/${id}/${action}`);
      await load();
    } catch (e) {
      setError(e instanceof ApiError ? e.message : `Could not ${action}`);
    }
  }
  const s = campaign.stats;
  return (
    <div className="page">
      <p>
        <Link href="/campaigns">← Campaigns</Link>
      </p>
      <h1>{campaign.name}</h1>
      <p>
        Status: <strong data-testid="campaign-status">{campaign.status}</strong>
      </p>
      <div className="row">
        <button
          type="button"
          onClick={async () => setPreview((await get(`/v1/campaigns/${id}/preview?limit=50`)).preview)}
        >
          Preview
        </button>
        {campaign.status === "draft" && (
          <button type="button" onClick={() => act("launch")}>
            Launch
          </button>
        )}
        {campaign.status === "active" && (
          <button type="button" onClick={() => act("pause")}>
            Pause
          </button>
        )}
        {campaign.status === "paused" && (
          <button type="button" onClick={() => act("resume")}>
            Resume
          </button>
        )}
      </div>
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
      <dl className="stats" aria-label="Stats">
        {[
          "recipients",
          "queued",
          "deferred",
          "sent",
          "delivered",
          "failed",
          "suppressed",
          "replied",
          "clicked",
        ].map((k) => (
          <div key={k}>
            <dt>{k}</dt>
            <dd data-testid={`stat-${k}`}>{s[k]}</dd>
          </div>
        ))}
      </dl>
      {preview && (
        <section className="card" aria-label="Preview">
          <h2>Preview</h2>
          <p>
            {preview.recipients} recipients: {preview.sendable} sendable, {preview.deferred} deferred,{" "}
            {Object.entries(preview.skipped)
              .map(([reason, n]) => `${n} skipped (${reason})`)
              .join(", ") || "none skipped"}
            .
          </p>
          {preview.warnings.map((w: Json) => (
            <p key={w.code} className="warn">
              {w.message}
            </p>
          ))}
          <table>
            <thead>
              <tr>
                <th>Phone</th>
                <th>Outcome</th>
                <th>Why</th>
                <th>Message</th>
              </tr>
            </thead>
            <tbody>
              {preview.contacts.map((c: Json) => (
                <tr key={c.contact_id}>
                  <td>{c.phone_number}</td>
                  <td>{c.outcome}</td>
                  <td>{c.reason ?? ""}</td>
                  <td>{c.body ?? ""}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </section>
      )}
    </div>
  );
}
