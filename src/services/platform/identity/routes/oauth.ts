/** Console federated sign-in (start, callback) and the account's linked identities (/v1/me/identities). */
import { Elysia } from "elysia";
import { t } from "../../../../core/schema";
import { principalPlugin, requestMeta } from "../../../../access/http";
import { requireHuman, requireSession } from "../../../../access/principal";
import { HUMAN_CALLER, PUBLIC, secured } from "../../../../access/openapi";
import { noContent, redirect } from "../../../../core/openapi";
import type { CallbackInput } from "../../../../core/oidc";
import type { RouteDeps } from "../../route-deps";
import type { PlatformOAuth } from "../oauth";
import { CallbackFields, ErrorBody, formOrJsonBody, Identity, Uuid } from "../../schemas";
import { MfaChallenge, TokenResponse } from "../schemas";
import { sessionCookie } from "./auth";

const tags = ["Platform: federated sign-in"];
const providerParams = t.Object({ provider: t.String({ maxLength: 40, description: "idp_1, idp_2 or idp_3 (only configured ones work)" }) });

const CALLBACK_DOC =
  "Consumes the state first (400 INVALID_OAUTH_STATE when unknown, expired or used; 400 OAUTH_PROVIDER_MISMATCH when minted for another provider; 400 OAUTH_PROVIDER_ERROR when the provider sent error). " +
  "Exchanges the code with PKCE (or takes a posted id_token) and verifies the ID token: signature against the provider JWKS, iss, aud, exp, nonce (401 INVALID_ID_TOKEN, OAUTH_CODE_REJECTED, NONCE_REPLAYED). " +
  "Signs in the linked account, links by an email verified on both sides, or creates an account from a verified email; otherwise 401 IDENTITY_NOT_RESOLVABLE. Sets the auth_token cookie like sign-in. " +
  "An account with an active MFA factor gets the MFA challenge instead of tokens (200 {mfa_required, mfa_token, factors, expires_at, return_to}, no cookie): finish it at POST /platform/v1/auth/mfa/verify or /recover. " +
  "A browser navigation (Sec-Fetch-Mode: navigate, or Accept preferring text/html to application/json) gets 303 to return_to with the cookie set instead of the JSON; with MFA required, 303 to return_to with its fragment replaced by #mfa_token=<token> (the console shows its code step). Errors stay JSON.";

/**
 * Whether the callback request is a browser's page navigation (the provider redirected or
 * auto-posted the browser here) rather than an API client relaying the provider's answer:
 * Sec-Fetch-Mode: navigate, or an Accept header that prefers text/html to application/json.
 */
export function isBrowserNavigation(request: Request): boolean {
  if (request.headers.get("sec-fetch-mode") === "navigate") return true;
  const accept = request.headers.get("accept");
  if (!accept) return false;
  const q = (type: string) => {
    let best = -1;
    for (const part of accept.split(",")) {
      const [range, ...params] = part.trim().toLowerCase().split(";");
      const [main, sub] = (range ?? "").trim().split("/");
      const [tMain, tSub] = type.split("/");
      if (!(main === "*" || main === tMain) || !(sub === "*" || sub === tSub)) continue;
      const qp = params.map((p) => p.trim()).find((p) => p.startsWith("q="));
      const v = qp ? Number(qp.slice(2)) : 1;
      // The most specific range decides; among equals the highest q.
      const spec = main === "*" ? 0 : sub === "*" ? 1 : 2;
      best = Math.max(best, spec * 10 + (Number.isFinite(v) ? v : 0));
    }
    return best < 0 ? 0 : best % 10;
  };
  const html = q("text/html");
  return html > 0 && html > q("application/json");
}

const BROWSER_REDIRECT = redirect(303, "Browser navigation only: to return_to (signed in, cookie set), or to return_to#mfa_token=<token> when MFA is required");

export function oauthRoutes(platform: RouteDeps & { readonly oauth: PlatformOAuth }) {
  const { oauth } = platform;
  const setCookie = sessionCookie(platform.ctx.config);
  // The JSON result (checked against Result) or, for a browser, a 303 Response; `any` because
  // Elysia's handler type takes one or the other, not a union of both.
  const callback = async (c: { params: { provider: string }; request: Request; set: any }, input: CallbackInput): Promise<any> => {
    const result = await oauth.callback(c.params.provider, input, requestMeta(c.request));
    if ("tokens" in result) setCookie(c.set, c.request, result.tokens);
    c.set.headers["cache-control"] = "no-store";
    if (!isBrowserNavigation(c.request)) return result;
    // A browser would otherwise stop on a JSON page: send it on (return_to passed the allowlist at start).
    const to = new URL(result.return_to);
    if ("mfa_token" in result) to.hash = `mfa_token=${encodeURIComponent(result.mfa_token)}`;
    const headers: Record<string, string> = { location: to.href, "cache-control": "no-store" };
    if (c.set.headers["set-cookie"]) headers["set-cookie"] = String(c.set.headers["set-cookie"]);
    return new Response(null, { status: 303, headers });
  };
  const Result = t.Union([
    t.Object({ tokens: TokenResponse, return_to: t.String({ description: "The return_to given at start (allowlisted)" }) }),
    t.Composite([MfaChallenge, t.Object({ return_to: t.String({ description: "The return_to given at start (allowlisted)" }) })]),
  ]);
  const errors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 502: ErrorBody };

  return new Elysia()
    .guard(secured(PUBLIC))
    .get("/v1/auth/providers", ({ set }) => {
      set.headers["cache-control"] = "no-store";
      return { data: oauth.configured() };
    }, {
      response: {
        200: t.Object({
          data: t.Array(
            t.Object({
              id: t.String({ description: "idp_1, idp_2 or idp_3" }),
              display_name: t.String({ description: "The host of the provider's issuer URL, e.g. accounts.google.com" }),
              start_path: t.String({ description: "GET it in the browser with ?return_to=<absolute URL whose origin OAUTH_RETURN_TO_ORIGINS allows>" }),
            }),
          ),
        }),
      },
      detail: { tags, summary: "Configured console identity providers (public)", description: "The IDP_<n>_* providers of console sign-in, in id order; empty when none is configured. No credential: the sign-in page shows a button per provider." },
    })
    .group("/v1/auth/oauth/:provider", (g) =>
      g
        .get("/start", async ({ params, query, request, set }) => {
          const url = await oauth.start(params.provider, query.return_to, requestMeta(request));
          set.status = 302;
          set.headers["location"] = url;
          set.headers["cache-control"] = "no-store";
          return "";
        }, {
          params: providerParams,
          query: t.Object({ return_to: t.Optional(t.String({ maxLength: 4096, description: "Absolute URL whose origin OAUTH_RETURN_TO_ORIGINS allows" })) }),
          detail: {
            tags,
            summary: "Start a console sign-in with an identity provider",
            responses: redirect(302, "To the provider's authorize URL"),
            description: "302 to the provider's authorize URL (code flow, PKCE S256, single-use state and nonce valid 10 minutes). 400 UNKNOWN_OAUTH_PROVIDER for a provider that is not configured; 400 VALIDATION_ERROR (field return_to) for a return_to the allowlist refuses; 429 RATE_LIMITED after 30 starts a minute from one address.",
          },
        })
        .get("/callback", (c) => callback(c, c.query), {
          params: providerParams, query: CallbackFields, response: { 200: Result, ...errors },
          detail: { tags, summary: "Provider redirect (query string): finish the sign-in", description: CALLBACK_DOC, responses: BROWSER_REDIRECT },
        })
        .post("/callback", (c) => callback(c, c.body), {
          params: providerParams, body: CallbackFields, response: { 200: Result, ...errors },
          detail: { tags, summary: "Provider redirect (form post, idp_1) or a client relaying it: finish the sign-in", description: CALLBACK_DOC, requestBody: formOrJsonBody(CallbackFields), responses: BROWSER_REDIRECT },
        }),
    )
    .use(principalPlugin(platform.authz))
    .guard(secured(HUMAN_CALLER))
    .get("/v1/me/identities", async ({ principal }) => {
      const p = requireHuman(principal, "Listing identities");
      const data = await oauth.list(p.accountId);
      return { data, pagination: { next_cursor: null, has_more: false } };
    }, {
      response: { 200: t.Object({ data: t.Array(Identity), pagination: t.Object({ next_cursor: t.Nullable(t.String()), has_more: t.Boolean() }) }), 401: ErrorBody, 403: ErrorBody },
      detail: { tags, summary: "Provider identities linked to the signed-in account (all of them, one page)" },
    })
    .delete("/v1/me/identities/:identity_id", async ({ principal, params, meta, set }) => {
      const p = requireSession(principal, "Unlinking an identity");
      await oauth.unlink(p.accountId, params.identity_id, meta);
      set.status = 204;
    }, {
      params: t.Object({ identity_id: Uuid() }),
      detail: { tags, summary: "Unlink a provider identity", responses: noContent(), description: "Console session only. 204; 404 for an identity of another account; 409 LAST_SIGN_IN_METHOD when it is the account's only way to sign in (no password, no other identity)." },
    });
}
