import { useEffect, useState } from "react";
import { Link } from "wouter";
import { type Answer, ApiError, call, client } from "../../api";

type Contact = Answer<"/v1/contacts/{id}">["contact"];
type Activity = Answer<"/v1/contacts/{id}/activity">["activity"][number];

/**
 * The thread's side panel: who the contact is (fields, opted-in state), the lists they are on,
 * the campaigns that reached them and their conversions — from the contact and its activity.
 */
export function ContactPanel({
  contactId,
  onContact,
}: {
  contactId: string;
  /** Told the contact once loaded (the thread's header falls back to it). */
  onContact?: (contact: Contact) => void;
}) {
  const [contact, setContact] = useState<Contact | null>(null);
  const [activity, setActivity] = useState<Activity[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    setContact(null);
    setActivity(null);
    const path = { params: { path: { id: contactId } } };
    Promise.all([
      call(client.GET("/v1/contacts/{id}", path)),
      call(
        client.GET("/v1/contacts/{id}/activity", {
          params: { path: { id: contactId }, query: { limit: 200 } },
        }),
      ),
    ])
      .then(([c, a]) => {
        if (!live) return;
        setContact(c.contact);
        setActivity(a.activity);
        onContact?.(c.contact);
      })
      .catch((e) => live && setError(e instanceof ApiError ? e.message : "Could not load the contact"));
    return () => {
      live = false;
    };
  }, [contactId, onContact]);

  if (error)
    return (
      <aside className="contact-panel" aria-label="Contact">
        <p className="error">{error}</p>
      </aside>
    );
  if (!contact || !activity)
    return (
      <aside className="contact-panel" aria-label="Contact">
        <p className="muted">Loading the contact…</p>
      </aside>
    );
  const name = [contact.first_name, contact.last_name].filter(Boolean).join(" ") || "No name";
  const lists = activity.filter((a) => a.type === "list_added");
  const conversions = activity.filter((a) => a.type === "conversion");
  const campaigns = new Map<string, Activity>();
  for (const a of activity)
    if (a.type === "message" && a.ids.campaign_id && !campaigns.has(a.ids.campaign_id))
      campaigns.set(a.ids.campaign_id, a);
  const fields = Object.entries(contact.fields ?? {});
  return (
    <aside className="contact-panel" aria-label="Contact">
      <h2>{name}</h2>
      <p className={contact.opted_in ? "state ok" : "state danger"}>
        {contact.opted_in ? "Opted in" : "Opted out — no message can be sent"}
      </p>
      <dl>
        <dt>Phone</dt>
        <dd>{contact.phone_number}</dd>
        {contact.email && (
          <>
            <dt>E-mail</dt>
            <dd>{contact.email}</dd>
          </>
        )}
        {contact.timezone && (
          <>
            <dt>Time zone</dt>
            <dd>{contact.timezone}</dd>
          </>
        )}
        {fields.map(([key, value]) => (
          <div key={key} className="pair">
            <dt className="field-key">{key.replaceAll("_", " ")}</dt>
            <dd>{String(value)}</dd>
          </div>
        ))}
      </dl>
      <h3>Lists</h3>
      {lists.length === 0 ? (
        <p className="muted small">On no list.</p>
      ) : (
        <ul className="plain">
          {lists.map((l) => (
            <li key={l.ids.list_id}>{l.summary.replace(/^Added to list /, "").replaceAll('"', "")}</li>
          ))}
        </ul>
      )}
      <h3>Recent campaigns</h3>
      {campaigns.size === 0 ? (
        <p className="muted small">No campaign reached this contact.</p>
      ) : (
        <ul className="plain">
          {[...campaigns.entries()].slice(0, 5).map(([id, a]) => (
            <li key={id}>
              <Link href={`/campaigns/${id}`}>Campaign</Link>{" "}
              <span className="muted small">{new Date(a.at).toLocaleDateString()}</span>
            </li>
          ))}
        </ul>
      )}
      <h3>Conversions</h3>
      {conversions.length === 0 ? (
        <p className="muted small">None yet.</p>
      ) : (
        <ul className="plain">
          {conversions.slice(0, 5).map((c) => (
            <li key={c.ids.conversion_id}>
              {c.summary.replace(/^Converted: /, "")}{" "}
              <span className="muted small">{new Date(c.at).toLocaleDateString()}</span>
            </li>
          ))}
        </ul>
      )}
      <p>
        <Link href={`/contacts/${contact.id}`}>Open the contact's page</Link>
      </p>
    </aside>
  );
}
