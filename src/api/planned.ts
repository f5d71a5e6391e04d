import { Elysia } from "elysia";
import { AppError } from "../lib/errors";

/**
 * Parts of the API the specification names that this release does not have yet. They answer
 * 501 with what is missing (after authentication, like every /v1 route) instead of a bare 404,
 * so a client can tell "not built yet" from "no such thing".
 */
export const PLANNED: { prefix: string; name: string }[] = [];

// /v1/conversion, /v1/agents, /v1/flows, ... – 501 until they are built.
export function plannedRoutes() {
  const app = new Elysia({ name: "planned" });
  for (const { prefix, name } of PLANNED) {
    const answer = () => {
      throw new AppError("not_implemented", `Not implemented yet in this version: ${name} (${prefix})`);
    };
    app.all(prefix, answer, { detail: { hide: true } });
    app.all(`${prefix}/*`, answer, { detail: { hide: true } });
  }
  return app;
}
