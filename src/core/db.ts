/**
 * The database: which engine (DATABASE_URL=postgres://... selects PostgreSQL; unset, the
 * embedded SQLite file DATA_DIR/bunker.db), and the transaction helper. The interface every
 * store uses is core/store/sql.ts.
 */
import { join } from "node:path";
import { reason, StartupError } from "./startup";
import { PostgresDb, redactUrl } from "./store/postgres";
import type { Migration } from "./store/migrations";
import type { Db, Sql } from "./store/sql";
import { SqliteDb } from "./store/sqlite";

export type { Db, Sql } from "./store/sql";

/** Runs fn in one transaction on db (a savepoint when db is itself a transaction handle). */
export function tx<T>(db: Sql, fn: (t: Sql) => Promise<T>): Promise<T> {
  return db.tx(fn);
}

export const SQLITE_FILE = "bunker.db";

export interface DatabaseConfig {
  dataDir: string;
  databaseUrl?: string | null;
  pgPoolSize?: number;
}

/** Opens the configured database and migrates it to `migrations` (schemaOf the app's modules). */
export async function openDatabase(config: DatabaseConfig, migrations: readonly Migration[]): Promise<Db> {
  if (!config.databaseUrl) return new SqliteDb(join(config.dataDir, SQLITE_FILE), migrations);
  try {
    return await PostgresDb.open(config.databaseUrl, { max: config.pgPoolSize, migrations });
  } catch (e) {
    // Unreachable server, wrong password, wrong collation: one line for the operator.
    throw new StartupError(`cannot use DATABASE_URL ${redactUrl(config.databaseUrl)}: ${reason(e)}`);
  }
}

/** The SQLite engine behind db, or null on PostgreSQL (for SQLite-only maintenance). */
export function sqliteOf(db: Db): SqliteDb | null {
  return db instanceof SqliteDb ? db : null;
}
