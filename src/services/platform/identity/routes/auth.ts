/** Public account routes: sign-up, sign-in, refresh, logout, password reset, first-run setup. */
import { Elysia } from "elysia";
import { t } from "../../../../core/schema";
import { principalPlugin, requestMeta, SESSION_COOKIE, sessionCookieOf } from "../../../../access/http";
import { requireSession } from "../../../../access/principal";
import { HUMAN_CALLER, PUBLIC, secured } from "../../../../access/openapi";
import { noContent } from "../../../../core/openapi";
import type { RouteDeps } from "../../route-deps";
import type { AccountService } from "../accounts";
import type { SetupService } from "../setup";
import { ErrorBody } from "../../schemas";
import { EmailBody, MfaChallenge, RefreshBody, ResetBody, SetupBody, SigninBody, SignupBody, TokenResponse } from "../schemas";
import type { TokenResponse as Tokens } from "../accounts";

const tags = ["Platform: auth"];
const errors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 429: ErrorBody };

type ResponseHeaders = { headers: Record<string, unknown> };

/** The browser cookie mirrors the access token (same lifetime); Secure whenever served over https. */
export function sessionCookie(config: { publicUrl: string }) {
  return (set: ResponseHeaders, request: Request, tokens: Tokens) => {
    const https = config.publicUrl.startsWith("https:") || request.headers.get("x-forwarded-proto") === "https";
    const cookie = new Bun.Cookie(SESSION_COOKIE, tokens.access_token, { httpOnly: true, sameSite: "lax", secure: https, path: "/", maxAge: tokens.expires_in });
    set.headers["set-cookie"] = cookie.serialize();
  };
}

export function authRoutes(platform: RouteDeps & { readonly accounts: AccountService; readonly setup: SetupService }) {
  const setCookie = sessionCookie(platform.ctx.config);

  return new Elysia({ prefix: "/v1/auth" })
    .guard(secured(PUBLIC))
    .post("/signup", async ({ body, request, set }) => {
      const tokens = await platform.accounts.signup(body, requestMeta(request));
      setCookie(set, request, tokens);
      return tokens;
    }, {
      body: SignupBody,
      response: { 200: TokenResponse, ...errors },
      detail: {
        tags,
        summary: "Create an account and sign in",
        description: `429 RATE_LIMITED with Retry-After past the sign-ups one client address may make an hour (SIGNUPS_PER_ADDRESS_PER_HOUR, default 30) or the console takes from all addresses (SIGNUPS_PER_APP_PER_HOUR, default 1000); checked after the body, before the password is hashed.`,
      },
    })
    .post("/signin", async ({ body, request, set }) => {
      const r = await platform.accounts.signin(body, requestMeta(request));
      // An MFA challenge sets no cookie: the session starts at /auth/mfa/verify or /recover.
      if ("access_token" in r) setCookie(set, request, r);
      return r;
    }, {
      body: SigninBody,
      response: { 200: t.Union([TokenResponse, MfaChallenge]), ...errors },
      detail: {
        tags,
        summary: "Sign in with email or username",
        description:
          "Every failure is 401 INVALID_CREDENTIALS; 403 only after the password is proven; 429 TOO_MANY_ATTEMPTS after 5 attempts a minute or 4 failures (15-minute lock) per identifier, or 30 failures in 15 minutes from the client address across identifiers; Retry-After gives the seconds until every limit lets the attempt through. " +
          "When the account has an active MFA factor, a correct password answers 200 {mfa_required: true, mfa_token, factors, expires_at} instead of tokens (no cookie): finish with POST /platform/v1/auth/mfa/verify or /recover within 10 minutes.",
      },
    })
    .post("/refresh", ({ body }) => platform.accounts.refresh(body.refresh_token), {
      body: RefreshBody, response: { 200: TokenResponse, 400: ErrorBody }, detail: { tags, summary: "Rotate the refresh token" },
    })
    .post("/logout", async ({ body, set }) => {
      await platform.accounts.logout(body.refresh_token);
      set.status = 204;
    }, { body: RefreshBody, detail: { tags, summary: "End the session of a refresh token", responses: noContent() } })
    .post("/password/request-reset", async ({ body, set, request }) => {
      await platform.accounts.requestReset(body.email, requestMeta(request));
      set.status = 204;
    }, {
      body: EmailBody,
      response: { 400: ErrorBody, 429: ErrorBody },
      detail: {
        tags,
        summary: "Mail a 6-digit reset code",
        description:
          "204, same body and timing whether or not the email has an account. At most MAIL_PER_RECIPIENT_PER_HOUR (default 5) reset mails go to one address an hour; further requests still answer 204 and send nothing. " +
          "429 RATE_LIMITED with Retry-After past MAIL_PER_ADDRESS_PER_HOUR (default 50) requests that mail someone from one client address.",
        responses: noContent(),
      },
    })
    .post("/password/reset", async ({ body, set, request }) => {
      await platform.accounts.resetPassword(body, requestMeta(request));
      set.status = 204;
    }, { body: ResetBody, detail: { tags, summary: "Set a new password with the mailed code; revokes every session", description: "400 INVALID_TOKEN for a wrong or expired code; 5 wrong codes from one client address within 15 minutes answer 429 TOO_MANY_ATTEMPTS with Retry-After.", responses: noContent() } })
    .post("/setup", async ({ body, request, set }) => {
      const tokens = await platform.setup.complete(body, requestMeta(request));
      setCookie(set, request, tokens);
      return tokens;
    }, { body: SetupBody, response: { 200: TokenResponse, 400: ErrorBody }, detail: { tags, summary: "Create the first operator account with the one-time setup token" } })
    .get("/setup", async () => ({ needs_setup: await platform.setup.needsSetup() }), {
      response: t.Object({ needs_setup: t.Boolean() }), detail: { tags, summary: "Whether first-run setup is still open" },
    })
    .use(principalPlugin(platform.authz))
    .guard(secured(HUMAN_CALLER))
    .post("/logout-current", async ({ principal, set, request }) => {
      const p = requireSession(principal, "logout-current");
      await platform.accounts.logoutSession(p.sessionId);
      // Cleared when the browser sent it (a bearer-only client gets no Set-Cookie).
      if (sessionCookieOf(request) !== null) set.headers["set-cookie"] = new Bun.Cookie(SESSION_COOKIE, "", { path: "/", maxAge: 0, expires: new Date(0) }).serialize();
      set.status = 204;
    }, { detail: { tags, summary: "Revoke the session of the presented access token", responses: noContent() } });
}
