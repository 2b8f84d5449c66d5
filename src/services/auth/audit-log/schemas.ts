/** The records the audit log's routes serve: their TypeBox models are the types too (views.ts). */
import { t } from "../../../core/schema";
import { JsonObject } from "../../../access/schemas";

export const AuditEntry = t.Object({
  id: t.String({ format: "uuid" }),
  action: t.String({ description: "e.g. user.create (sign-up), user.signin, user.signin.mfa_required, app.update, mfa.*, tenant.*, role.*" }),
  outcome: t.Union([t.Literal("success"), t.Literal("failure")]),
  actor: t.Object({
    type: t.String({ description: "user | m2m_client | account | api_key | personal_token | system | anonymous" }),
    id: t.Nullable(t.String({ description: "null for anonymous callers (e.g. a failed sign-in with an unknown identifier)" })),
  }),
  target: t.Nullable(t.Object({ type: t.String(), id: t.Nullable(t.String()) })),
  ip: t.Nullable(t.String()),
  user_agent: t.Nullable(t.String()),
  metadata: JsonObject({ description: "Action-specific details; never passwords, codes or secrets" }),
  created_at: t.String({ format: "date-time" }),
});
