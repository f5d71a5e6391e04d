import { checkResolvedTarget } from "./targets";

/** How much of a receiver's answer is read; the rest is discarded unread. */
export const MAX_RESPONSE_READ = 64 * 1024;
/** How much of it is kept in the delivery log. */
export const MAX_RESPONSE_STORED = 2 * 1024;
/** Longest Retry-After that is honoured. */
const MAX_RETRY_AFTER_MS = 24 * 3_600_000;

export interface WebhookRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
  allowPrivate: boolean;
}

export interface WebhookResponse {
  /** 2xx. */
  ok: boolean;
  /** HTTP status, or null when there was no answer (refused, timed out, reset, blocked). */
  status: number | null;
  /** The first 2 KiB of the answer. */
  body: string | null;
  /** Why there was no 2xx answer, or null. */
  error: string | null;
  durationMs: number;
  /** The receiver's Retry-After, in ms, when it sent one. */
  retryAfterMs: number | null;
}

/** Reads at most `limit` bytes of a body, then drops the connection's remaining bytes. */
async function readCapped(response: Response, limit: number): Promise<Uint8Array> {
  const reader = response.body?.getReader();
  if (!reader) return new Uint8Array();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < limit) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.byteLength;
    }
  } finally {
    if (size >= limit) await reader.cancel().catch(() => {});
    else reader.releaseLock();
  }
  const out = new Uint8Array(Math.min(size, limit));
  let offset = 0;
  for (const chunk of chunks) {
    const take = Math.min(chunk.byteLength, out.byteLength - offset);
    out.set(chunk.subarray(0, take), offset);
    offset += take;
    if (offset >= out.byteLength) break;
  }
  return out;
}

function parseRetryAfter(value: string | null, now: number): number | null {
  if (!value) return null;
  const trimmed = value.trim();
  const ms = /^\d+$/.test(trimmed) ? Number(trimmed) * 1000 : Date.parse(trimmed) - now;
  if (!Number.isFinite(ms) || ms < 0) return null;
  return Math.min(ms, MAX_RETRY_AFTER_MS);
}

/**
 * One delivery attempt: POSTs the signed body, without following redirects (a 3xx is a failure),
 * giving up after `timeoutMs`, and reading at most 64 KiB of the answer. Never throws.
 */
export async function postWebhook(request: WebhookRequest): Promise<WebhookResponse> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const blocked = await checkResolvedTarget(request.url, request.allowPrivate, request.timeoutMs);
  if (blocked) {
    return { ok: false, status: null, body: null, error: blocked, durationMs: elapsed(), retryAfterMs: null };
  }
  const signal = AbortSignal.timeout(request.timeoutMs);
  try {
    const response = await fetch(request.url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "user-agent": "outreach-webhooks/1.0",
        ...request.headers,
      },
      body: request.body,
      redirect: "manual",
      signal,
    });
    const bytes = await readCapped(response, MAX_RESPONSE_READ);
    const text = new TextDecoder().decode(bytes.subarray(0, MAX_RESPONSE_STORED));
    const ok = response.status >= 200 && response.status < 300;
    let error: string | null = null;
    if (response.status >= 300 && response.status < 400) error = `redirect (${response.status}) not followed`;
    else if (!ok) error = `HTTP ${response.status}`;
    return {
      ok,
      status: response.status,
      body: text,
      error,
      durationMs: elapsed(),
      retryAfterMs: ok ? null : parseRetryAfter(response.headers.get("retry-after"), Date.now()),
    };
  } catch (error) {
    const timedOut = signal.aborted;
    const message = timedOut
      ? `timed out after ${request.timeoutMs} ms`
      : ((error as Error).message ?? String(error)).slice(0, 500);
    return { ok: false, status: null, body: null, error: message, durationMs: elapsed(), retryAfterMs: null };
  }
}
