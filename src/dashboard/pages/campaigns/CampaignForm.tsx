import { type FormEvent, useId, useRef, useState } from "react";
import { type Answer, ApiError, call, client } from "../../api";
import { SmsCounter } from "../../components/SmsCounter";
import { useRows } from "../../components/useRows";
import { MergeFieldPicker } from "./MergeFields";

type Campaign = Answer<"/v1/campaigns/{id}">["campaign"];
type Variant = { name: string; body: string; weight: number };

// What the form picks from, over the typed client (module-level, so each loads once).
const ALL = { params: { query: { limit: 200 } } };
const loadLists = async () => (await call(client.GET("/v1/lists", ALL))).lists;
const loadSegments = async () => (await call(client.GET("/v1/segments", ALL))).segments;
const loadNumbers = async () => (await call(client.GET("/v1/numbers", ALL))).numbers;
const loadPools = async () => (await call(client.GET("/v1/pools", ALL))).pools;
const loadOffers = async () => (await call(client.GET("/v1/offers", ALL))).offers;
const loadAgents = async () => (await call(client.GET("/v1/agents", ALL))).agents;

/** The form's state, close to the API's campaign body. */
interface Draft {
  name: string;
  list_ids: string[];
  segment_ids: string[];
  exclude_list_ids: string[];
  sender: "rotate" | "from" | "pool";
  from: string;
  pool_id: string;
  offer_id: string;
  agent_id: string;
  ab: boolean;
  body: string;
  variants: Variant[];
  schedule: "launch" | "later";
  send_at: string;
  throttle: string;
  quiet: "workspace" | "own";
  quiet_enabled: boolean;
  start_hour: number;
  end_hour: number;
}

const DEFAULT_BODY = "Hi {{first_name|there}}! Reply STOP to opt out.";

/** A local `YYYY-MM-DDTHH:mm` for a datetime-local input. */
function localInput(iso: string | null): string {
  if (!iso) return "";
  const d = new Date(iso);
  const pad = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

function draftOf(campaign: Campaign | null): Draft {
  const variants: Variant[] = campaign?.message?.variants ?? [];
  return {
    name: campaign?.name ?? "",
    list_ids: campaign?.audience?.list_ids ?? [],
    segment_ids: campaign?.audience?.segment_ids ?? [],
    exclude_list_ids: campaign?.audience?.exclude_list_ids ?? [],
    sender: campaign?.from ? "from" : campaign?.pool_id ? "pool" : "rotate",
    from: campaign?.from ?? "",
    pool_id: campaign?.pool_id ?? "",
    offer_id: campaign?.offer_id ?? "",
    agent_id: campaign?.agent_id ?? "",
    ab: variants.length > 0,
    body: campaign?.message?.body ?? DEFAULT_BODY,
    variants:
      variants.length > 0
        ? variants
        : [
            { name: "A", body: DEFAULT_BODY, weight: 50 },
            {
              name: "B",
              body: "{{first_name|Hi}}, 20% off this week only. Reply STOP to opt out.",
              weight: 50,
            },
          ],
    schedule: campaign?.send_at ? "later" : "launch",
    send_at: localInput(campaign?.send_at ?? null),
    throttle: campaign?.throttle_per_minute ? String(campaign.throttle_per_minute) : "",
    quiet: campaign?.quiet_hours ? "own" : "workspace",
    quiet_enabled: campaign?.quiet_hours?.enabled ?? true,
    start_hour: campaign?.quiet_hours?.start_hour ?? 21,
    end_hour: campaign?.quiet_hours?.end_hour ?? 8,
  };
}

/** The API's body for the form's state. */
function bodyOf(d: Draft) {
  return {
    name: d.name,
    audience: { list_ids: d.list_ids, segment_ids: d.segment_ids, exclude_list_ids: d.exclude_list_ids },
    message: d.ab ? { variants: d.variants } : { body: d.body },
    from: d.sender === "from" ? d.from || null : null,
    pool_id: d.sender === "pool" ? d.pool_id || null : null,
    offer_id: d.offer_id || null,
    agent_id: d.agent_id || null,
    send_at: d.schedule === "later" && d.send_at ? new Date(d.send_at).toISOString() : null,
    throttle_per_minute: d.throttle ? Number(d.throttle) : null,
    quiet_hours:
      d.quiet === "own" ? { enabled: d.quiet_enabled, start_hour: d.start_hour, end_hour: d.end_hour } : null,
  };
}

function Checks(props: {
  legend: string;
  rows: { id: string; name: string; contacts?: number }[];
  chosen: string[];
  onChange: (ids: string[]) => void;
  empty: string;
}) {
  return (
    <fieldset className="checks">
      <legend>{props.legend}</legend>
      {props.rows.length === 0 && <span className="muted small">{props.empty}</span>}
      {props.rows.map((r) => (
        <label key={r.id} className="check">
          <input
            type="checkbox"
            checked={props.chosen.includes(r.id)}
            onChange={(e) =>
              props.onChange(
                e.target.checked ? [...props.chosen, r.id] : props.chosen.filter((x) => x !== r.id),
              )
            }
          />
          {r.name}
          {typeof r.contacts === "number" && <span className="muted small"> ({r.contacts})</span>}
        </label>
      ))}
    </fieldset>
  );
}

/** A message box with its merge-field picker and live segment counter. */
function MessageBox(props: { label: string; value: string; onChange: (v: string) => void }) {
  const ref = useRef<HTMLTextAreaElement | null>(null);
  const boxId = useId();
  const insert = (token: string) => {
    const box = ref.current;
    const at = box ? box.selectionStart : props.value.length;
    const end = box ? box.selectionEnd : at;
    props.onChange(props.value.slice(0, at) + token + props.value.slice(end));
  };
  return (
    <div className="message-box">
      <label htmlFor={boxId}>{props.label}</label>
      <textarea
        id={boxId}
        ref={ref}
        rows={4}
        maxLength={1600}
        value={props.value}
        onChange={(e) => props.onChange(e.target.value)}
      />
      <div className="row">
        <MergeFieldPicker onInsert={insert} />
        <SmsCounter body={props.value} />
      </div>
    </div>
  );
}

/**
 * Everything a campaign has, in one form (API.md §3, §6.2): audience (lists, segments, exclusions),
 * sender or pool, offer and `{{offer_url}}`, an agent for the replies, the message or A/B variants
 * with a live segment counter, schedule, throttle and its own quiet hours. Creates a draft, or
 * saves one.
 */
export function CampaignForm(props: {
  campaign?: Campaign;
  submitLabel: string;
  onSubmit: (body: ReturnType<typeof bodyOf>) => Promise<void>;
}) {
  const [d, setD] = useState<Draft>(() => draftOf(props.campaign ?? null));
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const lists = useRows(loadLists);
  const segments = useRows(loadSegments);
  const numbers = useRows(loadNumbers);
  const pools = useRows(loadPools);
  const offers = useRows(loadOffers);
  const agents = useRows(loadAgents);
  const set = (patch: Partial<Draft>) => setD((current) => ({ ...current, ...patch }));
  const usesOffer = (d.ab ? d.variants.map((v) => v.body) : [d.body]).some((b) =>
    b.includes("{{offer_url}}"),
  );

  async function submit(event: FormEvent) {
    event.preventDefault();
    setError(null);
    setBusy(true);
    try {
      await props.onSubmit(bodyOf(d));
    } catch (e) {
      setError(e instanceof ApiError ? e.message : "Could not save the campaign");
    } finally {
      setBusy(false);
    }
  }
  return (
    <form onSubmit={submit} className="campaign-form">
      <label>
        Name
        <input required maxLength={200} value={d.name} onChange={(e) => set({ name: e.target.value })} />
      </label>
      <div className="form-section">
        <h3>Audience</h3>
        <div className="columns">
          <Checks
            legend="Lists"
            rows={lists}
            chosen={d.list_ids}
            onChange={(ids) => set({ list_ids: ids })}
            empty="No lists yet."
          />
          <Checks
            legend="Segments"
            rows={segments}
            chosen={d.segment_ids}
            onChange={(ids) => set({ segment_ids: ids })}
            empty="No segments yet."
          />
          <Checks
            legend="Leave out these lists"
            rows={lists}
            chosen={d.exclude_list_ids}
            onChange={(ids) => set({ exclude_list_ids: ids })}
            empty="No lists yet."
          />
        </div>
      </div>
      <div className="form-section">
        <h3>Message</h3>
        <label className="check">
          <input type="checkbox" checked={d.ab} onChange={(e) => set({ ab: e.target.checked })} />
          A/B test: send variants of the message
        </label>
        {!d.ab ? (
          <MessageBox label="Message" value={d.body} onChange={(body) => set({ body })} />
        ) : (
          <>
            {d.variants.map((v, i) => (
              // biome-ignore lint/suspicious/noArrayIndexKey: variants are edited in place
              <div key={i} className="variant">
                <div className="row">
                  <label>
                    Variant name
                    <input
                      value={v.name}
                      onChange={(e) =>
                        set({
                          variants: d.variants.map((x, j) => (j === i ? { ...x, name: e.target.value } : x)),
                        })
                      }
                    />
                  </label>
                  <label>
                    Share (weight)
                    <input
                      type="number"
                      min={1}
                      value={v.weight}
                      onChange={(e) =>
                        set({
                          variants: d.variants.map((x, j) =>
                            j === i ? { ...x, weight: Number(e.target.value) } : x,
                          ),
                        })
                      }
                    />
                  </label>
                  {d.variants.length > 1 && (
                    <button
                      type="button"
                      className="secondary"
                      onClick={() => set({ variants: d.variants.filter((_, j) => j !== i) })}
                    >
                      Remove variant
                    </button>
                  )}
                </div>
                <MessageBox
                  label={`Message of variant ${v.name || i + 1}`}
                  value={v.body}
                  onChange={(body) =>
                    set({ variants: d.variants.map((x, j) => (j === i ? { ...x, body } : x)) })
                  }
                />
              </div>
            ))}
            {d.variants.length < 10 && (
              <button
                type="button"
                className="secondary"
                onClick={() =>
                  set({
                    variants: [
                      ...d.variants,
                      { name: String.fromCharCode(65 + d.variants.length), body: DEFAULT_BODY, weight: 50 },
                    ],
                  })
                }
              >
                Add a variant
              </button>
            )}
          </>
        )}
        <label>
          Offer (its tracked link fills {"{{offer_url}}"})
          <select value={d.offer_id} onChange={(e) => set({ offer_id: e.target.value })}>
            <option value="">No offer</option>
            {offers.map((o) => (
              <option key={o.id} value={o.id}>
                {o.name}
              </option>
            ))}
          </select>
          {usesOffer && !d.offer_id && (
            <span className="warn small">The message uses {"{{offer_url}}"}: choose an offer.</span>
          )}
        </label>
        <label>
          AI agent answering the replies
          <select value={d.agent_id} onChange={(e) => set({ agent_id: e.target.value })}>
            <option value="">None: replies go to the inbox</option>
            {agents
              .filter((a) => a.channel !== "voice")
              .map((a) => (
                <option key={a.id} value={a.id}>
                  {a.name}
                </option>
              ))}
          </select>
        </label>
      </div>
      <div className="form-section">
        <h3>Sending</h3>
        <label>
          Send from
          <select value={d.sender} onChange={(e) => set({ sender: e.target.value as Draft["sender"] })}>
            <option value="rotate">The workspace's numbers, rotated</option>
            <option value="from">One number</option>
            <option value="pool">A number pool</option>
          </select>
        </label>
        {d.sender === "from" && (
          <label>
            Number
            <select value={d.from} onChange={(e) => set({ from: e.target.value })}>
              <option value="">Choose…</option>
              {numbers
                .filter((n) => n.status === "active")
                .map((n) => (
                  <option key={n.id} value={n.number}>
                    {n.number}
                    {n.default ? " (default)" : ""}
                  </option>
                ))}
            </select>
          </label>
        )}
        {d.sender === "pool" && (
          <label>
            Pool
            <select value={d.pool_id} onChange={(e) => set({ pool_id: e.target.value })}>
              <option value="">Choose…</option>
              {pools.map((p) => (
                <option key={p.id} value={p.id}>
                  {p.name}
                </option>
              ))}
            </select>
          </label>
        )}
        <label>
          When
          <select value={d.schedule} onChange={(e) => set({ schedule: e.target.value as Draft["schedule"] })}>
            <option value="launch">As soon as it is launched</option>
            <option value="later">At a set time</option>
          </select>
        </label>
        {d.schedule === "later" && (
          <label>
            Start at (your time)
            <input
              type="datetime-local"
              value={d.send_at}
              onChange={(e) => set({ send_at: e.target.value })}
            />
          </label>
        )}
        <label>
          At most this many messages a minute (empty: no limit)
          <input
            type="number"
            min={1}
            value={d.throttle}
            onChange={(e) => set({ throttle: e.target.value })}
          />
        </label>
        <label>
          Quiet hours (the contact's local time)
          <select value={d.quiet} onChange={(e) => set({ quiet: e.target.value as Draft["quiet"] })}>
            <option value="workspace">The workspace's</option>
            <option value="own">This campaign's own</option>
          </select>
        </label>
        {d.quiet === "own" && (
          <div className="row">
            <label className="check">
              <input
                type="checkbox"
                checked={d.quiet_enabled}
                onChange={(e) => set({ quiet_enabled: e.target.checked })}
              />
              Hold messages during quiet hours
            </label>
            <label>
              From (hour)
              <input
                type="number"
                min={0}
                max={23}
                value={d.start_hour}
                onChange={(e) => set({ start_hour: Number(e.target.value) })}
              />
            </label>
            <label>
              Until (hour)
              <input
                type="number"
                min={0}
                max={23}
                value={d.end_hour}
                onChange={(e) => set({ end_hour: Number(e.target.value) })}
              />
            </label>
            <span className="muted small">State rules and the law's hours still apply.</span>
          </div>
        )}
      </div>
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
      <button type="submit" disabled={busy}>
        {props.submitLabel}
      </button>
    </form>
  );
}
