/** SQL of the scheduler's cluster-wide tick claims (core_job_ticks). */
import type { Sql } from "./sql";

/**
 * Claims one tick of a job for this node: true when no node claimed this tick (or a later
 * one) before. The row is created on first use; the conditional UPDATE is the claim (on
 * PostgreSQL a second node's UPDATE waits for the first to commit, then finds tick_at no
 * longer older and changes nothing).
 */
export async function claimTick(db: Sql, name: string, tickAt: string, node: string, now: string): Promise<boolean> {
  await db.run("INSERT INTO core_job_ticks (name, tick_at, node, claimed_at) VALUES (?, '', ?, ?) ON CONFLICT (name) DO NOTHING", name, node, now);
  return (await db.run("UPDATE core_job_ticks SET tick_at = ?, node = ?, claimed_at = ? WHERE name = ? AND tick_at < ?", tickAt, node, now, name, tickAt)) === 1;
}

export function tickClaims(db: Sql, name: string): Promise<{ tick_at: string; node: string }[]> {
  return db.all<{ tick_at: string; node: string }>("SELECT tick_at, node FROM core_job_ticks WHERE name = ?", name);
}
