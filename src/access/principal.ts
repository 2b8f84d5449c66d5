/**
 * Who is calling. The platform service resolves credentials (it owns the tables);
 * this module holds the shapes and the guard helpers every service's routes use.
 */
import { forbidden, unauthorized } from "../core/errors";
import type { MaybePromise } from "../core/maybe-promise";
import type { Policy } from "./policy";

export type Principal =
  | { kind: "session"; accountId: string; sessionId: string; isOperator: boolean }
  | { kind: "personal_token"; accountId: string; tokenId: string; isOperator: boolean }
  /** minterPolicy: the minter's current role policy; a key never exceeds it (checked on every use). */
  | { kind: "api_key"; keyId: string; workspaceId: string; policy: Policy; createdBy: string; minterPolicy: Policy };

export interface PrincipalResolver {
  /** Resolves a bearer token or the auth_token cookie; null when absent or invalid. */
  resolve(bearer: string | null, cookie: string | null): MaybePromise<Principal | null>;
}

const BEARER = /^Bearer\s+(\S+)\s*$/i;
/** "Bearer <token>" exactly: the usual form, recognised without a match array. */
const PLAIN_BEARER = /^Bearer \S+$/;

export function bearerFrom(header: string | null | undefined): string | null {
  if (!header) return null;
  if (PLAIN_BEARER.test(header)) return header.slice(7);
  const m = BEARER.exec(header);
  return m ? m[1] : null;
}

export function requirePrincipal(p: Principal | null): Principal {
  if (!p) throw unauthorized("Missing or invalid access token");
  return p;
}

/** Humans only (console session or personal token): e.g. workspace create/delete. */
export function requireHuman(p: Principal | null, what = "This operation"): Extract<Principal, { accountId: string }> {
  const principal = requirePrincipal(p);
  if (principal.kind === "api_key") throw forbidden(`${what} needs a signed-in user, not a workspace API key`, "HUMAN_REQUIRED");
  return principal;
}

/** A console session only: minting and revoking credentials. */
export function requireSession(p: Principal | null, what = "This operation"): Extract<Principal, { kind: "session" }> {
  const principal = requirePrincipal(p);
  if (principal.kind !== "session") throw forbidden(`${what} needs a signed-in console session`, "SESSION_REQUIRED");
  return principal;
}

export const actorOf = (p: Principal) =>
  p.kind === "api_key" ? { actor_type: "api_key", actor_id: p.keyId } : p.kind === "personal_token" ? { actor_type: "personal_token", actor_id: p.accountId } : { actor_type: "account", actor_id: p.accountId };
