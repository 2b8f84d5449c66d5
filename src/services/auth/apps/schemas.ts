/** The App record the routes serve: its TypeBox model is the type too (views.ts). */
import { t } from "../../../core/schema";

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
