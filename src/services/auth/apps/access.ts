/**
 * Who is calling an App's routes.
 *
 * - End users: `Authorization: Bearer <access token>` of this App (RS256, issuer pinned,
 *   type end_user). A token of App A never verifies for App B: other keys, other issuer.
 * - Administrative callers of App routes (tenants, users, roles, invites, verification
 *   codes, audit) name an action `auth.<resource>.<verb>` and may be:
 *     - a platform principal (workspace API key, console session or personal token) whose
 *       policy allows the action in the App's workspace; another workspace's key gets 404.
 *       The console session may come as the `auth_token` cookie, as on platform routes: the
 *       cookie is SameSite=Lax (no cookie on cross-site POST/PATCH/PUT/DELETE) and these
 *       routes take JSON bodies only (415 for a form or text/plain post), so a cross-site page
 *       can neither send the cookie with a write nor send a JSON write without a CORS preflight
 *       that no route answers;
 *     - an M2M access token of this App (client_credentials) whose permissions cover the
 *       action. M2M clients are granted auth.* action names when they are created. The
 *       client is re-checked on each call: deleted, rotated after the token was issued, or
 *       no longer holding the action means the token no longer works here.
 */
import { decodeProtectedHeader, type JWTPayload } from "jose";
import { actionMatches } from "../../../access/policy";
import { bearerFrom, type Principal, type PrincipalResolver } from "../../../access/principal";
import { forbidden, unauthorized } from "../../../core/errors";
import { andThen, type MaybePromise } from "../../../core/maybe-promise";
import { actorOfPrincipal, type AppService, type LoadedApp } from "./service";
import type { AuthActor } from "../audit/record";
import type { SigningKeys } from "./keys";

export interface EndUserClaims extends JWTPayload {
  sub: string;
  sid: string;
  type: "end_user";
  role: string | null;
  permissions: string[];
  amr: string[];
  tid?: string;
  trole?: string | null;
  mfa_at?: number;
}

export interface M2mClaims extends JWTPayload {
  sub: string;
  type: "m2m";
  client_id: string;
  permissions: string[];
}

/**
 * What an administrative caller sent: the Authorization header and, only when that header
 * holds no bearer token, the console's session cookie (a bearer wins, as on platform routes).
 */
export interface AdminCredentials {
  authorization: string | null;
  cookie: string | null;
}

export type AdminCaller = { kind: "platform"; principal: Principal; actor: AuthActor } | { kind: "m2m"; clientId: string; permissions: string[]; actor: AuthActor };

const isRs256 = (token: string) => {
  try {
    return decodeProtectedHeader(token).alg === "RS256";
  } catch {
    return false;
  }
};

/** An M2M client as admin routes re-check it on every call (null when deleted). */
export type M2mClientLookup = (appId: string, clientId: string) => MaybePromise<{ permissions: string; rotated_at: string | null } | null>;

export class AppAccess {
  constructor(
    private readonly apps: AppService,
    private readonly keys: SigningKeys,
    private readonly platform: PrincipalResolver,
    private readonly m2mClient: M2mClientLookup,
  ) {}

  /** Verifies any token of this App (end-user or M2M); null when invalid. */
  verify(app: LoadedApp, token: string) {
    return this.keys.verify(app.id, app.issuer, token);
  }

  /** The end user behind a bearer access token of this App, or 401. */
  endUser(app: LoadedApp, authorization: string | null | undefined): MaybePromise<EndUserClaims> {
    const token = bearerFrom(authorization);
    if (!token) throw unauthorized("Missing or invalid access token");
    return andThen(this.verify(app, token), (claims) => {
      if (!claims || claims.type !== "end_user" || typeof claims.sub !== "string") throw unauthorized("Missing or invalid access token");
      return claims as EndUserClaims;
    });
  }

  /** The client of an M2M token while the token still stands: null once the client is deleted or its secret rotated after the token was issued. */
  currentClient(app: LoadedApp, m: M2mClaims): MaybePromise<{ permissions: string; rotated_at: string | null } | null> {
    return andThen(this.m2mClient(app.id, m.client_id), (client) => {
      if (!client || (client.rotated_at && (m.iat ?? 0) < Math.floor(Date.parse(client.rotated_at) / 1000))) return null;
      return client;
    });
  }

  /**
   * False when the credential can already be known to be no administrative caller of any
   * App: not an App-signed token (an M2M token is judged with its App, in `admin`), and no
   * platform principal either. Lets the routes answer 401 before they validate the input.
   */
  knownCaller(credentials: AdminCredentials): MaybePromise<boolean> {
    const token = bearerFrom(credentials.authorization);
    if (token && isRs256(token)) return true;
    return andThen(this.platform.resolve(token, token ? null : credentials.cookie), (principal) => principal !== null);
  }

  /** An administrative caller allowed `action` on this App: 401 without a credential, 404 for another workspace, 403 without the action. */
  async admin(app: LoadedApp, credentials: AdminCredentials, action: string): Promise<AdminCaller> {
    const token = bearerFrom(credentials.authorization);
    if (token && isRs256(token)) {
      const claims = await this.verify(app, token);
      if (!claims || claims.type !== "m2m") throw unauthorized("Missing or invalid access token");
      const m = claims as M2mClaims;
      // Admin calls are rare and write-heavy: one primary-key lookup buys immediate effect
      // for deleting a client, rotating its secret (older tokens die) or narrowing it.
      const client = await this.currentClient(app, m);
      if (!client) throw unauthorized("Missing or invalid access token");
      const current = JSON.parse(client.permissions) as string[];
      const covers = (perms: string[]) => perms.some((p) => actionMatches(p, action));
      if (!covers(m.permissions ?? []) || !covers(current)) throw forbidden(`Not allowed: ${action}`);
      return { kind: "m2m", clientId: m.client_id, permissions: m.permissions, actor: { type: "m2m_client", id: m.client_id } };
    }
    const principal = await this.platform.resolve(token, token ? null : credentials.cookie);
    if (!principal) throw unauthorized("Missing or invalid credentials");
    await this.apps.authorize(principal, app, action);
    return { kind: "platform", principal, actor: actorOfPrincipal(principal) };
  }
}
