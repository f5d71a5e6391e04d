import http from "node:http";
import https from "node:https";
import type { LookupFunction } from "node:net";
import { type ResolvedTarget, type Resolver, resolveTarget } from "./targets";

/** How much of a receiver's answer is read and kept in the delivery log; the rest is never read. */
export const MAX_RESPONSE_READ = 1024;
/** How much of it is kept in the delivery log (API.md §7.2: at most 1 KiB). */
export const MAX_RESPONSE_STORED = 1024;
/** Longest Retry-After that is honoured. */
const MAX_RETRY_AFTER_MS = 24 * 3_600_000;

export interface WebhookRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
  allowPrivate: boolean;
  /** How the host name is resolved (tests); the system resolver by default. */
  resolve?: Resolver;
}

export interface WebhookResponse {
  /** 2xx. */
  ok: boolean;
  /** HTTP status, or null when there was no answer (refused, timed out, reset, blocked). */
  status: number | null;
  /** The first 1 KiB of the answer. */
  body: string | null;
  /** Why there was no 2xx answer, or null. */
  error: string | null;
  durationMs: number;
  /** The receiver's Retry-After, in ms, when it sent one. */
  retryAfterMs: number | null;
}

interface RawAnswer {
  status: number;
  retryAfter: string | null;
  body: Uint8Array;
}

/**
 * POSTs to the checked address and no other: the connection's lookup answers the address that
 * resolveTarget checked, while the Host header and TLS server name stay the URL's host. Reads at most
 * `limit` bytes of the answer, then drops the connection.
 */
function post(
  target: Extract<ResolvedTarget, { ok: true }>,
  headers: Record<string, string>,
  body: string,
  limit: number,
  signal: AbortSignal,
): Promise<RawAnswer> {
  const { url, address, family } = target;
  const pinned: LookupFunction = (_host, options, callback) => {
    if ((options as { all?: boolean }).all)
      (callback as unknown as (e: null, a: { address: string; family: number }[]) => void)(null, [
        { address, family },
      ]);
    else callback(null, address, family);
  };
  const client = url.protocol === "https:" ? https : http;
  return new Promise((resolve, reject) => {
    const request = client.request(
      {
        method: "POST",
        hostname: target.host,
        port: url.port || (url.protocol === "https:" ? 443 : 80),
        path: `${url.pathname}${url.search}`,
        headers: { ...headers, host: url.host, "content-length": String(Buffer.byteLength(body)) },
        lookup: pinned,
        servername: target.host === address ? undefined : target.host,
        agent: false,
        signal,
      },
      (response) => {
        const chunks: Buffer[] = [];
        let size = 0;
        let settled = false;
        const settle = () => {
          if (settled) return;
          settled = true;
          const all = Buffer.concat(chunks);
          resolve({
            status: response.statusCode ?? 0,
            retryAfter: (response.headers["retry-after"] as string | undefined) ?? null,
            body: new Uint8Array(all.subarray(0, Math.min(all.byteLength, limit))),
          });
          response.destroy();
        };
        response.on("data", (chunk: Buffer) => {
          chunks.push(chunk);
          size += chunk.byteLength;
          if (size >= limit) settle();
        });
        response.on("end", settle);
        response.on("close", settle);
        response.on("error", settle);
      },
    );
    request.on("error", reject);
    request.end(body);
  });
}

function parseRetryAfter(value: string | null, now: number): number | null {
  if (!value) return null;
  const trimmed = value.trim();
  const ms = /^\d+$/.test(trimmed) ? Number(trimmed) * 1000 : Date.parse(trimmed) - now;
  if (!Number.isFinite(ms) || ms < 0) return null;
  return Math.min(ms, MAX_RETRY_AFTER_MS);
}

/**
 * One delivery attempt: resolves the host once, refuses an address webhooks may not target (nothing
 * is sent), then POSTs the signed body to that address, without following redirects (a 3xx is a
 * failure), giving up after `timeoutMs`, and reading at most 1 KiB of the answer. Never throws.
 */
export async function postWebhook(request: WebhookRequest): Promise<WebhookResponse> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const target = await resolveTarget(request.url, request.allowPrivate, request.timeoutMs, request.resolve);
  if (!target.ok) {
    return {
      ok: false,
      status: null,
      body: null,
      error: target.error,
      durationMs: elapsed(),
      retryAfterMs: null,
    };
  }
  const signal = AbortSignal.timeout(request.timeoutMs);
  try {
    const response = await post(
      target,
      { "content-type": "application/json", "user-agent": "outreach-webhooks/1.0", ...request.headers },
      request.body,
      MAX_RESPONSE_READ,
      signal,
    );
    const text = new TextDecoder().decode(response.body.subarray(0, MAX_RESPONSE_STORED));
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
      retryAfterMs: ok ? null : parseRetryAfter(response.retryAfter, Date.now()),
    };
  } catch (error) {
    const timedOut = signal.aborted;
    const message = timedOut
      ? `timed out after ${request.timeoutMs} ms`
      : ((error as Error).message ?? String(error)).slice(0, 500);
    return { ok: false, status: null, body: null, error: message, durationMs: elapsed(), retryAfterMs: null };
  }
}
