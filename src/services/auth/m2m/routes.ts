/**
 * M2M clients: management for platform principals at /auth/v1/apps/{app_id}/m2m-clients
 * (auth.m2m.* actions), and the App's token endpoint /auth/{app_slug}/v1/oauth/token
 * (client_credentials with client_secret_post).
 */
import { Elysia } from "elysia";
import { t } from "../../../core/schema";
import { principalPlugin, requestMeta } from "../../../access/http";
import { requirePrincipal } from "../../../access/principal";
import { PLATFORM_CALLER, PUBLIC, secured } from "../../../access/openapi";
import { requestIdOf } from "../../../core/http";
import { ApiError } from "../../../core/errors";
import { noContent } from "../../../core/openapi";
import type { AuthContext } from "../events";
import type { AppScopeParts } from "../apps/scope";
import type { M2mService } from "./service";
import { ErrorBody, ListQuery, M2mClientRef, Pagination, Uuid } from "../schemas";
import { oauthError, type TokenAnswer } from "./service";
import { Client } from "./schemas";

/** The parts of the Auth service these routes use (AuthService passes itself). */
type Parts = AppScopeParts & { m2m: M2mService; m: Pick<AuthContext, "ctx" | "tenancy"> };

const tags = ["Auth: M2M clients"];
const errors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody };
const appIdParams = t.Object({ app_id: Uuid() });
const clientParams = t.Object({ app_id: Uuid(), id: M2mClientRef });
/**
 * The token endpoint's app_slug stays a plain string: an OAuth client reads only the OAuth
 * error shape there, and any slug that names no App is 401 invalid_client.
 */
const tokenRouteParams = t.Object({ app_slug: t.String() });
const Permissions = t.Array(t.String(), {
  maxItems: 50,
  description: 'auth.* action names ("auth.user.read") or prefix patterns ("auth.user.*"); nothing covering auth.m2m.* or auth.app.*, and only actions the caller holds itself',
});

const ClientWithSecret = t.Composite([Client, t.Object({ client_secret: t.String({ description: "Shown only in this answer; only its hash is stored" }) })]);

function managementRoutes(auth: Parts) {
  const { m2m } = auth;
  return new Elysia({ prefix: "/v1/apps/:app_id/m2m-clients" })
    .use(principalPlugin(auth.m.tenancy.authz))
    .guard(secured(PLATFORM_CALLER))
    .post("", async ({ principal, params, body, meta, set }) => {
      const created = await m2m.create(requirePrincipal(principal), params.app_id, body, meta);
      set.status = 201;
      return created;
    }, {
      params: appIdParams,
      body: t.Object({ name: t.String({ maxLength: 200 }), permissions: Permissions }),
      response: { 201: ClientWithSecret, ...errors },
      detail: { tags, summary: "Create an M2M client (action auth.m2m.create)", description: "The answer carries client_secret once. No Idempotency-Key: a replay would need the plaintext secret stored." },
    })
    .get("", ({ principal, params, query }) => m2m.list(requirePrincipal(principal), params.app_id, query), {
      params: appIdParams,
      query: ListQuery,
      response: { 200: t.Object({ data: t.Array(Client), pagination: Pagination }), ...errors },
      detail: { tags, summary: "List M2M clients (action auth.m2m.list; cursor pages, creation order; never the secret)" },
    })
    .get("/:id", ({ principal, params }) => m2m.get(requirePrincipal(principal), params.app_id, params.id), {
      params: clientParams, response: { 200: Client, ...errors }, detail: { tags, summary: "Read an M2M client (action auth.m2m.list)" },
    })
    .patch("/:id", ({ principal, params, body, meta }) => m2m.update(requirePrincipal(principal), params.app_id, params.id, body, meta), {
      params: clientParams,
      body: t.Object({ name: t.Optional(t.String({ maxLength: 200 })), permissions: t.Optional(Permissions) }),
      response: { 200: Client, ...errors },
      detail: { tags, summary: "Rename an M2M client or change its permissions (action auth.m2m.update)", description: "Tokens issued before keep their permissions until they expire (at most 1 hour)." },
    })
    .post("/:id/rotate-secret", ({ principal, params, meta }) => m2m.rotateSecret(requirePrincipal(principal), params.app_id, params.id, meta), {
      params: clientParams,
      response: { 200: ClientWithSecret, ...errors },
      detail: { tags, summary: "Replace the client secret (action auth.m2m.update)", description: "The new secret is in this answer only; the old one stops working at once, and so do tokens issued before (on this App's admin routes)." },
    })
    .delete("/:id", async ({ principal, params, meta, set }) => {
      await m2m.remove(requirePrincipal(principal), params.app_id, params.id, meta);
      set.status = 204;
    }, {
      params: clientParams,
      response: errors,
      detail: { tags, responses: noContent(), summary: "Delete an M2M client (action auth.m2m.delete)", description: "Its secret stops working at once, and so do the access tokens it holds (on this App's admin routes; offline verifiers see them until they expire, at most 1 hour)." },
    });
}

const TOKEN_BODY_MAX = 8192;

/** Body of the token request: form-urlencoded or JSON, every field a single string; otherwise why not. */
async function tokenParams(request: Request): Promise<Record<string, string> | string> {
  const type = (request.headers.get("content-type") ?? "").split(";")[0].trim().toLowerCase();
  // A declared size over the cap is refused without reading the body.
  if (Number(request.headers.get("content-length") ?? 0) > TOKEN_BODY_MAX) return "Request body too large";
  const text = await request.text();
  if (text.length > TOKEN_BODY_MAX) return "Request body too large";
  const out: Record<string, string> = {};
  if (type === "application/x-www-form-urlencoded") {
    for (const [k, v] of new URLSearchParams(text)) {
      // RFC 6749 §3.2: parameters must not be repeated.
      if (Object.hasOwn(out, k)) return `Parameter ${k} is repeated`;
      out[k] = v;
    }
    return out;
  }
  if (type === "application/json") {
    let v: unknown;
    try {
      v = JSON.parse(text);
    } catch {
      return "Body is not valid JSON";
    }
    if (!v || typeof v !== "object" || Array.isArray(v)) return "Body must be a JSON object";
    for (const [k, x] of Object.entries(v)) {
      if (typeof x !== "string") return `Parameter ${k} must be a string`;
      out[k] = x;
    }
    return out;
  }
  return "Content-Type must be application/x-www-form-urlencoded or application/json";
}

const OAuthError = t.Object({ error: t.String(), error_description: t.Optional(t.String()) });

/** Writes a token-endpoint answer: its status and headers, never cacheable (RFC 6749 §5.1: errors too, they may name the client). */
function send(set: { status?: unknown; headers: Record<string, unknown> }, answer: TokenAnswer) {
  set.status = answer.status;
  set.headers["cache-control"] = "no-store";
  set.headers["pragma"] = "no-cache";
  for (const [k, v] of Object.entries(answer.headers ?? {})) set.headers[k] = v;
  // Shapes are per status (the response schemas below); the union is not expressible to TS here.
  return answer.body as never;
}

/**
 * Not in appGroup: its App resolution answers an unknown slug in the house error body, and
 * OAuth clients parse only the OAuth shape here. Errors are turned into answers inside the
 * handler, because the kernel's global error handler runs before any route-level one.
 */
function tokenRoute(auth: Parts) {
  return new Elysia({ prefix: "/:app_slug/v1" }).post("/oauth/token", async ({ params, request, set }) => {
    let answer: TokenAnswer;
    try {
      const fields = await tokenParams(request);
      const basic = /^basic\s/i.test(request.headers.get("authorization") ?? "");
      answer = await auth.m2m.tokenAt(params.app_slug, fields, basic, requestMeta(request));
    } catch (err) {
      // The kernel's refusals of the body itself (413 too large, 408 too slow) keep their
      // status: they are about the request's transport, not an OAuth answer.
      if (err instanceof ApiError && (err.status === 408 || err.status === 413)) throw err;
      auth.m.ctx.log.error("token endpoint failed", { request_id: requestIdOf(request), err: String((err as Error)?.stack ?? err) });
      answer = oauthError(500, "server_error", "Internal server error");
    }
    return send(set, answer);
  }, {
    params: tokenRouteParams,
    parse: "none",
    detail: {
      tags,
      security: PUBLIC,
      summary: "Token endpoint: client_credentials grant with client_secret_post (RFC 6749 §4.4)",
      description:
        "Body (application/x-www-form-urlencoded or JSON): grant_type=client_credentials, client_id, client_secret, optional scope (space-separated subset of the client's permissions; default all). " +
        "200 {access_token, token_type: Bearer, expires_in, scope}: an RS256 JWT with sub=client_id, client_id, type=m2m, permissions[], scope; lifetime min(App access_token_ttl, 3600 s). " +
        "Errors use the OAuth shape {error, error_description} (not the house error body), because OAuth client libraries parse it: " +
        "401 invalid_client (also for an unknown App slug), 400 unsupported_grant_type / invalid_request / invalid_scope, 429 temporarily_unavailable (with Retry-After) after 10 failed secrets for a client_id within a minute, 405 invalid_request for another method than POST. Every answer has Cache-Control: no-store.",
      requestBody: {
        required: true,
        content: {
          "application/x-www-form-urlencoded": {
            schema: {
              type: "object",
              required: ["grant_type", "client_id", "client_secret"],
              properties: {
                grant_type: { type: "string", enum: ["client_credentials"] },
                client_id: { type: "string" },
                client_secret: { type: "string" },
                scope: { type: "string", description: "Space-separated auth.* permissions" },
              },
            },
          },
          "application/json": {
            schema: {
              type: "object",
              required: ["grant_type", "client_id", "client_secret"],
              properties: { grant_type: { type: "string" }, client_id: { type: "string" }, client_secret: { type: "string" }, scope: { type: "string" } },
            },
          },
        },
      },
    },
    response: {
      200: t.Object({ access_token: t.String(), token_type: t.Literal("Bearer"), expires_in: t.Number(), scope: t.String() }),
      400: OAuthError,
      401: OAuthError,
      429: OAuthError,
    },
  }).all("/oauth/token", ({ set }) => send(set, oauthError(405, "invalid_request", "The token endpoint takes POST", { allow: "POST" })), {
    params: tokenRouteParams,
    detail: { hide: true },
  });
}

export function m2mRoutes(auth: Parts) {
  return new Elysia().use(managementRoutes(auth)).use(tokenRoute(auth));
}
