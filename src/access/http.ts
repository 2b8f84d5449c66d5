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

export function principalPlugin(resolver: PrincipalResolver) {
  return new Elysia({ name: "principal" }).resolve({ as: "scoped" }, async ({ request, cookie, server }) => {
    const principal: Principal | null = await resolver.resolve(
      bearerFrom(request.headers.get("authorization")),
      (cookie.auth_token?.value as string | undefined) ?? null,
    );
    return { principal, meta: requestMeta(request, server) };
  });
}
