/** SQL for the platform audit log. */
import type { Db } from "../../../core/db";

export interface AuditRow {
  id: string;
  workspace_id: string | null;
  actor_type: string;
  actor_id: string | null;
  action: string;
  target_type: string | null;
  target_id: string | null;
  ip: string | null;
  user_agent: string | null;
  metadata: string;
  created_at: string;
}

export function insertAudit(db: Db, r: AuditRow) {
  db.query(
    `INSERT INTO platform_audit_log (id, workspace_id, actor_type, actor_id, action, target_type, target_id, ip, user_agent, metadata, created_at)
     VALUES ($id, $workspace_id, $actor_type, $actor_id, $action, $target_type, $target_id, $ip, $user_agent, $metadata, $created_at)`,
  ).run(r as any);
}

export interface AuditFilter {
  workspace_id: string;
  actor_id?: string;
  action?: string;
  since?: string;
  until?: string;
  before_id?: string | null;
}

/** Newest first, keyset on the UUIDv7 id. Optional filters collapse to no-ops when NULL. */
export function listAudit(db: Db, f: AuditFilter, limit: number) {
  return db
    .query<AuditRow, any>(
      `SELECT * FROM platform_audit_log
       WHERE workspace_id = $ws
         AND ($actor IS NULL OR actor_id = $actor)
         AND (($action IS NULL AND $action_prefix IS NULL) OR action = $action OR action LIKE $action_prefix ESCAPE '\\')
         AND ($since IS NULL OR created_at >= $since)
         AND ($until IS NULL OR created_at < $until)
         AND ($before IS NULL OR id < $before)
       ORDER BY id DESC LIMIT $limit`,
    )
    .all({
      ws: f.workspace_id,
      actor: f.actor_id ?? null,
      action: f.action && !f.action.endsWith(".*") ? f.action : null,
      // "apikey.*" -> LIKE 'apikey.%', with LIKE's own wildcards escaped ("personal_token.*" must not match "personalXtoken.x").
      action_prefix: f.action?.endsWith(".*") ? f.action.slice(0, -1).replace(/[\\%_]/g, "\\$&") + "%" : null,
      since: f.since ?? null,
      until: f.until ?? null,
      before: f.before_id ?? null,
      limit,
    });
}
