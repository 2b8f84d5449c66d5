/** SQL of flags, moderation actions and keyword filters. */
import type { Sql } from "../../../core/db";
import type { Keyset } from "../core/common";

export type TargetType = "post" | "comment" | "actor";

export interface FlagRow {
  id: string;
  community_id: string;
  reporter_actor_id: string | null;
  target_type: TargetType;
  target_id: string;
  target_actor_id: string | null;
  reason: string;
  note: string | null;
  status: "open" | "resolved" | "dismissed";
  auto_hidden: number;
  created_at: string;
  updated_at: string;
}

const FLAG_COLS = ["id", "community_id", "reporter_actor_id", "target_type", "target_id", "target_actor_id", "reason", "note", "status", "auto_hidden", "created_at", "updated_at"] as const;

/** Inserts the flag unless the reporter has an open one on the target; true when inserted. */
export async function insertFlag(db: Sql, r: FlagRow): Promise<boolean> {
  const n = await db.run(
    `INSERT INTO social_flags (${FLAG_COLS.join(", ")}) VALUES (${FLAG_COLS.map((c) => `$${c}`).join(", ")})
     ON CONFLICT (reporter_actor_id, target_type, target_id) WHERE status = 'open' DO NOTHING`,
    { ...r },
  );
  return n === 1;
}

export const openFlagOf = (db: Sql, reporter: string, type: TargetType, id: string) =>
  db.get<FlagRow>("SELECT * FROM social_flags WHERE reporter_actor_id = ? AND target_type = ? AND target_id = ? AND status = 'open'", reporter, type, id);

export async function distinctOpenFlaggers(db: Sql, type: TargetType, id: string): Promise<number> {
  const r = await db.get<{ n: number }>("SELECT COUNT(DISTINCT reporter_actor_id) AS n FROM social_flags WHERE target_type = ? AND target_id = ? AND status = 'open' AND reporter_actor_id IS NOT NULL", type, id);
  return Number(r?.n ?? 0);
}

export const openFlagsOn = (db: Sql, type: TargetType, id: string) =>
  db.all<FlagRow>("SELECT * FROM social_flags WHERE target_type = ? AND target_id = ? AND status = 'open' ORDER BY created_at, id", type, id);

export const flagById = (db: Sql, communityId: string, id: string) => db.get<FlagRow>("SELECT * FROM social_flags WHERE id = ? AND community_id = ?", id, communityId);

export const setFlagStatus = (db: Sql, id: string, status: FlagRow["status"], now: string) =>
  db.run("UPDATE social_flags SET status = ?, updated_at = ? WHERE id = ? AND status = 'open'", status, now, id);

export const markAutoHidden = (db: Sql, type: TargetType, id: string) =>
  db.run("UPDATE social_flags SET auto_hidden = 1 WHERE target_type = ? AND target_id = ? AND status = 'open'", type, id);

export interface QueueRow {
  target_type: TargetType;
  target_id: string;
  target_actor_id: string | null;
  flag_count: number;
  reporter_count: number;
  first_flagged_at: string;
  last_flagged_at: string;
  auto_hidden: number;
}

/** Targets with open flags, oldest first flag first (FIFO review queue). */
export function queue(db: Sql, communityId: string, after: Keyset | null, limit: number): Promise<QueueRow[]> {
  const having = after ? " HAVING MIN(created_at) > ? OR (MIN(created_at) = ? AND target_id > ?)" : "";
  return db.all<QueueRow>(
    `SELECT target_type, target_id, MAX(target_actor_id) AS target_actor_id, COUNT(*) AS flag_count, COUNT(DISTINCT reporter_actor_id) AS reporter_count,
       MIN(created_at) AS first_flagged_at, MAX(created_at) AS last_flagged_at, MAX(auto_hidden) AS auto_hidden
     FROM social_flags WHERE community_id = ? AND status = 'open' GROUP BY target_type, target_id${having}
     ORDER BY MIN(created_at), target_id LIMIT ?`,
    communityId, ...(after ? [after.k, after.k, after.id] : []), limit,
  );
}

export async function reasonsOf(db: Sql, type: TargetType, id: string): Promise<Record<string, number>> {
  const rows = await db.all<{ reason: string; n: number }>("SELECT reason, COUNT(*) AS n FROM social_flags WHERE target_type = ? AND target_id = ? AND status = 'open' GROUP BY reason ORDER BY reason", type, id);
  return Object.fromEntries(rows.map((r) => [r.reason, Number(r.n)]));
}

// ------------------------------------------------------------------ actions

export interface ActionRow {
  id: string;
  community_id: string;
  action: "hide" | "remove" | "restore" | "warn" | "ban" | "dismiss";
  target_type: TargetType;
  target_id: string;
  target_actor_id: string | null;
  flag_id: string | null;
  moderator_external_id: string | null;
  reason: string | null;
  data: string;
  created_at: string;
}

export async function insertAction(db: Sql, r: ActionRow): Promise<void> {
  const cols = Object.keys(r);
  await db.run(`INSERT INTO social_moderation_actions (${cols.join(", ")}) VALUES (${cols.map((c) => `$${c}`).join(", ")})`, { ...r });
}

// ------------------------------------------------------------------ keyword filters

export interface KeywordRow {
  id: string;
  community_id: string;
  keyword: string;
  action: "block" | "hold";
  created_at: string;
}

export const keywordsOf = (db: Sql, communityId: string) => db.all<KeywordRow>("SELECT * FROM social_keyword_filters WHERE community_id = ? ORDER BY keyword", communityId);

export async function upsertKeyword(db: Sql, r: KeywordRow): Promise<void> {
  await db.run(
    `INSERT INTO social_keyword_filters (id, community_id, keyword, action, created_at) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT (community_id, keyword) DO UPDATE SET action = excluded.action`,
    r.id, r.community_id, r.keyword, r.action, r.created_at,
  );
}

export const keywordOf = (db: Sql, communityId: string, keyword: string) =>
  db.get<KeywordRow>("SELECT * FROM social_keyword_filters WHERE community_id = ? AND keyword = ?", communityId, keyword);

export const deleteKeyword = (db: Sql, communityId: string, id: string) => db.run("DELETE FROM social_keyword_filters WHERE community_id = ? AND id = ?", communityId, id);
