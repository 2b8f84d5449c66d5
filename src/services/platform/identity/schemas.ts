/** TypeBox models of console sign-up, sign-in, sessions, MFA and invitations (their routes and OpenAPI description). */
import { t } from "../../../core/schema";
import { Pagination, Uuid } from "../../../access/schemas";

export const TokenResponse = t.Object({
  access_token: t.String({ description: "JWT access token" }),
  refresh_token: t.String({ description: "Rotating refresh token (JWT)" }),
  token_type: t.Literal("Bearer"),
  expires_in: t.Number({ description: "Access-token lifetime, seconds" }),
});
export const SessionDuration = t.Optional(
  t.Union([t.Literal("short"), t.Literal("long"), t.Integer(), t.String()], {
    description: "short = 24 h, long = 90 d, or integer seconds 3600-7776000; default 30 days",
  }),
);
export const SignupBody = t.Object({
  email: t.String({ description: "Email address", maxLength: 254 }),
  username: t.String({ description: "Letters, digits, dot, underscore, hyphen", maxLength: 64 }),
  password: t.String({ description: "At least 8 characters", maxLength: 1024 }),
  display_name: t.Optional(t.Nullable(t.String({ maxLength: 200 }))),
  session_duration: SessionDuration,
});
export const SigninBody = t.Object({
  identifier: t.String({ description: "Email or username", maxLength: 254 }),
  password: t.String({ maxLength: 1024 }),
  session_duration: SessionDuration,
});
export const RefreshBody = t.Object({ refresh_token: t.String({ maxLength: 4096 }) });
export const EmailBody = t.Object({ email: t.String({ maxLength: 254 }) });
export const ResetBody = t.Object({
  token: t.String({ description: "6-digit code from the email", maxLength: 16 }),
  new_password: t.String({ description: "At least 8 characters", maxLength: 1024 }),
});
export const SetupBody = t.Object({
  setup_token: t.String({ description: "One-time token printed at first start", maxLength: 256 }),
  email: t.String({ maxLength: 254 }),
  username: t.String({ maxLength: 64 }),
  password: t.String({ maxLength: 1024 }),
  display_name: t.Optional(t.Nullable(t.String({ maxLength: 200 }))),
});
// --- Invitations (invitations.ts, routes/invitations.ts) ---------------------------------

export const Invitation = t.Object({
  id: t.String({ format: "uuid" }),
  email: t.String(),
  role_id: t.String({ format: "uuid" }),
  role: t.String({ description: "Role name" }),
  invited_by: t.String({ format: "uuid", description: "Account id of the inviter (for an API key: its minter)" }),
  created_at: t.String({ format: "date-time" }),
  expires_at: t.String({ format: "date-time" }),
});
export const InvitationList = t.Object({ data: t.Array(Invitation), pagination: Pagination });
export const InvitationCreate = t.Object({
  email: t.String({ maxLength: 254 }),
  role_id: t.Optional(Uuid("Defaults to the built-in member role")),
});
export const InvitationAccept = t.Object({ token: t.String({ minLength: 1, maxLength: 256, description: "The token from the invitation mail" }) });
export const InvitationAccepted = t.Object({
  workspace_id: t.String({ format: "uuid" }),
  workspace_slug: t.String(),
  member_id: t.String({ format: "uuid" }),
  role: t.String({ description: "Role name" }),
});
// --- MFA of console accounts (mfa.ts, routes/mfa.ts) --------------------------------------

export const MfaChallenge = t.Object({
  mfa_required: t.Literal(true),
  mfa_token: t.String({ format: "uuid", description: "Finish with POST /platform/v1/auth/mfa/verify or /recover; single use, 10 minutes" }),
  factors: t.Array(t.Object({ id: t.String({ format: "uuid" }), type: t.Literal("totp"), name: t.Nullable(t.String()) })),
  expires_at: t.String({ format: "date-time" }),
});
export const MfaFactor = t.Object({
  id: t.String({ format: "uuid" }),
  type: t.Literal("totp"),
  name: t.Nullable(t.String()),
  status: t.Union([t.Literal("pending"), t.Literal("active"), t.Literal("disabled")], { description: "pending (not confirmed yet) | active | disabled" }),
  created_at: t.String({ format: "date-time" }),
  confirmed_at: t.Nullable(t.String({ format: "date-time" })),
  disabled_at: t.Nullable(t.String({ format: "date-time" })),
});
export const RecoveryCodes = t.Object({
  recovery_codes: t.Array(t.String({ description: "16 hex characters; hyphens and case are ignored when entered" }), { description: "Shown once" }),
});
