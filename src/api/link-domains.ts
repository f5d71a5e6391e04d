import { Elysia, t } from "elysia";
import type { AppDeps } from "../app";
import {
  createLinkDomain,
  deleteLinkDomain,
  findLinkDomain,
  isLinkDomainToken,
  LINK_DOMAIN_STATUSES,
  linkDomainJson,
  listLinkDomains,
  updateLinkDomain,
  verifyLinkDomain,
} from "../domain/attribution/link-domains";
import { workspaceOf } from "../http/context";
import { Body, Enum, NullableTimestamp, Ok, responses, Timestamp, Uuid, WRITE_ERRORS } from "../http/schemas";
import { resourceRoutes } from "./resource-routes";

const TAGS = ["Link domains"];

export const LinkDomainSchema = t.Object(
  {
    id: Uuid("Link domain id"),
    domain: t.String({
      description: "Host name the workspace's tracked links use (lower case, no trailing dot)",
      examples: ["go.acmebikes.com"],
    }),
    status: Enum(
      LINK_DOMAIN_STATUSES,
      "pending (added, not checked yet), verified (the check reached this server: links may use it) or failed (see failure_reason)",
    ),
    is_default: t.Boolean({
      description:
        "The domain every tracked link of the workspace uses unless a campaign, offer, flow node or agent names another (used only while verified). The first domain verified becomes the default.",
    }),
    verification: t.Object(
      {
        method: t.Literal("http", { description: "Always http: the check fetches `url`" }),
        url: t.String({
          description: "What the check fetches; it must reach this server, which answers `token`",
          examples: ["https://go.acmebikes.com/.well-known/outreach/3xk9QaZb7LmN2pQrStUvWxYz01234567"],
        }),
        token: t.String({
          description: "What this server answers at `/.well-known/outreach/<token>` on any host",
          examples: ["3xk9QaZb7LmN2pQrStUvWxYz01234567"],
        }),
      },
      { description: "How the domain is verified" },
    ),
    failure_reason: t.Union([t.String(), t.Null()], {
      description:
        "Why the last check failed (`the check URL answered 404`, `could not connect`, `the check URL answered another token`, `the check URL did not answer within 5 s`); null unless failed",
      examples: ["the check URL answered 404"],
    }),
    verified_at: NullableTimestamp("When a check last succeeded"),
    checked_at: NullableTimestamp("When the domain was last checked"),
    created_at: Timestamp("Added"),
  },
  { description: "A branded link domain: a host name of the workspace's own pointed at this server" },
);

const CreateBody = Body(
  {
    domain: t.String({
      minLength: 1,
      // The API's cap on strings (API.md §1); the 253 of a host name is checked with its own wording.
      maxLength: 2000,
      description:
        "A host name the workspace controls (a subdomain such as `go.example.com` is usual). Not an IP address, a public URL shortener, this server's own PUBLIC_URL host, or anything but a host name (no scheme, path, port or spaces; at least two labels; max 253 characters). Stored in lower case without a trailing dot.",
      examples: ["go.acmebikes.com"],
    }),
  },
  { description: "A new link domain" },
);

const PatchBody = Body(
  {
    is_default: t.Optional(
      t.Boolean({
        description:
          "true: the workspace's default link domain (verified domains only; 409 otherwise), replacing the previous default; false: no default (links use PUBLIC_URL unless they name a domain)",
      }),
    ),
  },
  { description: "Fields to change" },
);

const CHECK_DOC = `The check fetches \`https://<domain>/.well-known/outreach/<token>\` (no redirects followed, at most 1 KiB read, a few seconds at most; a domain resolving to a link-local or cloud-metadata address is not fetched) and expects this server's answer: the token. With \`LINK_DOMAIN_CHECK_BASE\` set, it is sent there instead, with the domain as the \`Host\` header.`;

// /v1/link-domains – branded link domains (API.md §7.5); GET /.well-known/outreach/{token} – the check's answer.
export function linkDomainsRoutes(deps: AppDeps) {
  const publicUrl = deps.config.publicUrl;
  return new Elysia({ name: "link-domains" })
    .use(
      resourceRoutes(
        deps,
        {
          path: "/v1/link-domains",
          tag: "Link domains",
          one: "link_domain",
          many: "link_domains",
          item: LinkDomainSchema,
          idDescription: "Link domain id",
        },
        {
          list: {
            summary: "List link domains (newest first)",
            description: "Filter: `status` (pending, verified, failed).",
            itemsDescription: "Link domains, newest first",
            query: { status: t.Optional(t.String({ description: "pending | verified | failed" })) },
            run: async (workspaceId, query, page) => {
              const { linkDomains, total } = await listLinkDomains(deps.db, workspaceId, query, page);
              return { items: linkDomains, total };
            },
          },
          create: {
            summary: "Add a link domain",
            description: `Adds the domain as \`pending\`; point it at this server (a CNAME to PUBLIC_URL's host, or a reverse proxy that forwards \`/r/*\` and \`/.well-known/outreach/*\` here over HTTPS), then \`POST /v1/link-domains/{id}/verify\`. 422 naming the reason: \`domain must be a host name, not an IP address\`, \`domain is a public URL shortener (bit.ly): carriers filter its links\`, \`domain is this server's own PUBLIC_URL host: …\`, \`domain must be a host name, without a scheme (like https://)\` (also: a path, a port, spaces, one label, \`domain is too long (max 253)\`, \`domain has an invalid label "…"\`). 409 \`domain is already used by another workspace\` (a domain belongs to one workspace of the server) or \`domain is already a link domain of this workspace\`.`,
            body: CreateBody,
            errors: [409],
            run: async (workspaceId, body, now) =>
              await createLinkDomain(deps.db, workspaceId, body, publicUrl, now),
          },
          get: {
            summary: "Get a link domain",
            description: "The domain with its status and verification instructions.",
            run: async (workspaceId, id) => linkDomainJson(await findLinkDomain(deps.db, workspaceId, id)),
          },
          update: {
            summary: "Set or clear the default link domain",
            description:
              "`is_default: true` makes a verified domain the workspace's default (the previous default stops being one); 409 `Link domain is not verified: verify it before making it the default` otherwise. `is_default: false` leaves the workspace without a default.",
            body: PatchBody,
            errors: [409],
            run: async (workspaceId, id, body, now) =>
              await updateLinkDomain(deps.db, workspaceId, id, body, now),
          },
          delete: {
            summary: "Delete a link domain",
            description:
              "Allowed while campaigns, offers, agents or flow nodes name it: they keep its id, and their links fall back when a message is written (or an offer is read) to the workspace's default verified domain, else PUBLIC_URL. Links already sent on the domain keep working only as long as the domain still points at this server.",
            run: async (workspaceId, id) => await deleteLinkDomain(deps.db, workspaceId, id),
          },
        },
      ),
    )
    .post(
      "/v1/link-domains/:id/verify",
      ({ request, params }) =>
        verifyLinkDomain(
          deps.db,
          workspaceOf(request),
          params.id,
          {
            base: deps.config.linkDomainCheckBase ?? undefined,
            timeoutMs: deps.config.linkDomainCheckTimeoutMs,
          },
          () => deps.clock.now(),
        ).then((linkDomain) => ({ ok: true as const, link_domain: linkDomain })),
      {
        params: t.Object({ id: t.String({ description: "Link domain id" }) }),
        detail: {
          tags: TAGS,
          operationId: "verifyLinkDomain",
          summary: "Check that a link domain reaches this server",
          description: `${CHECK_DOC} Answers the record: \`verified\` (the first verified domain of the workspace becomes its default), or \`failed\` with \`failure_reason\` (\`the check URL answered 404\`, \`could not connect\`, \`the check URL answered another token\`, \`the check URL did not answer within 5 s\`). A failed check is an answer, never an error; a verified domain that fails a later check is no longer used. May be repeated at any time.`,
        },
        response: responses(t.Object({ ok: Ok, link_domain: LinkDomainSchema }), [...WRITE_ERRORS, 404]),
      },
    )
    .get(
      "/.well-known/outreach/:token",
      async ({ params }) =>
        (await isLinkDomainToken(deps.db, params.token))
          ? new Response(params.token, {
              headers: { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store" },
            })
          : new Response("Not found", {
              status: 404,
              headers: { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store" },
            }),
      {
        params: t.Object({ token: t.String({ description: "A link domain's verification token" }) }),
        detail: {
          tags: ["Tracking"],
          operationId: "answerLinkDomainCheck",
          summary: "Answer a link domain's check",
          description:
            "Public, on any host the server is reached by, rate limited per address. Answers the token as plain text when it is a link domain's token of this server, so a check through the domain proves the domain reaches this server; 404 otherwise.",
          responses: {
            200: {
              description: "The token, as plain text",
              content: {
                "text/plain": {
                  schema: {
                    type: "string",
                    description: "The token",
                    example: "3xk9QaZb7LmN2pQrStUvWxYz01234567",
                  },
                },
              },
            },
            404: { description: "Not a token of this server" },
          },
        },
      },
    );
}
