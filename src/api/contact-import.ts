import { Elysia, t } from "elysia";
import type { AppDeps } from "../app";
import { importContactsCsv, importContactsJson } from "../domain/audience/contact-import";
import { IMPORT_BODY_LIMIT } from "../http/body";
import { workspaceOf } from "../http/context";
import type { RouteConventions } from "../http/route-conventions";
import { Int, Ok, Query, responses, WRITE_ERRORS } from "../http/schemas";
import { AppError, invalid } from "../lib/errors";

const IMPORT_PATH = "/v1/contacts/import";

const ImportEnvelope = t.Object({
  ok: Ok,
  created: Int({ description: "Contacts created" }),
  updated: Int({ description: "Existing contacts (or earlier rows of this import) changed by a row" }),
  skipped: Int({ description: "Rows that matched a contact and changed nothing" }),
  errors: t.Array(
    t.Object({
      row: Int({
        description: "CSV: line number in the file (header = 1). JSON: 1-based position in contacts",
      }),
      error: t.String({
        description: "What is wrong with the row",
        examples: ["phone_number must be a valid phone number"],
      }),
    }),
    { description: "Rows not imported (at most 1000 listed)" },
  ),
  consent_column: t.Union([t.String(), t.Null()], {
    description:
      "The column that set `opted_in` per row, as the file names it (`Accepts SMS Marketing`, `SMS Consent`, " +
      "`opted_in`...); null: the file had none and every contact was imported as opted in",
    examples: ["Accepts SMS Marketing"],
  }),
});

async function readText(stream: ReadableStream<Uint8Array> | null, limit: number): Promise<string> {
  if (!stream) return "";
  const decoder = new TextDecoder();
  let bytes = 0;
  let text = "";
  for await (const chunk of stream as unknown as AsyncIterable<Uint8Array>) {
    bytes += chunk.byteLength;
    if (bytes > limit)
      throw new AppError("payload_too_large", `Request body is too large (max ${limit} bytes)`);
    text += decoder.decode(chunk, { stream: true });
  }
  return text + decoder.decode();
}

function listIdOf(value: unknown): string | undefined {
  if (value === undefined || value === null || value === "") return undefined;
  if (typeof value !== "string") throw invalid("list_id must be a string");
  return value;
}

// POST /v1/contacts/import – CSV (streamed) or JSON; upsert by phone, one transaction per batch.
export function contactImportRoutes(deps: AppDeps, conventions: RouteConventions) {
  conventions.registerStreamingRoute("POST", IMPORT_PATH);
  conventions.registerBodyLimit(IMPORT_PATH, IMPORT_BODY_LIMIT);
  return new Elysia({ name: "contact-import" }).post(
    IMPORT_PATH,
    async ({ request, query }) => {
      const workspaceId = workspaceOf(request);
      const type = (request.headers.get("content-type") ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
      const now = deps.clock.now();
      // A declared length over the limit is refused before anything is read or written; a body
      // without one is counted while streaming.
      if (Number(request.headers.get("content-length") ?? 0) > IMPORT_BODY_LIMIT)
        throw new AppError("payload_too_large", `Request body is too large (max ${IMPORT_BODY_LIMIT} bytes)`);
      if (type === "text/csv" || type === "application/csv") {
        const result = await importContactsCsv(
          deps.db,
          workspaceId,
          request.body ?? new ReadableStream({ start: (c) => c.close() }),
          { listId: listIdOf(query.list_id), maxBytes: IMPORT_BODY_LIMIT, now },
        );
        return { ok: true as const, ...result };
      }
      if (type === "application/json" || type === "") {
        const text = await readText(request.body, IMPORT_BODY_LIMIT);
        let body: unknown = {};
        if (text.trim() !== "") {
          try {
            body = JSON.parse(text);
          } catch {
            throw new AppError("invalid_json", "Invalid JSON body");
          }
        }
        if (body === null || typeof body !== "object" || Array.isArray(body))
          throw invalid("body must be a JSON object");
        const o = body as Record<string, unknown>;
        if (o.contacts === undefined) throw invalid("contacts is required");
        if (!Array.isArray(o.contacts)) throw invalid("contacts must be an array");
        const result = await importContactsJson(deps.db, workspaceId, o.contacts, {
          listId: listIdOf(o.list_id ?? query.list_id),
          now,
        });
        return { ok: true as const, ...result };
      }
      throw new AppError("invalid_json", "Content-Type must be text/csv or application/json");
    },
    {
      query: Query({
        list_id: t.Optional(t.String({ description: "Add every imported contact to this list" })),
      }),
      detail: {
        tags: ["Contacts"],
        operationId: "importContacts",
        summary: "Import contacts (CSV or JSON)",
        requestBody: {
          required: true,
          content: {
            "text/csv": {
              schema: { type: "string", description: "Header row, then one contact per line" },
              example:
                "phone_number,first_name,last_name,email,plan\n+12025550123,Ada,Lovelace,ada@example.com,pro\n",
            },
            "application/json": {
              schema: {
                type: "object",
                required: ["contacts"],
                properties: {
                  contacts: {
                    type: "array",
                    description:
                      "Contacts: phone_number, first_name, last_name, email, external_id, opted_in, timezone, fields",
                    items: { type: "object" },
                  },
                  list_id: { type: "string", description: "Add every imported contact to this list" },
                },
              },
            },
          },
        },
        description: [
          "`text/csv`: a header row, then one contact per line (quoted fields and CRLF supported). Columns",
          "`phone_number` (or `phone`, `Phone Number`, `Mobile Phone Number`, `Mobile`, `Cell Phone`; when the",
          "row's phone is empty, `Default Address Phone`/`Address Phone`), `first_name`, `last_name`, `email`,",
          "`external_id`, `timezone` (an IANA zone: the contact's own, `timezone_source: given`), a state column",
          "(`state`, `province`, `Default Address Province Code`, `Region`, `State/Region`: kept as `state`, two",
          "letters) and a consent column (`opted_in`, `Accepts SMS Marketing`, `SMS Consent`, `SMS Opt In`,",
          "`SMS Marketing Consent`, `SMS Subscription Status`; yes/no, true/false, 1/0,",
          "subscribed/unsubscribed/not_subscribed; another value is a row error `<column> must be yes or no`)",
          "map to the contact; any other column goes to `fields`. Without a consent column everyone is imported",
          "opted in and the answer says `consent_column: null`. No phone column: 422 before anything is written.",
          "`application/json`: `{contacts:[{phone_number, first_name, ..., fields}], list_id?}`.",
          "",
          "Upsert by phone number: a known number updates the contact (blank cells keep values, fields merge;",
          "an import can opt a contact out, never back in). Duplicate numbers in one import collapse to one contact.",
          "Rows are applied in batches, one transaction per batch; a bad row is reported in `errors` by row",
          "number and never stops the rest. `list_id` (query, or body for JSON) adds every imported contact to",
          "that list (422 `list_id does not exist`). Body ≤ 20 MiB, also enforced while streaming (413; batches",
          "already applied stay).",
        ].join(" "),
      },
      response: responses(ImportEnvelope, WRITE_ERRORS),
    },
  );
}
