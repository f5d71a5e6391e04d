import { useCallback, useEffect, useState } from "react";
import { Link, useLocation } from "wouter";
import { type Answer, ApiError, call, client, type ImportResult, importCsv } from "../../api";
import { useSubmit } from "../../components/useSubmit";

type Contact = Answer<"/v1/contacts">["contacts"][number];

import { ErrorAlert } from "../../components/feedback";
import { ContactPage } from "./ContactPage";

const PAGE = 50;

/** Contacts: the searchable list (with add and import), or one contact's page. */
export function ContactsPage({ contactId }: { contactId: string | null }) {
  return contactId ? <ContactPage id={contactId} /> : <ContactList />;
}

/** Adds a contact by number and name; opens its page. */
function AddContact() {
  const [, navigate] = useLocation();
  const { error, onSubmit: add } = useSubmit(async (form) => {
    const body = {
      phone_number: String(form.get("phone_number") ?? ""),
      first_name: String(form.get("first_name") ?? "") || null,
      last_name: String(form.get("last_name") ?? "") || null,
      email: String(form.get("email") ?? "") || null,
    };
    const answer = await call(client.POST("/v1/contacts", { body }));
    navigate(`/contacts/${answer.contact.id}`);
  }, "Could not add the contact");
  return (
    <section className="card" aria-label="Add a contact">
      <h2>Add a contact</h2>
      <form onSubmit={add} className="row">
        <label>
          Phone number
          <input name="phone_number" required placeholder="+1 415 555 0123" />
        </label>
        <label>
          First name
          <input name="first_name" />
        </label>
        <label>
          Last name
          <input name="last_name" />
        </label>
        <label>
          E-mail
          <input name="email" type="email" />
        </label>
        <button type="submit">Add contact</button>
      </form>
      <ErrorAlert error={error} />
    </section>
  );
}

/** Contacts a page at a time with search, add, and CSV import with a progress bar of the upload. */
function ContactList() {
  const [rows, setRows] = useState<Contact[] | null>(null);
  const [q, setQ] = useState("");
  const [total, setTotal] = useState(0);
  const [offset, setOffset] = useState(0);
  const [progress, setProgress] = useState<number | null>(null);
  const [result, setResult] = useState<ImportResult | null>(null);
  const [error, setError] = useState<string | null>(null);
  const load = useCallback(async () => {
    try {
      const query = { limit: PAGE, offset, ...(q.trim() ? { q: q.trim() } : {}) };
      const answer = await call(client.GET("/v1/contacts", { params: { query } }));
      setRows(answer.contacts);
      setTotal(answer.total);
    } catch (e) {
      setError(e instanceof ApiError ? e.message : "Could not load the contacts");
    }
  }, [offset, q]);
  useEffect(() => {
    const timer = setTimeout(() => void load(), 200);
    return () => clearTimeout(timer);
  }, [load]);

  async function upload(file: File) {
    setError(null);
    setResult(null);
    setProgress(0);
    try {
      setResult(await importCsv(file, setProgress));
      await load();
    } catch (e) {
      setError(e instanceof ApiError ? e.message : "Import failed");
      setProgress(null);
    }
  }
  return (
    <div className="page">
      <h1>Contacts</h1>
      <AddContact />
      <section className="card" aria-label="Import">
        <h2>Import a CSV</h2>
        <p className="muted">
          A header row with phone_number, and any of first_name, last_name, email, external_id, timezone.
        </p>
        <input
          type="file"
          accept=".csv,text/csv"
          aria-label="CSV file"
          onChange={(e) => {
            const file = e.target.files?.[0];
            if (file) void upload(file);
          }}
        />
        {progress !== null && (
          <div className="progress">
            <progress value={Math.round(progress * 100)} max={100} aria-label="Import progress" />
            <span data-testid="import-percent">{Math.round(progress * 100)} %</span>
          </div>
        )}
        {result && (
          <p role="status">
            Created {result.created}, updated {result.updated}, skipped {result.skipped}
            {result.errors?.length ? `, ${result.errors.length} rows with errors` : ""}.
          </p>
        )}
        <ErrorAlert error={error} />
      </section>
      <label className="search">
        Search
        <input
          type="search"
          value={q}
          placeholder="Name, number or e-mail"
          onChange={(e) => {
            setOffset(0);
            setQ(e.target.value);
          }}
        />
      </label>
      <p className="muted" aria-live="polite">
        {rows === null ? "Loading contacts…" : `${total} contacts`}
      </p>
      {rows !== null && rows.length === 0 && (
        <p className="muted">{q ? "No contact matches." : "No contacts yet."}</p>
      )}
      <table>
        <thead>
          <tr>
            <th>Name</th>
            <th>Phone</th>
            <th>E-mail</th>
            <th>Opted in</th>
          </tr>
        </thead>
        <tbody>
          {(rows ?? []).map((c) => (
            <tr key={c.id}>
              <td>
                <Link href={`/contacts/${c.id}`}>
                  {[c.first_name, c.last_name].filter(Boolean).join(" ") || "No name"}
                </Link>
              </td>
              <td>{c.phone_number}</td>
              <td>{c.email ?? ""}</td>
              <td>{c.opted_in ? "yes" : "no"}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <div className="row">
        <button type="button" disabled={offset === 0} onClick={() => setOffset(Math.max(0, offset - PAGE))}>
          Previous
        </button>
        <button type="button" disabled={offset + PAGE >= total} onClick={() => setOffset(offset + PAGE)}>
          Next
        </button>
      </div>
    </div>
  );
}
