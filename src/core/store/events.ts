/** SQL of the event outbox (core_events). */
import { tx, type Db } from "../db";

export interface EventRow {
  id: string;
  type: string;
  scope: string;
  data: string;
  created_at: string;
  dispatched_at: string | null;
}

export function insertEvent(db: Db, row: Omit<EventRow, "dispatched_at">): void {
  db.query("INSERT INTO core_events (id, type, scope, data, created_at) VALUES (?, ?, ?, ?, ?)").run(row.id, row.type, row.scope, row.data, row.created_at);
}

export function selectPending(db: Db, limit: number): EventRow[] {
  return db
    .query<EventRow, [number]>("SELECT id, type, scope, data, created_at, dispatched_at FROM core_events WHERE dispatched_at IS NULL ORDER BY created_at, id LIMIT ?")
    .all(limit);
}

/**
 * Undispatched events whose scope starts with `prefix` ("<name>:"), oldest first. The
 * prefix's bounds are written into the SQL as literals ("webhook:" <= scope < "webhook;",
 * ';' follows ':' in ASCII) so the planner can match a partial index declared with the same
 * bounds (migration 0021 has the webhook engine's); a bound parameter would not match it.
 */
export function selectPendingInScope(db: Db, prefix: string, limit: number): EventRow[] {
  return db
    .query<EventRow, [number]>(
      `SELECT id, type, scope, data, created_at, dispatched_at FROM core_events
       WHERE dispatched_at IS NULL AND ${scopeBounds(prefix)}
       ORDER BY created_at, id LIMIT ?`,
    )
    .all(limit);
}

/** Undispatched events of one scope prefix (same literal bounds, same partial index). */
export function countPendingInScope(db: Db, prefix: string): number {
  return db.query<{ n: number }, []>(`SELECT COUNT(*) AS n FROM core_events WHERE dispatched_at IS NULL AND ${scopeBounds(prefix)}`).get()!.n;
}

function scopeBounds(prefix: string): string {
  if (!/^[a-z][a-z0-9_]*:$/.test(prefix)) throw new Error(`outbox scope prefix must look like "name:" (got ${JSON.stringify(prefix)})`);
  return `scope >= '${prefix}' AND scope < '${prefix.slice(0, -1)};'`;
}

export function countPending(db: Db): number {
  return db.query<{ n: number }, []>("SELECT COUNT(*) AS n FROM core_events WHERE dispatched_at IS NULL").get()!.n;
}

export function selectEvent(db: Db, id: string): EventRow | null {
  return db.query<EventRow, [string]>("SELECT id, type, scope, data, created_at, dispatched_at FROM core_events WHERE id = ?").get(id);
}

/** Marks the given events dispatched (those already marked keep their first time). */
export function markDispatched(db: Db, ids: string[], at: string): number {
  const stmt = db.query<never, [string, string]>("UPDATE core_events SET dispatched_at = ? WHERE id = ? AND dispatched_at IS NULL");
  let changed = 0;
  tx(db, () => {
    for (const id of ids) changed += stmt.run(at, id).changes;
  });
  return changed;
}

export function deleteDispatchedBefore(db: Db, cutoff: string): number {
  return db.query("DELETE FROM core_events WHERE dispatched_at IS NOT NULL AND dispatched_at < ?").run(cutoff).changes;
}
