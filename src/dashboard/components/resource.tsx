import { type FormEvent, type ReactNode, useCallback, useEffect, useState } from "react";
import { type Answer, ApiError, api, type Posted } from "../api";
import type { paths } from "../api-types.generated";
import { ConfirmButton, ErrorAlert } from "./feedback";

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

export interface Column<Row> {
  label: string;
  cell: (row: Row) => ReactNode;
}

/** The rows `GET <P>` lists under `many` (e.g. `/v1/offers`, `offers`), as the OpenAPI document types them. */
export type Listed<P extends keyof paths, K extends string> =
  Answer<P> extends { [k in K]: (infer R)[] } ? R : never;

/** What the section reads of any row: its id, and a name for the delete confirmation. */
type Named = { id?: string; name?: string; number?: string; url?: string };
/** How a delete confirmation names a row. */
const nameOf = (row: Named) => row.name ?? row.number ?? row.url ?? "this item";

/**
 * A resource page's list and create form, written once: the rows of `GET <path>`, a form whose
 * fields post to `<path>`, the API's error shown next to the form, and an optional delete. The rows
 * and the create answer carry the OpenAPI document's types for that path.
 */
export function ResourceSection<P extends keyof paths, K extends string>(props: {
  title: string;
  path: P;
  many: K;
  columns: Column<Listed<P, K>>[];
  fields?: Field[];
  createLabel?: string;
  canDelete?: boolean;
  extra?: (row: Listed<P, K>, reload: () => void) => ReactNode;
  onCreated?: (answer: Posted<P>) => void;
  /** Reshapes the flat form body before it is posted (e.g. an address object). */
  transform?: (body: Record<string, unknown>) => unknown;
}) {
  const [rows, setRows] = useState<Listed<P, K>[]>([]);
  const [error, setError] = useState<string | null>(null);
  const load = useCallback(async () => {
    try {
      // The one generic read: the answer of GET <path> is typed by the path (Listed).
      const answer = (await api("GET", `${props.path}?limit=200`)) as { [k in K]?: Listed<P, K>[] };
      setRows(answer[props.many] ?? []);
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
      const answer = await api("POST", props.path, props.transform ? props.transform(body) : body);
      formElement.reset();
      props.onCreated?.(answer as Posted<P>);
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
      {errorField === null && <ErrorAlert error={error} />}
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
            <tr key={(row as Named).id ?? JSON.stringify(row)}>
              {props.columns.map((c) => (
                <td key={c.label}>{c.cell(row)}</td>
              ))}
              {(props.canDelete || props.extra) && (
                <td className="row">
                  {props.extra?.(row, () => void load())}
                  {props.canDelete && (
                    <ConfirmButton
                      className="danger"
                      question={`Delete ${nameOf(row as Named)}? This cannot be undone.`}
                      onConfirm={() =>
                        api("DELETE", `${props.path}/${(row as Named).id}`).then(load, (e) =>
                          setError(e.message),
                        )
                      }
                    >
                      Delete
                    </ConfirmButton>
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
