/** TypeBox models shared by the platform routes and their OpenAPI description. */
import { t } from "../../core/schema";
import type { TSchema } from "elysia";
import type { TString } from "@sinclair/typebox";
import { JsonObject, ListQuery, Pagination, UUID_PATTERN, Uuid } from "../../access/schemas";
import { FORM_TYPE, JSON_TYPE } from "../../core/request-body";

export { ErrorBody, ListQuery, Pagination } from "../../access/schemas";

// --- Ids a caller names (path, query or body): shared by the Platform and Auth routes --------

/** The house UUID (access/schemas.ts); UUID_BODY is its pattern without anchors, to build "a UUID or ..." patterns. */
export { Uuid };
export const UUID_BODY = UUID_PATTERN.slice(1, -1);

/** A workspace slug (workspaces.ts validateSlug): 1-63 lowercase letters and digits, separated by single hyphens. */
export const WORKSPACE_SLUG_PATTERN = "^[a-z0-9]+(?:-[a-z0-9]+)*$";
export const WORKSPACE_SLUG_MAX = 63;
export const WorkspaceSlug = t.String({
  pattern: WORKSPACE_SLUG_PATTERN,
  maxLength: WORKSPACE_SLUG_MAX,
  description: "The workspace's slug (not its id): 1-63 lowercase letters and digits, separated by single hyphens",
});

/** Path parameters of a workspace's routes: workspace_slug and the named UUID ids. */
export function workspaceParams<K extends string>(...ids: K[]) {
  const props = { workspace_slug: WorkspaceSlug, ...Object.fromEntries(ids.map((k) => [k, Uuid()])) } as { workspace_slug: TString } & Record<K, TString>;
  return t.Object(props);
}

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

const accountFields = {
  id: t.String({ format: "uuid" }),
  email: t.String(),
  username: t.String(),
  display_name: t.Nullable(t.String()),
  status: t.UnionEnum(["active", "suspended", "deactivated", "blocked"]),
  is_operator: t.Boolean(),
  created_at: t.String({ format: "date-time" }),
};

/** An account as the operator routes show it. */
export const OperatorAccount = t.Object({ ...accountFields, updated_at: t.String({ format: "date-time" }) });
export const OperatorAccountList = t.Object({ data: t.Array(OperatorAccount), pagination: Pagination });

/** GET /v1/introspect: who is calling, and the workspaces they reach. */
export const Introspection = t.Object({
  is_authenticated: t.Literal(true),
  principal: t.Union([
    t.Object({ type: t.Literal("user"), id: t.String({ format: "uuid", description: "Account id" }), session_id: t.String({ format: "uuid" }) }),
    t.Object({ type: t.Literal("personal_token"), id: t.String({ format: "uuid", description: "Account id" }), token_id: t.String({ format: "uuid" }) }),
    t.Object({ type: t.Literal("api_key"), id: t.String({ format: "uuid", description: "API key id" }), workspace_id: t.String({ format: "uuid" }), created_by: t.String({ format: "uuid" }) }),
  ]),
  account: t.Nullable(t.Object(accountFields), { description: "null for a workspace API key" }),
  workspaces: t.Array(
    t.Object({
      id: t.String({ format: "uuid" }),
      slug: t.String(),
      display_name: t.String(),
      role: t.String({ description: "The account's role in the workspace; api_key for a workspace API key" }),
      services: t.Array(t.String()),
      avatar_url: t.Nullable(t.String()),
    }),
    { description: "A workspace API key: its own workspace only" },
  ),
});

export const PolicyStatement = t.Object({
  effect: t.Literal("allow"),
  actions: t.Array(t.String()),
  resources: t.Array(t.String()),
});

// API keys and personal access tokens: keys/schemas.ts; the audit log: audit/schemas.ts.

// --- invitations (workspaces, members, roles, service activation: workspaces/schemas.ts) ---

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

/**
 * `detail.requestBody` of a route whose module lists it with OAUTH_FORM_TYPES: the same fields
 * as a form post or as JSON (the generator alone would document JSON only).
 */
export const formOrJsonBody = (schema: TSchema) => ({ required: true, content: { [FORM_TYPE]: { schema }, [JSON_TYPE]: { schema } } });

/** What a provider sends back: query string (idp_2, idp_3) or form post (idp_1); JSON is accepted too. */
export const CallbackFields = t.Object({
  state: t.Optional(t.String({ maxLength: 512, description: "The state minted at start (single use, 10 minutes)" })),
  code: t.Optional(t.String({ maxLength: 4096, description: "Authorization code (exchanged with PKCE)" })),
  id_token: t.Optional(t.String({ maxLength: 16384, description: "An ID token posted directly (idp_1 may); verified like the exchanged one" })),
  user: t.Optional(t.String({ maxLength: 4096, description: "idp_1 only, first sign-in: JSON {name, email}; untrusted, used for the display name only" })),
  error: t.Optional(t.String({ maxLength: 256 })),
  error_description: t.Optional(t.String({ maxLength: 1024 })),
});

/** A provider identity linked to an account (console or App user). */
export const Identity = t.Object({
  id: t.String({ format: "uuid" }),
  provider: t.String({ description: "idp_1 | idp_2 | idp_3 when linked" }),
  issuer: t.String(),
  subject: t.String(),
  email: t.Nullable(t.String({ description: "As the provider reported it when linked" })),
  created_at: t.String({ format: "date-time" }),
  last_used_at: t.Nullable(t.String({ format: "date-time" })),
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
