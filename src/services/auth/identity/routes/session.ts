/** Public end-user routes of an App: sign-up, sign-in, refresh, logout. */
import { t } from "../../../../core/schema";
import { APP_SIGNUP, PUBLIC } from "../../../../access/openapi";
import { noContent } from "../../../../core/openapi";
import type { SessionService } from "../sessions";
import type { SigninService } from "../signin";
import { ConsumerTokens, ErrorBody, MfaChallenge, TenantRef } from "../../schemas";
import { appGroup, appSlugParams, authz, type AppScopeParts } from "../../apps/scope";

const tags = ["Auth: sign-in"];
const RefreshBody = t.Object({ refresh_token: t.String({ maxLength: 4096 }) });

export function sessionRoutes(auth: AppScopeParts & { signin: SigninService; sessions: SessionService }) {
  return appGroup(auth, PUBLIC)
    .post("/auth/signup", ({ app, request, body, meta }) => auth.signin.signup(app, authz(request), body, meta), {
      params: appSlugParams,
      body: t.Object({
        username: t.String({ minLength: 3, maxLength: 64, description: "Unique in the App; letters, digits, dot, underscore, hyphen" }),
        email: t.String({ maxLength: 254 }),
        password: t.String({ maxLength: 1024, description: "Must satisfy the App's password policy (default 8+ characters)" }),
        display_name: t.Optional(t.Nullable(t.String({ maxLength: 200 }))),
        metadata: t.Optional(t.Unknown({ description: "JSON object, at most 16 KiB (checked by the service: Elysia would coerce an array into an object)" })),
      }),
      response: { 200: ConsumerTokens, 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody, 409: ErrorBody, 429: ErrorBody },
      detail: {
        tags,
        security: APP_SIGNUP,
        summary: "Sign up an end user",
        description:
          "Authorization: Bearer <publishable key pk_...> or <workspace API key with auth.user.create>. With the App setting signup_requires_pak only the workspace API key is accepted (403 PLATFORM_API_KEY_REQUIRED). 409 EMAIL_TAKEN / USERNAME_TAKEN. " +
          "With the publishable key: 429 RATE_LIMITED with Retry-After past the sign-ups one client address may make an hour over all Apps (SIGNUPS_PER_ADDRESS_PER_HOUR, default 30) or the App takes from all addresses (SIGNUPS_PER_APP_PER_HOUR, default 1000); checked after the body, before the password is hashed.",
      },
    })
    .post("/auth/signin", ({ app, body, meta }) => auth.signin.signin(app, body, meta), {
      params: appSlugParams,
      body: t.Object({
        identifier: t.String({ maxLength: 254, description: "Username or verified primary email" }),
        password: t.String({ maxLength: 1024 }),
        tenant_id: t.Optional(t.Nullable(TenantRef("Tenant UUID or tnt_ display id; tokens then carry tid and trole"))),
      }),
      response: { 200: t.Union([ConsumerTokens, MfaChallenge]), 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody, 429: ErrorBody },
      detail: {
        tags,
        summary: "Sign in with username or verified email",
        description: "200 tokens, or an MFA challenge (mfa_required true) when the user has an enabled factor. Every failure is 401 INVALID_CREDENTIALS; 429 TOO_MANY_ATTEMPTS (Retry-After: seconds until every limit lets the attempt through) after 5 attempts a minute or 4 failures (15-minute lock) per identifier, or 30 failures in 15 minutes from the client address across identifiers; 403 NOT_TENANT_MEMBER when tenant_id names a tenant the user is not in.",
      },
    })
    .post("/auth/refresh", ({ app, body }) => auth.sessions.refresh(app, body.refresh_token), {
      params: appSlugParams,
      body: RefreshBody,
      response: { 200: ConsumerTokens, 400: ErrorBody, 404: ErrorBody },
      detail: { tags, summary: "Rotate the refresh token", description: "The presented token is revoked; presenting a rotated token again revokes the whole session." },
    })
    .post("/auth/logout", async ({ app, body, set }) => {
      await auth.sessions.logout(app, body.refresh_token);
      set.status = 204;
    }, {
      params: appSlugParams,
      body: RefreshBody,
      detail: { tags, responses: noContent(), summary: "End the session of a refresh token", description: "204. Access tokens already issued stay valid until they expire." },
    });
}
