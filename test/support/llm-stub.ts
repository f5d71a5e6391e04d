/**
 * A local OpenAI-compatible chat-completions server for tests: a real HTTP server (Bun.serve on a
 * random port) answering POST `/v1/chat/completions`, scriptable per request. Used by the engine's
 * adapter tests and by end-to-end agent tests (start the server with `LLM_BASE_URL=<stub.url>`).
 *
 * Every request is recorded (method, path, headers, raw text and parsed body) before it is answered.
 * Other paths answer 404 with an OpenAI-style error, so a wrong URL fails the caller visibly.
 */

/** One `content` part of a message (the array form of `message.content`). */
export interface StubContentPart {
  type: string;
  text?: string;
  [key: string]: unknown;
}

/**
 * What the stub answers to one request:
 * - `{content}`: a normal completion whose message has this content (`finishReason` defaults to "stop");
 * - `{refusal}`: a completion whose message refuses (`content: null`, `refusal` set);
 * - `{status, body?, headers?}`: that HTTP status; `body` is sent as is when a string, as JSON otherwise;
 * - `{raw}`: a 200 whose body is this text (not JSON);
 * - `{delayMs, then}`: waits, then answers `then` (the wait ends early if the client goes away);
 *   `delayed(ms, reply)` builds it.
 */
export type StubReply =
  | { content: string | StubContentPart[]; finishReason?: string }
  | { refusal: string }
  | { status: number; body?: unknown; headers?: Record<string, string> }
  | { raw: string }
  | { delayMs: number; then: StubReply };

/** The chat-completions request body, as far as tests read it (whatever else was sent is kept too). */
export interface StubChatBody {
  model?: string;
  messages?: { role: string; content: string }[];
  temperature?: number;
  response_format?: {
    type: string;
    json_schema?: { name?: string; strict?: boolean; schema?: Record<string, unknown> };
  };
  [key: string]: unknown;
}

export interface StubRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  /** The body as sent. */
  text: string;
  /** The body parsed as JSON ({} when it was not JSON). */
  body: StubChatBody;
}

/** Decides the answer to a request: `n` counts requests from 1 since the script was set. */
export type StubScript = (body: StubChatBody, n: number) => StubReply | Promise<StubReply>;

export interface LlmStub {
  /** The API base to configure (ends with `/v1`, like `https://api.openai.com/v1`). */
  url: string;
  /** Every request received, oldest first. */
  requests: StubRequest[];
  /** Answers the following requests with `fn` (and restarts its request count). */
  script(fn: StubScript): void;
  /** Forgets the recorded requests and goes back to the default script. */
  reset(): void;
  close(): void;
}

/** The answer of the default script: a valid agent answer. */
export const STUB_ANSWER = {
  reply: "Thanks for your message! How can I help?",
  intent: "low",
  sentiment: "neutral",
  confidence: 0.9,
  goal_reached: false,
  captured: {},
  handoff: null,
} as const;

/** The default script: always the valid STUB_ANSWER. */
export const answerStubDefault: StubScript = () => ({ content: JSON.stringify(STUB_ANSWER) });

/** A script answering `replies` in order, then repeating the last one. */
export function inOrder(...replies: StubReply[]): StubScript {
  if (replies.length === 0) throw new Error("inOrder needs at least one reply");
  return (_body, n) => replies[Math.min(n, replies.length) - 1];
}

/** `{delayMs, then}` without writing a `then` key by hand (lint flags object literals that look thenable). */
export function delayed(delayMs: number, reply: StubReply): StubReply {
  // biome-ignore lint/suspicious/noThenProperty: `then` is the stub's documented key, never called
  return { delayMs, then: reply };
}

let completionCount = 0;

function completion(body: StubChatBody, message: Record<string, unknown>, finishReason: string) {
  completionCount++;
  return {
    id: `chatcmpl-stub-${completionCount}`,
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model: body.model ?? "stub-model",
    choices: [{ index: 0, message: { role: "assistant", ...message }, finish_reason: finishReason }],
    usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 },
  };
}

/** Waits `ms`, or less if the request is abandoned by the client. */
function wait(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      "abort",
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });
}

async function respond(reply: StubReply, body: StubChatBody, signal: AbortSignal): Promise<Response> {
  if ("delayMs" in reply) {
    await wait(reply.delayMs, signal);
    return respond(reply.then, body, signal);
  }
  if ("content" in reply) {
    return Response.json(completion(body, { content: reply.content }, reply.finishReason ?? "stop"));
  }
  if ("refusal" in reply) {
    return Response.json(completion(body, { content: null, refusal: reply.refusal }, "stop"));
  }
  if ("raw" in reply) {
    return new Response(reply.raw, { headers: { "content-type": "text/plain" } });
  }
  const headers = new Headers(reply.headers);
  if (reply.body === undefined) return new Response(null, { status: reply.status, headers });
  if (typeof reply.body === "string") return new Response(reply.body, { status: reply.status, headers });
  if (!headers.has("content-type")) headers.set("content-type", "application/json");
  return new Response(JSON.stringify(reply.body), { status: reply.status, headers });
}

function openAiError(status: number, message: string): Response {
  return Response.json({ error: { message, type: "invalid_request_error", code: null } }, { status });
}

/** Starts a stub on 127.0.0.1 and a random port. */
export async function startLlmStub(): Promise<LlmStub> {
  const requests: StubRequest[] = [];
  let current: StubScript = answerStubDefault;
  let counted = 0;
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    idleTimeout: 0,
    fetch: async (request) => {
      const path = new URL(request.url).pathname;
      const text = await request.text();
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = undefined;
      }
      const body = (typeof parsed === "object" && parsed !== null ? parsed : {}) as StubChatBody;
      requests.push({ method: request.method, path, headers: request.headers.toJSON(), text, body });
      if (path !== "/v1/chat/completions") return openAiError(404, `Unknown path ${path}`);
      if (request.method !== "POST") return openAiError(405, `Method ${request.method} not allowed`);
      if (parsed === undefined) return openAiError(400, "Request body is not JSON");
      counted++;
      return respond(await current(body, counted), body, request.signal);
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}/v1`,
    requests,
    script(fn) {
      current = fn;
      counted = 0;
    },
    reset() {
      requests.length = 0;
      current = answerStubDefault;
      counted = 0;
    },
    close() {
      server.stop(true);
    },
  };
}
