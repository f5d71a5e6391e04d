import { type FormEvent, useCallback, useEffect, useState } from "react";
import { Link, useLocation } from "wouter";
import { type Answer, ApiError, call, client } from "../../api";
import { ConfirmButton } from "../../components/feedback";

type Contact = Answer<"/v1/contacts/{id}">["contact"];
type Activity = Answer<"/v1/contacts/{id}/activity">["activity"][number];
type List = Answer<"/v1/lists">["lists"][number];

const TYPE_WORDS: Record<string, string> = {
  message: "Message",
  call: "Call",
  click: "Click",
  conversion: "Conversion",
  flow_entry: "Flow",
  flow_exit: "Flow",
  list_added: "List",
  opt_out: "Opt-out",
};
const PAGE = 25;

/**
 * One contact: its fields to edit (custom fields included), the lists it is on (add and remove),
 * its activity newest first (GET /v1/contacts/{id}/activity), and a delete that asks first.
 */
export function ContactPage({ id }: { id: string }) {
  const [contact, setContact] = useState<Contact | null>(null);
  const [activity, setActivity] = useState<Activity[] | null>(null);
  const [total, setTotal] = useState(0);
  const [offset, setOffset] = useState(0);
  const [lists, setLists] = useState<List[]>([]);
  const [memberOf, setMemberOf] = useState<string[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [message, setMessage] = useState<string | null>(null);
  const [, navigate] = useLocation();

  const load = useCallback(async () => {
    try {
      const path = { id };
      setContact((await call(client.GET("/v1/contacts/{id}", { params: { path } }))).contact);
      const all = await call(
        client.GET("/v1/contacts/{id}/activity", { params: { path, query: { limit: 200 } } }),
      );
      setMemberOf(
        all.activity
          .filter((a) => a.type === "list_added")
          .flatMap((a) => (a.ids.list_id ? [a.ids.list_id] : [])),
      );
    } catch (e) {
      setError(
        e instanceof ApiError ? (e.status === 404 ? "No such contact." : e.message) : "Could not load",
      );
    }
  }, [id]);
  const loadActivity = useCallback(async () => {
    const params = { path: { id }, query: { limit: PAGE, offset } };
    const page = await call(client.GET("/v1/contacts/{id}/activity", { params })).catch(() => null);
    setActivity(page?.activity ?? []);
    setTotal(page?.total ?? 0);
  }, [id, offset]);
  useEffect(() => {
    void load();
    call(client.GET("/v1/lists", { params: { query: { limit: 200 } } })).then(
      (a) => setLists(a.lists),
      () => setLists([]),
    );
  }, [load]);
  useEffect(() => {
    void loadActivity();
  }, [loadActivity]);

  if (!contact)
    return error ? (
      <div className="page">
        <p className="error" role="alert">
          {error}
        </p>
        <Link href="/contacts">← Contacts</Link>
      </div>
    ) : (
      <p className="muted">Loading the contact…</p>
    );

  async function save(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    if (!contact) return;
    const form = new FormData(event.currentTarget);
    const text = (k: string) => String(form.get(k) ?? "").trim() || null;
    const fields: Record<string, string | null> = {};
    for (const line of String(form.get("fields") ?? "").split("\n")) {
      const at = line.indexOf("=");
      if (at > 0) fields[line.slice(0, at).trim()] = line.slice(at + 1).trim();
    }
    for (const key of Object.keys(contact.fields ?? {})) if (!(key in fields)) fields[key] = null;
    setError(null);
    setMessage(null);
    try {
      const body = {
        phone_number: text("phone_number") ?? contact.phone_number,
        first_name: text("first_name"),
        last_name: text("last_name"),
        email: text("email"),
        timezone: text("timezone"),
        opted_in: form.get("opted_in") === "on",
        fields,
      };
      await call(client.PATCH("/v1/contacts/{id}", { params: { path: { id } }, body }));
      setMessage("Saved");
      await load();
      await loadActivity();
    } catch (e) {
      setError(e instanceof ApiError ? e.message : "Could not save");
    }
  }
  async function membership(listId: string, add: boolean) {
    setError(null);
    try {
      const request = { params: { path: { id: listId } }, body: { contact_ids: [id] } };
      if (add) await call(client.POST("/v1/lists/{id}/contacts", request));
      else await call(client.DELETE("/v1/lists/{id}/contacts", request));
      await load();
      await loadActivity();
    } catch (e) {
      setError(e instanceof ApiError ? e.message : "Could not change the lists");
    }
  }
  const name = [contact.first_name, contact.last_name].filter(Boolean).join(" ") || contact.phone_number;
  return (
    <div className="page">
      <p>
        <Link href="/contacts">← Contacts</Link>
      </p>
      <h1>{name}</h1>
      <p className={contact.opted_in ? "state ok" : "state danger"}>
        {contact.opted_in ? "Opted in" : "Opted out: no message is sent to this contact"}
      </p>
      <div className="two-columns">
        <section className="card" aria-label="Details">
          <h2>Details</h2>
          <form onSubmit={save} className="node-form" key={contact.updated_at}>
            <label>
              Phone number
              <input name="phone_number" defaultValue={contact.phone_number} required />
            </label>
            <label>
              First name
              <input name="first_name" defaultValue={contact.first_name ?? ""} />
            </label>
            <label>
              Last name
              <input name="last_name" defaultValue={contact.last_name ?? ""} />
            </label>
            <label>
              E-mail
              <input name="email" type="email" defaultValue={contact.email ?? ""} />
            </label>
            <label>
              Time zone (IANA, e.g. America/Chicago)
              <input name="timezone" defaultValue={contact.timezone ?? ""} />
            </label>
            <label className="check">
              <input name="opted_in" type="checkbox" defaultChecked={contact.opted_in} /> Opted in to messages
            </label>
            <label>
              <span>
                Custom fields (one <code>key=value</code> a line)
              </span>
              <textarea
                name="fields"
                rows={4}
                defaultValue={Object.entries(contact.fields ?? {})
                  .map(([k, v]) => `${k}=${v}`)
                  .join("\n")}
              />
            </label>
            <div className="row">
              <button type="submit">Save</button>
              {message && <span role="status">{message}</span>}
            </div>
          </form>
          {error && (
            <p className="error" role="alert">
              {error}
            </p>
          )}
          <h3>Lists</h3>
          <ul className="plain">
            {lists
              .filter((l) => memberOf.includes(l.id))
              .map((l) => (
                <li key={l.id} className="row">
                  {l.name}
                  <button type="button" className="secondary" onClick={() => membership(l.id, false)}>
                    Remove from list
                  </button>
                </li>
              ))}
            {memberOf.length === 0 && <li className="muted small">On no list.</li>}
          </ul>
          <label>
            Add to a list
            <select value="" onChange={(e) => e.target.value && void membership(e.target.value, true)}>
              <option value="">Choose a list…</option>
              {lists
                .filter((l) => !memberOf.includes(l.id))
                .map((l) => (
                  <option key={l.id} value={l.id}>
                    {l.name}
                  </option>
                ))}
            </select>
          </label>
          <h3>Danger zone</h3>
          <ConfirmButton
            className="danger"
            question={`Delete ${name}? Their messages stay; the contact record goes.`}
            onConfirm={async () => {
              try {
                await call(client.DELETE("/v1/contacts/{id}", { params: { path: { id } } }));
                navigate("/contacts");
              } catch (e) {
                setError(e instanceof ApiError ? e.message : "Could not delete");
              }
            }}
          >
            Delete contact
          </ConfirmButton>
        </section>
        <section className="card" aria-label="Activity">
          <h2>Activity</h2>
          {activity === null ? (
            <p className="muted">Loading…</p>
          ) : activity.length === 0 ? (
            <p className="muted">Nothing yet.</p>
          ) : (
            <ol className="activity">
              {activity.map((a, i) => (
                // biome-ignore lint/suspicious/noArrayIndexKey: entries of a page, shown in order
                <li key={`${a.at}-${i}`}>
                  <span className={`badge kind-${a.type}`}>{TYPE_WORDS[a.type] ?? a.type}</span>{" "}
                  {a.ids.conversation_id && a.type === "message" ? (
                    <Link href={`/inbox/${a.ids.conversation_id}`}>{a.summary}</Link>
                  ) : (
                    a.summary
                  )}
                  <span className="muted small"> · {new Date(a.at).toLocaleString()}</span>
                </li>
              ))}
            </ol>
          )}
          <div className="row">
            <button
              type="button"
              className="secondary"
              disabled={offset === 0}
              onClick={() => setOffset(Math.max(0, offset - PAGE))}
            >
              Newer
            </button>
            <button
              type="button"
              className="secondary"
              disabled={offset + PAGE >= total}
              onClick={() => setOffset(offset + PAGE)}
            >
              Older
            </button>
            <span className="muted small">{total} entries</span>
          </div>
        </section>
      </div>
    </div>
  );
}
