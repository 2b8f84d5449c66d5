/** SQL for the platform audit log. */
import type { Sql } from "../../../core/db";
import type { AuditRow } from "../../../kernel/tenancy";

// The insert every mutation makes is the kernel's (kernel/tenancy/audit.ts).
export type { AuditRow } from "../../../kernel/tenancy";

export interface AuditFilter {
  workspace_id: string;
  actor_id?: string;
  action?: string;
  since?: string;
  until?: string;
  before_id?: string | null;
}

/** Newest first, keyset on the UUIDv7 id. Optional filters collapse to no-ops when NULL. */
export function listAudit(db: Sql, f: AuditFilter, limit: number) {
  // CAST: PostgreSQL cannot type a parameter that only meets IS NULL. LIKE is case-sensitive
  // on PostgreSQL and the action names are lowercase: the prefix filter matches the same rows on both.
  return db.all<AuditRow>(
    `SELECT * FROM platform_audit_log
     WHERE workspace_id = $ws
       AND (CAST($actor AS TEXT) IS NULL OR actor_id = $actor)
       AND ((CAST($action AS TEXT) IS NULL AND CAST($action_prefix AS TEXT) IS NULL) OR action = $action OR action LIKE $action_prefix ESCAPE '\\')
       AND (CAST($since AS TEXT) IS NULL OR created_at >= $since)
       AND (CAST($until AS TEXT) IS NULL OR created_at < $until)
       AND (CAST($before AS TEXT) IS NULL OR id < $before)
     ORDER BY id DESC LIMIT $limit`,
    {
      ws: f.workspace_id,
      actor: f.actor_id ?? null,
      action: f.action && !f.action.endsWith(".*") ? f.action : null,
      // "apikey.*" -> LIKE 'apikey.%', with LIKE's own wildcards escaped ("personal_token.*" must not match "personalXtoken.x").
      action_prefix: f.action?.endsWith(".*") ? f.action.slice(0, -1).replace(/[\\%_]/g, "\\$&") + "%" : null,
      since: f.since ?? null,
      until: f.until ?? null,
      before: f.before_id ?? null,
      limit,
    },
  );
}
