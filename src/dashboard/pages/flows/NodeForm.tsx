import { call, client } from "../../api";
import { RuleBuilder } from "../../components/RuleBuilder";
import { useRows } from "../../components/useRows";
import { KINDS, type NodeData, TRIGGER_WORDS } from "./kinds";

// What a node's form picks from, over the typed client (module-level, so each loads once).
const ALL = { params: { query: { limit: 200 } } };
const loadLists = async () => (await call(client.GET("/v1/lists", ALL))).lists;
const loadAgents = async () => (await call(client.GET("/v1/agents", ALL))).agents;
const loadOffers = async () => (await call(client.GET("/v1/offers", ALL))).offers;

/** A setting as its input shows it ("" when unset). */
function text(data: NodeData, key: string): string {
  const value = data[key];
  return typeof value === "string" || typeof value === "number" ? String(value) : "";
}
/** A setting that is an id (undefined when unset). */
function opt(data: NodeData, key: string): string | undefined {
  const value = data[key];
  return typeof value === "string" ? value : undefined;
}
const strings = (value: unknown): string[] => (Array.isArray(value) ? value.map(String) : []);
const record = (value: unknown): NodeData =>
  value && typeof value === "object" && !Array.isArray(value) ? (value as NodeData) : {};

function Pick<Row extends { id: string; name: string }>(props: {
  label: string;
  value: string | undefined;
  rows: Row[];
  onChange: (value: string) => void;
  empty: string;
  optional?: boolean;
  filter?: (row: Row) => boolean;
}) {
  const rows = props.filter ? props.rows.filter(props.filter) : props.rows;
  return (
    <label>
      {props.label}
      <select value={props.value ?? ""} onChange={(e) => props.onChange(e.target.value)}>
        <option value="">{props.optional ? "Any" : "Choose…"}</option>
        {rows.map((r) => (
          <option key={r.id} value={r.id}>
            {r.name || r.id}
          </option>
        ))}
      </select>
      {rows.length === 0 && <span className="muted small">{props.empty}</span>}
    </label>
  );
}

/**
 * The selected node's settings as a form of its own per type (no JSON): each field in words,
 * lists, agents and offers picked by name. `onChange` gets the node's new `data`.
 */
export function NodeForm({
  type,
  data,
  onChange,
}: {
  type: string;
  data: NodeData;
  onChange: (data: NodeData) => void;
}) {
  const set = (patch: NodeData) => {
    const next = { ...data, ...patch };
    for (const key of Object.keys(next)) if (next[key] === undefined) delete next[key];
    onChange(next);
  };
  const lists = useRows(loadLists);
  const agents = useRows(loadAgents);
  const offers = useRows(loadOffers);
  const kind = KINDS[type];
  return (
    <div className="node-form">
      {kind?.help && <p className="muted small">{kind.help}</p>}
      {type === "trigger" && (
        <>
          <label>
            Starts when
            <select
              value={text(data, "event") || "manual"}
              onChange={(e) => onChange({ event: e.target.value })}
            >
              {Object.entries(TRIGGER_WORDS).map(([value, label]) => (
                <option key={value} value={value}>
                  {label}
                </option>
              ))}
            </select>
          </label>
          {data.event === "added_to_list" && (
            <Pick
              label="List"
              value={opt(data, "list_id")}
              rows={lists}
              empty="No lists yet."
              onChange={(v) => set({ list_id: v })}
            />
          )}
          {data.event === "inbound_keyword" && (
            <label>
              Keywords (separated by spaces or commas)
              <input
                value={strings(data.keywords).join(", ")}
                onChange={(e) =>
                  set({
                    keywords: e.target.value
                      .split(/[\s,]+/)
                      .map((w) => w.trim())
                      .filter(Boolean),
                  })
                }
              />
            </label>
          )}
          {data.event === "link_clicked" && (
            <Pick
              label="Offer"
              value={opt(data, "offer_id")}
              rows={offers}
              optional
              empty="No offers yet."
              onChange={(v) => set({ offer_id: v || undefined })}
            />
          )}
          {data.event === "conversion" && (
            <label>
              Conversion event (empty: any)
              <input
                value={text(data, "conversion_event")}
                placeholder="purchase"
                onChange={(e) => set({ conversion_event: e.target.value || undefined })}
              />
            </label>
          )}
        </>
      )}
      {type === "send_sms" && (
        <label>
          Message
          <textarea
            rows={5}
            value={text(data, "body")}
            maxLength={1600}
            onChange={(e) => set({ body: e.target.value })}
          />
          <span className="muted small">
            Merge fields: {"{{first_name}}"}, {"{{first_name|there}}"} (with a fallback), {"{{fields.city}}"}
          </span>
        </label>
      )}
      {type === "wait" && <WaitForm data={data} onChange={onChange} />}
      {type === "wait_for_reply" && (
        <label>
          Wait up to (hours)
          <input
            type="number"
            min={1}
            value={text(data, "timeout_hours")}
            onChange={(e) => set({ timeout_hours: Number(e.target.value) })}
          />
        </label>
      )}
      {type === "condition" && <RuleBuilder rules={data.rules} onChange={(rules) => set({ rules })} />}
      {type === "agent" && (
        <Pick
          label="SMS agent"
          value={opt(data, "agent_id")}
          rows={agents}
          filter={(a) => a.channel !== "voice"}
          empty="No SMS agents yet."
          onChange={(v) => set({ agent_id: v })}
        />
      )}
      {(type === "add_to_list" || type === "remove_from_list") && (
        <Pick
          label="List"
          value={opt(data, "list_id")}
          rows={lists}
          empty="No lists yet."
          onChange={(v) => set({ list_id: v })}
        />
      )}
      {type === "update_contact" && <UpdateForm data={data} onChange={onChange} />}
      {type === "webhook" && (
        <label>
          URL (https)
          <input type="url" value={text(data, "url")} onChange={(e) => set({ url: e.target.value })} />
        </label>
      )}
      {type === "call" && (
        <>
          <label>
            On the call
            <select
              value={data.agent_id !== undefined ? "agent" : "say"}
              onChange={(e) =>
                onChange(
                  e.target.value === "agent" ? { agent_id: "" } : { say: "Hello! This is a reminder." },
                )
              }
            >
              <option value="say">Read a message out</option>
              <option value="agent">A voice agent talks</option>
            </select>
          </label>
          {data.agent_id !== undefined ? (
            <Pick
              label="Voice agent"
              value={opt(data, "agent_id")}
              rows={agents}
              filter={(a) => a.channel === "voice"}
              empty="No voice agents yet."
              onChange={(v) => onChange({ agent_id: v })}
            />
          ) : (
            <label>
              Message to read out
              <textarea
                rows={4}
                value={text(data, "say")}
                onChange={(e) => onChange({ say: e.target.value })}
              />
            </label>
          )}
        </>
      )}
      {type === "end" && <p className="muted small">Nothing to set.</p>}
    </div>
  );
}

function WaitForm({ data, onChange }: { data: NodeData; onChange: (data: NodeData) => void }) {
  const unit = data.minutes !== undefined ? "minutes" : data.days !== undefined ? "days" : "hours";
  const amount = Number(data[unit] ?? 1);
  return (
    <div className="row">
      <label>
        Wait for
        <input
          type="number"
          min={1}
          value={amount}
          onChange={(e) => onChange({ [unit]: Number(e.target.value) })}
        />
      </label>
      <label>
        Unit
        <select value={unit} onChange={(e) => onChange({ [e.target.value]: amount })}>
          <option value="minutes">minutes</option>
          <option value="hours">hours</option>
          <option value="days">days</option>
        </select>
      </label>
    </div>
  );
}

const UPDATABLE = [
  { key: "first_name", label: "First name" },
  { key: "last_name", label: "Last name" },
  { key: "email", label: "E-mail" },
  { key: "external_id", label: "External id" },
  { key: "timezone", label: "Time zone" },
];

function UpdateForm({ data, onChange }: { data: NodeData; onChange: (data: NodeData) => void }) {
  const fields = record(data.fields);
  const set = (key: string, value: string | undefined) => {
    const next = { ...fields };
    if (value === undefined) delete next[key];
    else next[key] = value;
    onChange({ fields: next });
  };
  const custom = record(fields.fields);
  return (
    <>
      {UPDATABLE.map((f) => (
        <label key={f.key} className="check-field">
          <span>
            <input
              type="checkbox"
              checked={fields[f.key] !== undefined}
              onChange={(e) => set(f.key, e.target.checked ? "" : undefined)}
            />{" "}
            Set {f.label.toLowerCase()}
          </span>
          {fields[f.key] !== undefined && (
            <input
              aria-label={f.label}
              value={text(fields, f.key)}
              onChange={(e) => set(f.key, e.target.value)}
            />
          )}
        </label>
      ))}
      <label>
        <span>
          Custom fields (one <code>key=value</code> a line)
        </span>
        <textarea
          rows={3}
          defaultValue={Object.entries(custom)
            .map(([k, v]) => `${k}=${v === null || v === undefined ? "" : String(v)}`)
            .join("\n")}
          onBlur={(e) => {
            const next: NodeData = {};
            for (const line of e.target.value.split("\n")) {
              const at = line.indexOf("=");
              if (at > 0) next[line.slice(0, at).trim()] = line.slice(at + 1);
            }
            const rest = { ...fields };
            if (Object.keys(next).length) rest.fields = next;
            else delete rest.fields;
            onChange({ fields: rest });
          }}
        />
      </label>
    </>
  );
}
