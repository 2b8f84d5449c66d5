/** SQL for the per-App audit log. */
import type { Db } from "../../../core/db";

export interface AuthAuditRow {
  id: string;
  app_id: string;
  action: string;
  outcome: "success" | "failure";
  actor_type: string;
  actor_id: string | null;
  target_type: string | null;
  target_id: string | null;
  ip: string | null;
  user_agent: string | null;
  metadata: string;
  created_at: string;
}

export function insertAuthAudit(db: Db, r: AuthAuditRow) {
  db.query(
    `INSERT INTO auth_audit (id, app_id, action, outcome, actor_type, actor_id, target_type, target_id, ip, user_agent, metadata, created_at)
     VALUES ($id, $app_id, $action, $outcome, $actor_type, $actor_id, $target_type, $target_id, $ip, $user_agent, $metadata, $created_at)`,
  ).run(r as any);
}

export interface AuditFilter {
  action?: string | null;
  actor_id?: string | null;
  target_id?: string | null;
  outcome?: string | null;
  since?: string | null;
  until?: string | null;
}

/** Newest first (ids are UUIDv7, so id order is time order), keyset on id. */
export function listAuthAudit(db: Db, appId: string, f: AuditFilter, before: string | null, limit: number) {
  const where = ["app_id = $app", "($before IS NULL OR id < $before)"];
  if (f.action) where.push(f.action.endsWith(".*") ? "action LIKE $action_like" : "action = $action");
  if (f.actor_id) where.push("actor_id = $actor_id");
  if (f.target_id) where.push("target_id = $target_id");
  if (f.outcome) where.push("outcome = $outcome");
  if (f.since) where.push("created_at >= $since");
  if (f.until) where.push("created_at < $until");
  return db.query<AuthAuditRow, any>(`SELECT * FROM auth_audit WHERE ${where.join(" AND ")} ORDER BY id DESC LIMIT $limit`).all({
    app: appId,
    before: before,
    action: f.action ?? null,
    action_like: f.action?.endsWith(".*") ? `${f.action.slice(0, -1)}%` : null,
    actor_id: f.actor_id ?? null,
    target_id: f.target_id ?? null,
    outcome: f.outcome ?? null,
    since: f.since ?? null,
    until: f.until ?? null,
    limit: limit,
  } as any);
}
