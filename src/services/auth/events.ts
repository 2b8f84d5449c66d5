/**
 * Webhook events of the Auth service: the catalogue served by {scope}/webhooks/event-types
 * and used to validate subscriptions. Each example is the `data` object of the envelope
 * (conventions: webhooks/catalogue.ts).
 */
import { defineWebhookProduct, EXAMPLE_T0 as T0, EXAMPLE_T1 as T1 } from "../../kernel/webhooks/catalogue";
import type { EventTypeInfo } from "../../kernel/webhooks/types";

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

const EVENTS: EventTypeInfo[] = [
  { type: "user.created", description: "A user signed up (or was created by an admin or invitation).", example: { ...user(), signup_method: "password" } },
  {
    type: "user.signed_in",
    description: "A user signed in.",
    example: { user_id: "usr_0192f601c3d4", method: "password", mfa: false, session_id: "ses_0192f6a0e7f8", ip: "203.0.113.7", user_agent: "Mozilla/5.0", signed_in_at: T1 },
  },
  { type: "user.email_verified", description: "A user verified their email address.", example: user({ email_verified: true, updated_at: T1 }) },
  { type: "user.updated", description: "A user's profile or email changed.", example: { ...user({ name: "Ada King", updated_at: T1 }), changed_fields: ["name"] } },
  { type: "user.deleted", description: "A user was deleted.", example: { id: "usr_0192f601c3d4", app_id: APP, email: "ada@example.com", deleted_at: T1 } },
  { type: "role.assigned", description: "A role was assigned to a user (app-wide or within a tenant).", example: { user_id: "usr_0192f601c3d4", role: "admin", tenant_id: "tnt_0192f602d5e6", assigned_at: T1 } },
  { type: "role.removed", description: "A role was removed from a user.", example: { user_id: "usr_0192f601c3d4", role: "admin", tenant_id: "tnt_0192f602d5e6", removed_at: T1 } },
  { type: "tenant.created", description: "A tenant (organization) was created.", example: tenant() },
  { type: "tenant.updated", description: "A tenant's name, slug or status changed.", example: { ...tenant({ status: "suspended", updated_at: T1 }), changed_fields: ["status"] } },
  { type: "tenant.deleted", description: "A tenant was deleted.", example: { id: "tnt_0192f602d5e6", app_id: APP, slug: "acme", deleted_at: T1 } },
  { type: "tenant.member.added", description: "A user joined a tenant.", example: { tenant_id: "tnt_0192f602d5e6", user_id: "usr_0192f601c3d4", roles: ["member"], added_at: T1 } },
  { type: "tenant.member.removed", description: "A user was removed from a tenant.", example: { tenant_id: "tnt_0192f602d5e6", user_id: "usr_0192f601c3d4", removed_at: T1 } },
];

export const AUTH_WEBHOOKS = defineWebhookProduct({
  product: "auth",
  label: "Auth",
  legacyHeader: "x-auth-signature",
  events: EVENTS,
});
