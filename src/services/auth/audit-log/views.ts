/**
 * What the audit log serves, one serialiser per record: rows turned into the records of
 * schemas.ts, whose TypeBox models are the types too (one declaration for the documented and
 * the served shape).
 */
import type { Static } from "@sinclair/typebox";
import type { AuthAuditRow } from "../audit";
import type { AuditEntry } from "./schemas";

export type AuthAuditView = Static<typeof AuditEntry>;

function parseMetadata(s: string): Record<string, unknown> {
  try {
    const v = JSON.parse(s);
    return v && typeof v === "object" && !Array.isArray(v) ? v : {};
  } catch {
    return {}; // a damaged row must not break the whole page
  }
}

export const authAuditView = (r: AuthAuditRow): AuthAuditView => ({
  id: r.id,
  action: r.action,
  outcome: r.outcome,
  actor: { type: r.actor_type, id: r.actor_id },
  target: r.target_type ? { type: r.target_type, id: r.target_id } : null,
  ip: r.ip,
  user_agent: r.user_agent,
  metadata: parseMetadata(r.metadata),
  created_at: r.created_at,
});
