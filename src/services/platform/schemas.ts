/** TypeBox models shared by the platform routes and their OpenAPI description. */
import { t } from "elysia";

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
  settings: t.Record(t.String(), t.Unknown()),
  avatar_url: t.Nullable(t.String()),
  created_at: t.String({ format: "date-time" }),
  updated_at: t.String({ format: "date-time" }),
  member_role_id: t.Optional(t.String({ format: "uuid" })),
  member_role: t.Optional(t.String()),
});

export const Pagination = t.Object({ next_cursor: t.Nullable(t.String()), has_more: t.Boolean() });
export const ListQuery = t.Object({ limit: t.Optional(t.String()), cursor: t.Optional(t.String()) });
export const WorkspaceList = t.Object({ data: t.Array(Workspace), pagination: Pagination });
export const WorkspaceCreate = t.Object({ slug: t.String({ maxLength: 63 }), display_name: t.String({ maxLength: 100 }) });
export const WorkspacePatch = t.Object({
  display_name: t.Optional(t.String({ maxLength: 100 })),
  slug: t.Optional(t.String({ maxLength: 63 })),
  settings: t.Optional(t.Record(t.String(), t.Unknown())),
});

export const PolicyStatement = t.Object({
  effect: t.Literal("allow"),
  actions: t.Array(t.String()),
  resources: t.Array(t.String()),
});

export const ErrorBody = t.Object({
  error: t.Object({
    code: t.String(),
    message: t.String(),
    details: t.Optional(t.Array(t.Object({ field: t.String(), reason: t.String() }))),
  }),
});
