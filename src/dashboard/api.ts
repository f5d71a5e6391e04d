import createClient from "openapi-fetch";
import type { components, paths } from "./api-types.generated";

/**
 * The dashboard's one client of the API: `/v1` with the session cookie (same origin, so the
 * cross-site check passes), and `/auth` for signing in. Every error is the API's `{ok:false,error}`,
 * thrown as ApiError so a form can show it next to its field.
 */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** The untyped call, for the one generic place (ResourceSection, typed there by path): prefer `client`. */
export async function api(method: string, path: string, body?: unknown): Promise<unknown> {
  const response = await fetch(path, {
    method,
    credentials: "same-origin",
    headers: body === undefined ? {} : { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  let parsed: { ok?: boolean; error?: string } | null = null;
  try {
    parsed = await response.json();
  } catch {
    parsed = null;
  }
  if (!response.ok || parsed?.ok === false) {
    if (response.status === 401 && !path.startsWith("/auth/"))
      window.dispatchEvent(new Event("outreach:signed-out"));
    throw new ApiError(response.status, parsed?.error ?? `HTTP ${response.status}`);
  }
  return parsed;
}

/** What `POST /v1/contacts/import` answers. */
export type ImportResult = Posted<"/v1/contacts/import">;

/** Uploads a CSV to the import endpoint, reporting upload progress (0–1) as it goes. */
export function importCsv(csv: Blob, onProgress: (fraction: number) => void): Promise<ImportResult> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open("POST", "/v1/contacts/import");
    xhr.setRequestHeader("content-type", "text/csv");
    xhr.upload.onprogress = (event) => {
      if (event.lengthComputable) onProgress(Math.min(0.99, event.loaded / event.total));
    };
    xhr.onload = () => {
      let body: (ImportResult & { error?: string }) | null = null;
      try {
        body = JSON.parse(xhr.responseText);
      } catch {
        body = null;
      }
      if (xhr.status === 200 && body?.ok) {
        onProgress(1);
        resolve(body);
      } else reject(new ApiError(xhr.status, body?.error ?? `HTTP ${xhr.status}`));
    };
    xhr.onerror = () => reject(new ApiError(0, "Network error"));
    xhr.send(csv);
  });
}

/**
 * The typed client: paths, parameters, bodies and answers are the OpenAPI document's
 * (api-types.generated.ts, from the server's typebox schemas). `call` unwraps an answer or throws
 * the API's error as ApiError, as `api` does.
 */
export const client = createClient<paths>({ baseUrl: "", credentials: "same-origin" });

export async function call<T>(
  request: Promise<{ data?: T; error?: unknown; response: Response }>,
): Promise<T> {
  const { data, error, response } = await request;
  if (data === undefined || !response.ok) {
    // A refused sign-in is not a session that ended.
    if (response.status === 401 && !new URL(response.url, window.location.href).pathname.startsWith("/auth/"))
      window.dispatchEvent(new Event("outreach:signed-out"));
    const message = (error as { error?: string } | undefined)?.error;
    throw new ApiError(response.status, message ?? `HTTP ${response.status}`);
  }
  return data;
}

/** A schema of the OpenAPI document by name. */
export type Schema<K extends keyof components["schemas"]> = components["schemas"][K];
/** What `GET <path>` answers. */
export type Answer<P extends keyof paths> = paths[P] extends {
  get: { responses: { 200: { content: { "application/json": infer A } } } };
}
  ? A
  : never;
/** What `POST <path>` answers. */
export type Posted<P extends keyof paths> = paths[P] extends {
  post: { responses: { 200: { content: { "application/json": infer A } } } };
}
  ? A
  : never;
