import { useCallback, useEffect, useState } from "react";
import { ApiError, get, importCsv, type Json } from "../api";

const PAGE = 50;

/** Contacts a page at a time, and CSV import with a progress bar of the upload. */
export function ContactsPage() {
  const [rows, setRows] = useState<Json[]>([]);
  const [total, setTotal] = useState(0);
  const [offset, setOffset] = useState(0);
  const [progress, setProgress] = useState<number | null>(null);
  const [result, setResult] = useState<Json>(null);
  const [error, setError] = useState<string | null>(null);
  const load = useCallback(async () => {
    const answer = await get(`/v1/contacts?limit=${PAGE}&offset=${offset}`);
    setRows(answer.contacts);
    setTotal(answer.total);
  }, [offset]);
  useEffect(() => {
    void load();
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
        {error && (
          <p className="error" role="alert">
            {error}
          </p>
        )}
      </section>
      <p className="muted">{total} contacts</p>
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
          {rows.map((c) => (
            <tr key={c.id}>
              <td>{[c.first_name, c.last_name].filter(Boolean).join(" ")}</td>
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
