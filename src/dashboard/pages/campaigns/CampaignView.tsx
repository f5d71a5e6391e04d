import { useCallback, useEffect, useState } from "react";
import { Link } from "wouter";
import { ApiError, get, type Json, patch, post } from "../../api";
import { CampaignForm } from "./CampaignForm";

const OUTCOME_WORDS: Record<string, string> = {
  send: "would be sent",
  defer: "would wait",
  skip: "would be skipped",
  queued: "queued",
  deferred: "waiting",
  sent: "sent",
  delivered: "delivered",
  failed: "failed",
  skipped: "skipped",
};

function money(value: number | null | undefined, currency: string) {
  if (value === null || value === undefined) return "—";
  return new Intl.NumberFormat(undefined, { style: "currency", currency }).format(value);
}

/**
 * One campaign: edit while a draft, preview per contact with skip reasons, launch after a
 * confirmation that names the recipient count, then the recipients with their real outcomes and
 * the figures through conversions, revenue and ROI.
 */
export function CampaignView({ id }: { id: string }) {
  const [campaign, setCampaign] = useState<Json>(null);
  const [figures, setFigures] = useState<Json>(null);
  const [currency, setCurrency] = useState("USD");
  const [preview, setPreview] = useState<Json>(null);
  const [confirming, setConfirming] = useState<Json>(null);
  const [editing, setEditing] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const load = useCallback(async () => {
    try {
      const c = (await get(`/v1/campaigns/${id}`)).campaign;
      setCampaign(c);
      if (c.launched_at) {
        const rows = (await get("/v1/analytics/campaigns").catch(() => null))?.campaigns ?? [];
        setFigures(rows.find((r: Json) => r.campaign_id === id) ?? null);
      }
    } catch (e) {
      setError(e instanceof ApiError ? e.message : "Could not load the campaign");
    }
  }, [id]);
  useEffect(() => {
    void load();
    get("/v1/settings").then(
      (a) => setCurrency(a.settings?.costs?.currency ?? "USD"),
      () => undefined,
    );
    const timer = setInterval(() => void load(), 2000);
    return () => clearInterval(timer);
  }, [load]);
  if (!campaign)
    return error ? (
      <p className="error" role="alert">
        {error}
      </p>
    ) : (
      <p className="muted">Loading the campaign…</p>
    );

  async function act(action: string) {
    setError(null);
    try {
      await post(`/v1/campaigns/${id}/${action}`);
      await load();
    } catch (e) {
      setError(e instanceof ApiError ? e.message : `Could not ${action}`);
    }
  }
  async function askToLaunch() {
    setError(null);
    try {
      setConfirming((await get(`/v1/campaigns/${id}/preview?limit=1`)).preview);
    } catch (e) {
      setError(e instanceof ApiError ? e.message : "Could not count the recipients");
    }
  }
  const s = campaign.stats;
  const draft = campaign.status === "draft";
  return (
    <div className="page">
      <p>
        <Link href="/campaigns">← Campaigns</Link>
      </p>
      <h1>{campaign.name}</h1>
      <p>
        Status: <strong data-testid="campaign-status">{campaign.status}</strong>
        {campaign.send_at && draft && (
          <span className="muted"> · starts {new Date(campaign.send_at).toLocaleString()}</span>
        )}
      </p>
      <div className="row">
        {draft && (
          <button type="button" className="secondary" onClick={() => setEditing(!editing)}>
            {editing ? "Close the form" : "Edit"}
          </button>
        )}
        <button
          type="button"
          className="secondary"
          onClick={async () => setPreview((await get(`/v1/campaigns/${id}/preview?limit=50`)).preview)}
        >
          Preview
        </button>
        {draft && (
          <button type="button" onClick={askToLaunch}>
            Launch
          </button>
        )}
        {campaign.status === "active" && (
          <button type="button" className="secondary" onClick={() => act("pause")}>
            Pause
          </button>
        )}
        {campaign.status === "paused" && (
          <button type="button" onClick={() => act("resume")}>
            Resume
          </button>
        )}
        {["draft", "scheduled", "active", "paused"].includes(campaign.status) && (
          <button
            type="button"
            className="danger"
            onClick={() => {
              if (window.confirm("Cancel this campaign? Messages not yet sent will never be sent."))
                void act("cancel");
            }}
          >
            Cancel campaign
          </button>
        )}
      </div>
      {confirming && (
        <div className="confirm" role="alertdialog" aria-modal="true" aria-labelledby="launch-title">
          <h2 id="launch-title">Launch “{campaign.name}”?</h2>
          <p>
            It goes to <strong>{confirming.recipients}</strong> recipients: {confirming.sendable} now,{" "}
            {confirming.deferred} later (quiet hours, limits),{" "}
            {Object.values(confirming.skipped as Record<string, number>).reduce((a, b) => a + b, 0)} skipped.
            {campaign.send_at && ` Sending starts ${new Date(campaign.send_at).toLocaleString()}.`}
          </p>
          {confirming.warnings.map((w: Json) => (
            <p key={w.code} className="warn">
              {w.message}
            </p>
          ))}
          <div className="row">
            <button
              type="button"
              onClick={async () => {
                setConfirming(null);
                await act("launch");
              }}
            >
              Launch to {confirming.recipients} recipients
            </button>
            <button type="button" className="secondary" onClick={() => setConfirming(null)}>
              Not now
            </button>
          </div>
        </div>
      )}
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
      {editing && draft && (
        <section className="card" aria-label="Edit campaign">
          <CampaignForm
            campaign={campaign}
            submitLabel="Save changes"
            onSubmit={async (body) => {
              await patch(`/v1/campaigns/${id}`, body);
              setEditing(false);
              await load();
            }}
          />
        </section>
      )}
      <dl className="stats" aria-label="Stats">
        {[
          ["recipients", "Recipients"],
          ["queued", "Queued"],
          ["deferred", "Waiting"],
          ["sent", "Sent"],
          ["delivered", "Delivered"],
          ["failed", "Failed"],
          ["suppressed", "Skipped"],
          ["replied", "Replied"],
          ["opted_out", "Opted out"],
          ["clicked", "Clicked"],
          ["conversions", "Conversions"],
        ].map(([k, label]) => (
          <div key={k}>
            <dt>{label}</dt>
            <dd data-testid={`stat-${k}`}>{s[k as string] ?? 0}</dd>
          </div>
        ))}
        <div>
          <dt>Revenue</dt>
          <dd>{money(s.revenue, currency)}</dd>
        </div>
        <div>
          <dt>Cost</dt>
          <dd>{money(figures?.cost, currency)}</dd>
        </div>
        <div>
          <dt>ROI</dt>
          <dd>
            {figures?.roi === null || figures?.roi === undefined ? "—" : `${Math.round(figures.roi * 100)} %`}
          </dd>
        </div>
      </dl>
      {s.variants?.length > 0 && (
        <table aria-label="Variants">
          <thead>
            <tr>
              <th>Variant</th>
              <th>Recipients</th>
              <th>Delivered</th>
              <th>Replied</th>
              <th>Clicked</th>
              <th>Conversions</th>
              <th>Revenue</th>
            </tr>
          </thead>
          <tbody>
            {s.variants.map((v: Json) => (
              <tr key={v.name}>
                <td>{v.name}</td>
                <td>{v.recipients}</td>
                <td>{v.delivered}</td>
                <td>{v.replied}</td>
                <td>{v.clicked}</td>
                <td>{v.conversions}</td>
                <td>{money(v.revenue, currency)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {preview && (
        <section className="card" aria-label="Preview">
          <h2>Preview</h2>
          <p>
            {preview.recipients} recipients: {preview.sendable} would be sent now, {preview.deferred} would
            wait,{" "}
            {Object.entries(preview.skipped)
              .map(([reason, n]) => `${n} skipped (${String(reason).replaceAll("_", " ")})`)
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
                <th>What happens</th>
                <th>Why</th>
                <th>Their message</th>
              </tr>
            </thead>
            <tbody>
              {preview.contacts.map((c: Json) => (
                <tr key={c.contact_id}>
                  <td>{c.phone_number}</td>
                  <td>{OUTCOME_WORDS[c.outcome] ?? c.outcome}</td>
                  <td>{(c.reason ?? "").replaceAll("_", " ")}</td>
                  <td>
                    {c.variant && <span className="badge">{c.variant}</span>} {c.body ?? ""}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </section>
      )}
      {campaign.launched_at && <Recipients id={id} />}
    </div>
  );
}

/** After launch: each recipient with their real outcome and its reason. */
function Recipients({ id }: { id: string }) {
  const [rows, setRows] = useState<Json[] | null>(null);
  const [total, setTotal] = useState(0);
  useEffect(() => {
    const load = () =>
      get(`/v1/campaigns/${id}/recipients?limit=100`).then(
        (a) => {
          setRows(a.recipients);
          setTotal(a.total);
        },
        () => setRows([]),
      );
    void load();
    const timer = setInterval(load, 3000);
    return () => clearInterval(timer);
  }, [id]);
  if (rows === null) return <p className="muted">Loading the recipients…</p>;
  return (
    <section className="card" aria-label="Recipients">
      <h2>Recipients ({total})</h2>
      <table>
        <thead>
          <tr>
            <th>Phone</th>
            <th>Outcome</th>
            <th>Why</th>
            <th>Variant</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => (
            <tr key={r.contact_id}>
              <td>{r.phone_number}</td>
              <td>{OUTCOME_WORDS[r.outcome] ?? r.outcome}</td>
              <td>{(r.reason ?? "").replaceAll("_", " ")}</td>
              <td>{r.variant ?? ""}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {total > rows.length && (
        <p className="muted small">
          The first {rows.length} of {total}.
        </p>
      )}
    </section>
  );
}
