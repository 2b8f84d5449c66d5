/** Records the users' routes serve (tenants, members, roles, MFA factors): their TypeBox models are the types too (views.ts). */
import { t } from "../../../core/schema";
import { JsonObject } from "../../../access/schemas";

export const Tenant = t.Object({
  id: t.String({ format: "uuid" }),
  display_id: t.String({ description: "tnt_ + 12 hex" }),
  app_id: t.String({ format: "uuid" }),
  slug: t.String({ description: "Unique per App regardless of case" }),
  display_name: t.String(),
  status: t.String({ description: "active | suspended | archived" }),
  metadata: JsonObject(),
  created_at: t.String({ format: "date-time" }),
  updated_at: t.String({ format: "date-time" }),
});

export const Member = t.Object({
  id: t.String({ format: "uuid" }),
  tenant_id: t.String({ format: "uuid" }),
  account_id: t.String({ format: "uuid" }),
  role_id: t.Nullable(t.String()),
  role_name: t.Nullable(t.String()),
  joined_at: t.String({ format: "date-time" }),
  invited_by: t.Nullable(t.String({ description: "Id of the API key, account or M2M client that added the member" })),
});

export const Role = t.Object({
  id: t.String({ format: "uuid" }),
  app_id: t.String({ format: "uuid" }),
  name: t.String(),
  description: t.String(),
  permissions: t.Array(t.String(), { description: "Registered resource.action names, resource.* wildcards, or *" }),
  created_at: t.String({ format: "date-time" }),
  updated_at: t.String({ format: "date-time" }),
});

export const Factor = t.Object({
  id: t.String({ format: "uuid" }),
  type: t.String({ description: "totp | email" }),
  name: t.Nullable(t.String()),
  status: t.String({ description: "pending (not confirmed yet) | active | disabled" }),
  email: t.Nullable(t.String({ description: "Address of an email factor" })),
  created_at: t.String({ format: "date-time" }),
  confirmed_at: t.Nullable(t.String({ format: "date-time" })),
  disabled_at: t.Nullable(t.String({ format: "date-time" })),
});
