/**
 * Another connection holding an app's database for writes, until release(): on SQLite a write
 * transaction on the same file (the way a bulk write by another process holds it: the app's
 * writes are refused with SQLITE_BUSY); on PostgreSQL an exclusive lock on `table`, and the
 * app's connections that wait for it are cut (connection lost).
 */
import { Database } from "bun:sqlite";
import { SQL } from "bun";
import { join } from "node:path";
import { SQLITE_FILE } from "../../src/core/db";

export async function holdDatabase(app: { dir: string }, dbUrl: string | null, table: string): Promise<() => Promise<void>> {
  if (!dbUrl) {
    const other = new Database(join(app.dir, SQLITE_FILE));
    other.exec("BEGIN IMMEDIATE");
    return async () => {
      other.exec("ROLLBACK");
      other.close();
    };
  }
  const sql = new SQL(dbUrl, { max: 2 });
  const c = await sql.reserve();
  await c`BEGIN`;
  await c.unsafe(`LOCK TABLE ${table} IN ACCESS EXCLUSIVE MODE`);
  const cut = () => sql`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND wait_event_type = 'Lock'`;
  const cutter = setInterval(() => void cut().catch(() => {}), 50);
  return async () => {
    clearInterval(cutter);
    await c`ROLLBACK`;
    await c.release();
    await sql.close();
  };
}
