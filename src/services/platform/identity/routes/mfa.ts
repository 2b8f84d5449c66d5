/**
 * MFA routes of console accounts: the second step of sign-in (/v1/auth/mfa/*, public, keyed
 * by the challenge's mfa_token), the signed-in account's factors and recovery codes
 * (/v1/me/mfa/*, console session) and the operators' reset (/v1/admin/accounts/:id/mfa).
 * Rules and limits: ../mfa.ts.
 */
import { Elysia } from "elysia";
import { t } from "../../../../core/schema";
import { principalPlugin, requestMeta } from "../../../../access/http";
import { requireHuman, requireSession } from "../../../../access/principal";
import { HUMAN_CALLER, PUBLIC, secured } from "../../../../access/openapi";
import { forbidden } from "../../../../core/errors";
import { noContent } from "../../../../core/openapi";
import type { RouteDeps } from "../../route-deps";
import type { PlatformMfa } from "../mfa";
import { ErrorBody, Uuid } from "../../schemas";
import { MfaFactor, RecoveryCodes, TokenResponse } from "../schemas";
import { sessionCookie } from "./auth";

const signinTags = ["Platform: auth"];
const tags = ["Platform: MFA"];
const MfaToken = t.String({ maxLength: 64, description: "mfa_token of the sign-in challenge" });
const publicErrors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 429: ErrorBody };
const meErrors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody, 409: ErrorBody, 429: ErrorBody };
const FactorParams = t.Object({ factor_id: Uuid() });

const VERIFY_DOC =
  "Finishes a sign-in that answered mfa_required (password sign-in or a provider callback) exactly like a password sign-in: the same token body and auth_token cookie, the session lasting the session_duration given at sign-in. " +
  "The challenge lives 10 minutes and is single use: 400 INVALID_TOKEN when unknown, used or expired. 401 INVALID_CODE for a wrong code; the 5th wrong code or recovery code locks the challenge (429 MFA_LOCKED from then on, a right code included: sign in again). " +
  "10 wrong answers for one account over any challenges without a success lock its MFA sign-in for 15 minutes (429 MFA_LOCKED, Retry-After). 30 wrong answers from one client address within 15 minutes: 429 TOO_MANY_ATTEMPTS with Retry-After. Audited (account.signin, method password+totp or oauth+totp).";

export function mfaRoutes(platform: RouteDeps & { readonly mfa: PlatformMfa }) {
  const { mfa } = platform;
  const setCookie = sessionCookie(platform.ctx.config);
  const requireOperator = (p: Parameters<typeof requireHuman>[0]) => {
    const h = requireHuman(p, "Operator routes");
    if (!h.isOperator) throw forbidden("Operators only", "OPERATOR_REQUIRED");
    return h;
  };

  return new Elysia({ prefix: "/v1" })
    .guard(secured(PUBLIC))
    .post("/auth/mfa/verify", async ({ body, request, set }) => {
      const tokens = await mfa.complete("verify", body, requestMeta(request));
      setCookie(set, request, tokens);
      return tokens;
    }, {
      body: t.Object({ mfa_token: MfaToken, code: t.String({ maxLength: 16, description: "6-digit code of the authenticator app" }) }),
      response: { 200: TokenResponse, ...publicErrors },
      detail: { tags: signinTags, summary: "Finish an MFA sign-in with an authenticator code", description: VERIFY_DOC },
    })
    .post("/auth/mfa/recover", async ({ body, request, set }) => {
      const tokens = await mfa.complete("recover", body, requestMeta(request));
      setCookie(set, request, tokens);
      return tokens;
    }, {
      body: t.Object({ mfa_token: MfaToken, recovery_code: t.String({ maxLength: 64, description: "16 hex characters, hyphens optional, any case" }) }),
      response: { 200: TokenResponse, ...publicErrors },
      detail: {
        tags: signinTags,
        summary: "Finish an MFA sign-in with a recovery code",
        description: "Like /auth/mfa/verify with one of the recovery codes shown at confirmation or regeneration; each works once (regenerate afterwards). Wrong codes count like wrong authenticator codes. Audited (account.signin with method password+recovery_code, account.mfa.recovery_code.use).",
      },
    })
    .use(principalPlugin(platform.authz))
    .guard(secured(HUMAN_CALLER))
    .get("/me/mfa", async ({ principal }) => mfa.list(requireHuman(principal, "Listing MFA factors").accountId), {
      response: {
        200: t.Object({
          enabled: t.Boolean({ description: "An active factor exists: sign-in asks for a code" }),
          recovery_codes_left: t.Integer({ description: "Unused recovery codes" }),
          data: t.Array(MfaFactor, { description: "Every factor, pending and disabled ones included, in creation order" }),
        }),
        401: ErrorBody,
        403: ErrorBody,
      },
      detail: { tags, summary: "Your MFA factors and how many recovery codes are left" },
    })
    .post("/me/mfa/totp", async ({ principal, body, meta, set }) => {
      const r = await mfa.enrol(requireSession(principal, "Enrolling an MFA factor").accountId, body ?? {}, meta);
      set.status = 201;
      return r;
    }, {
      body: t.Optional(t.Object({ name: t.Optional(t.Nullable(t.String({ maxLength: 100, description: "Label shown in the factor list; default \"Authenticator app\"" }))) })),
      response: {
        201: t.Composite([
          MfaFactor,
          t.Object({
            factor_id: t.String({ format: "uuid", description: "Same as id" }),
            secret: t.String({ description: "Base32 seed to type into an authenticator app; shown once" }),
            otpauth_uri: t.String({ description: "otpauth://totp/... for a QR code; shown once" }),
          }),
        ]),
        ...meErrors,
      },
      detail: {
        tags,
        summary: "Enrol an authenticator app (TOTP): pending until confirmed (console session only)",
        description: "The factor is pending: confirm it with a code within 10 minutes. At most 10 enrolments per account per hour (429 TOO_MANY_ENROLMENTS). Audited (account.mfa.enrol).",
      },
    })
    .post("/me/mfa/totp/:factor_id/confirm", ({ principal, params, body, meta }) => mfa.confirm(requireSession(principal, "Confirming an MFA factor").accountId, params.factor_id, body.code, meta), {
      params: FactorParams,
      body: t.Object({ code: t.String({ maxLength: 16, description: "Current 6-digit code of the app" }) }),
      response: { 200: t.Composite([MfaFactor, t.Object({ recovery_codes: t.Optional(t.Array(t.String(), { description: "Only when this is the account's first active factor; shown once" })) })]), ...meErrors },
      detail: {
        tags,
        summary: "Confirm a pending factor with a code: from now on sign-in asks for one",
        description: "200 the active factor, with 10 recovery codes when it is the first. 400 INVALID_CODE; the 5th wrong code deletes the pending factor (429 TOO_MANY_ATTEMPTS: enrol again). 400 ENROLMENT_EXPIRED after 10 minutes; 409 FACTOR_ALREADY_CONFIRMED. 404 for a factor of another account. Audited (account.mfa.confirm).",
      },
    })
    .delete("/me/mfa/:factor_id", async ({ principal, params, body, meta, set }) => {
      await mfa.disable(requireSession(principal, "Disabling an MFA factor").accountId, params.factor_id, body ?? {}, meta);
      set.status = 204;
    }, {
      params: FactorParams,
      body: t.Optional(t.Object({ code: t.Optional(t.Nullable(t.String({ maxLength: 64, description: "A current 6-digit code of an active factor, or an unused recovery code (used up)" }))) })),
      detail: {
        tags,
        responses: noContent(),
        summary: "Disable a factor (soft; needs a current code or a recovery code)",
        description:
          "204, also when already disabled. Disabling an active factor needs proof of the second factor in the JSON body: {\"code\": \"<6-digit code or recovery code>\"} (400 VALIDATION_ERROR when missing, 400 INVALID_CODE when wrong); a pending factor needs none. " +
          "Disabling the last active factor deletes the recovery codes: sign-in asks for the password only. 404 for a factor of another account. Audited (account.mfa.disable).",
      },
    })
    .post("/me/mfa/recovery-codes/regenerate", ({ principal, meta }) => mfa.regenerate(requireSession(principal, "Regenerating recovery codes").accountId, meta), {
      response: { 200: RecoveryCodes, ...meErrors },
      detail: { tags, summary: "Replace every recovery code with 10 new ones (shown once)", description: "The old codes stop working. 400 MFA_NOT_ENROLLED without an active factor. Audited (account.mfa.recovery_codes.regenerate)." },
    })
    .delete("/admin/accounts/:account_id/mfa", async ({ principal, params, meta, set }) => {
      const op = requireOperator(principal);
      await mfa.reset(op.accountId, params.account_id, meta);
      set.status = 204;
    }, {
      params: t.Object({ account_id: Uuid() }),
      detail: {
        tags: ["Platform: operator"],
        responses: noContent(),
        summary: "Reset an account's MFA (operators), e.g. for an operator locked out of their authenticator",
        description: "204. Disables every factor, deletes the recovery codes and ends open sign-in challenges of the account, so its next sign-in needs the password (or provider) only; it can enrol again. Sessions stay. 400 VALIDATION_ERROR for your own account (disable your factor with a code instead); 403 OPERATOR_REQUIRED for other callers; 404 for an unknown account. Audited (account.mfa.reset).",
      },
    });
}
