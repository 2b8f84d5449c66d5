/**
 * Route plumbing shared by every service: the caller's principal (resolved once per
 * request, only on routes that sit behind this plugin) and request metadata for audit.
 */
import { Elysia } from "elysia";
import { bearerFrom, type Principal, type PrincipalResolver } from "./principal";

export interface RequestMeta {
  ip: string | null;
  userAgent: string | null;
}

type IpSource = { requestIP(r: Request): { address: string } | null } | null;

/** Computed on first read: most requests (reads) never need it, and requestIP is not free. */
export function requestMeta(request: Request, server: IpSource): RequestMeta {
  let ip: string | null | undefined;
  let ua: string | null | undefined;
  return {
    get ip() {
      return ip === undefined ? (ip = server?.requestIP(request)?.address ?? null) : ip;
    },
    get userAgent() {
      return ua === undefined ? (ua = request.headers.get("user-agent")) : ua;
    },
  };
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

export function principalPlugin(resolver: PrincipalResolver) {
  return new Elysia({ name: "principal" }).resolve({ as: "scoped" }, async ({ request, server }) => {
    // A bearer token wins over the cookie, so the cookie is only read without one.
    const bearer = bearerFrom(request.headers.get("authorization"));
    const principal: Principal | null = await resolver.resolve(bearer, bearer ? null : sessionCookieOf(request));
    return { principal, meta: requestMeta(request, server) };
  });
}
