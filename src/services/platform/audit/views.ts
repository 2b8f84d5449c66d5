/** An audit entry as the API shows it: typed by its schema (audit/schemas.ts). */
import type { Static } from "@sinclair/typebox";
import type { AuditEntry } from "./schemas";
import type { AuditRow } from "./store";

export const auditView = (r: AuditRow): Static<typeof AuditEntry> => ({
  id: r.id,
  actor: { type: r.actor_type, id: r.actor_id },
  action: r.action,
  target: r.target_type ? { type: r.target_type, id: r.target_id } : null,
  ip: r.ip,
  user_agent: r.user_agent,
  metadata: JSON.parse(r.metadata) as Record<string, unknown>,
  created_at: r.created_at,
});
