import { type FormEvent, useCallback, useEffect, useState } from "react";
import { type Answer, ApiError, call, client, type Posted } from "../api";

type Settings = Answer<"/v1/settings">["settings"];
type ApiKey = Answer<"/v1/api-keys">["api_keys"][number];
type User = Answer<"/v1/users">["users"][number];

import { LinkDomainsSection } from "../components/LinkDomainsSection";
import { lines, ResourceSection } from "../components/resource";

/** The page's sections, for its table of contents (each section's aria-label). */
const SECTIONS = ["Workspace", "API keys", "Users", "10DLC brands", "10DLC campaigns", "Short codes"];

/**
 * Settings (admins only), in sections: the workspace and its sending rules, API keys, users, then
 * sender registration (10DLC brands and campaigns, short codes). Further sections mount in the
 * marked spot below, one line each.
 */
export function SettingsPage() {
  return (
    <div className="page">
      <h1>Settings</h1>
      <nav aria-label="Settings sections" className="toc">
        {SECTIONS.map((name) => (
          <a key={name} href={`#${anchorOf(name)}`}>
            {name}
          </a>
        ))}
      </nav>
      <WorkspaceSettings />
      <ApiKeys />
      <Users />
      <LinkDomainsSection />
      <Registration />
      {/* More sections mount here, one line each (e.g. branded link domains). */}
    </div>
  );
}

function anchorOf(name: string): string {
  return name.toLowerCase().replace(/[^a-z0-9]+/g, "-");
}

/** Every IANA time zone the browser knows (a short list where it cannot say). */
function timeZones(current: string): string[] {
  const known =
    typeof Intl.supportedValuesOf === "function"
      ? Intl.supportedValuesOf("timeZone")
      : ["America/New_York", "America/Chicago", "America/Denver", "America/Los_Angeles", "UTC"];
  return known.includes(current) ? known : [current, ...known];
}

function WorkspaceSettings() {
  const [settings, setSettings] = useState<Settings | null>(null);
  const [message, setMessage] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    void call(client.GET("/v1/settings")).then((a) => setSettings(a.settings));
  }, []);
  if (!settings) return null;
  async function save(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    setError(null);
    setMessage(null);
    try {
      const body = {
        name: String(form.get("name") ?? ""),
        timezone: String(form.get("timezone") ?? ""),
        quiet_hours: {
          enabled: form.get("quiet") === "on",
          start_hour: Number(form.get("start_hour")),
          end_hour: Number(form.get("end_hour")),
        },
        state_rules: form.get("state_rules") === "on",
        require_registration: form.get("require_registration") === "on",
        one_off_daily_limit: dailyBudget(form.get("one_off_daily_limit")),
        number_orders_daily_limit: dailyBudget(form.get("number_orders_daily_limit")),
      };
      const answer = await call(client.PATCH("/v1/settings", { body }));
      setSettings(answer.settings);
      setMessage("Saved");
    } catch (e) {
      setError(e instanceof ApiError ? e.message : "Could not save");
    }
  }
  return (
    <section className="card" aria-label="Workspace" id="workspace">
      <h2>Workspace</h2>
      <form onSubmit={save} className="grid">
        <label>
          Name
          <input name="name" defaultValue={settings.name} />
        </label>
        <label>
          Time zone
          <select name="timezone" defaultValue={settings.timezone}>
            {timeZones(settings.timezone).map((zone) => (
              <option key={zone} value={zone}>
                {zone.replaceAll("_", " ")}
              </option>
            ))}
          </select>
        </label>
        <label className="check">
          <input type="checkbox" name="quiet" defaultChecked={settings.quiet_hours.enabled} /> Quiet hours
        </label>
        <label>
          From (hour)
          <input
            name="start_hour"
            type="number"
            min={0}
            max={23}
            defaultValue={settings.quiet_hours.start_hour}
          />
        </label>
        <label>
          Until (hour)
          <input
            name="end_hour"
            type="number"
            min={0}
            max={23}
            defaultValue={settings.quiet_hours.end_hour}
          />
        </label>
        <label className="check">
          <input type="checkbox" name="state_rules" defaultChecked={settings.state_rules} /> US state rules
        </label>
        <label className="check">
          <input type="checkbox" name="require_registration" defaultChecked={settings.require_registration} />{" "}
          Require 10DLC registration
        </label>
        <label>
          One-off sends per day (blank: no limit)
          <input
            name="one_off_daily_limit"
            type="number"
            min={0}
            step={1}
            defaultValue={settings.one_off_daily_limit ?? ""}
          />
        </label>
        <label>
          Numbers ordered per day (blank: no limit)
          <input
            name="number_orders_daily_limit"
            type="number"
            min={0}
            step={1}
            defaultValue={settings.number_orders_daily_limit ?? ""}
          />
        </label>
        {error && (
          <p className="error" role="alert">
            {error}
          </p>
        )}
        {message && <p role="status">{message}</p>}
        <button type="submit">Save</button>
      </form>
    </section>
  );
}

/** A daily budget field: blank is no budget (null), else the whole number typed. */
function dailyBudget(value: FormDataEntryValue | null): number | null {
  const text = String(value ?? "").trim();
  return text === "" ? null : Number(text);
}

function ApiKeys() {
  const [keys, setKeys] = useState<ApiKey[]>([]);
  const [created, setCreated] = useState<Posted<"/v1/api-keys">["api_key"] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const load = useCallback(async () => {
    const query = { limit: 200 };
    setKeys((await call(client.GET("/v1/api-keys", { params: { query } }))).api_keys);
  }, []);
  useEffect(() => {
    void load();
  }, [load]);
  async function create(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const formElement = event.currentTarget;
    const form = new FormData(formElement);
    setError(null);
    try {
      const scopes: ("read" | "write")[] = form.get("write") === "on" ? ["read", "write"] : ["read"];
      const body = { name: String(form.get("name") ?? ""), scopes };
      const answer = await call(client.POST("/v1/api-keys", { body }));
      setCreated(answer.api_key);
      formElement.reset();
      await load();
    } catch (e) {
      setError(e instanceof ApiError ? e.message : "Could not create the key");
    }
  }
  async function revoke(id: string, name: string) {
    if (!window.confirm(`Revoke the key “${name}”? Programs using it stop working at once.`)) return;
    await call(client.DELETE("/v1/api-keys/{id}", { params: { path: { id } } }));
    await load();
  }
  return (
    <section className="card" aria-label="API keys" id="api-keys">
      <h2>API keys</h2>
      {created && (
        <div className="secret" role="status">
          <p>Copy this key now: it is shown only once.</p>
          <code data-testid="new-key">{created.key}</code>
          <button type="button" onClick={() => setCreated(null)}>
            Done
          </button>
        </div>
      )}
      <form onSubmit={create} className="row">
        <label>
          Name
          <input name="name" required />
        </label>
        <label className="check">
          <input type="checkbox" name="write" defaultChecked /> Can write
        </label>
        <button type="submit">Create key</button>
      </form>
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
      <table>
        <thead>
          <tr>
            <th>Name</th>
            <th>Prefix</th>
            <th>Scopes</th>
            <th>Last used</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {keys.map((key) => (
            <tr key={key.id}>
              <td>{key.name}</td>
              <td>
                <code>{key.prefix}</code>
              </td>
              <td>{key.scopes.join(", ")}</td>
              <td>{key.last_used_at ? new Date(key.last_used_at).toLocaleString() : "never"}</td>
              <td>
                {key.revoked_at ? (
                  <span className="muted">revoked</span>
                ) : (
                  <button
                    type="button"
                    className="danger"
                    onClick={() => revoke(key.id, key.name)}
                    aria-label={`Revoke ${key.name}`}
                  >
                    Revoke
                  </button>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

function Users() {
  const [users, setUsers] = useState<User[]>([]);
  const [link, setLink] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const load = useCallback(async () => {
    const query = { limit: 200 };
    setUsers((await call(client.GET("/v1/users", { params: { query } }))).users);
  }, []);
  useEffect(() => {
    void load();
  }, [load]);
  async function invite(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    setError(null);
    try {
      const body = {
        email: String(form.get("email") ?? ""),
        name: String(form.get("name") ?? ""),
        role: form.get("role") === "admin" ? ("admin" as const) : ("agent" as const),
      };
      const answer = await call(client.POST("/v1/users", { body }));
      setLink(answer.setup_url);
      await load();
    } catch (e) {
      setError(e instanceof ApiError ? e.message : "Could not invite");
    }
  }
  return (
    <section className="card" aria-label="Users" id="users">
      <h2>Users</h2>
      <form onSubmit={invite} className="row">
        <label>
          E-mail
          <input name="email" type="email" required />
        </label>
        <label>
          Name
          <input name="name" required />
        </label>
        <label>
          Role
          <select name="role" defaultValue="agent">
            <option value="admin">admin</option>
            <option value="agent">agent</option>
          </select>
        </label>
        <button type="submit">Invite</button>
      </form>
      {link && (
        <p role="status">
          Send this one-time setup link: <code>{link}</code>
        </p>
      )}
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
      <ul>
        {users.map((u) => (
          <li key={u.id}>
            {u.name} <span className="muted">{u.email}</span> · {u.role}
          </li>
        ))}
      </ul>
    </section>
  );
}

/** 10DLC brands and campaigns, and short-code requests, with their review status and reasons. */
function Registration() {
  return (
    <>
      <ResourceSection
        title="10DLC brands"
        path="/v1/10dlc/brands"
        many="brands"
        createLabel="Register brand"
        fields={[
          { name: "legal_name", label: "Legal name", required: true },
          { name: "ein", label: "EIN (12-3456789)" },
          {
            name: "entity_type",
            label: "Entity type",
            type: "select",
            options: ["PRIVATE_PROFIT", "PUBLIC_PROFIT", "NON_PROFIT", "GOVERNMENT", "SOLE_PROPRIETOR"],
          },
          { name: "vertical", label: "Vertical", placeholder: "RETAIL", required: true },
          { name: "email", label: "E-mail", type: "email", required: true },
          { name: "phone", label: "Phone", required: true },
          { name: "street", label: "Street", required: true },
          { name: "city", label: "City", required: true },
          { name: "state", label: "State", required: true },
          { name: "postal_code", label: "ZIP", required: true },
        ]}
        transform={({ street, city, state, postal_code, ...rest }) => ({
          ...rest,
          address: { street, city, state, postal_code, country: "US" },
        })}
        columns={[
          { label: "Legal name", cell: (r) => r.legal_name },
          { label: "Status", cell: (r) => r.status },
          { label: "Reasons", cell: (r) => r.failure_reasons.join("; ") },
        ]}
      />
      <ResourceSection
        title="10DLC campaigns"
        path="/v1/10dlc/campaigns"
        many="campaigns"
        columns={[
          { label: "Use case", cell: (r) => r.use_case },
          { label: "Status", cell: (r) => r.status },
          { label: "Reasons", cell: (r) => r.rejection_reasons.join("; ") },
        ]}
      />
      <ResourceSection
        title="Short codes"
        path="/v1/short-codes/requests"
        many="requests"
        createLabel="Request a short code"
        fields={[
          { name: "type", label: "Type", type: "select", options: ["random", "vanity"] },
          { name: "vanity_code", label: "Vanity code (5–6 digits)" },
          { name: "use_case", label: "Use case", placeholder: "MARKETING", required: true },
          { name: "monthly_volume", label: "Monthly volume", type: "number", required: true },
          {
            name: "sample_messages",
            label: "Sample messages (one per line)",
            type: "textarea",
            required: true,
            parse: lines,
          },
        ]}
        columns={[
          { label: "Type", cell: (r) => r.type },
          { label: "Status", cell: (r) => r.status },
          { label: "Code", cell: (r) => r.short_code ?? "" },
          { label: "Reasons", cell: (r) => r.rejection_reasons.join("; ") },
        ]}
      />
    </>
  );
}
