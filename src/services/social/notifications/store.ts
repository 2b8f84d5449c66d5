/** SQL of the in-app notification inbox: one row per (recipient, type, target) group. */
import type { Sql } from "../../../core/db";
import { uuid } from "../../../core/ids";
import type { Keyset } from "../core/common";

export type NotificationType =
  | "follow" | "follow_request" | "follow_request_approved" | "reaction" | "comment" | "reply" | "mention" | "tag" | "repost" | "vote" | "moderation";

export interface NotificationRow {
  id: string;
  community_id: string;
  actor_id: string;
  type: NotificationType;
  target_type: string;
  target_id: string;
  activity_count: number;
  last_actor_id: string | null;
  data: string;
  is_read: number;
  is_seen: number;
  created_at: string;
  updated_at: string;
}

export interface Activity {
  community_id: string;
  recipient: string;
  type: NotificationType;
  target_type: string;
  target_id: string;
  /** Who did it (null for moderation). */
  from: string | null;
  data?: Record<string, unknown>;
  now: string;
}

/**
 * Adds one activity to its group (created on first use), in the caller's transaction: the
 * group's activity_count grows by one, it becomes unread and unseen and moves to the top.
 * One upsert statement, so concurrent activities never lose a count.
 */
export async function addActivity(db: Sql, a: Activity): Promise<void> {
  if (a.from !== null && a.from === a.recipient) return; // nobody is notified of their own acts
  await db.run(
    `INSERT INTO social_notifications (id, community_id, actor_id, type, target_type, target_id, activity_count, last_actor_id, data, is_read, is_seen, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, 1, ?, ?, 0, 0, ?, ?)
     ON CONFLICT (actor_id, type, target_id) DO UPDATE SET activity_count = social_notifications.activity_count + 1,
       last_actor_id = excluded.last_actor_id, data = excluded.data, is_read = 0, is_seen = 0, updated_at = excluded.updated_at`,
    uuid(), a.community_id, a.recipient, a.type, a.target_type, a.target_id, a.from, JSON.stringify(a.data ?? {}), a.now, a.now,
  );
  if (a.from !== null) {
    const g = await db.get<{ id: string }>("SELECT id FROM social_notifications WHERE actor_id = ? AND type = ? AND target_id = ?", a.recipient, a.type, a.target_id);
    if (g) {
      await db.run(
        "INSERT INTO social_notification_actors (notification_id, actor_id, at) VALUES (?, ?, ?) ON CONFLICT (notification_id, actor_id) DO UPDATE SET at = excluded.at",
        g.id, a.from, a.now,
      );
    }
  }
}

/** The recipient's groups, most recent activity first. */
export function inbox(db: Sql, actorId: string, after: Keyset | null, limit: number): Promise<NotificationRow[]> {
  return after
    ? db.all<NotificationRow>(
        "SELECT * FROM social_notifications WHERE actor_id = ? AND (updated_at < ? OR (updated_at = ? AND id < ?)) ORDER BY updated_at DESC, id DESC LIMIT ?",
        actorId, after.k, after.k, after.id, limit,
      )
    : db.all<NotificationRow>("SELECT * FROM social_notifications WHERE actor_id = ? ORDER BY updated_at DESC, id DESC LIMIT ?", actorId, limit);
}

export async function counts(db: Sql, actorId: string): Promise<{ unread: number; unseen: number }> {
  const r = await db.get<{ unread: number | null; unseen: number | null }>(
    "SELECT SUM(CASE WHEN is_read = 0 THEN 1 ELSE 0 END) AS unread, SUM(CASE WHEN is_seen = 0 THEN 1 ELSE 0 END) AS unseen FROM social_notifications WHERE actor_id = ?",
    actorId,
  );
  return { unread: Number(r?.unread ?? 0), unseen: Number(r?.unseen ?? 0) };
}

/** Recent distinct actors of each group (up to `per` each), newest first. */
export async function actorsOf(db: Sql, ids: string[], per: number): Promise<Map<string, { ids: string[]; count: number }>> {
  const out = new Map<string, { ids: string[]; count: number }>();
  if (ids.length === 0) return out;
  const rows = await db.all<{ notification_id: string; actor_id: string }>(
    `SELECT notification_id, actor_id FROM social_notification_actors WHERE notification_id IN (${ids.map(() => "?").join(",")}) ORDER BY at DESC, actor_id DESC`,
    ...ids,
  );
  for (const r of rows) {
    const e = out.get(r.notification_id) ?? { ids: [], count: 0 };
    e.count++;
    if (e.ids.length < per) e.ids.push(r.actor_id);
    out.set(r.notification_id, e);
  }
  return out;
}

/** Marks the recipient's groups (all, or those ids) read or seen; the number changed. Read implies seen. */
export function mark(db: Sql, actorId: string, what: "read" | "seen", ids: string[] | null): Promise<number> {
  const set = what === "read" ? "is_read = 1, is_seen = 1" : "is_seen = 1";
  const col = what === "read" ? "is_read" : "is_seen";
  if (ids === null) return db.run(`UPDATE social_notifications SET ${set} WHERE actor_id = ? AND ${col} = 0`, actorId);
  if (ids.length === 0) return Promise.resolve(0);
  return db.run(`UPDATE social_notifications SET ${set} WHERE actor_id = ? AND ${col} = 0 AND id IN (${ids.map(() => "?").join(",")})`, actorId, ...ids);
}
