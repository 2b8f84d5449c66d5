/**
 * Route plumbing shared by every service: the caller's principal (resolved once per
 * request, only on routes that sit behind this plugin) and request metadata for audit.
 */
import { Elysia } from "elysia";
import { unauthorized } from "../core/errors";
import { clientAddressOf, routeSecurityOf } from "../core/http";
import { andThen } from "../core/maybe-promise";
import { PLATFORM_SCHEMES } from "./openapi";
import { bearerFrom, type Principal, type PrincipalResolver } from "./principal";

export interface RequestMeta {
  ip: string | null;
  userAgent: string | null;
}

/**
 * Computed on first read: most requests (reads) never need it, and requestIP is not free.
 * A class rather than an object literal with getters: built on every authenticated request,
 * and a literal's accessors cost a property definition each.
 */
class LazyRequestMeta implements RequestMeta {
  private _ua: string | null | undefined;
  constructor(private readonly request: Request) {}
  /** The kernel's reading, kept per request: a trusted proxy's X-Forwarded-For, else the socket (null in-process). */
  get ip(): string | null {
    return clientAddressOf(this.request);
  }
  get userAgent(): string | null {
    return this._ua === undefined ? (this._ua = this.request.headers.get("user-agent")) : this._ua;
  }
}

export function requestMeta(request: Request): RequestMeta {
  return new LazyRequestMeta(request);
}

/** The console's session cookie: sign-in sets it (same value as the access token). */
export const SESSION_COOKIE = "auth_token";

/**
 * The session cookie a request carries, with Bun's cookie parser. Routes read it themselves
 * rather than through Elysia's `cookie`, which would parse every cookie header on the route
 * (and Elysia's `cookie` nowhere means no route parses cookies it does not use).
 */
export function sessionCookieOf(request: Request): string | null {
  const header = request.headers.get("cookie");
  return header ? new Bun.CookieMap(header).get(SESSION_COOKIE) : null;
}

/**
 * True when the route takes platform credentials only: then a credential the platform does
 * not know is refused here, before the input is validated. Where a route also takes another
 * kind (an Auth App's M2M token, a publishable key), the handler decides.
 */
function platformOnly(request: Request): boolean {
  const security = routeSecurityOf(request);
  return !!security?.needed && security.requirements.every((req) => Object.keys(req).every((name) => PLATFORM_SCHEMES.has(name)));
}

/**
 * The principal a route's derive found, or 401 when there is none and the route takes platform
 * credentials only: called in the transform phase, it answers before the input is validated.
 */
export function knownPlatformCaller(request: Request, principal: Principal | null): Principal | null {
  if (!principal && platformOnly(request)) throw unauthorized("Missing or invalid access token");
  return principal;
}

export function principalPlugin(resolver: PrincipalResolver) {
  // A derive, not a resolve: it runs in the transform phase, before Elysia validates the
  // input, so an invalid credential is a 401 before any 400 (credential, validation, existence).
  // Not an async function: a cached API key or a verified token resolves without a promise.
  return new Elysia({ name: "principal" }).derive({ as: "scoped" }, ({ request }) => {
    // A bearer token wins over the cookie, so the cookie is only read without one.
    const bearer = bearerFrom(request.headers.get("authorization"));
    const meta = requestMeta(request);
    return andThen(resolver.resolve(bearer, bearer ? null : sessionCookieOf(request)), (principal: Principal | null) => ({ principal: knownPlatformCaller(request, principal), meta }));
  });
}
