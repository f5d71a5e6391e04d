import { useCallback, useEffect, useState } from "react";
import { Link } from "wouter";
import { type Answer, ApiError, call, client } from "../../api";
import { ConfirmButton } from "../../components/feedback";
import { CampaignForm } from "./CampaignForm";
import { PreviewPanel } from "./PreviewPanel";
import { money, OUTCOME_WORDS } from "./words";

type Campaign = Answer<"/v1/campaigns/{id}">["campaign"];
type Figures = Answer<"/v1/analytics/campaigns">["campaigns"][number];
type Preview = Answer<"/v1/campaigns/{id}/preview">["preview"];
type Recipient = Answer<"/v1/campaigns/{id}/recipients">["recipients"][number];
type Action = "launch" | "pause" | "resume" | "cancel";

const STATS = [
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
] as const;

/**
 * One campaign: edit while a draft, preview per contact with skip reasons, launch after a
 * confirmation that names the recipient count, then the recipients with their real outcomes and
 * the figures through conversions, revenue and ROI.
 */
export function CampaignView({ id }: { id: string }) {
  const [campaign, setCampaign] = useState<Campaign | null>(null);
  const [figures, setFigures] = useState<Figures | null>(null);
  const [currency, setCurrency] = useState("USD");
  const [previewing, setPreviewing] = useState(false);
  const [confirming, setConfirming] = useState<Preview | null>(null);
  const [editing, setEditing] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const load = useCallback(async () => {
    try {
      const c = (await call(client.GET("/v1/campaigns/{id}", { params: { path: { id } } }))).campaign;
      setCampaign(c);
      if (c.launched_at) {
        const rows = (await call(client.GET("/v1/analytics/campaigns")).catch(() => null))?.campaigns ?? [];
        setFigures(rows.find((r) => r.campaign_id === id) ?? null);
      }
    } catch (e) {
      setError(e instanceof ApiError ? e.message : "Could not load the campaign");
    }
  }, [id]);
  useEffect(() => {
    void load();
    call(client.GET("/v1/settings")).then(
      (a) => setCurrency(a.settings.costs.currency ?? "USD"),
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

  async function act(action: Action) {
    setError(null);
    try {
      await call(client.POST(`/v1/campaigns/{id}/${action}`, { params: { path: { id } } }));
      await load();
    } catch (e) {
      setError(e instanceof ApiError ? e.message : `Could not ${action}`);
    }
  }
  async function askToLaunch() {
    setError(null);
    try {
      const query = { limit: 1 };
      setConfirming(
        (await call(client.GET("/v1/campaigns/{id}/preview", { params: { path: { id }, query } }))).preview,
      );
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
          aria-expanded={previewing}
          onClick={() => setPreviewing(!previewing)}
        >
          {previewing ? "Close the preview" : "Preview"}
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
          <ConfirmButton
            className="danger"
            question="Cancel this campaign? Messages not yet sent will never be sent."
            onConfirm={() => act("cancel")}
          >
            Cancel campaign
          </ConfirmButton>
        )}
      </div>
      {confirming && (
        <div className="confirm" role="alertdialog" aria-modal="true" aria-labelledby="launch-title">
          <h2 id="launch-title">Launch “{campaign.name}”?</h2>
          <p>
            It goes to <strong>{confirming.recipients}</strong> recipients: {confirming.sendable} now,{" "}
            {confirming.deferred} later (quiet hours, limits),{" "}
            {Object.values(confirming.skipped).reduce((a, b) => a + b, 0)} skipped.
            {campaign.send_at && ` Sending starts ${new Date(campaign.send_at).toLocaleString()}.`}
          </p>
          {confirming.warnings.map((w) => (
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
              await call(client.PATCH("/v1/campaigns/{id}", { params: { path: { id } }, body }));
              setEditing(false);
              await load();
            }}
          />
        </section>
      )}
      <dl className="stats" aria-label="Stats">
        {STATS.map(([k, label]) => (
          <div key={k}>
            <dt>{label}</dt>
            <dd data-testid={`stat-${k}`}>{s[k] ?? 0}</dd>
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
      {s.variants.length > 0 && (
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
            {s.variants.map((v) => (
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
      {previewing && <PreviewPanel id={id} />}
      {campaign.launched_at && <Recipients id={id} />}
    </div>
  );
}

/** After launch: each recipient with their real outcome and its reason. */
function Recipients({ id }: { id: string }) {
  const [rows, setRows] = useState<Recipient[] | null>(null);
  const [total, setTotal] = useState(0);
  useEffect(() => {
    const load = () =>
      call(
        client.GET("/v1/campaigns/{id}/recipients", { params: { path: { id }, query: { limit: 100 } } }),
      ).then(
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
