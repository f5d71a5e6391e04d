import { toOpenAPISchema } from "@elysiajs/openapi";
import { type AnyElysia, Elysia } from "elysia";
import { needsKey } from "../http/access";
import {
  ERROR_DESCRIPTIONS_KEYWORD,
  ERROR_STATUSES_KEYWORD,
  errorResponseDoc,
  QUERY_INTEGER_KEYWORD,
} from "../http/schemas";
import { EVENT_SUMMARIES, EVENT_TYPES, eventSchemaName } from "../webhooks/events";
import { PLANNED } from "./planned";

// biome-ignore lint/suspicious/noExplicitAny: walks an arbitrary JSON document
type Json = any;

const OPENAPI_VERSION = "3.1.2";
const EXCLUDED_PATHS = ["/docs", "/docs/scalar.js", "/v1/openapi.json"];

/** The reference's sections, in reading order; every operation's tag is one of these. */
export const TAGS: { name: string; description: string }[] = [
  {
    name: "Auth",
    description:
      "Who a key is. Every request under `/v1` sends `Authorization: Bearer opk_...`; keys are made with `outreach keys create` (or `POST /v1/api-keys`) and carry the scopes `read` and `write`. The dashboard calls `/v1` with its session cookie instead (see Account).",
  },
  {
    name: "Account",
    description:
      "The dashboard's sign-in, outside `/v1`: e-mail and password (argon2id), the session cookie `outreach_session` (HttpOnly, SameSite=Lax, Secure on https, 30 days sliding; only its SHA-256 is stored), one-time setup links and password changes. With the cookie, `/v1` acts as the user in the session's workspace: an `admin` may do everything; an `agent` reads all but settings, API keys and users and writes conversations only (other writes: 403 `This account cannot create and edit.`). Writes with the cookie, and sign-in itself, are refused 403 `Cross-site request refused` unless `Sec-Fetch-Site` is `same-origin` or `none` or, without it, `Origin` matches the host.",
  },
  {
    name: "API keys",
    description:
      "The workspace's API keys, as the dashboard manages them: listed with their prefix, scopes and last use, created (the key is shown once) and revoked (effective on the next request). Needs the `write` scope, even to list.",
  },
  {
    name: "Users",
    description:
      "Who may sign in to the workspace's dashboard, with a role: `admin` or `agent`. Inviting answers a one-time setup link (24 h); the last admin cannot be removed or demoted. Needs the `write` scope, even to list.",
  },
  {
    name: "Settings",
    description:
      "The workspace's settings: name, timezone, default sending number, keyword replies and quiet hours.",
  },
  {
    name: "Contacts",
    description:
      "The people a workspace reaches, unique by phone number (E.164), with custom `fields`; created one by one or imported from CSV or JSON.",
  },
  { name: "Lists", description: "Static groups of contacts, filled and emptied by id or phone number." },
  {
    name: "Segments",
    description:
      "Live audiences defined by rules over contact fields, list membership and activity; counted and listed at the time of asking.",
  },
  {
    name: "Suppression",
    description:
      "Phone numbers never to be messaged: added by hand, by STOP keywords and by carrier reports. A suppressed number is refused by every send.",
  },
  {
    name: "Messages",
    description:
      "One-off SMS and the record of every message sent or received, with its status lifecycle (`PENDING → QUEUED → SENT → DELIVERED | UNDELIVERED | FAILED`; inbound `RECEIVED`).",
  },
  {
    name: "Calls",
    description:
      "One-off voice calls — a voice agent through the voice provider (`VOICE=simulated|retell`) or text spoken through the carrier (`say`) — with their lifecycle (`QUEUED → RINGING → IN_PROGRESS → COMPLETED | BUSY | NO_ANSWER | FAILED | VOICEMAIL`), transcript, summary and recording.",
  },
  {
    name: "Flows",
    description:
      "Journeys in React Flow's node/edge format: a trigger enrolls contacts, and each run moves through sends, waits, branches, agents, calls and webhooks as durable rows advanced by the flow's dispatcher, under the same send-time rules as campaigns. Stats, runs, and a simulator on a virtual clock.",
  },
  {
    name: "Conversations",
    description:
      "The inbox: one thread per contact, with triage (open or closed, assignee, needs attention) and replies from the team.",
  },
  {
    name: "Agents",
    description:
      "AI SMS agents that answer threads (reply loop, handoff to people, capture, conversions, follow-ups), their test chat, and the voices catalogue. Only `active` agents act; the engine is the built-in offline one unless `LLM_BASE_URL` names an OpenAI-compatible server.",
  },
  {
    name: "Numbers",
    description:
      "Phone numbers the workspace sends from: searched and ordered at the carrier, capped per day, released.",
  },
  {
    name: "Pools",
    description: "Groups of numbers a send rotates across (sticky sender per contact, daily caps respected).",
  },
  {
    name: "Campaigns",
    description:
      "Bulk SMS to lists, segments and contacts: launched, paused, resumed or canceled; every recipient sent, deferred by the send-time rules or skipped with a reason, with a dry-run preview and live stats.",
  },
  {
    name: "Offers",
    description:
      "Destinations behind tracked links: each has its own link, and `{{offer_url}}` in a campaign gives every recipient a link of their own.",
  },
  {
    name: "Link domains",
    description:
      "Branded link domains (`go.acmebikes.com`): a host name of the workspace's own, pointed at this server and verified by an HTTP check, on which every tracked link of the workspace goes out (the default, or the one a campaign, offer, flow node or agent names) instead of PUBLIC_URL.",
  },
  {
    name: "Tracking",
    description:
      "Public endpoints a browser calls, without an API key and limited per address: tracked links (`/r/<code>`, a click then a 302, on PUBLIC_URL or any branded link domain), the tracking script `/t.js` and its reports, and the link domain check's answer (`/.well-known/outreach/<token>`).",
  },
  {
    name: "Conversions",
    description:
      "Server-side conversions, matched to a contact by the strongest identifier and credited to the contact's last click within 30 days.",
  },
  {
    name: "Analytics",
    description:
      "Figures over a window (default the last 30 days): totals, a metric per hour or day, campaigns with cost and ROI, sending numbers with their delivery rate.",
  },
  {
    name: "Webhooks",
    description:
      "Subscriptions that receive events as signed HTTP POSTs (Standard Webhooks), with retries, a delivery log and replay.",
  },
  {
    name: "Webhook events",
    description:
      "What a subscription receives: one signed POST per event, `{type, timestamp, data}`, with the headers `webhook-id`, `webhook-timestamp` and `webhook-signature`.",
  },
  {
    name: "Sandbox",
    description:
      "The simulated carrier (`CARRIER=simulated`): inject inbound messages and read every hand-off it accepted, with no network.",
  },
  {
    name: "Carrier callbacks",
    description:
      "Called by the carrier, not by API clients: delivery reports and inbound messages. No API key; the carrier's signature is checked and a forged call answers 401.",
  },
  { name: "System", description: "Health check and Prometheus metrics, without an API key." },
  {
    name: "10DLC and short codes",
    description:
      "US A2P registration: 10DLC brands and campaigns checked with the registry's rules and a pre-flight of what carriers reject before a fee is paid, reviewed by the carrier (the simulated one decides within seconds; with Twilio, registration happens in its console), and short-code requests. `settings.require_registration` makes sends from unregistered US local numbers skip or fail.",
  },
  // Parts of the API not built yet (src/api/planned.ts) get their tag only while there are any.
  ...(PLANNED.length
    ? [
        {
          name: "Not built yet",
          description:
            "Parts of the API this version does not have. Every method under their paths answers 501 (after the API key, and the write scope for writes, are checked), so a client can tell them from an unknown path.",
        },
      ]
    : []),
];

const pascal = (words: string) =>
  words
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join("");

const IDEMPOTENCY_KEY = {
  name: "Idempotency-Key",
  in: "header",
  required: false,
  description:
    "Replays the first answer (status and body) for 24 h; the same key with another body or path is 409, and so is a key whose first request is still running. A claim left by a server that stopped mid-request is free again after 60 s; POST /v1/messages and POST /v1/calls commit their answer with the message or call, so their retry replays it and never sends twice.",
  schema: { type: "string", minLength: 1, maxLength: 255 },
};

/**
 * GET /v1/openapi.json: the document generated from the route schemas (`@elysiajs/openapi`'s
 * generator), finished by `finishDocument`. Built on first request and again when routes change.
 */
export function openApiRoutes(getApp: () => AnyElysia, documentation: Json) {
  let cached: { routes: number; doc: Json } | null = null;
  return new Elysia({ name: "openapi-document" }).get(
    "/v1/openapi.json",
    () => {
      const app = getApp();
      if (!cached || cached.routes !== app.routes.length) {
        const generated = toOpenAPISchema(
          app,
          // Paths with a dot are routes too (`/t.js`): the generator leaves them out unless told.
          { paths: EXCLUDED_PATHS, staticFile: false },
          undefined,
          undefined,
          OPENAPI_VERSION,
        );
        cached = {
          routes: app.routes.length,
          doc: finishDocument({
            ...documentation,
            openapi: OPENAPI_VERSION,
            tags: TAGS,
            paths: generated.paths,
            components: {
              ...documentation.components,
              schemas: { ...generated.components?.schemas, ...documentation.components?.schemas },
            },
          }),
        };
      }
      return cached.doc;
    },
    { detail: { hide: true } },
  );
}

/**
 * What the generator does not say on its own: each operation's error responses (carried in its 200 schema, see `responses`), public operations have no security and
 * no Idempotency-Key (a 401 there is a bad carrier signature), every other POST takes
 * `Idempotency-Key`, integer query parameters are integers (`IntegerQuery`), text answers carry
 * their media type (`contentMediaType`), and integers are integers (Elysia's `t.Integer` also
 * accepts a numeric string, which the generator renders as an `anyOf` whose string half has an
 * integer default — a schema validators reject). Then the parts not built yet and the events.
 */
export function finishDocument(doc: Json): Json {
  addPlanned(doc);
  for (const [path, item] of Object.entries(doc.paths ?? {}) as [string, Json][]) {
    for (const [method, op] of Object.entries(item) as [string, Json][]) {
      if (!op || typeof op !== "object") continue;
      const isPublic = !needsKey(path);
      for (const [status, response] of Object.entries(op.responses ?? {}) as [string, Json][]) {
        for (const media of Object.values(response?.content ?? {}) as Json[]) {
          const statuses = media?.schema?.[ERROR_STATUSES_KEYWORD];
          if (!Array.isArray(statuses)) continue;
          const wording = media.schema[ERROR_DESCRIPTIONS_KEYWORD] ?? {};
          delete media.schema[ERROR_STATUSES_KEYWORD];
          delete media.schema[ERROR_DESCRIPTIONS_KEYWORD];
          for (const error of statuses)
            op.responses[String(error)] ??= errorResponseDoc(error, wording[String(error)]);
        }
        // The generator's placeholder for a 200 whose schema has no description of its own.
        if (response?.description === `Response for status ${status}`) response.description = "Success";
        const text = response?.content?.["text/plain"];
        if (status.startsWith("2") && text?.schema?.contentMediaType) {
          response.content = { [text.schema.contentMediaType]: text };
        }
      }
      op.parameters = op.parameters?.map(integerQueryParameter);
      // Bodies are JSON (API.md §1: another content type is 400 `Invalid JSON body`); the generator
      // offers form encodings beside every body schema.
      if (op.requestBody?.content) {
        delete op.requestBody.content["application/x-www-form-urlencoded"];
        delete op.requestBody.content["multipart/form-data"];
      }
      if (isPublic) {
        // Answered without an API key (health, metrics, signed carrier callbacks): no bearer security.
        // The dashboard's account routes say which of them take the session cookie.
        op.security ??= [];
        if (op.responses?.["401"] && path.startsWith("/carriers/")) {
          op.responses["401"] = {
            ...op.responses["401"],
            description: "The carrier's signature is missing or does not match (`Invalid signature`)",
          };
        }
      } else if (method === "post") {
        op.parameters = [
          ...(op.parameters ?? []).filter((p: Json) => p.name !== IDEMPOTENCY_KEY.name),
          IDEMPOTENCY_KEY,
        ];
        declareIdempotencyConflict(op);
      }
    }
  }
  addWebhooks(doc);
  return collapseNumericStrings(doc);
}

/** What a POST answers when its Idempotency-Key came before with another body or path (API.md §1). */
const IDEMPOTENCY_CONFLICT =
  "Idempotency-Key reuse: the key was sent before with another body or path (`Idempotency-Key was used with a different request`)";

/**
 * Every POST that takes `Idempotency-Key` can answer 409 for a reused key: added where the route
 * declares no 409, and named beside the route's own 409 (a state conflict) where it does.
 */
function declareIdempotencyConflict(op: Json) {
  op.responses ??= {};
  const existing = op.responses["409"];
  if (!existing) op.responses["409"] = errorResponseDoc(409, IDEMPOTENCY_CONFLICT);
  else if (!String(existing.description ?? "").includes("Idempotency-Key was used with a different request"))
    existing.description = `${existing.description ?? "State conflict"}; or ${IDEMPOTENCY_CONFLICT}`;
}

/** A query parameter declared with `IntegerQuery`: the integer it stands for. */
function integerQueryParameter(parameter: Json): Json {
  const integer = parameter?.schema?.[QUERY_INTEGER_KEYWORD];
  if (!integer) return parameter;
  return { ...parameter, schema: { type: "integer", description: parameter.schema.description, ...integer } };
}

/** The parts of the API not built yet, as what they answer today: 501 under every path of theirs. */
function addPlanned(doc: Json) {
  for (const { prefix, name } of PLANNED) {
    const operation = (method: string) => ({
      operationId: `${method.toLowerCase()}${pascal(prefix.replace(/^\/v1\//, ""))}Planned`,
      tags: ["Not built yet"],
      summary: `${name}: not implemented yet`,
      description: `Every ${method} under \`${prefix}\` answers 501 \`Not implemented yet in this version: ${name} (${prefix})\` (after the API key, and the write scope for writes, are checked).`,
      "x-planned": true,
      responses: {
        // Declared so the operation is complete; this version never answers it.
        "200": {
          description: `Not answered by this version: ${name} is not built yet, so every call answers 501.`,
        },
        ...Object.fromEntries(
          (method === "GET" ? [401, 429, 501] : [401, 403, 429, 501]).map((status) => [
            String(status),
            errorResponseDoc(status),
          ]),
        ),
      },
    });
    doc.paths[prefix] ??= { get: operation("GET"), post: operation("POST") };
  }
}

const WEBHOOK_HEADERS = [
  {
    name: "webhook-id",
    description: "The event id: the same on every retry, so a receiver can de-duplicate on it",
    example: "01936f8e-7c1a-7a3b-9f00-2d5e8c1b4a77",
  },
  {
    name: "webhook-timestamp",
    description: "When this attempt was signed, in seconds since the Unix epoch",
    example: "1795381605",
  },
  {
    name: "webhook-signature",
    description:
      '`v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>">` keyed with the subscription\'s secret; two space-separated signatures for 24 h after a rotation',
    example: "v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=",
  },
].map(({ name, description, example }) => ({
  name,
  in: "header",
  required: true,
  description,
  schema: { type: "string", examples: [example] },
}));

/** What a webhook subscription receives: one signed POST per event kind of the catalogue. */
function addWebhooks(doc: Json) {
  doc.webhooks = {};
  for (const type of EVENT_TYPES) {
    const name = eventSchemaName(type);
    doc.webhooks[type] = {
      post: {
        operationId: name.charAt(0).toLowerCase() + name.slice(1),
        tags: ["Webhook events"],
        summary: type,
        description: `${EVENT_SUMMARIES[type]} Sent to every enabled subscription whose \`events\` include \`${type}\` or \`*\`, signed per Standard Webhooks.`,
        security: [],
        parameters: WEBHOOK_HEADERS,
        requestBody: {
          required: true,
          content: { "application/json": { schema: { $ref: `#/components/schemas/${name}` } } },
        },
        responses: {
          "200": {
            description:
              "Any 2xx acknowledges the event. Anything else (3xx are not followed), no answer within `WEBHOOK_TIMEOUT_MS` (15 s by default) or a dropped connection is retried after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h (±20 %, at least the receiver's `Retry-After`).",
          },
          "410": { description: "Gone: disables the subscription at once; nothing more is sent to it." },
        },
      },
    };
  }
}

function collapseNumericStrings(node: Json): Json {
  if (Array.isArray(node)) return node.map(collapseNumericStrings);
  if (!node || typeof node !== "object") return node;
  const out: Json = {};
  for (const [key, value] of Object.entries(node)) out[key] = collapseNumericStrings(value);
  const members = out.anyOf;
  if (Array.isArray(members) && members.length === 2) {
    const text = members.find((m: Json) => m?.type === "string" && ["integer", "numeric"].includes(m.format));
    const number = members.find((m: Json) => m?.type === "integer" || m?.type === "number");
    if (text && number) {
      const { anyOf: _dropped, ...rest } = out;
      return { ...rest, ...number };
    }
  }
  return out;
}
