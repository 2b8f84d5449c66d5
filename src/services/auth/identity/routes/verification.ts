/** Verification codes (server-side callers with auth.verification.create), public verify, end-user password reset. */
import { t } from "../../../../core/schema";
import { APP_ADMIN, PUBLIC } from "../../../../access/openapi";
import { noContent } from "../../../../core/openapi";
import type { VerificationService } from "../verification";
import { ErrorBody, Uuid } from "../../schemas";
import { adminCredentials, appGroup, appSlugParams, type AppScopeParts } from "../../apps/scope";

const tags = ["Auth: verification"];
const errors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody };
const Issued = {
  id: t.String({ format: "uuid" }),
  user_id: t.Nullable(t.String({ format: "uuid" })),
  target_masked: t.String(),
  expires_at: t.String({ format: "date-time", description: "15 minutes after minting" }),
};
const Code = t.String({ maxLength: 16, description: "The 6-digit code" });
const Verified = t.Object({ verified: t.Literal(true) });
const verifyErrors = { 400: ErrorBody, 404: ErrorBody, 429: ErrorBody };
const codeRules = "400 INVALID_CODE for a wrong, expired or used code; the 5th wrong code for a target burns its code and answers 429 TOO_MANY_ATTEMPTS until a new code is minted. 30 wrong codes from one client address within 15 minutes, over any targets, answer 429 TOO_MANY_ATTEMPTS with Retry-After.";

export function verificationRoutes(auth: AppScopeParts & { verification: VerificationService }) {
  const { verification, access } = auth;
  return appGroup(auth, PUBLIC)
    .post("/auth/request-verification", async ({ app, request, body, meta, set }) => {
      const caller = await access.admin(app, adminCredentials(request), "auth.verification.create");
      set.status = 201;
      return verification.requestVerification(app, caller, body, meta);
    }, {
      params: appSlugParams,
      body: t.Object({
        email: t.Optional(t.Nullable(t.String({ maxLength: 254 }))),
        phone: t.Optional(t.Nullable(t.String({ maxLength: 32, description: "E.164, e.g. +14155550123" }))),
        user_id: t.Optional(t.Nullable(Uuid("Owner of the contact; required for a phone number no user has yet"))),
      }),
      response: { 201: t.Object({ ...Issued, channel: t.Union([t.Literal("email"), t.Literal("phone")]), code: t.String({ description: "6 digits: deliver it yourself (SMS is not built)" }) }), ...errors, 409: ErrorBody },
      detail: {
        tags,
        security: APP_ADMIN,
        summary: "Mint a verification code and return it (action auth.verification.create)",
        description: "Exactly one of email or phone (400 otherwise). Minting supersedes the target's previous code, including the one mailed at sign-up. The email must belong to a user of the App (404).",
      },
    })
    .post("/auth/send-verification-email", async ({ app, request, body, meta, set }) => {
      const caller = await access.admin(app, adminCredentials(request), "auth.verification.create");
      set.status = 202;
      return verification.sendVerificationEmail(app, caller, body, meta);
    }, {
      params: appSlugParams,
      body: t.Object({
        email: t.Optional(t.Nullable(t.String({ maxLength: 254 }))),
        user_id: t.Optional(t.Nullable(Uuid("Without email: the user's primary email"))),
      }),
      response: { 202: t.Object(Issued), ...errors, 429: ErrorBody },
      detail: {
        tags,
        security: APP_ADMIN,
        summary: "Mint a verification code and mail it (action auth.verification.create)",
        description: "202 once the mail is queued; the code is not returned. 429 RATE_LIMITED with Retry-After, nothing minted, past MAIL_PER_ADDRESS_PER_HOUR (default 50) mail requests from the client address or MAIL_PER_RECIPIENT_PER_HOUR (default 5) verification mails to the address.",
      },
    })
    .post("/auth/verify-email", ({ app, body, meta }) => verification.verifyEmail(app, body, meta), {
      params: appSlugParams,
      body: t.Object({ email: t.String({ maxLength: 254 }), code: Code }),
      response: { 200: Verified, ...verifyErrors },
      detail: { tags, summary: "Verify an email address with its code (public)", description: `A verified primary email can sign in. ${codeRules}` },
    })
    .post("/auth/verify-phone", ({ app, body, meta }) => verification.verifyPhone(app, body, meta), {
      params: appSlugParams,
      body: t.Object({ phone: t.String({ maxLength: 32 }), code: Code }),
      response: { 200: Verified, ...verifyErrors },
      detail: { tags, summary: "Verify a phone number with its code (public)", description: `A number minted with user_id becomes a verified phone of that user. ${codeRules}` },
    })
    .post("/auth/password/request-reset", async ({ app, body, meta, set }) => {
      await verification.requestPasswordReset(app, body.email, meta);
      set.status = 204;
    }, {
      params: appSlugParams,
      body: t.Object({ email: t.String({ maxLength: 254 }) }),
      response: { 400: ErrorBody, 404: ErrorBody, 429: ErrorBody },
      detail: {
        tags: ["Auth: sign-in"],
        responses: noContent(),
        summary: "Mail a 6-digit password reset code",
        description:
          "204 with no body, whether or not the address has an account; at most MAIL_PER_RECIPIENT_PER_HOUR (default 5) reset mails to one address an hour, further requests answer the same and send nothing. " +
          "429 RATE_LIMITED with Retry-After past MAIL_PER_ADDRESS_PER_HOUR (default 50) mail requests from the client address.",
      },
    })
    .post("/auth/password/reset", async ({ app, body, meta, set }) => {
      await verification.resetPassword(app, body, meta);
      set.status = 204;
    }, {
      params: appSlugParams,
      body: t.Object({ email: t.String({ maxLength: 254 }), code: Code, new_password: t.String({ maxLength: 1024, description: "Must satisfy the App's password policy" }) }),
      detail: { tags: ["Auth: sign-in"], responses: noContent(), summary: "Set a new password with the mailed code", description: `204; revokes every session of the user. ${codeRules}` },
    });
}
