/**
 * Route plumbing of every end-user / App-admin route group: `/:app_slug/v1` prefix and the
 * App resolved from the slug (404 for an unknown App) plus request metadata. Each route
 * module builds its group with appGroup(auth) and adds its routes.
 */
import { Elysia, t } from "elysia";
import { requestMeta } from "../../../access/http";
import { secured, type Requirement } from "../../../access/openapi";
import type { AuthService } from "../service";

export const appSlugParams = t.Object({ app_slug: t.String() });

/** `security`: what the group's routes accept (access/openapi.ts), unless a route says otherwise. */
export function appGroup(auth: AuthService, security: Requirement[]) {
  return new Elysia({ prefix: "/:app_slug/v1" })
    .resolve(({ params, request, server }) => ({
      app: auth.apps.bySlug((params as { app_slug: string }).app_slug),
      meta: requestMeta(request, server),
    }))
    .guard(secured(security));
}

/** The `Authorization` header, for AppAccess.endUser / admin. */
export const authz = (request: Request) => request.headers.get("authorization");
