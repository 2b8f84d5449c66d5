/** SQL of src/core/key-check.ts (core_key_check: one row). */
import type { Sql } from "./sql";

export async function readKeyCheck(db: Sql): Promise<string | null> {
  return (await db.get<{ check_value: string }>("SELECT check_value FROM core_key_check WHERE id = 1"))?.check_value ?? null;
}

/** Inserts the check once; a concurrent first start that wrote first wins (read it back). */
export async function insertKeyCheck(db: Sql, value: string, now: string): Promise<void> {
  await db.run("INSERT INTO core_key_check (id, check_value, created_at) VALUES (1, ?, ?) ON CONFLICT (id) DO NOTHING", value, now);
}
