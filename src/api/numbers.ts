import { Elysia, t } from "elysia";
import type { AppDeps } from "../app";
import {
  getNumber,
  listNumbers,
  orderNumbers,
  releaseNumber,
  searchAvailableNumbers,
  updateNumber,
} from "../domain/messaging/numbers";
import { workspaceOf } from "../http/context";
import {
  Body,
  Deleted,
  dailyBudget429,
  Enum,
  Int,
  IntegerQuery,
  Ok,
  Query,
  READ_ERRORS,
  responses,
  Timestamp,
  WRITE_ERRORS,
} from "../http/schemas";
import { resourceRoutes } from "./resource-routes";

const Nullable = <T extends Parameters<typeof t.Union>[0][number]>(
  schema: T,
  description: string,
  error?: string,
) => t.Union([schema, t.Null()], error ? { description, error } : { description });

export const NumberSchema = t.Object(
  {
    id: t.String({ description: "Number id (UUID)" }),
    number: t.String({ description: "E.164 phone number", examples: ["+14155550123"] }),
    pool_id: Nullable(t.String(), "Pool the number rotates in, or null"),
    daily_limit: Nullable(Int(), "Sends allowed per local day of the number; null = no cap"),
    sent_today: Int({
      description: "Sends counted against daily_limit in the number's current local day",
    }),
    agent_id: Nullable(t.String(), "Agent answering on this number, or null"),
    status: Enum(["active", "released"], "active | released"),
    default: t.Boolean({ description: "True for the workspace's default sending number" }),
    created_at: Timestamp("When the number was ordered"),
  },
  { description: "A phone number of the workspace" },
);

const AvailableNumberSchema = t.Object(
  {
    number: t.String({ description: "E.164", examples: ["+14155550123"] }),
    region: Nullable(t.String(), "State or province"),
    locality: Nullable(t.String(), "City"),
    type: Enum(["local", "toll_free"], "local | toll_free"),
    capabilities: t.Object(
      {
        sms: t.Boolean({ description: "Can send and receive SMS" }),
        voice: t.Boolean({ description: "Can place and receive calls" }),
        mms: t.Boolean({ description: "Can send and receive MMS" }),
      },
      { description: "What the number can do" },
    ),
    monthly_cost: t.Number({ description: "Monthly price in USD", examples: [1.15] }),
  },
  { description: "A number the carrier offers" },
);

const DAILY_LIMIT_ERROR = "must be an integer between 0 and 1000000, or null";
const DailyLimit = Int({
  minimum: 0,
  maximum: 1_000_000,
  description: "Sends allowed per local day (0–1000000); null = no cap",
});

const OrderBody = Body(
  {
    number: t.Optional(
      t.String({
        maxLength: 64,
        description: "One number to order (E.164 or US 10/11 digits)",
        examples: ["+14155550123"],
      }),
    ),
    numbers: t.Optional(
      t.Array(t.String({ maxLength: 64 }), {
        minItems: 1,
        maxItems: 100,
        description: "Several numbers to order (up to 100)",
      }),
    ),
    pool_id: t.Optional(Nullable(t.String(), "Pool to put the new numbers in", "must be a string or null")),
    daily_limit: t.Optional(
      Nullable(DailyLimit, "Daily cap for the new numbers; null = no cap", DAILY_LIMIT_ERROR),
    ),
  },
  { description: "`number` or `numbers` is required" },
);

const PatchBody = Body(
  {
    pool_id: t.Optional(
      Nullable(
        t.String(),
        "Pool to move the number to; null takes it out of its pool",
        "must be a string or null",
      ),
    ),
    daily_limit: t.Optional(Nullable(DailyLimit, "New daily cap; null = no cap", DAILY_LIMIT_ERROR)),
    default: t.Optional(
      t.Boolean({ description: "true makes it the workspace's default sending number; false clears that" }),
    ),
    agent_id: t.Optional(
      Nullable(
        t.String({ maxLength: 64 }),
        "SMS agent that answers new threads on this number; null stops it",
        "must be a string or null",
      ),
    ),
  },
  { description: "Fields to change; others stay as they are" },
);

const IdParams = t.Object({ id: t.String({ description: "Number id" }) });
const OrderEnvelope = t.Object({
  ok: Ok,
  ordered: t.Union([NumberSchema, t.Null(), t.Array(NumberSchema)], {
    description:
      "With `number`: the number's record (null when it was skipped). With `numbers`: the records newly ordered.",
  }),
  added: Int({ description: "Numbers newly ordered (charged)" }),
  skipped: Int({
    description:
      "Numbers not ordered: already in this or another workspace, or not available (never charged)",
  }),
});

// /v1/numbers – search the carrier, order, list, update (pool, cap, default) and release numbers.
export function numbersRoutes(deps: AppDeps) {
  return new Elysia({ name: "numbers" })
    .get(
      "/v1/numbers/available",
      async ({ query }) => ({
        ok: true as const,
        numbers: await searchAvailableNumbers(deps.db, deps.carrier, query),
      }),
      {
        query: Query({
          country: t.Optional(t.String({ description: "ISO country code (default US)", examples: ["US"] })),
          area_code: t.Optional(t.String({ description: "Three-digit area code", examples: ["415"] })),
          contains: t.Optional(
            t.String({ description: "Digits the number must contain", examples: ["555"] }),
          ),
          type: t.Optional(t.String({ description: "local (default) | toll_free" })),
          limit: IntegerQuery({
            description: "How many (default 20, values above 50 are clamped)",
            minimum: 1,
            default: 20,
            example: 20,
          }),
        }),
        detail: {
          tags: ["Numbers"],
          operationId: "searchAvailableNumbers",
          summary: "Search numbers available to order",
          description:
            "Numbers held by any workspace of this server are left out. 503 `Carrier unavailable: try again later` when the carrier is down.",
        },
        response: responses(
          t.Object({
            ok: Ok,
            numbers: t.Array(AvailableNumberSchema, { description: "Numbers the carrier offers" }),
          }),
          [...READ_ERRORS, 422, 503],
        ),
      },
    )
    .post(
      "/v1/numbers",
      async ({ request, body }) => {
        const outcome = await orderNumbers(
          deps.db,
          deps.carrier,
          workspaceOf(request),
          body,
          deps.clock.now(),
        );
        const ordered = body.numbers === undefined ? (outcome.ordered[0] ?? null) : outcome.ordered;
        return { ok: true as const, ordered, added: outcome.added, skipped: outcome.skipped };
      },
      {
        body: OrderBody,
        detail: {
          tags: ["Numbers"],
          operationId: "orderNumbers",
          summary: "Order numbers",
          description: [
            "Orders `number`, or each of `numbers`, from the carrier (charged). `added` counts numbers newly",
            "ordered; `skipped` counts numbers already in this workspace, held by another workspace of this",
            "server, or not available at the carrier: those are never ordered or charged, so a re-order is",
            "harmless. With `number`, `ordered` is that number's record (null when skipped); with `numbers`,",
            "`ordered` is the array of records newly ordered. 422 `number is required` without either,",
            "`pool_id does not exist`. 503 when the carrier is down and nothing could be ordered. Each number",
            "to order counts against the workspace's `number_orders_daily_limit`: a request that would pass it",
            "answers 429 and orders none of its numbers; numbers the carrier does not grant are not counted.",
          ].join(" "),
        },
        response: responses(
          OrderEnvelope,
          [...WRITE_ERRORS, 503],
          dailyBudget429("number_orders_daily_limit", 50),
        ),
      },
    )
    .use(
      resourceRoutes(
        deps,
        {
          path: "/v1/numbers",
          tag: "Numbers",
          one: "number",
          many: "numbers",
          item: NumberSchema,
          idDescription: "Number id",
        },
        {
          list: {
            summary: "List numbers (newest first)",
            description:
              "Active numbers unless `status=released`; `pool_id` keeps one pool's. Each with its `daily_limit` and what it has sent in its local day (`sent_today`).",
            query: {
              status: t.Optional(t.String({ description: "active (default) | released" })),
              pool_id: t.Optional(t.String({ description: "Only numbers of this pool" })),
            },
            itemsDescription: "Numbers, newest first",
            run: async (workspaceId, query, page) => {
              const { numbers, total } = await listNumbers(
                deps.db,
                workspaceId,
                { status: query.status, pool_id: query.pool_id },
                page,
                deps.clock.now(),
              );
              return { items: numbers, total };
            },
          },
          get: {
            summary: "Get a number",
            description:
              "The number with its pool, daily cap and `sent_today`, whether it is the default, and its status (released numbers stay readable).",
            run: async (workspaceId, id, now) => await getNumber(deps.db, workspaceId, id, now),
          },
          update: {
            summary: "Update a number",
            description:
              "Partial update. 422 `pool_id does not exist`, `agent_id does not exist` or a voice agent; 409 `Number is released`. `default: true` sets `settings.default_number_id`.",
            errors: [409],
            body: PatchBody,
            run: async (workspaceId, id, body, now) =>
              await updateNumber(deps.db, workspaceId, id, body, now),
          },
        },
      ),
    )
    .delete(
      "/v1/numbers/:id",
      async ({ request, params }) => ({
        ok: true as const,
        deleted: true as const,
        number: await releaseNumber(deps.db, deps.carrier, workspaceOf(request), params.id, deps.clock.now()),
      }),
      {
        params: IdParams,
        detail: {
          tags: ["Numbers"],
          operationId: "releaseNumber",
          summary: "Release a number",
          description:
            "Releases the number at the carrier; it stays readable with `status: released`, leaves its pool's sticky assignments and stops being the default. 409 `Number is already released`; 503 when the carrier is down (nothing changed).",
        },
        response: responses(t.Object({ ok: Ok, deleted: Deleted, number: NumberSchema }), [
          ...WRITE_ERRORS,
          404,
          409,
          503,
        ]),
      },
    );
}
