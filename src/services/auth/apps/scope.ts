/**
 * Route plumbing of every end-user / App-admin route group: `/:app_slug/v1` prefix and the
 * App resolved from the slug (404 for an unknown App) plus request metadata. Each route
 * module builds its group with appGroup(auth) and adds its routes.
 */
import { Elysia } from "elysia";
import { requestMeta, sessionCookieOf } from "../../../access/http";
import { bearerFrom } from "../../../access/principal";
import { unauthorized } from "../../../core/errors";
import { routeSecurityOf } from "../../../core/http";
import { andThen } from "../../../core/maybe-promise";
import type { AdminCredentials, AppAccess } from "./access";
import { PLATFORM_SCHEMES, secured, type Requirement } from "../../../access/openapi";
import type { AppService } from "./service";
import { appParams } from "../schemas";

/** The group's own parameter, for its routes that take no other: app_slug in its shape (../schemas.ts AppSlug). */
export const appSlugParams = appParams();

/**
 * What the route groups use of the Auth service: the App by slug and the caller check. Route
 * modules take the parts they use (AuthService passes itself) rather than the facade, which
 * imports every feature.
 */
export interface AppScopeParts {
  apps: AppService;
  access: AppAccess;
}

const slugOf = (params: unknown) => (params as { app_slug: string }).app_slug;

/**
 * `security`: what the group's routes accept (access/openapi.ts), unless a route says otherwise.
 * `app` is the resolved App: the resolve awaits the lookup, so every route of the group runs
 * asynchronously (Elysia compiles a route async when one of its hooks is). The token-check
 * hot paths use tokenCheckGroup instead.
 */
export function appGroup(auth: AppScopeParts, security: Requirement[]) {
  return new Elysia({ prefix: "/:app_slug/v1" })
    .derive(({ request }) => adminCredentialFirst(auth, request))
    .resolve(async ({ params, request }) => ({
      app: await auth.apps.bySlug(slugOf(params)),
      meta: requestMeta(request),
    }))
    .guard(secured(security));
}

/** The schemes of an administrative route: platform callers and the App's M2M tokens. */
const ADMIN_SCHEMES: ReadonlySet<string> = new Set([...PLATFORM_SCHEMES, "m2mToken"]);

/**
 * Credential before input on administrative routes: a derive runs before Elysia validates, so
 * a credential that is no caller at all (an unknown platform token, a stale cookie) is a 401
 * before any 400, as on platform routes. An M2M token needs its App to be judged: `admin` does.
 */
function adminCredentialFirst(auth: AppScopeParts, request: Request) {
  const security = routeSecurityOf(request);
  if (!security?.needed || !security.requirements.every((req) => Object.keys(req).every((name) => ADMIN_SCHEMES.has(name)))) return {};
  return andThen(auth.access.knownCaller(adminCredentials(request)), (known) => {
    if (!known) throw unauthorized("Missing or invalid credentials");
    return {};
  });
}

/**
 * The same group for the token-check hot paths (/me, /verify, /authorize, /oauth/introspect):
 * its resolve stays synchronous, so `app` is a MaybePromise<LoadedApp>, the cached App at once
 * or a promise on a cache miss (an unknown slug rejects with 404). Handlers chain on it with
 * andThen (core/maybe-promise.ts), so a cached App and an already verified token are answered
 * without a promise.
 */
export function tokenCheckGroup(auth: AppScopeParts, security: Requirement[]) {
  return new Elysia({ prefix: "/:app_slug/v1" })
    .resolve(({ params, request }) => ({
      app: auth.apps.bySlug(slugOf(params)),
      meta: requestMeta(request),
    }))
    .guard(secured(security));
}

/** The `Authorization` header, for AppAccess.endUser / admin. */
export const authz = (request: Request) => request.headers.get("authorization");

/** The caller's credentials for AppAccess.admin: the cookie is read only without a bearer token. */
export function adminCredentials(request: Request): AdminCredentials {
  const authorization = authz(request);
  return { authorization, cookie: bearerFrom(authorization) ? null : sessionCookieOf(request) };
}
