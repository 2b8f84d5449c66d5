/** SQLite (WAL) connection, pragmas, embedded migrations and the transaction helper. */
import { Database } from "bun:sqlite";
import { existsSync, mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { MIGRATIONS } from "../../migrations/index";

export type Db = Database;

/**
 * Statements db.query() keeps prepared (LRU; Bun's default is 20). Bunker has a few hundred
 * distinct statements, so at 20 the hot ones were evicted and re-prepared on almost every
 * request (10-20 µs each for a join). A prepared statement costs a few KB.
 */
const QUERY_CACHE_SIZE = 1000;

export function openDb(path: string): Db {
  if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
  if (Database.MAX_QUERY_CACHE_SIZE < QUERY_CACHE_SIZE) Database.MAX_QUERY_CACHE_SIZE = QUERY_CACHE_SIZE;
  const db = new Database(path, { create: true, strict: true });
  db.exec("PRAGMA journal_mode = WAL");
  db.exec("PRAGMA synchronous = NORMAL");
  db.exec("PRAGMA foreign_keys = ON");
  db.exec("PRAGMA busy_timeout = 5000");
  return db;
}

/** Applies every migration not yet recorded, each in its own transaction. Returns names applied. */
export function migrate(db: Db): string[] {
  db.exec("CREATE TABLE IF NOT EXISTS core_migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)");
  const done = new Set(db.query<{ name: string }, []>("SELECT name FROM core_migrations").all().map((r) => r.name));
  const applied: string[] = [];
  for (const m of MIGRATIONS) {
    if (done.has(m.name)) continue;
    db.transaction(() => {
      // A file of only comments is legal (SQLite refuses to exec it); record it anyway.
      if (m.sql.replace(/--.*$/gm, "").trim()) db.exec(m.sql);
      db.query("INSERT INTO core_migrations (name, applied_at) VALUES (?, ?)").run(m.name, new Date().toISOString());
    }).immediate();
    applied.push(m.name);
  }
  return applied;
}

/**
 * Runs fn in one IMMEDIATE transaction (takes the write lock up front, so two writers
 * never deadlock upgrading read locks). Nested calls become savepoints.
 */
export function tx<T>(db: Db, fn: () => T): T {
  return db.transaction(fn).immediate();
}

/**
 * Opens a database that must already exist, read-only, without creating anything: for
 * maintenance commands, where a mistyped DATA_DIR must fail instead of yielding a new,
 * empty database. Null when there is no file.
 */
export function openExistingDb(path: string): Db | null {
  if (!existsSync(path)) return null;
  return new Database(path, { readonly: true, strict: true });
}

/** Consistent online copy of the live database (VACUUM INTO works while others write). */
export function backup(db: Db, target: string) {
  mkdirSync(dirname(target), { recursive: true });
  db.query("VACUUM INTO ?").run(target);
}

/** True when the file has Bunker's migration table (and is a readable SQLite database at all). */
export function isBunkerDb(db: Db): boolean {
  try {
    return db.query("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'core_migrations'").get() !== null;
  } catch {
    return false;
  }
}

/** SQLite's own check of every page and index: "ok", or the first problems found. */
export function integrityCheck(db: Db): string {
  return db.query<{ integrity_check: string }, []>("PRAGMA integrity_check(5)").all().map((r) => r.integrity_check).join("; ");
}

/** Readiness probe: true when the database answers a query. */
export function ping(db: Db): boolean {
  try {
    return db.query("SELECT 1 AS ok").get() !== null;
  } catch {
    return false;
  }
}

export function checkpoint(db: Db) {
  db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
}
