import {
  type IntegerOptions,
  type ObjectOptions,
  type TArray,
  type TObject,
  type TProperties,
  Type,
} from "@sinclair/typebox";
import { type TSchema, t } from "elysia";

/**
 * An integer, strictly: Elysia's `t.Integer` also accepts numeric strings ("5") and decodes them;
 * the contract says integer, so a string is a 422 like any other wrong type.
 */
export const Int = (options?: IntegerOptions) => Type.Integer(options);

/** `{ok:false, error}` as every error answers; some carry extra keys (see API.md §1). */
export const ErrorBody = t.Object(
  {
    ok: t.Literal(false, { description: "Always false on errors" }),
    error: t.String({
      description: "Human-readable message; names the field at fault",
      examples: ["to is required"],
    }),
    required_scope: t.Optional(
      t.String({ description: "On 403: the scope the key lacks", examples: ["write"] }),
    ),
    retry_after: t.Optional(Int({ description: "On 429: seconds to wait" })),
    contact_id: t.Optional(t.String({ description: "On 409 for a duplicate contact: the existing contact" })),
  },
  { description: "Error envelope" },
);

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: "Malformed JSON or wrong content type (`Invalid JSON body`)",
  401: "Missing or unknown API key or session (`Invalid or missing API key`)",
  403: "The key lacks the `write` scope (`This API key cannot create and edit.`), the account's role does not allow it (`This account cannot create and edit.`), or a write with the session cookie came from another site (`Cross-site request refused`)",
  404: "Unknown id, or an id of another workspace (`Not found`)",
  409: "State conflict (e.g. `Campaign is completed: only a draft can be launched`)",
  408: "The body did not arrive within `BODY_TIMEOUT_MS` (10 s by default; the small unauthenticated routes only): `Request body was not received within 10 s: send it at once`",
  410: "A one-time link that has expired or was already used",
  413: "Body too large",
  422: "Validation failed (`<field> is required`, `<field> must be ...`)",
  429: "Rate limited (`Rate limit exceeded`, with Retry-After)",
  501: "Not built in this version (`Not implemented yet in this version: <part> (<path>)`)",
  503: "A provider (the carrier) is unavailable; nothing was changed, try again later",
};

/** Schema keyword carrying a route's error statuses to the OpenAPI document (src/api/openapi.ts). */
export const ERROR_STATUSES_KEYWORD = "x-error-statuses";
/** Schema keyword carrying a route's own wording of some error statuses (see `responses`). */
export const ERROR_DESCRIPTIONS_KEYWORD = "x-error-descriptions";

/**
 * Response schema of a route: the 200 body, closed (see `closed`: a handler that returns a field
 * its schema does not declare fails with a logged 500 instead of leaking it), plus the error
 * statuses it can answer. Errors are built by the error hook and never validated, so they are not
 * declared to Elysia — a route with one response schema answers through Elysia's compact path —
 * but carried in `x-error-statuses` and written out as responses by the OpenAPI document.
 * `descriptions` words some of them for this route, where the general wording (an API key's) does
 * not fit.
 */
export function responses(ok: TSchema, errors: number[] = [401], descriptions?: Record<number, string>) {
  const schema = { ...closed(ok), [ERROR_STATUSES_KEYWORD]: errors };
  if (descriptions) Object.assign(schema, { [ERROR_DESCRIPTIONS_KEYWORD]: descriptions });
  return { 200: schema as TSchema };
}

/** Schema keyword carrying the integer a query parameter is documented as (src/api/openapi.ts). */
export const QUERY_INTEGER_KEYWORD = "x-query-integer";

/**
 * An optional integer query parameter: declared `integer` in the OpenAPI document (so a generated
 * client passes a number), taken as text by the route and checked by its handler, which answers
 * junk with the contract's wording (`limit must be a non-negative integer`) and clamps values that
 * are too large instead of refusing them — neither of which a typebox integer does.
 */
export function IntegerQuery(options: {
  description: string;
  minimum: number;
  default: number;
  example: number;
}) {
  const { description, minimum, example } = options;
  return t.Optional(
    t.String({
      description,
      [QUERY_INTEGER_KEYWORD]: { minimum, default: options.default, examples: [example] },
    }),
  );
}

/** The error response of the OpenAPI document for `status`. */
export function errorResponseDoc(status: number, description?: string) {
  return {
    description: description ?? ERROR_DESCRIPTIONS[status] ?? "Error",
    content: { "application/json": { schema: { $ref: "#/components/schemas/ErrorBody" } } },
  };
}

/**
 * A copy of `schema` whose objects, at every depth, refuse properties they do not declare
 * (`additionalProperties: false`); records and other open shapes are left as they are.
 *
 * Responses are checked, not rewritten: the app runs with `normalize: false`, because cleaning
 * every answer to its schema costs about a tenth of a cached request's time (and cleaning request
 * bodies before validating them can turn invalid input into valid). Closing the schemas keeps
 * what cleaning guaranteed — no undeclared field reaches a client — as a check that fails loudly.
 */
export function closed<T extends TSchema>(schema: T): T {
  const s = schema as TSchema & Record<string, unknown>;
  if (s.type === "object" && s.properties && s.additionalProperties === undefined) {
    const properties: Record<string, TSchema> = {};
    for (const [name, value] of Object.entries(s.properties as Record<string, TSchema>))
      properties[name] = closed(value);
    return { ...s, properties, additionalProperties: false } as unknown as T;
  }
  if (s.type === "array" && s.items) return { ...s, items: closed(s.items as TSchema) } as unknown as T;
  if (Array.isArray(s.anyOf)) return { ...s, anyOf: (s.anyOf as TSchema[]).map(closed) } as unknown as T;
  return schema;
}

/**
 * A request body: an object whose unknown fields are ignored, not refused (API.md: forward
 * compatible). Handlers read the declared fields only, so an unknown one is never stored.
 */
export function Body<T extends TProperties>(properties: T, options: ObjectOptions = {}) {
  return t.Object(properties, { ...options, additionalProperties: true });
}

/** Query parameters: like `Body`, parameters a route does not declare are ignored, not refused. */
export const Query = Body;

/** Errors every authenticated read can answer. */
export const READ_ERRORS = [401, 429];
/** Errors every authenticated write can answer. */
export const WRITE_ERRORS = [400, 401, 403, 413, 422, 429];

/** The 429 of a route that spends a daily budget (API.md §7.2), beside the rate limit's. */
export const dailyBudget429 = (setting: string, value: number) => ({
  429: `Rate limited (\`Rate limit exceeded\`, with Retry-After), or the workspace's daily budget is spent: \`Daily limit reached: ${setting} is ${value}\` (the setting's name and value, with \`retry_after\` to the next UTC midnight); nothing is written`,
});

export const Timestamp = (description: string) =>
  t.String({ format: "date-time", description, examples: ["2026-11-21T21:06:45.123Z"] });
export const NullableTimestamp = (description: string) =>
  t.Union([Timestamp(description), t.Null()], { description });
export const Uuid = (description: string) =>
  t.String({ description, examples: ["01936f8e-7c1a-7a3b-9f00-2d5e8c1b4a77"] });

/** `ok: true` of every success envelope. */
export const Ok = t.Literal(true, { description: "Always true on success" });
/** `deleted: true` of every delete answer. */
export const Deleted = t.Literal(true, { description: "Always true: the resource was deleted" });

/**
 * A closed set of strings (`<field> must be one of a, b` when it fails). Unlike a union of
 * `t.Literal`s, whose description the OpenAPI generator drops when it turns it into an `enum`,
 * this keeps its description in the document; it validates the same values.
 */
export function Enum<const T extends readonly [string, ...string[]]>(values: T, description: string) {
  const schema = t.UnionEnum(values, { description });
  // UnionEnum adds the first value as `default`, which would fill in absent optional fields.
  delete (schema as { default?: unknown }).default;
  return schema;
}

/** `total`, `limit`, `offset` of every list answer. */
export const PageFields = {
  total: Int({ description: "Items matching, over all pages" }),
  limit: Int({ description: "Page size used" }),
  offset: Int({ description: "Items skipped" }),
};

/** `{ok:true, <name>:[item...], total, limit, offset}`, the answer of every list endpoint. */
export function listEnvelope<N extends string, S extends TSchema>(name: N, item: S, description: string) {
  return t.Object({
    ok: Ok,
    [name]: t.Array(item, { description }),
    ...PageFields,
  } as { ok: typeof Ok } & { [K in N]: TArray<S> } & typeof PageFields) as TObject<
    { ok: typeof Ok } & { [K in N]: TArray<S> } & typeof PageFields
  >;
}
