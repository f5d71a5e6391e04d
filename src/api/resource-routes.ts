import type { Static, TObject, TProperties, TSchema } from "@sinclair/typebox";
import { Elysia, t } from "elysia";
import type { AppDeps } from "../app";
import { workspaceOf } from "../http/context";
import { type Page, paginationQuery, parsePagination } from "../http/pagination";
import { Deleted, listEnvelope, Ok, Query, READ_ERRORS, responses, WRITE_ERRORS } from "../http/schemas";

/**
 * The list/get/create/patch/delete shape most resources share, written once: the paths, the
 * `{ok, <one>}` / `{ok, <many>:[...], total, limit, offset}` / `{ok, deleted}` envelopes, the
 * error statuses each kind of route can answer, tags and operation ids. Each resource keeps its
 * own schemas and makes one call into its domain per route; routes beyond this shape are added
 * to the resource's own Elysia instance beside it.
 */
export interface ResourceNames {
  /** Collection path, e.g. `/v1/pools`; items live at `<path>/:id`. */
  path: string;
  /** OpenAPI tag of every route, e.g. `Pools`. */
  tag: string;
  /** Envelope key of one item (`pool`), also the operation id's noun (`getPool`). */
  one: string;
  /** Envelope key of a page (`pools`), also the list operation's noun (`listPools`). */
  many: string;
  /** One item as the routes answer it. */
  item: TSchema;
  /** Description of the `:id` path parameter, e.g. `Pool id`. */
  idDescription: string;
  /**
   * The nouns of the operation ids when the envelope keys would repeat another resource's
   * (`campaign` of /v1/10dlc/campaigns → `getTendlcCampaign`); default `one` and `many`.
   */
  operationNouns?: { one: string; many: string };
}

/** What each route says of itself in the reference, beyond what the shape says. */
interface RouteDoc {
  summary: string;
  description?: string;
  /** Statuses this route can answer beyond the shape's own (e.g. 409, 501). */
  errors?: number[];
}

interface ListRoute<Q extends TProperties> extends RouteDoc {
  /** Query parameters besides `limit` and `offset`. */
  query?: Q;
  /** Description of the page's array, e.g. `Pools, newest first`. */
  itemsDescription: string;
  run(
    workspaceId: string,
    query: Partial<Record<keyof Q, string>>,
    page: Page,
  ): Promise<{ items: unknown[]; total: number }> | { items: unknown[]; total: number };
}

interface CreateRoute<B extends TObject> extends RouteDoc {
  body: B;
  /** The item as this route answers it, when it says more than the other routes (a key shown once). */
  item?: TSchema;
  run(workspaceId: string, body: Static<B>, now: number): unknown;
}

interface GetRoute extends RouteDoc {
  /** The item as this route answers it, when it says more than the other routes (a live count). */
  item?: TSchema;
  run(workspaceId: string, id: string, now: number): unknown;
}

interface UpdateRoute<B extends TObject> extends RouteDoc {
  body: B;
  run(workspaceId: string, id: string, body: Static<B>, now: number): unknown;
}

interface DeleteRoute extends RouteDoc {
  /**
   * `deleted` (default): answers `{ok, deleted: true}`; `item`: answers `{ok, <one>: item}` with
   * what `run` returns (the resource as it was).
   */
  answers?: "deleted" | "item";
  run(workspaceId: string, id: string, now: number): unknown;
}

export interface ResourceRoutes<Q extends TProperties, C extends TObject, U extends TObject> {
  list?: ListRoute<Q>;
  create?: CreateRoute<C>;
  get?: GetRoute;
  update?: UpdateRoute<U>;
  delete?: DeleteRoute;
}

const pascal = (noun: string) => noun.replace(/(^|_)([a-z])/g, (_, __, c: string) => c.toUpperCase());

/** The shared CRUD routes of one resource, as an Elysia plugin for the resource's own instance. */
export function resourceRoutes<
  Q extends TProperties = TProperties,
  C extends TObject = TObject,
  U extends TObject = TObject,
>(deps: AppDeps, names: ResourceNames, routes: ResourceRoutes<Q, C, U>) {
  const { path, tag, one, many, item } = names;
  const params = t.Object({ id: t.String({ description: names.idDescription }) });
  const one_ = pascal(names.operationNouns?.one ?? one);
  const many_ = pascal(names.operationNouns?.many ?? many);
  const envelope = (schema: TSchema) => t.Object({ ok: Ok, [one]: schema });
  const detail = (operationId: string, doc: RouteDoc) => ({
    tags: [tag],
    operationId,
    summary: doc.summary,
    ...(doc.description ? { description: doc.description } : {}),
  });
  const app = new Elysia();
  const { list, create, get, update } = routes;
  const remove = routes.delete;

  if (list) {
    app.get(
      path,
      async ({ request, query }) => {
        const page = parsePagination(query);
        const { items, total } = await list.run(
          workspaceOf(request),
          query as Partial<Record<keyof Q, string>>,
          page,
        );
        return { ok: true as const, [many]: items, total, ...page };
      },
      {
        query: Query({ ...paginationQuery, ...list.query }),
        detail: detail(`list${many_}`, list),
        response: responses(listEnvelope(many, item, list.itemsDescription), [
          ...READ_ERRORS,
          422,
          ...(list.errors ?? []),
        ]),
      },
    );
  }
  if (create) {
    app.post(
      path,
      ({ request, body }) =>
        envelopeOf(one, create.run(workspaceOf(request), body as Static<C>, deps.clock.now())),
      {
        body: create.body,
        detail: detail(`create${one_}`, create),
        response: responses(envelope(create.item ?? item), [...WRITE_ERRORS, ...(create.errors ?? [])]),
      },
    );
  }
  if (get) {
    app.get(
      `${path}/:id`,
      ({ request, params }) => envelopeOf(one, get.run(workspaceOf(request), params.id, deps.clock.now())),
      {
        params,
        detail: detail(`get${one_}`, get),
        response: responses(envelope(get.item ?? item), [...READ_ERRORS, 404, ...(get.errors ?? [])]),
      },
    );
  }
  if (update) {
    app.patch(
      `${path}/:id`,
      ({ request, params, body }) =>
        envelopeOf(one, update.run(workspaceOf(request), params.id, body as Static<U>, deps.clock.now())),
      {
        params,
        body: update.body,
        detail: detail(`update${one_}`, update),
        response: responses(envelope(item), [...WRITE_ERRORS, 404, ...(update.errors ?? [])]),
      },
    );
  }
  if (remove) {
    const answersItem = remove.answers === "item";
    app.delete(
      `${path}/:id`,
      async ({ request, params }) => {
        const removed = await remove.run(workspaceOf(request), params.id, deps.clock.now());
        return answersItem
          ? { ok: true as const, [one]: removed }
          : { ok: true as const, deleted: true as const };
      },
      {
        params,
        detail: detail(`delete${one_}`, remove),
        response: responses(answersItem ? envelope(item) : t.Object({ ok: Ok, deleted: Deleted }), [
          ...WRITE_ERRORS,
          404,
          ...(remove.errors ?? []),
        ]),
      },
    );
  }
  return app;
}

/** `{ok, <one>: result}`, synchronously unless `run` answered a promise (e.g. a provider sync first). */
function envelopeOf(one: string, result: unknown) {
  return result instanceof Promise
    ? result.then((value) => ({ ok: true as const, [one]: value }))
    : { ok: true as const, [one]: result };
}
