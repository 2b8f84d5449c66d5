/** SQL of the event outbox (core_events). */
import { dialect, type Sql } from "./sql";

export interface EventRow {
  id: string;
  type: string;
  scope: string;
  data: string;
  created_at: string;
  dispatched_at: string | null;
}

const COLUMNS = "id, type, scope, data, created_at, dispatched_at";

export async function insertEvent(db: Sql, row: Omit<EventRow, "dispatched_at">): Promise<void> {
  await db.run("INSERT INTO core_events (id, type, scope, data, created_at) VALUES (?, ?, ?, ?, ?)", row.id, row.type, row.scope, row.data, row.created_at);
}

export function selectPending(db: Sql, limit: number): Promise<EventRow[]> {
  return db.all<EventRow>(`SELECT ${COLUMNS} FROM core_events WHERE dispatched_at IS NULL ORDER BY created_at, id LIMIT ?`, limit);
}

/**
 * Undispatched events whose scope starts with `prefix` ("<name>:"), oldest first. The
 * prefix's bounds are written into the SQL as literals ("webhook:" <= scope < "webhook;",
 * ';' follows ':' in ASCII) so the planner can match a partial index declared with the same
 * bounds (migration 0021 has the webhook engine's); a bound parameter would not match it.
 * On PostgreSQL the rows are locked and rows another node holds are skipped, so two nodes
 * claiming at once take different events.
 */
export function selectPendingInScope(db: Sql, prefix: string, limit: number): Promise<EventRow[]> {
  return db.all<EventRow>(
    `SELECT ${COLUMNS} FROM core_events
     WHERE dispatched_at IS NULL AND ${scopeBounds(prefix)}
     ORDER BY created_at, id LIMIT ?${dialect(db).skipLocked}`,
    limit,
  );
}

/** Undispatched events of one scope prefix (same literal bounds, same partial index). */
export async function countPendingInScope(db: Sql, prefix: string): Promise<number> {
  return (await db.get<{ n: number }>(`SELECT COUNT(*) AS n FROM core_events WHERE dispatched_at IS NULL AND ${scopeBounds(prefix)}`))!.n;
}

function scopeBounds(prefix: string): string {
  if (!/^[a-z][a-z0-9_]*:$/.test(prefix)) throw new Error(`outbox scope prefix must look like "name:" (got ${JSON.stringify(prefix)})`);
  return `scope >= '${prefix}' AND scope < '${prefix.slice(0, -1)};'`;
}

export async function countPending(db: Sql): Promise<number> {
  return (await db.get<{ n: number }>("SELECT COUNT(*) AS n FROM core_events WHERE dispatched_at IS NULL"))!.n;
}

export function selectEvent(db: Sql, id: string): Promise<EventRow | null> {
  return db.get<EventRow>(`SELECT ${COLUMNS} FROM core_events WHERE id = ?`, id);
}

/**
 * Marks the given events dispatched (those already marked keep their first time), in one
 * statement whatever their number: the ids go as one JSON array, so the statement stays one
 * prepared statement (an IN list of ? would be a new one for every count).
 */
export async function markDispatched(db: Sql, ids: string[], at: string): Promise<number> {
  const list =
    db.engine === "postgres"
      ? "SELECT jsonb_array_elements_text(?::text::jsonb)" // bound as text: a jsonb parameter would get the string JSON-encoded
      : "SELECT value FROM json_each(?)";
  return db.run(`UPDATE core_events SET dispatched_at = ? WHERE dispatched_at IS NULL AND id IN (${list})`, at, JSON.stringify(ids));
}

export function deleteDispatchedBefore(db: Sql, cutoff: string): Promise<number> {
  return db.run("DELETE FROM core_events WHERE dispatched_at IS NOT NULL AND dispatched_at < ?", cutoff);
}
