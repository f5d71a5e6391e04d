import { toOpenAPISchema } from "@elysiajs/openapi";
import { type AnyElysia, Elysia } from "elysia";
import { needsKey } from "../http/conventions";
import { ERROR_STATUSES_KEYWORD, errorResponseDoc } from "../http/schemas";
import { PLANNED } from "./planned";

// biome-ignore lint/suspicious/noExplicitAny: walks an arbitrary JSON document
type Json = any;

const OPENAPI_VERSION = "3.1.2";
const EXCLUDED_PATHS = ["/docs", "/v1/openapi.json"];

const IDEMPOTENCY_KEY = {
  name: "Idempotency-Key",
  in: "header",
  required: false,
  description:
    "Replays the first answer (status and body) for 24 h; the same key with another body or path is 409.",
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
          { paths: EXCLUDED_PATHS },
          undefined,
          undefined,
          OPENAPI_VERSION,
        );
        cached = {
          routes: app.routes.length,
          doc: finishDocument({
            ...documentation,
            openapi: OPENAPI_VERSION,
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
 * What the generator does not say on its own: each route's error responses (carried in its 200
 * schema, see `responses`), public operations have no security, every POST
 * takes `Idempotency-Key`, and integers are integers (Elysia's `t.Integer` also accepts a numeric
 * string, which the generator renders as an `anyOf` whose string half has an integer default — a
 * schema validators reject).
 */
export function finishDocument(doc: Json): Json {
  addPlanned(doc);
  for (const [path, item] of Object.entries(doc.paths ?? {}) as [string, Json][]) {
    for (const [method, op] of Object.entries(item) as [string, Json][]) {
      if (!op || typeof op !== "object") continue;
      for (const response of Object.values(op.responses ?? {}) as Json[]) {
        for (const media of Object.values(response?.content ?? {}) as Json[]) {
          const statuses = media?.schema?.[ERROR_STATUSES_KEYWORD];
          if (!Array.isArray(statuses)) continue;
          delete media.schema[ERROR_STATUSES_KEYWORD];
          for (const status of statuses) op.responses[String(status)] ??= errorResponseDoc(status);
        }
      }
      // Answered without an API key (health, metrics, signed carrier callbacks): no bearer security.
      if (!needsKey(path)) op.security = [];
      if (method === "post") {
        op.parameters = [
          ...(op.parameters ?? []).filter((p: Json) => p.name !== IDEMPOTENCY_KEY.name),
          IDEMPOTENCY_KEY,
        ];
      }
    }
  }
  return collapseNumericStrings(doc);
}

/** The parts of the API not built yet, as what they answer today: 501 under every path of theirs. */
function addPlanned(doc: Json) {
  for (const { prefix, name } of PLANNED) {
    const operation = (method: string) => ({
      tags: ["Not built yet"],
      summary: `${name}: not implemented yet`,
      description: `Every ${method} under \`${prefix}\` answers 501 \`Not implemented yet in this version: ${name} (${prefix})\` (after the API key, and the write scope for writes, are checked).`,
      "x-planned": true,
      responses: Object.fromEntries(
        (method === "GET" ? [401, 429, 501] : [401, 403, 429, 501]).map((status) => [
          String(status),
          errorResponseDoc(status),
        ]),
      ),
    });
    doc.paths[prefix] ??= { get: operation("GET"), post: operation("POST") };
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
