import { type FormEvent, type ReactNode, useCallback, useEffect, useState } from "react";
import { ApiError, del, get, type Json, post } from "../api";

export interface Field {
  name: string;
  label: string;
  type?: "text" | "number" | "checkbox" | "select" | "textarea" | "email" | "url";
  options?: string[];
  required?: boolean;
  placeholder?: string;
  /** Turns the form's string into the API's value (default: the string, numbers as numbers). */
  parse?: (value: string) => unknown;
}

export interface Column {
  label: string;
  cell: (row: Json) => ReactNode;
}

/**
 * A resource page's list and create form, written once: the rows of `GET <path>`, a form whose
 * fields post to `<path>`, the API's error shown next to the form, and an optional delete.
 */
export function ResourceSection(props: {
  title: string;
  path: string;
  many: string;
  columns: Column[];
  fields?: Field[];
  createLabel?: string;
  canDelete?: boolean;
  extra?: (row: Json, reload: () => void) => ReactNode;
  onCreated?: (answer: Json) => void;
  /** Reshapes the flat form body before it is posted (e.g. an address object). */
  transform?: (body: Record<string, unknown>) => unknown;
}) {
  const [rows, setRows] = useState<Json[]>([]);
  const [error, setError] = useState<string | null>(null);
  const load = useCallback(async () => {
    try {
      setRows((await get(`${props.path}?limit=200`))[props.many] ?? []);
    } catch (e) {
      setError(e instanceof ApiError ? e.message : "Could not load");
    }
  }, [props.path, props.many]);
  useEffect(() => {
    void load();
  }, [load]);
  async function create(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const formElement = event.currentTarget;
    const form = new FormData(formElement);
    const body: Record<string, unknown> = {};
    for (const field of props.fields ?? []) {
      if (field.type === "checkbox") {
        body[field.name] = form.get(field.name) === "on";
        continue;
      }
      const raw = String(form.get(field.name) ?? "");
      if (raw === "" && !field.required) continue;
      body[field.name] = field.parse ? field.parse(raw) : field.type === "number" ? Number(raw) : raw;
    }
    setError(null);
    try {
      const answer = await post(props.path, props.transform ? props.transform(body) : body);
      formElement.reset();
      props.onCreated?.(answer);
      await load();
    } catch (e) {
      setError(e instanceof ApiError ? e.message : "Could not create");
    }
  }
  // The API names the field at fault: its error shows next to that field, else under the form.
  const errorField = fieldOfError(
    error,
    (props.fields ?? []).map((f) => f.name),
  );
  return (
    <section
      className="card"
      aria-label={props.title}
      id={props.title.toLowerCase().replace(/[^a-z0-9]+/g, "-")}
    >
      <h2>{props.title}</h2>
      {props.fields && (
        <form onSubmit={create} className="grid">
          {props.fields.map((field) => (
            <label
              htmlFor={`${props.path}-${field.name}`}
              key={field.name}
              className={field.type === "checkbox" ? "check" : field.type === "textarea" ? "wide" : ""}
            >
              {field.type === "checkbox" ? (
                <input type="checkbox" id={`${props.path}-${field.name}`} name={field.name} />
              ) : null}
              {field.label}
              {field.type === "select" ? (
                <select id={`${props.path}-${field.name}`} name={field.name} required={field.required}>
                  {(field.options ?? []).map((o) => (
                    <option key={o} value={o}>
                      {o}
                    </option>
                  ))}
                </select>
              ) : field.type === "textarea" ? (
                <textarea
                  id={`${props.path}-${field.name}`}
                  name={field.name}
                  required={field.required}
                  placeholder={field.placeholder}
                />
              ) : field.type === "checkbox" ? null : (
                <input
                  id={`${props.path}-${field.name}`}
                  name={field.name}
                  type={field.type ?? "text"}
                  required={field.required}
                  placeholder={field.placeholder}
                  step={field.type === "number" ? "any" : undefined}
                />
              )}
              {errorField === field.name && (
                <span className="error" role="alert">
                  {error}
                </span>
              )}
            </label>
          ))}
          <button type="submit">{props.createLabel ?? "Create"}</button>
        </form>
      )}
      {error && errorField === null && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
      <table>
        <thead>
          <tr>
            {props.columns.map((c) => (
              <th key={c.label}>{c.label}</th>
            ))}
            {(props.canDelete || props.extra) && <th />}
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr key={row.id ?? JSON.stringify(row)}>
              {props.columns.map((c) => (
                <td key={c.label}>{c.cell(row)}</td>
              ))}
              {(props.canDelete || props.extra) && (
                <td className="row">
                  {props.extra?.(row, () => void load())}
                  {props.canDelete && (
                    <button
                      type="button"
                      className="danger"
                      onClick={() => {
                        const what = row.name ?? row.number ?? row.url ?? "this item";
                        if (!window.confirm(`Delete ${what}? This cannot be undone.`)) return;
                        del(`${props.path}/${row.id}`).then(load, (e) => setError(e.message));
                      }}
                    >
                      Delete
                    </button>
                  )}
                </td>
              )}
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

/** The field an API error names (messages start with the field's path: `ein must look like …`). */
export function fieldOfError(error: string | null, names: string[]): string | null {
  if (!error) return null;
  return (
    names.find(
      (name) => error.startsWith(`${name} `) || error.startsWith(`${name}.`) || error.startsWith(`${name}[`),
    ) ?? null
  );
}

export const lines = (value: string) =>
  value
    .split("\n")
    .map((s) => s.trim())
    .filter(Boolean);
