/**
 * MFA routes of an App: the public second step of sign-in (/auth/mfa/*, keyed by the
 * challenge's mfa_token) and the signed-in user's own factors, recovery codes and step-up
 * (/me/mfa/*, bearer access token). Rules and limits: see ../mfa.ts.
 */
import { t } from "../../../../core/schema";
import { APP_USER, PUBLIC } from "../../../../access/openapi";
import { noContent } from "../../../../core/openapi";
import type { MfaService } from "../mfa";
import { Factor } from "../schemas";
import { appParams, ConsumerTokens, ErrorBody, ListQuery, Pagination, Uuid } from "../../schemas";
import { appGroup, appSlugParams, authz, type AppScopeParts } from "../../apps/scope";

const signinTags = ["Auth: sign-in"];
const meTags = ["Auth: MFA"];

const EnrolledFactor = t.Composite([
  Factor,
  t.Object({
    secret: t.Optional(t.String({ description: "TOTP only: base32 seed, shown once" })),
    otpauth_uri: t.Optional(t.String({ description: "TOTP only: otpauth://totp/... for a QR code, shown once" })),
  }),
]);
const ConfirmedFactor = t.Composite([Factor, t.Object({ recovery_codes: t.Optional(t.Array(t.String(), { description: "Only when this is the user's first enabled factor; shown once" })) })]);
const RecoveryCodes = t.Object({ recovery_codes: t.Array(t.String({ description: "16 hex characters; hyphens and case are ignored when entered" })) });

const FactorParams = appParams(["id"]);
const Code = t.String({ maxLength: 64 });
const MfaToken = t.String({ maxLength: 64, description: "mfa_token of the sign-in challenge" });

const publicErrors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody, 429: ErrorBody };
const meErrors = { 400: ErrorBody, 401: ErrorBody, 404: ErrorBody, 409: ErrorBody, 429: ErrorBody };

export function mfaRoutes(auth: AppScopeParts & { mfa: MfaService }) {
  const { mfa } = auth;
  return appGroup(auth, APP_USER)
    .post("/auth/mfa/send-code", ({ app, body, meta }) => mfa.sendCode(app, body, meta), {
      params: appSlugParams,
      body: t.Object({ mfa_token: MfaToken, factor_id: Uuid("An email factor listed in the challenge") }),
      response: { 200: t.Object({ email_masked: t.String(), code_expires_at: t.String({ format: "date-time" }) }), ...publicErrors },
      detail: {
        tags: signinTags,
        security: PUBLIC,
        summary: "Mail a 6-digit sign-in code to an email factor of the challenge",
        description: "At most 3 sends per challenge (429 MFA_SEND_LIMIT) and 30 s apart (429 MFA_SEND_TOO_SOON, Retry-After). Each send supersedes the previous code. The code is valid 10 minutes, never past the challenge. 400 INVALID_TOKEN for an unknown, used or expired mfa_token; 429 MFA_LOCKED after 5 wrong codes. 429 RATE_LIMITED with Retry-After past MAIL_PER_ADDRESS_PER_HOUR (default 50) mail requests from the client address or MAIL_PER_RECIPIENT_PER_HOUR (default 5) sign-in codes to the factor's address.",
      },
    })
    .post("/auth/mfa/verify", ({ app, body, meta }) => mfa.verify(app, body, meta), {
      params: appSlugParams,
      body: t.Object({ mfa_token: MfaToken, code: Code }),
      response: { 200: ConsumerTokens, ...publicErrors },
      detail: {
        tags: signinTags,
        security: PUBLIC,
        summary: "Finish sign-in with an authenticator or emailed code",
        description: "200 tokens with amr [pwd, totp|email] and mfa_at. The challenge (10 minutes) is single use. 400 INVALID_TOKEN: unknown, used or expired token. 401 INVALID_CODE: wrong code; the 5th wrong code (or recovery code) locks the challenge: 429 MFA_LOCKED from then on, even for a right code. 30 wrong codes from one client address within 15 minutes, over any challenges: 429 TOO_MANY_ATTEMPTS with Retry-After.",
      },
    })
    .post("/auth/mfa/recover", ({ app, body, meta }) => mfa.recover(app, body, meta), {
      params: appSlugParams,
      body: t.Object({ mfa_token: MfaToken, recovery_code: t.String({ maxLength: 64, description: "16 hex characters, hyphens optional, any case" }) }),
      response: { 200: ConsumerTokens, ...publicErrors },
      detail: {
        tags: signinTags,
        security: PUBLIC,
        summary: "Finish sign-in with a recovery code",
        description: "200 tokens with amr [pwd, recovery_code]; the code is used up (regenerate codes afterwards). Wrong codes count toward the challenge's 5-failure lock (401 INVALID_CODE, then 429 MFA_LOCKED) and the client address's 30 per 15 minutes (429 TOO_MANY_ATTEMPTS with Retry-After).",
      },
    })
    .get("/me/mfa/factors", ({ app, request, query }) => mfa.list(app, authz(request), query), {
      params: appSlugParams,
      query: ListQuery,
      response: { 200: t.Object({ data: t.Array(Factor), pagination: Pagination }), ...meErrors },
      detail: { tags: meTags, summary: "List the signed-in user's MFA factors (all states, creation order)" },
    })
    .post("/me/mfa/factors", async ({ app, request, body, meta, set }) => {
      const factor = await mfa.enrol(app, authz(request), body, meta);
      set.status = 201;
      return factor;
    }, {
      params: appSlugParams,
      body: t.Object({
        type: t.Union([t.Literal("totp"), t.Literal("email")]),
        name: t.Optional(t.Nullable(t.String({ maxLength: 100 }))),
        email: t.Optional(t.Nullable(t.String({ maxLength: 254, description: "email factors: defaults to the user's primary email" }))),
      }),
      response: { 201: EnrolledFactor, ...meErrors },
      detail: {
        tags: meTags,
        summary: "Enrol a TOTP or email factor (pending until confirmed)",
        description: "TOTP: the answer carries the base32 secret and an otpauth:// URI (SHA-1, 6 digits, 30 s). Email: a 6-digit confirmation code is mailed to the address. Confirm within 10 minutes. At most 10 enrolments per user per hour (429 TOO_MANY_ENROLMENTS). An email enrolment counts against MAIL_PER_ADDRESS_PER_HOUR (default 50) mail requests from the client address (429 RATE_LIMITED with Retry-After); past MAIL_PER_RECIPIENT_PER_HOUR (default 5) verification mails to the address an hour the factor is created but no mail is sent.",
      },
    })
    .post("/me/mfa/factors/:id/confirm", ({ app, request, params, body, meta }) => mfa.confirm(app, authz(request), params.id, body.code, meta), {
      params: FactorParams,
      body: t.Object({ code: Code }),
      response: { 200: ConfirmedFactor, ...meErrors },
      detail: {
        tags: meTags,
        summary: "Confirm a pending factor with a code from it",
        description: "On the user's first enabled factor the answer also carries 10 recovery codes, shown once. 400 INVALID_CODE; the 5th wrong code deletes the pending factor (429); 400 ENROLMENT_EXPIRED after 10 minutes; 409 FACTOR_ALREADY_CONFIRMED.",
      },
    })
    .delete("/me/mfa/factors/:id", async ({ app, request, params, meta, set }) => {
      await mfa.disable(app, authz(request), params.id, meta);
      set.status = 204;
    }, {
      params: FactorParams,
      detail: {
        tags: meTags,
        responses: noContent(),
        summary: "Disable a factor (soft: disabled_at set, row kept)",
        description: "204, also when already disabled. Existing sessions are unaffected. Without an enabled factor left, later sign-ins need no second factor and the recovery codes are deleted.",
      },
    })
    .post("/me/mfa/recovery-codes/regenerate", ({ app, request, meta }) => mfa.regenerateRecoveryCodes(app, authz(request), meta), {
      params: appSlugParams,
      response: { 200: RecoveryCodes, ...meErrors },
      detail: { tags: meTags, summary: "Replace every recovery code with 10 new ones (shown once)", description: "400 MFA_NOT_ENROLLED without an enabled factor." },
    })
    .post("/me/mfa/step-up", ({ app, request, body, meta }) => mfa.stepUp(app, authz(request), body, meta), {
      params: appSlugParams,
      body: t.Object({ code: t.String({ maxLength: 64, description: "6-digit authenticator code or 16-hex recovery code" }) }),
      response: { 200: t.Object({ amr: t.Array(t.String()), mfa_at: t.String({ format: "date-time" }) }), ...meErrors },
      detail: {
        tags: meTags,
        summary: "Prove a second factor again on the current session",
        description: "Records amr and mfa_at on the session; call refresh to get tokens carrying them. 400 INVALID_CODE; the 5th consecutive wrong code locks step-up on this session for 15 minutes (429 STEP_UP_LOCKED with Retry-After). 400 MFA_NOT_ENROLLED without an enabled factor.",
      },
    });
}
