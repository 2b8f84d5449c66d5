/** TypeBox models of workspaces, members, roles and service activation (their routes and OpenAPI description). */
import { t } from "../../../core/schema";
import { JsonObject, Pagination, Uuid } from "../../../access/schemas";
import { PolicyStatement } from "../schemas";

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
export const WorkspaceCreate = t.Object({ slug: t.String({ maxLength: 63 }), display_name: t.String({ maxLength: 100 }) });
export const WorkspacePatch = t.Object({
  display_name: t.Optional(t.String({ maxLength: 100 })),
  slug: t.Optional(t.String({ maxLength: 63 })),
  settings: t.Optional(JsonObject()),
});
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
