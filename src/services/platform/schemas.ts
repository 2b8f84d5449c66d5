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

export const Workspace = t.Object({
  id: t.String({ format: "uuid" }),
  slug: t.String(),
  display_name: t.String(),
  created_by: t.String({ format: "uuid" }),
  status: t.String({ description: "active" }),
  settings: JsonObject(),
  avatar_url: t.Nullable(t.String()),
  created_at: t.String({ format: "date-time" }),
  updated_at: t.String({ format: "date-time" }),
  member_role_id: t.Optional(t.String({ format: "uuid" })),
  member_role: t.Optional(t.String()),
});

export const WorkspaceList = t.Object({ data: t.Array(Workspace), pagination: Pagination });

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

export const WorkspaceCreate = t.Object({ slug: t.String({ maxLength: 63 }), display_name: t.String({ maxLength: 100 }) });
export const WorkspacePatch = t.Object({
  display_name: t.Optional(t.String({ maxLength: 100 })),
  slug: t.Optional(t.String({ maxLength: 63 })),
  settings: t.Optional(JsonObject()),
});

export const PolicyStatement = t.Object({
  effect: t.Literal("allow"),
  actions: t.Array(t.String()),
  resources: t.Array(t.String()),
});

// --- Workspace API keys, personal access tokens, audit log -------------------------------

export const ApiKey = t.Object({
  id: t.String({ format: "uuid" }),
  name: t.String(),
  prefix: t.String({ description: "First 12 characters of the key, for recognising it" }),
  last_four: t.String(),
  policy: t.Array(PolicyStatement),
  created_by: t.String({ format: "uuid" }),
  created_at: t.String({ format: "date-time" }),
  expires_at: t.Nullable(t.String({ format: "date-time" })),
  last_used_at: t.Nullable(t.String({ format: "date-time", description: "Advisory; updated at most once a minute" })),
  revoked_at: t.Nullable(t.String({ format: "date-time" })),
});
export const ApiKeyCreated = t.Composite([
  ApiKey,
  t.Object({ key: t.Nullable(t.String({ description: "svc_live_... — shown only in the first response; null on an Idempotency-Key replay" })) }),
]);
export const ApiKeyList = t.Object({ data: t.Array(ApiKey), pagination: Pagination });
export const ApiKeyCreate = t.Object({
  name: t.String({ minLength: 1, maxLength: 100 }),
  // Statements are validated by validatePolicy (not TypeBox) so unknown fields are rejected, never silently stripped.
  policy: t.Array(t.Unknown(), { description: "Policy statements {effect: allow, actions[], resources[]}; must be covered by your own role policy" }),
  expires_at: t.Optional(t.Nullable(t.String({ description: "ISO 8601 date-time (or date, read as UTC midnight), in the future; omit for a key that does not expire" }))),
});

export const PersonalToken = t.Object({
  id: t.String({ format: "uuid" }),
  name: t.String(),
  prefix: t.String({ description: "First 12 characters of the token" }),
  last_four: t.String(),
  created_at: t.String({ format: "date-time" }),
  expires_at: t.Nullable(t.String({ format: "date-time" })),
  last_used_at: t.Nullable(t.String({ format: "date-time", description: "Updated at most once a minute" })),
  revoked_at: t.Nullable(t.String({ format: "date-time" })),
});
export const PersonalTokenCreated = t.Object({
  id: t.String({ format: "uuid" }),
  name: t.String(),
  token: t.String({ description: "pat_... — shown only in this response" }),
  prefix: t.String(),
  last_four: t.String(),
  created_at: t.String({ format: "date-time" }),
  expires_at: t.Nullable(t.String({ format: "date-time" })),
});
export const PersonalTokenList = t.Object({ data: t.Array(PersonalToken), pagination: Pagination });
export const PersonalTokenCreate = t.Object({
  name: t.String({ minLength: 1, maxLength: 100 }),
  expires_in_days: t.Optional(t.Integer({ minimum: 1, maximum: 365, description: "Default 30" })),
});

export const AuditEntry = t.Object({
  id: t.String({ format: "uuid" }),
  actor: t.Object({ type: t.String({ description: "account | api_key | personal_token | system" }), id: t.Nullable(t.String()) }),
  action: t.String(),
  target: t.Nullable(t.Object({ type: t.String(), id: t.Nullable(t.String()) })),
  ip: t.Nullable(t.String()),
  user_agent: t.Nullable(t.String()),
  metadata: JsonObject(),
  created_at: t.String({ format: "date-time" }),
});
export const AuditList = t.Object({ data: t.Array(AuditEntry), pagination: Pagination });
export const AuditQuery = t.Object({
  actor_id: t.Optional(Uuid("Account id (sessions and personal tokens) or API key id")),
  action: t.Optional(t.String({ description: 'Exact action ("apikey.create") or prefix pattern ("apikey.*")' })),
  since: t.Optional(t.String({ description: "ISO 8601; entries at or after" })),
  until: t.Optional(t.String({ description: "ISO 8601; entries strictly before" })),
  limit: t.Optional(t.QueryInteger({ description: "1-200, default 50" })),
  cursor: t.Optional(t.String()),
});

// --- members, invitations, roles, service activation ----------------------------------

export const Member = t.Object({
  id: t.String({ format: "uuid" }),
  account_id: t.String({ format: "uuid" }),
  email: t.String(),
  username: t.String(),
  display_name: t.Nullable(t.String()),
  role_id: t.String({ format: "uuid" }),
  role: t.String({ description: "Role name" }),
  joined_at: t.String({ format: "date-time" }),
});
export const MemberList = t.Object({ data: t.Array(Member), pagination: Pagination });
export const MemberPatch = t.Object({ role_id: Uuid("A built-in role or a custom role of this workspace") });

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
 * Policy input. Extra keys are kept (not stripped by validation) so the service can
 * reject them: a misspelled restriction must fail, never be silently dropped.
 */
export const PolicyInput = t.Array(
  t.Object({ effect: t.String(), actions: t.Array(t.String()), resources: t.Array(t.String()) }, { additionalProperties: t.Unknown() }),
  { description: "Policy statements; actions must be registered actions or prefix patterns, and must not exceed the caller's own policy" },
);
export const Role = t.Object({
  id: t.String({ format: "uuid" }),
  name: t.String(),
  description: t.String(),
  policy: t.Array(PolicyStatement),
  builtin: t.Boolean({ description: "owner, admin and member are built in and read-only" }),
  created_at: t.String({ format: "date-time" }),
  updated_at: t.String({ format: "date-time" }),
});
export const RoleList = t.Object({ data: t.Array(Role), pagination: Pagination });
export const RoleCreate = t.Object({
  name: t.String({ maxLength: 64, description: "1-64 of [a-z0-9_-], unique in the workspace including built-ins" }),
  description: t.Optional(t.Nullable(t.String({ maxLength: 500 }))),
  policy: PolicyInput,
});
export const RolePatch = t.Object({
  name: t.Optional(t.String({ maxLength: 64 })),
  description: t.Optional(t.Nullable(t.String({ maxLength: 500 }))),
  policy: t.Optional(PolicyInput),
});

export const WorkspaceServiceItem = t.Object({
  service: t.String(),
  enabled: t.Boolean(),
  enabled_at: t.Nullable(t.String({ format: "date-time" })),
  description: t.String(),
});
export const WorkspaceServiceList = t.Object({ data: t.Array(WorkspaceServiceItem) });

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
