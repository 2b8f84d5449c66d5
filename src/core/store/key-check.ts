/** SQL of src/core/key-check.ts (core_key_check: one row). */
import type { Db } from "../db";

export function readKeyCheck(db: Db): string | null {
  return db.query<{ check_value: string }, []>("SELECT check_value FROM core_key_check WHERE id = 1").get()?.check_value ?? null;
}

/** Inserts the check once; a concurrent first start that wrote first wins (read it back). */
export function insertKeyCheck(db: Db, value: string, now: string): void {
  db.query("INSERT INTO core_key_check (id, check_value, created_at) VALUES (1, ?, ?) ON CONFLICT (id) DO NOTHING").run(value, now);
}
