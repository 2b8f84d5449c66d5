/**
 * PostgreSQL engine, first part (issue 12): the database check and the migration runner.
 * The schema is the SQLite engine's list (the same names, in the same order), each file's
 * pg/ variant where its SQL is not portable.
 */
import type { SQL } from "bun";
import { type Migration, sqlFor } from "./migrations";

/**
 * Key of the session advisory lock held while migrating, so several nodes starting at once
 * migrate once: the others wait, then find every migration recorded. "bunk" in ASCII.
 */
export const MIGRATION_LOCK_KEY = 0x62756e6b;

/** PostgreSQL 13: citext is a trusted extension from then on (the database owner may create it). */
const MIN_SERVER_VERSION = 130000;

/**
 * Refuses a database whose text does not behave as Bunker's SQL expects: UTF-8, and the C
 * collation, because ids, cursors and prefix ranges (e.g. `scope >= 'webhook:' AND scope <
 * 'webhook;'`) compare in byte order as in SQLite; a linguistic collation ignores
 * punctuation and would reorder keyset pages and empty those ranges.
 */
export async function assertPgDatabase(sql: SQL): Promise<void> {
  const [row] = await sql<{ name: string; version: number; encoding: string; collate: string; provider: string | null }[]>`
    SELECT current_database() AS name,
           current_setting('server_version_num')::int AS version,
           pg_encoding_to_char(encoding) AS encoding,
           datcollate AS collate,
           to_jsonb(d) ->> 'datlocprovider' AS provider
      FROM pg_database d
     WHERE datname = current_database()`;
  if (!row) throw new Error("PostgreSQL: the current database is not in pg_database");
  const fix = `create it with: CREATE DATABASE ${row.name} TEMPLATE template0 ENCODING 'UTF8' LOCALE 'C'`;
  if (row.version < MIN_SERVER_VERSION) {
    throw new Error(`PostgreSQL ${Math.floor(row.version / 10000)} is too old: Bunker needs 13 or later`);
  }
  if (row.encoding !== "UTF8") throw new Error(`database "${row.name}" has encoding ${row.encoding}, not UTF8; ${fix}`);
  // ICU as the database's default provider (PostgreSQL 15+) is linguistic whatever datcollate says.
  const byteOrder = /^(C|POSIX)([.].*)?$/i.test(row.collate) && (row.provider ?? "c") === "c";
  if (!byteOrder) {
    throw new Error(
      `database "${row.name}" has collation ${row.collate}${row.provider === "i" ? " (ICU)" : ""}; Bunker compares text in byte order, as SQLite does: ${fix}`,
    );
  }
}

/**
 * Applies every migration not yet recorded in core_migrations, in order, each in its own
 * transaction (PostgreSQL DDL is transactional: a failing file leaves nothing behind).
 * Holds a session advisory lock on one reserved connection for the whole run, so a second
 * runner blocks until the first is done. Returns the names applied by this call.
 */
export async function migratePg(sql: SQL, migrations: readonly Migration[]): Promise<string[]> {
  await assertPgDatabase(sql);
  const conn = await sql.reserve();
  try {
    await conn.unsafe(`SELECT pg_advisory_lock(${MIGRATION_LOCK_KEY})`);
    try {
      // Created under the lock: two concurrent CREATE TABLE IF NOT EXISTS can both pass the
      // existence check, and the second then fails on the catalog's unique index.
      await conn.unsafe("CREATE TABLE IF NOT EXISTS core_migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)");
      const done = new Set((await conn<{ name: string }[]>`SELECT name FROM core_migrations`).map((r) => r.name));
      const applied: string[] = [];
      for (const m of migrations) {
        if (done.has(m.name)) continue;
        await conn.begin(async (tx) => {
          // Same rule as the SQLite runner: a file of only comments is recorded, not run.
          const text = sqlFor(m, "postgres");
          if (text.replace(/--.*$/gm, "").trim()) await tx.unsafe(text);
          await tx`INSERT INTO core_migrations (name, applied_at) VALUES (${m.name}, ${new Date().toISOString()})`;
        });
        applied.push(m.name);
      }
      return applied;
    } finally {
      await conn.unsafe(`SELECT pg_advisory_unlock(${MIGRATION_LOCK_KEY})`);
    }
  } finally {
    void conn.release();
  }
}
