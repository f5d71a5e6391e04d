import { useCallback, useEffect, useState } from "react";
import { type Answer, ApiError, call, client } from "../../api";
import { ContactPicker } from "../../components/ContactPicker";
import { OUTCOME_WORDS } from "./words";

type Preview = Answer<"/v1/campaigns/{id}/preview">["preview"];

/**
 * The campaign's dry run: the audience's totals, the content warnings and the first 50 contacts with
 * what would happen to each; or, with a contact chosen, that contact's message exactly as it would get
 * it (merge fields, variant, sender, send time), or that it is not in the audience.
 */
export function PreviewPanel({ id }: { id: string }) {
  const [contactId, setContactId] = useState("");
  const [preview, setPreview] = useState<Preview | null>(null);
  const [error, setError] = useState<string | null>(null);
  const load = useCallback(async () => {
    setError(null);
    try {
      const query = contactId ? { contact_id: contactId } : { limit: 50 };
      setPreview(
        (await call(client.GET("/v1/campaigns/{id}/preview", { params: { path: { id }, query } }))).preview,
      );
    } catch (e) {
      setError(e instanceof ApiError ? e.message : "Could not preview the campaign");
    }
  }, [id, contactId]);
  useEffect(() => {
    void load();
  }, [load]);
  return (
    <section className="card" aria-label="Preview">
      <h2>Preview</h2>
      <div className="row preview-picker">
        <ContactPicker
          value={contactId}
          onChange={setContactId}
          none="The first 50 of the audience"
          label="Preview for"
        />
      </div>
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
      {!preview && !error && <p className="muted">Planning the campaign…</p>}
      {preview && (
        <>
          <p>
            {preview.recipients} recipients: {preview.sendable} would be sent now, {preview.deferred} would
            wait,{" "}
            {Object.entries(preview.skipped)
              .map(([reason, n]) => `${n} skipped (${reason.replaceAll("_", " ")})`)
              .join(", ") || "none skipped"}
            .
          </p>
          {preview.warnings.map((w) => (
            <p key={w.code} className="warn">
              {w.message}
            </p>
          ))}
          {contactId && preview.contacts.length === 0 ? (
            <p className="muted" data-testid="preview-not-in-audience">
              This contact is not in the campaign's audience: it would not get the message.
            </p>
          ) : (
            <table>
              <thead>
                <tr>
                  <th>Phone</th>
                  <th>What happens</th>
                  <th>Why</th>
                  <th>From</th>
                  <th>Their message</th>
                </tr>
              </thead>
              <tbody>
                {preview.contacts.map((c) => (
                  <tr key={c.contact_id}>
                    <td>{c.phone_number}</td>
                    <td>
                      {OUTCOME_WORDS[c.outcome] ?? c.outcome}
                      {c.outcome === "defer" && c.send_at && (
                        <span className="muted small"> until {new Date(c.send_at).toLocaleString()}</span>
                      )}
                    </td>
                    <td>{(c.reason ?? "").replaceAll("_", " ")}</td>
                    <td>{c.from ?? ""}</td>
                    <td className="preview-body">
                      {c.variant && <span className="badge">{c.variant}</span>} {c.body ?? ""}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </>
      )}
    </section>
  );
}
