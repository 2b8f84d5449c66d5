/** SQL of the sending part: per-workspace send settings and idempotent batch rows. */
import type { Sql } from "../../../core/db";

export async function ratePerSecond(db: Sql, workspaceId: string): Promise<number | null> {
  const r = await db.get<{ rate_per_second: number | null }>("SELECT rate_per_second FROM mail_send_settings WHERE workspace_id = ?", workspaceId);
  return r?.rate_per_second === null || r?.rate_per_second === undefined ? null : Number(r.rate_per_second);
}

export async function setRatePerSecond(db: Sql, workspaceId: string, rate: number | null, now: string): Promise<void> {
  await db.run(
    `INSERT INTO mail_send_settings (workspace_id, rate_per_second, updated_at) VALUES ($ws, $rate, $now)
     ON CONFLICT (workspace_id) DO UPDATE SET rate_per_second = excluded.rate_per_second, updated_at = excluded.updated_at`,
    { ws: workspaceId, rate, now },
  );
}

/** The message a batch row with this idempotency key queued since `since` (ISO), if any. */
export async function messageByIdempotencyKey(db: Sql, workspaceId: string, key: string, since: string): Promise<{ id: string } | null> {
  return (
    (await db.get<{ id: string }>(
      "SELECT id FROM mail_messages WHERE workspace_id = ? AND idempotency_key = ? AND created_at >= ? ORDER BY created_at LIMIT 1",
      workspaceId,
      key,
      since,
    )) ?? null
  );
}
