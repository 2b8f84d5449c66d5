/** TypeBox models of the workspace audit log (its route and OpenAPI description). */
import { t } from "../../../core/schema";
import { JsonObject, Pagination, Uuid } from "../../../access/schemas";

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
