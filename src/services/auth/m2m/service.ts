/**
 * Machine-to-machine clients of an App and the client_credentials grant.
 *
 * Management (/auth/v1/apps/{app_id}/m2m-clients) is for platform principals with the
 * auth.m2m.* actions in the App's workspace. Decisions the spec leaves open:
 * - Permissions are auth.* action names of AUTH_ACTIONS or prefix patterns over them
 *   ("auth.user.*"). Anything covering auth.m2m.* or auth.app.* ("auth.*", "*") is refused:
 *   a client must not mint clients or manage Apps. A caller may only grant actions its own
 *   policy allows in the App's workspace (403 otherwise), so a client never exceeds its maker.
 * - client_id is `m2m_` + 24 base62 characters; the secret (`m2ms_` + 256 random bits) is
 *   shown on create and on rotate only and stored as its SHA-256 (hashToken). Rotation
 *   replaces the secret at once: no grace period for the old one.
 * - Create does not take Idempotency-Key: a replay would have to store the plaintext secret.
 * - Access tokens already issued (at most 1 hour, see TOKEN_TTL_MAX) stop working on this
 *   App's admin routes as soon as the client is deleted or its secret rotated, and lose any
 *   action its permissions no longer hold (AppAccess re-checks the client on each call).
 *   Offline verifiers (JWKS) and /verify still see them as valid JWTs until they expire.
 *
 * Token endpoint (POST /{app_slug}/v1/oauth/token, RFC 6749 §4.4, client_secret_post):
 * - Answers in the OAuth shape ({error, error_description}) rather than the house error
 *   body, because OAuth client libraries parse that; every answer has Cache-Control: no-store.
 *   That holds for every error: an unknown App slug is 401 invalid_client (no client of it
 *   can authenticate), an unusable body 400 invalid_request, another method than POST 405
 *   invalid_request, an unexpected failure 500 server_error.
 * - Failed client authentications are counted per client_id (known or not, so the answer is
 *   no existence oracle): after 10 in a minute every attempt for that client_id is 429
 *   {error: "temporarily_unavailable"} with Retry-After until the oldest failure is a minute
 *   old, correct secret included (otherwise guessing could go on). Success does not reset it.
 * - scope: space-separated, each entry covered by one of the client's permissions
 *   (invalid_scope otherwise); absent or empty means all of them. The token carries the
 *   granted list as `permissions` and as the space-joined `scope`.
 */
import type { RequestMeta } from "../../../access/http";
import { actionMatches, isAllowedByAll, ACTION_NAME_RE } from "../../../access/policy";
import type { Principal } from "../../../access/principal";
import { MINUTE } from "../../../core/clock";
import { tx } from "../../../core/db";
import { WriteBehind } from "../../../core/write-behind";
import { ApiError, badRequest, forbidden, notFound, type ErrorDetail } from "../../../core/errors";
import { randomBase62, uuid } from "../../../core/ids";
import { buildPage, decodeCursor, parseLimit } from "../../../core/pagination";
import { hashToken, randomToken, safeEqual } from "../../../core/secrets";
import type { AppContext } from "../../../context";
import { actorOfPrincipal, type LoadedApp, type AppService } from "../apps/service";
import { recordAuthAudit } from "../audit/record";
import { AUTH_ACTIONS } from "../actions";
import type { SigningKeys } from "../apps/keys";
import type { AuthContext } from "../events";
import * as store from "./store";
import { clientView } from "./views";

export const CLIENT_ID_PREFIX = "m2m_";
export const CLIENT_SECRET_PREFIX = "m2ms_";
/** M2M tokens live at most this long whatever the App's access_token_ttl. */
export const TOKEN_TTL_MAX_SEC = 3600;
/** Failed client authentications per client_id per minute before 429. */
export const TOKEN_FAILURES_PER_MINUTE = 10;
export const MAX_PERMISSIONS = 50;
export const NAME_MAX = 200;
/** Prefixes no M2M client may be granted (no escalation to App or client management). */
const UNGRANTABLE = ["auth.m2m.", "auth.app."];

/** What the token endpoint answers: an OAuth body, never the house error body. */
export interface TokenAnswer {
  status: number;
  body: Record<string, unknown>;
  headers?: Record<string, string>;
}

export const oauthError = (status: number, error: string, description: string, headers?: Record<string, string>): TokenAnswer => ({
  status,
  body: { error, error_description: description },
  headers,
});

const newSecret = () => {
  const secret = `${CLIENT_SECRET_PREFIX}${randomToken(32)}`;
  return { secret, hash: hashToken(secret), hint: secret.slice(-4) };
};

export class M2mService {
  /** Every auth.* action a client may hold (computed once: AUTH_ACTIONS is fixed). */
  private readonly grantable: string[];
  private readonly allActions: string[];
  /**
   * The audit row and last-use touch of each issued token, written in batches: one commit per
   * token cost about as much as the grant's own work. Read paths flush first, so the audit log
   * and a client's last_used_at show every token issued so far.
   */
  readonly tokenLog: WriteBehind;

  constructor(
    private readonly ctx: AppContext,
    /** The parts of the Auth service this feature uses (AuthService passes itself). */
    private readonly auth: { apps: AppService; keys: SigningKeys; m: Pick<AuthContext, "tenancy"> },
  ) {
    this.allActions = AUTH_ACTIONS.map((a) => a.name);
    this.grantable = this.allActions.filter((n) => !UNGRANTABLE.some((p) => n.startsWith(p)));
    this.tokenLog = new WriteBehind(ctx.db, ctx.log, "m2m token log");
  }

  // --- validation --------------------------------------------------------------------

  /** Normalised (deduplicated, sorted) permission list, or 400 naming each bad entry. */
  private checkPermissions(raw: unknown): string[] {
    if (!Array.isArray(raw)) throw badRequest("Invalid permissions", [{ field: "permissions", reason: "must be an array of auth.* action names" }]);
    const details: ErrorDetail[] = [];
    if (raw.length > MAX_PERMISSIONS) details.push({ field: "permissions", reason: `at most ${MAX_PERMISSIONS} entries` });
    raw.forEach((p, i) => {
      const field = `permissions.${i}`;
      if (typeof p !== "string") return details.push({ field, reason: "must be a string" });
      const isPattern = p.endsWith(".*");
      if (!isPattern && !ACTION_NAME_RE.test(p) && p !== "*") return details.push({ field, reason: "must be an action name like auth.user.read or a pattern like auth.user.*" });
      const covered = this.allActions.filter((a) => actionMatches(p, a));
      if (!covered.length) return details.push({ field, reason: `"${p}" names no Auth action` });
      const bad = covered.filter((a) => !this.grantable.includes(a));
      if (bad.length) details.push({ field, reason: `"${p}" would grant ${bad.join(", ")}: M2M clients cannot hold auth.m2m.* or auth.app.* actions` });
    });
    if (details.length) throw badRequest("Invalid permissions", details);
    return [...new Set(raw as string[])].sort();
  }

  private checkName(raw: unknown): string {
    const name = typeof raw === "string" ? raw.trim() : "";
    if (!name || name.length > NAME_MAX) throw badRequest("Invalid name", [{ field: "name", reason: `1-${NAME_MAX} characters` }]);
    return name;
  }

  /** 403 unless the caller's own policy allows every action the permissions cover. */
  private async assertCallerHolds(p: Principal, app: LoadedApp, permissions: string[]) {
    const access = await this.auth.m.tenancy.authz.workspaceAccess(this.ctx.db, p, { id: app.workspaceId });
    const resource = `workspace/${app.workspaceId}`;
    const missing = this.grantable.filter((a) => permissions.some((perm) => actionMatches(perm, a)) && !isAllowedByAll(access.policies, a, resource));
    if (missing.length) throw forbidden(`You cannot grant actions you are not allowed yourself: ${missing.join(", ")}`);
  }

  private async load(app: LoadedApp, ref: string) {
    const row = await store.clientByRef(this.ctx.db, app.id, ref);
    if (!row) throw notFound("M2M client");
    return row;
  }

  // --- management --------------------------------------------------------------------

  async create(p: Principal, appId: string, b: { name: unknown; permissions: unknown }, meta: RequestMeta) {
    const app = await this.auth.apps.forPrincipal(p, appId, "auth.m2m.create");
    const name = this.checkName(b.name);
    const permissions = this.checkPermissions(b.permissions);
    await this.assertCallerHolds(p, app, permissions);
    const { secret, hash, hint } = newSecret();
    const row: store.M2mClientRow = {
      id: uuid(),
      app_id: app.id,
      client_id: `${CLIENT_ID_PREFIX}${randomBase62(24)}`,
      name,
      secret_hash: hash,
      secret_hint: hint,
      permissions: JSON.stringify(permissions),
      created_at: this.ctx.clock.iso(),
      rotated_at: null,
      last_used_at: null,
    };
    await tx(this.ctx.db, async (t) => {
      await store.insertClient(t, row);
      await recordAuthAudit(t, this.ctx, app.id, { action: "m2m.create", actor: actorOfPrincipal(p), target: { type: "m2m_client", id: row.client_id }, meta, metadata: { name, permissions } });
    });
    return { ...clientView(row), client_secret: secret };
  }

  async list(p: Principal, appId: string, q: { limit?: number; cursor?: string }) {
    await this.tokenLog.flush();
    const app = await this.auth.apps.forPrincipal(p, appId, "auth.m2m.list");
    const limit = parseLimit(q.limit);
    const after = decodeCursor<{ id: unknown }>(q.cursor)?.id;
    const rows = await store.listClients(this.ctx.db, app.id, typeof after === "string" ? after : null, limit + 1);
    return buildPage(rows, limit, (r) => ({ id: r.id }), clientView);
  }

  async get(p: Principal, appId: string, ref: string) {
    await this.tokenLog.flush();
    const app = await this.auth.apps.forPrincipal(p, appId, "auth.m2m.list");
    return clientView(await this.load(app, ref));
  }

  async update(p: Principal, appId: string, ref: string, b: { name?: unknown; permissions?: unknown }, meta: RequestMeta) {
    const app = await this.auth.apps.forPrincipal(p, appId, "auth.m2m.update");
    // The body is judged before the client is looked up: a bad field is 400 even for an unknown client.
    const newName = b.name === undefined ? undefined : this.checkName(b.name);
    const newPermissions = b.permissions === undefined ? undefined : this.checkPermissions(b.permissions);
    const row = await this.load(app, ref);
    const name = newName ?? row.name;
    const permissions = newPermissions ?? (JSON.parse(row.permissions) as string[]);
    if (b.permissions !== undefined) await this.assertCallerHolds(p, app, permissions);
    const fields = (["name", "permissions"] as const).filter((k) => b[k] !== undefined);
    await tx(this.ctx.db, async (t) => {
      await store.updateClient(t, row.id, { name, permissions: JSON.stringify(permissions) });
      await recordAuthAudit(t, this.ctx, app.id, { action: "m2m.update", actor: actorOfPrincipal(p), target: { type: "m2m_client", id: row.client_id }, meta, metadata: { fields, permissions } });
    });
    return clientView({ ...row, name, permissions: JSON.stringify(permissions) });
  }

  async rotateSecret(p: Principal, appId: string, ref: string, meta: RequestMeta) {
    const app = await this.auth.apps.forPrincipal(p, appId, "auth.m2m.update");
    const row = await this.load(app, ref);
    const { secret, hash, hint } = newSecret();
    const now = this.ctx.clock.iso();
    await tx(this.ctx.db, async (t) => {
      await store.setClientSecret(t, row.id, hash, hint, now);
      await recordAuthAudit(t, this.ctx, app.id, { action: "m2m.secret.rotate", actor: actorOfPrincipal(p), target: { type: "m2m_client", id: row.client_id }, meta });
    });
    return { ...clientView({ ...row, secret_hash: hash, secret_hint: hint, rotated_at: now }), client_secret: secret };
  }

  async remove(p: Principal, appId: string, ref: string, meta: RequestMeta) {
    const app = await this.auth.apps.forPrincipal(p, appId, "auth.m2m.delete");
    const row = await this.load(app, ref);
    await tx(this.ctx.db, async (t) => {
      await store.deleteClient(t, app.id, row.id);
      await recordAuthAudit(t, this.ctx, app.id, { action: "m2m.delete", actor: actorOfPrincipal(p), target: { type: "m2m_client", id: row.client_id }, meta, metadata: { name: row.name } });
    });
  }

  // --- token endpoint ----------------------------------------------------------------

  /**
   * The token endpoint's answer for the App named by `slug`. `params` are the request's
   * fields, or why the body is unusable.
   */
  async tokenAt(slug: string, params: Record<string, string> | string, basicAuth: boolean, meta: RequestMeta): Promise<TokenAnswer> {
    let app: LoadedApp;
    try {
      // A cached App answers without a promise: await only a miss.
      const found = this.auth.apps.bySlug(slug);
      app = found instanceof Promise ? await found : found;
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) return oauthError(401, "invalid_client", "Unknown client: no App has this slug");
      throw err;
    }
    if (typeof params === "string") return oauthError(400, "invalid_request", params);
    return this.token(app, params, basicAuth, meta);
  }

  /**
   * The client_credentials grant. `params` are the request's form (or JSON) fields, already
   * checked to be single strings; `basicAuth` tells whether an Authorization: Basic header came.
   */
  async token(app: LoadedApp, params: Record<string, string>, basicAuth: boolean, meta: RequestMeta): Promise<TokenAnswer> {
    const grant = params.grant_type;
    if (!grant) return oauthError(400, "invalid_request", "grant_type is required");
    if (grant !== "client_credentials") return oauthError(400, "unsupported_grant_type", "Only client_credentials is supported");
    const clientId = params.client_id;
    const secret = params.client_secret;
    if (!clientId || !secret) {
      // RFC 6749 §5.2: a client that tried the Authorization header gets 401 with a challenge.
      if (basicAuth) return oauthError(401, "invalid_client", "Only client_secret_post is supported: send client_id and client_secret in the body", { "www-authenticate": `Basic realm="${app.issuer}"` });
      return oauthError(401, "invalid_client", "client_id and client_secret are required (client_secret_post)");
    }
    if (clientId.length > 128 || secret.length > 512) return oauthError(401, "invalid_client", "Client authentication failed");

    const failKey = `m2m:fail:${app.id}:${clientId}`;
    const rl = this.ctx.ratelimit;
    if ((await rl.count(failKey, MINUTE)) >= TOKEN_FAILURES_PER_MINUTE) {
      // A denied hit is not counted; it only tells when the oldest failure leaves the window.
      const retry = Math.max(1, Math.ceil((await rl.hit(failKey, TOKEN_FAILURES_PER_MINUTE, MINUTE)).retryAfterMs / 1000));
      return oauthError(429, "temporarily_unavailable", `Too many failed client authentications; retry in ${retry} s`, { "retry-after": String(retry) });
    }

    const row = await store.clientByClientId(this.ctx.db, app.id, clientId);
    const presented = hashToken(secret);
    // Unknown clients are compared against a dummy so both paths do the same work.
    const ok = safeEqual(presented, row?.secret_hash ?? "0".repeat(64)) && !!row;
    if (!ok || !row) {
      await rl.hit(failKey, TOKEN_FAILURES_PER_MINUTE, MINUTE);
      if (row) await recordAuthAudit(this.ctx.db, this.ctx, app.id, { action: "m2m.token", outcome: "failure", actor: { type: "m2m_client", id: row.client_id }, target: { type: "m2m_client", id: row.client_id }, meta, metadata: { reason: "invalid_secret" } });
      return oauthError(401, "invalid_client", "Client authentication failed");
    }

    const held = JSON.parse(row.permissions) as string[];
    const requested = (params.scope ?? "").split(" ").filter(Boolean);
    const uncovered = requested.filter((s) => !held.some((h) => actionMatches(h, s)));
    if (uncovered.length) return oauthError(400, "invalid_scope", `Not granted to this client: ${uncovered.join(" ")}`);
    const permissions = requested.length ? [...new Set(requested)].sort() : held;
    const scope = permissions.join(" ");

    const ttlSec = Math.min(app.settings.access_token_ttl, TOKEN_TTL_MAX_SEC);
    const accessToken = await this.auth.keys.sign(
      app.id,
      { sub: row.client_id, client_id: row.client_id, type: "m2m", permissions, scope },
      { issuer: app.issuer, audience: app.settings.audience, ttlSec },
    );
    // Everything the deferred write needs is read now (the request and its socket are gone by then).
    const now = this.ctx.clock.nowMs();
    const at = this.ctx.clock.iso();
    const notSince = new Date(now - MINUTE).toISOString();
    const from = { ip: meta.ip, userAgent: meta.userAgent };
    this.tokenLog.add(async (t) => {
      await store.touchClient(t, row.id, at, notSince);
      await recordAuthAudit(t, this.ctx, app.id, { action: "m2m.token", actor: { type: "m2m_client", id: row.client_id }, target: { type: "m2m_client", id: row.client_id }, meta: from, metadata: { scope }, at });
    }, { action: "m2m.token", app_id: app.id, client_id: row.client_id, at });
    return { status: 200, body: { access_token: accessToken, token_type: "Bearer", expires_in: ttlSec, scope } };
  }
}
