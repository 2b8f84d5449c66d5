/**
 * Webhook events of the Auth service: the catalogue served by {scope}/webhooks/event-types
 * and used to validate subscriptions. Each example is the `data` object of the envelope
 * (conventions: webhooks/catalogue.ts).
 */
import { Type, type TProperties, type TSchema } from "@sinclair/typebox";
import { ChangedFields, defineWebhookProduct, EXAMPLE_T0 as T0, EXAMPLE_T1 as T1 } from "../../kernel/webhooks";
import type { ModuleContext } from "../../kernel/module";

const APP = "app_0192f600b1c2";
const user = (over: Record<string, unknown> = {}) => ({
  id: "usr_0192f601c3d4",
  app_id: APP,
  email: "ada@example.com",
  email_verified: false,
  name: "Ada Lovelace",
  created_at: T0,
  updated_at: T0,
  ...over,
});
const tenant = (over: Record<string, unknown> = {}) => ({
  id: "tnt_0192f602d5e6",
  app_id: APP,
  name: "Acme Inc",
  slug: "acme",
  status: "active",
  created_at: T0,
  updated_at: T0,
  ...over,
});

const Str = Type.String();
const Nullable = <S extends TSchema>(s: S) => Type.Union([s, Type.Null()]);
/**
 * The user of user.* events: the App's public user (username, display_name, role, status,
 * metadata and the rest). The served examples predate that record (they show `name` and
 * lack the newer fields), so only the fields both share are required here.
 */
const UserEvent = <P extends TProperties>(extra: P) =>
  Type.Object({
    id: Str,
    app_id: Str,
    username: Type.Optional(Str),
    email: Nullable(Str),
    email_verified: Type.Boolean(),
    display_name: Type.Optional(Nullable(Str)),
    name: Type.Optional(Str),
    role: Type.Optional(Nullable(Str)),
    status: Type.Optional(Str),
    metadata: Type.Optional(Type.Record(Str, Type.Unknown())),
    created_at: Str,
    updated_at: Str,
    ...extra,
  });
/** The tenant of tenant.* events (display_id, display_name, metadata: not in the older served example). */
const TenantEvent = <P extends TProperties>(extra: P) =>
  Type.Object({
    id: Str,
    display_id: Type.Optional(Str),
    app_id: Str,
    slug: Str,
    name: Type.Optional(Str),
    display_name: Type.Optional(Str),
    status: Str,
    metadata: Type.Optional(Type.Record(Str, Type.Unknown())),
    created_at: Str,
    updated_at: Str,
    ...extra,
  });
const RoleChange = (at: string) => Type.Object({ user_id: Str, role: Str, tenant_id: Nullable(Str), [at]: Str });

const EVENTS = [
  { type: "user.created",
    data: UserEvent({ signup_method: Str }), description: "A user signed up (or was created by an admin or invitation).", example: { ...user(), signup_method: "password" } },
  {
    type: "user.signed_in",
    data: Type.Object({ user_id: Str, method: Str, mfa: Type.Boolean(), tenant_id: Type.Optional(Nullable(Str)), session_id: Type.Optional(Str), ip: Nullable(Str), user_agent: Nullable(Str), signed_in_at: Str }),
    description: "A user signed in.",
    example: { user_id: "usr_0192f601c3d4", method: "password", mfa: false, session_id: "ses_0192f6a0e7f8", ip: "203.0.113.7", user_agent: "Mozilla/5.0", signed_in_at: T1 },
  },
  { type: "user.email_verified",
    data: UserEvent({ verified_email: Type.Optional(Str) }), description: "A user verified their email address.", example: user({ email_verified: true, updated_at: T1 }) },
  { type: "user.updated",
    data: UserEvent({ changed_fields: ChangedFields }), description: "A user's profile or email changed.", example: { ...user({ name: "Ada King", updated_at: T1 }), changed_fields: ["name"] } },
  { type: "user.deleted",
    data: Type.Object({ id: Str, app_id: Str, email: Nullable(Str), deleted_at: Str }), description: "A user was deleted.", example: { id: "usr_0192f601c3d4", app_id: APP, email: "ada@example.com", deleted_at: T1 } },
  { type: "role.assigned",
    data: RoleChange("assigned_at"), description: "A role was assigned to a user (app-wide or within a tenant).", example: { user_id: "usr_0192f601c3d4", role: "admin", tenant_id: "tnt_0192f602d5e6", assigned_at: T1 } },
  { type: "role.removed",
    data: RoleChange("removed_at"), description: "A role was removed from a user.", example: { user_id: "usr_0192f601c3d4", role: "admin", tenant_id: "tnt_0192f602d5e6", removed_at: T1 } },
  { type: "tenant.created",
    data: TenantEvent({}), description: "A tenant (organization) was created.", example: tenant() },
  { type: "tenant.updated",
    data: TenantEvent({ changed_fields: ChangedFields }), description: "A tenant's name, slug or status changed.", example: { ...tenant({ status: "suspended", updated_at: T1 }), changed_fields: ["status"] } },
  { type: "tenant.deleted",
    data: Type.Object({ id: Str, display_id: Type.Optional(Str), app_id: Str, slug: Str, deleted_at: Str }), description: "A tenant was deleted.", example: { id: "tnt_0192f602d5e6", app_id: APP, slug: "acme", deleted_at: T1 } },
  { type: "tenant.member.added",
    data: Type.Object({ tenant_id: Str, user_id: Str, account_id: Type.Optional(Str), role_name: Type.Optional(Nullable(Str)), roles: Type.Array(Str), added_at: Str }), description: "A user joined a tenant.", example: { tenant_id: "tnt_0192f602d5e6", user_id: "usr_0192f601c3d4", roles: ["member"], added_at: T1 } },
  { type: "tenant.member.removed",
    data: Type.Object({ id: Type.Optional(Str), tenant_id: Str, account_id: Type.Optional(Str), user_id: Str, removed_at: Str }), description: "A user was removed from a tenant.", example: { tenant_id: "tnt_0192f602d5e6", user_id: "usr_0192f601c3d4", removed_at: T1 } },
] as const;

export const AUTH_WEBHOOKS = defineWebhookProduct({
  product: "auth",
  label: "Auth",
  legacyHeader: "x-auth-signature",
  events: EVENTS,
});

/** What the Auth module gets from the kernel: its emit is typed by the events above. */
export type AuthContext = ModuleContext<typeof AUTH_WEBHOOKS>;
