/** Federated sign-in of end users: web flow (authorize, callback, exchange) and idp_1's native flow. */
import { t } from "../../../../core/schema";
import { PUBLIC } from "../../../../access/openapi";
import { redirect } from "../../../../core/openapi";
import type { CallbackInput } from "../../../../core/oidc";
import type { AuthOAuth } from "../oauth";
import { appParams, CallbackFields, ConsumerTokens, ErrorBody, formOrJsonBody, MfaChallenge } from "../../schemas";
import { appGroup, appSlugParams, type AppScopeParts } from "../../apps/scope";

const tags = ["Auth: federated sign-in"];
// provider stays a plain string: one that is not configured is 400 UNKNOWN_OAUTH_PROVIDER naming it.
const providerParams = appParams([], { provider: t.String({ maxLength: 40, description: "idp_1, idp_2 or idp_3 (configured in the App's oauth_providers)" }) });
const TokensOrChallenge = t.Union([ConsumerTokens, MfaChallenge]);
const errors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody };

const CALLBACK_DOC =
  "303 to return_to with auth_code=<code> appended (single use, 60 s: trade it at /auth/oauth/exchange). The state is consumed first: 400 INVALID_OAUTH_STATE (unknown, expired, used), 400 OAUTH_PROVIDER_MISMATCH. " +
  "The code is exchanged with PKCE (or a posted id_token taken) and the ID token verified: signature against the provider JWKS, iss, aud, exp, nonce (401 INVALID_ID_TOKEN, OAUTH_CODE_REJECTED, NONCE_REPLAYED). " +
  "A provider error (e.g. access_denied) is 303 to return_to with error=<code>. Linking: an identity links to a user only through an email verified both by the provider and here; otherwise a new user (403 SIGNUP_DISABLED when the App refuses sign-ups).";
const CALLBACK_REDIRECT = redirect(303, "To return_to with auth_code (or error) appended");

export function oauthRoutes(auth: AppScopeParts & { oauth: AuthOAuth }) {
  const { oauth } = auth;
  const callback = async (c: { app: any; params: { provider: string }; meta: any; set: any }, input: CallbackInput) => {
    const url = await oauth.callback(c.app, c.params.provider, input, c.meta);
    c.set.status = 303;
    c.set.headers["location"] = url;
    c.set.headers["cache-control"] = "no-store";
    return "";
  };
  return appGroup(auth, PUBLIC)
    .post("/auth/oauth/exchange", ({ app, body, meta, set }) => {
      set.headers["cache-control"] = "no-store";
      return oauth.exchange(app, body.code, meta);
    }, {
      params: appSlugParams,
      body: t.Object({ code: t.String({ maxLength: 512, description: "The auth_code from the callback redirect" }) }),
      response: { 200: TokensOrChallenge, ...errors },
      detail: {
        tags,
        summary: "Trade the web flow's auth_code for tokens",
        description: "Single use, valid 60 seconds (400 INVALID_AUTH_CODE). 200 consumer tokens with amr [oauth, <provider>], or an MFA challenge (mfa_required) when the user has an enabled factor and the App applies MFA to federated sign-ins: finish it at /auth/mfa/verify (amr [oauth, <provider>, <factor>]).",
      },
    })
    .get("/auth/oauth/:provider/authorize", async ({ app, params, query, meta, set }) => {
      const url = await oauth.authorize(app, params.provider, query.return_to, meta);
      set.status = 302;
      set.headers["location"] = url;
      set.headers["cache-control"] = "no-store";
      return "";
    }, {
      params: providerParams,
      query: t.Object({ return_to: t.Optional(t.String({ maxLength: 4096, description: "Absolute URL whose origin is in the App's allowed_redirect_origins" })) }),
      detail: {
        tags,
        responses: redirect(302, "To the provider's authorize URL"),
        summary: "Start a web sign-in with an identity provider",
        description: "302 to the provider (code flow, PKCE S256, server-generated single-use state and nonce, 10 minutes). 400 UNKNOWN_OAUTH_PROVIDER; 400 VALIDATION_ERROR (field return_to); 429 RATE_LIMITED after 30 a minute from one address.",
      },
    })
    .get("/auth/oauth/:provider/callback", (c) => callback(c, c.query), {
      params: providerParams, query: CallbackFields, detail: { tags, summary: "Provider redirect (query string, idp_2 / idp_3)", description: CALLBACK_DOC, responses: CALLBACK_REDIRECT },
    })
    .post("/auth/oauth/:provider/callback", (c) => callback(c, c.body), {
      params: providerParams, body: CallbackFields, detail: { tags, summary: "Provider redirect (form post, idp_1)", description: CALLBACK_DOC, requestBody: formOrJsonBody(CallbackFields), responses: CALLBACK_REDIRECT },
    })
    .post("/auth/oauth/:provider", ({ app, params, body, meta, set }) => {
      set.headers["cache-control"] = "no-store";
      return oauth.native(app, params.provider, body, meta);
    }, {
      params: providerParams,
      body: t.Object({
        id_token: t.String({ maxLength: 16384, description: "The provider-issued ID token" }),
        nonce: t.String({ maxLength: 512, description: "The raw nonce: 32+ bytes of entropy (64+ hex or 43+ base64url characters). The token's nonce claim must be its SHA-256 as lowercase hex." }),
        user: t.Optional(t.Unknown({ description: "idp_1's first-sign-in {name, email}: display name only, never trusted" })),
      }),
      response: { 200: TokensOrChallenge, ...errors },
      detail: {
        tags,
        summary: "Native sign-in (idp_1 only): a mobile app posts the provider's ID token and the raw nonce",
        description: "200 consumer tokens with amr [oauth, idp_1] (or the MFA challenge). 400 UNKNOWN_OAUTH_PROVIDER, UNSUPPORTED_OAUTH_FLOW (not idp_1), VALIDATION_ERROR for a nonce under 32 bytes of entropy; 401 INVALID_ID_TOKEN; 401 NONCE_REPLAYED when the nonce was already used.",
      },
    });
}
