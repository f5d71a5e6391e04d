import { Elysia, t } from "elysia";
import type { AppDeps } from "../app";
import { linkDestination, recordClick } from "../domain/attribution/clicks";
import {
  createOffer,
  deleteOffer,
  findOffer,
  listOffers,
  OFFER_STATUSES,
  offerJson,
  updateOffer,
} from "../domain/attribution/offers";
import { MAX_VALUE } from "../domain/attribution/values";
import { Body, Enum, Timestamp, Uuid } from "../http/schemas";
import { linkDomainsRoutes } from "./link-domains";
import { resourceRoutes } from "./resource-routes";

export const OfferSchema = t.Object(
  {
    id: Uuid("Offer id"),
    name: t.String({ description: "Offer name", examples: ["Spring sale"] }),
    destination_url: t.String({
      description: "Where a click lands",
      examples: ["https://shop.example.com/spring?utm_source=sms"],
    }),
    value: t.Union([t.Number(), t.Null()], { description: "Nominal value of a conversion", examples: [49] }),
    currency: t.String({ description: "ISO 4217", examples: ["USD"] }),
    status: Enum(OFFER_STATUSES, "active, or paused (its links answer 404)"),
    tracking_url: t.String({
      description:
        "The offer's own tracked link (`https://<link domain>/r/<code>` on the offer's link domain, else the workspace's default verified domain, else `<PUBLIC_URL>/r/<code>`); campaign messages get per-recipient links",
      examples: ["https://go.acmebikes.com/r/Xb3k9QaZ"],
    }),
    link_domain_id: t.Union([t.String(), t.Null()], {
      description:
        "Branded link domain of its links; null: the workspace's default verified domain, else PUBLIC_URL. A domain deleted or no longer verified falls back the same way.",
    }),
    created_at: Timestamp("Created"),
  },
  { description: "A destination with conversion attribution" },
);

const Value = t.Union([t.Number({ minimum: 0, maximum: MAX_VALUE }), t.Null()], {
  description: `Nominal value of a conversion (0 to ${MAX_VALUE}), or null`,
});
const Url = t.String({
  minLength: 1,
  maxLength: 2000,
  description:
    "http or https URL, not a link-local or cloud-metadata address, with no control characters (CR, LF, tab…) or spaces: encode them as %0D, %20… (max 2000)",
  examples: ["https://shop.example.com/spring?utm_source=sms"],
});
const Currency = t.String({
  maxLength: 3,
  description: "ISO 4217, three letters; default USD",
  examples: ["USD"],
});

const LinkDomainId = t.Union([t.String({ maxLength: 64 }), t.Null()], {
  description:
    "A verified link domain of the workspace (`/v1/link-domains`), or null for the default; otherwise 422 `link_domain_id is not a verified link domain`",
});

const CreateBody = Body(
  {
    name: t.String({
      minLength: 1,
      maxLength: 200,
      description: "Offer name (max 200)",
      examples: ["Spring sale"],
    }),
    destination_url: Url,
    value: t.Optional(Value),
    currency: t.Optional(Currency),
    status: t.Optional(Enum(OFFER_STATUSES, "active (default) or paused")),
    link_domain_id: t.Optional(LinkDomainId),
  },
  { description: "A new offer" },
);

const PatchBody = Body(
  {
    name: t.Optional(t.String({ minLength: 1, maxLength: 200, description: "Offer name (max 200)" })),
    destination_url: t.Optional(Url),
    value: t.Optional(Value),
    currency: t.Optional(Currency),
    status: t.Optional(Enum(OFFER_STATUSES, "active or paused")),
    link_domain_id: t.Optional(LinkDomainId),
  },
  { description: "Fields to change; others stay as they are" },
);

const NOT_FOUND_PAGE = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Link not found</title><meta name="viewport" content="width=device-width,initial-scale=1"></head><body style="font-family:system-ui,sans-serif;margin:3rem auto;max-width:32rem;padding:0 1rem"><h1>Link not found</h1><p>This link does not exist or is no longer active.</p></body></html>`;

function notFoundPage(): Response {
  return new Response(NOT_FOUND_PAGE, {
    status: 404,
    headers: { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" },
  });
}

// /v1/offers – CRUD of offers; GET /r/{code} – a tracked link (public): click, then 302. The
// link domains the links go out on (/v1/link-domains) are mounted here, beside the links.
export function offersRoutes(deps: AppDeps) {
  const publicUrl = deps.config.publicUrl;
  return new Elysia({ name: "offers" })
    .use(linkDomainsRoutes(deps))
    .use(
      resourceRoutes(
        deps,
        {
          path: "/v1/offers",
          tag: "Offers",
          one: "offer",
          many: "offers",
          item: OfferSchema,
          idDescription: "Offer id",
        },
        {
          list: {
            summary: "List offers (newest first)",
            description: "Filters: `status` (active, paused), `q` (name contains).",
            itemsDescription: "Offers, newest first",
            query: {
              status: t.Optional(t.String({ description: "active | paused" })),
              q: t.Optional(
                t.String({
                  description: "Name contains (case-insensitive for ASCII letters: É and é differ)",
                }),
              ),
            },
            run: async (workspaceId, query, page) => {
              const { offers, total } = await listOffers(deps.db, workspaceId, query, page, publicUrl);
              return { items: offers, total };
            },
          },
          create: {
            summary: "Create an offer",
            description:
              "`tracking_url` is the offer's own link; `{{offer_url}}` in a campaign body becomes a per-recipient link to it. 422 `destination_url must be a valid URL` (also for control characters or spaces), `destination_url must be an http or https URL`, `destination_url must not point to a link-local or cloud metadata address`, `link_domain_id is not a verified link domain`.",
            body: CreateBody,
            run: async (workspaceId, body, now) =>
              await createOffer(deps.db, workspaceId, body, publicUrl, now),
          },
          get: {
            summary: "Get an offer",
            description: "The offer with its `tracking_url`.",
            run: async (workspaceId, id) =>
              await offerJson(deps.db, await findOffer(deps.db, workspaceId, id), publicUrl),
          },
          update: {
            summary: "Update an offer",
            description:
              "Partial update; `status: paused` makes every link of the offer answer 404. `destination_url` is checked as on create (422 `destination_url must be a valid URL` for control characters or spaces).",
            body: PatchBody,
            run: async (workspaceId, id, body, now) =>
              await updateOffer(deps.db, workspaceId, id, body, publicUrl, now),
          },
          delete: {
            summary: "Delete an offer",
            description: "Its links answer 404 from now on; recorded clicks and conversions keep its id.",
            run: async (workspaceId, id) => await deleteOffer(deps.db, workspaceId, id),
          },
        },
      ),
    )
    .get(
      "/r/:code",
      async ({ params, request }) => {
        const location =
          request.method === "HEAD"
            ? await linkDestination(deps.db, params.code)
            : await recordClick(deps.db, params.code, deps.clock.now());
        if (!location) return notFoundPage();
        return new Response(null, {
          status: 302,
          headers: {
            location: headerSafeLocation(location),
            "cache-control": "no-store",
            "referrer-policy": "no-referrer",
          },
        });
      },
      {
        params: t.Object({ code: t.String({ description: "Link code" }) }),
        detail: {
          tags: ["Tracking"],
          operationId: "followTrackedLink",
          summary: "Follow a tracked link",
          description:
            "Public, rate limited per address; answers on any host it is reached by (PUBLIC_URL or a branded link domain of `/v1/link-domains`). Records a click (event `link.clicked`) and answers 302 to the offer's destination with `vcx=<click id>` appended to its own query string (replacing a `vcx` of the destination's own). `HEAD` answers 302 to the destination without recording a click (link checkers and previews). An unknown code or a paused offer answers a 404 page and redirects nowhere.",
          responses: {
            302: { description: "Redirect to the destination with `vcx` appended" },
            404: { description: "Unknown code or paused offer (an HTML page)" },
            429: { description: "Rate limited (per address)" },
          },
        },
      },
    );
}

/**
 * A Location header value for any stored destination: characters a header cannot carry (controls,
 * spaces, anything outside printable ASCII) percent-encoded as UTF-8, so a destination stored
 * before URLs were checked, or a non-ASCII one, still redirects instead of answering 500. A valid
 * ASCII URL passes byte for byte.
 */
export function headerSafeLocation(location: string): string {
  return location.replace(/[^\x21-\x7e]/gu, (character) => {
    try {
      return encodeURIComponent(character);
    } catch {
      return ""; // a lone surrogate has no UTF-8 form
    }
  });
}
