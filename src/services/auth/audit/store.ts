/** SQL for the per-App audit log. */
import type { Sql } from "../../../core/db";

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

export async function insertAuthAudit(db: Sql, r: AuthAuditRow): Promise<void> {
  await db.run(
    `INSERT INTO auth_audit (id, app_id, action, outcome, actor_type, actor_id, target_type, target_id, ip, user_agent, metadata, created_at)
     VALUES ($id, $app_id, $action, $outcome, $actor_type, $actor_id, $target_type, $target_id, $ip, $user_agent, $metadata, $created_at)`,
    { ...r },
  );
}

/** Validated filters (see AuditQueryService): `since`/`until` are canonical ISO strings like created_at. */
export interface AuditFilter {
  /** Exact action name. */
  action?: string | null;
  /** Action prefix including its trailing dot ("user." for `user.*`). */
  actionPrefix?: string | null;
  actor_id?: string | null;
  target_id?: string | null;
  outcome?: "success" | "failure" | null;
  /** Inclusive. */
  since?: string | null;
  /** Exclusive. */
  until?: string | null;
}

/**
 * Newest first (ids are UUIDv7, so id order is creation order), keyset on id: rows older
 * than `before`, at most `limit`. Only the conditions in use are in the SQL, so the planner
 * sees plain equalities and ranges: `app_id, id DESC` pages, `app_id, action, id DESC` for an
 * exact action, `app_id, actor_id, id DESC` for an actor, `app_id, target_id, id DESC` (partial: rows with a target)
 * for a target. An action prefix is compared with substr (not LIKE: LIKE is case-insensitive
 * and treats `_` as a wildcard, and action names contain underscores) and deliberately not
 * as an index range: a range over (app_id, action) would sort every match for each page
 * ("user.*" is most of a log), while walking the id index stops after `limit` matches.
 */
export function listAuthAudit(db: Sql, appId: string, f: AuditFilter, before: string | null, limit: number): Promise<AuthAuditRow[]> {
  const where = ["app_id = $app"];
  const params: Record<string, string | number> = { app: appId, limit };
  const add = (sql: string, values: Record<string, string | number>) => {
    where.push(sql);
    Object.assign(params, values);
  };
  if (before) add("id < $before", { before });
  if (f.action) add("action = $action", { action: f.action });
  if (f.actionPrefix) add("substr(action, 1, $prefix_len) = $prefix", { prefix_len: f.actionPrefix.length, prefix: f.actionPrefix });
  if (f.actor_id) add("actor_id = $actor_id", { actor_id: f.actor_id });
  if (f.target_id) add("target_id = $target_id", { target_id: f.target_id });
  if (f.outcome) add("outcome = $outcome", { outcome: f.outcome });
  if (f.since) add("created_at >= $since", { since: f.since });
  if (f.until) add("created_at < $until", { until: f.until });
  return db.all<AuthAuditRow>(`SELECT * FROM auth_audit WHERE ${where.join(" AND ")} ORDER BY id DESC LIMIT $limit`, params);
}
