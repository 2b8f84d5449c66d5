/** TypeBox models shared by the Auth routes and their OpenAPI description. */
import { t } from "../../core/schema";
import { JsonObject } from "../../access/schemas";
export { CallbackFields, formOrJsonBody, Identity } from "../platform/schemas";
export { ErrorBody, ListQuery, Pagination } from "../../access/schemas";

export const ConsumerTokens = t.Object({
  access_token: t.String({ description: "RS256 JWT signed with the App key: sub, role, permissions[], type=end_user; tid/trole when a tenant was selected; amr, mfa_at after MFA" }),
  refresh_token: t.String({ description: "Rotating refresh token; every use revokes it, reuse of a rotated one revokes the session" }),
  token_type: t.Literal("Bearer"),
  expires_in: t.Number({ description: "Access-token lifetime, seconds" }),
});

export const MfaChallenge = t.Object({
  mfa_required: t.Literal(true),
  mfa_token: t.String({ format: "uuid" }),
  factors: t.Array(t.Object({ id: t.String({ format: "uuid" }), type: t.String({ description: "totp | email" }) }, { additionalProperties: t.Unknown() })),
  expires_at: t.Optional(t.String({ format: "date-time" })),
}, { additionalProperties: t.Unknown() });

export const PublicUser = t.Object({
  id: t.String({ format: "uuid" }),
  app_id: t.String({ format: "uuid" }),
  username: t.String(),
  email: t.Nullable(t.String()),
  email_verified: t.Boolean(),
  display_name: t.Nullable(t.String()),
  role: t.Nullable(t.String()),
  status: t.String({ description: "active | suspended | deactivated | blocked" }),
  metadata: JsonObject(),
  created_at: t.String({ format: "date-time" }),
  updated_at: t.String({ format: "date-time" }),
});

export const AppSettingsSchema = t.Object({
  signup_enabled: t.Boolean(),
  signup_requires_pak: t.Boolean({ description: "true: sign-up only with a workspace (platform) API key, not the publishable key" }),
  password_min_length: t.Integer(),
  block_common_passwords: t.Boolean({
    description: "Refuse new passwords found (case-insensitively) in the bundled list of the 100,000 most used passwords (default true): sign-up, invites, password change and reset, admin-set passwords",
  }),
  default_role: t.Nullable(t.String()),
  allowed_redirect_origins: t.Array(t.String()),
  access_token_ttl: t.Integer({ description: "seconds, 60-86400" }),
  refresh_token_ttl: t.Integer({ description: "seconds, 3600-7776000" }),
  mfa_policy: t.String({ description: "optional | disabled" }),
  audience: t.Nullable(t.String({ description: "aud claim of access tokens" })),
  mail_from: t.Nullable(t.String({ description: "Sender of the App's mails" })),
  send_verification_email: t.Boolean({ description: "Mail a verification code at sign-up (when mail is set up)" }),
  mfa_for_federated: t.Boolean({ description: "Federated sign-ins of users with an enabled factor get the MFA challenge too (default true)" }),
  oauth_providers: t.Record(
    t.String({ description: "idp_1 | idp_2 | idp_3" }),
    t.Object({
      issuer: t.String(),
      client_id: t.String(),
      client_secret_hint: t.String({ description: "Last characters of the secret (write-only; stored encrypted)" }),
      native_client_ids: t.Array(t.String(), { description: "idp_1: extra aud values accepted from the native flow" }),
    }),
    { description: "Configured identity providers; set with {issuer, client_id, client_secret}, remove with null" },
  ),
});

export const App = t.Object({
  id: t.String({ format: "uuid" }),
  workspace_id: t.String({ format: "uuid" }),
  slug: t.String(),
  display_name: t.String(),
  issuer: t.String({ description: "<auth_base_url>/<slug>; tokens carry it as iss" }),
  jwks_uri: t.String(),
  publishable_key: t.String({ description: "pk_...: public; authorizes browser sign-up unless signup_requires_pak" }),
  settings: AppSettingsSchema,
  created_at: t.String({ format: "date-time" }),
  updated_at: t.String({ format: "date-time" }),
});
