/**
 * Which database engine the suite runs on: SQLite (default, `npm test`) or PostgreSQL
 * (`npm run test:pg`, which sets BUNKER_TEST_ENGINE=postgres). On PostgreSQL one throwaway
 * cluster serves the whole run (stopped and deleted when the process exits), every app and
 * every unit-test database gets a database of its own, copied from a template migrated once.
 */
import { SQL } from "bun";
import { copyFileSync, existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Db } from "../../src/core/db";
import { PostgresDb } from "../../src/core/store/postgres";
import { migratePg } from "../../src/core/store/migrate-pg";
import { migrateSqlite, openSqliteFile, SqliteDb } from "../../src/core/store/sqlite";
import { MIGRATIONS } from "../../src/app";
import { type PgCluster, startPgCluster } from "./pg-cluster";

export const TEST_ENGINE: "sqlite" | "postgres" = process.env.BUNKER_TEST_ENGINE === "postgres" ? "postgres" : "sqlite";

const TEMPLATE = "bunker_template";
let shared: Promise<PgCluster> | null = null;
let seq = 0;

/** The run's cluster, with a migrated template database; started on first use. */
function cluster(): Promise<PgCluster> {
  shared ??= (async () => {
    const c = await startPgCluster();
    const url = await c.createDatabase(TEMPLATE);
    const sql = new SQL(url, { max: 1 });
    try {
      await migratePg(sql, MIGRATIONS);
    } finally {
      await sql.close();
    }
    return c;
  })();
  return shared;
}

/** A fresh, migrated PostgreSQL database of the run's cluster: its URL. */
export async function freshPgUrl(): Promise<string> {
  const c = await cluster();
  return c.createDatabase(`t${process.pid}_${++seq}`, TEMPLATE);
}

/** DATABASE_URL for a test app on the suite's engine (null: SQLite in the app's DATA_DIR). */
export async function testDatabaseUrl(): Promise<string | null> {
  return TEST_ENGINE === "postgres" ? freshPgUrl() : null;
}

/** A fresh, migrated database on the suite's engine, for unit tests of core modules. */
export async function freshEngineDb(): Promise<{ db: Db; dir: string; path: string }> {
  const dir = mkdtempSync(join(tmpdir(), "bunker-test-"));
  const path = join(dir, "bunker.db");
  if (TEST_ENGINE === "postgres") return { db: await PostgresDb.open(await freshPgUrl(), { max: 4, migrations: MIGRATIONS }), dir, path };
  seedSqlite(path);
  return { db: new SqliteDb(path, MIGRATIONS), dir, path };
}

/** A raw bun:sqlite connection to a fresh, migrated file (tests that compare the engines' raw behaviour). */
export function rawSqlite() {
  const path = join(mkdtempSync(join(tmpdir(), "bunker-raw-")), "bunker.db");
  seedSqlite(path);
  const db = openSqliteFile(path);
  migrateSqlite(db, MIGRATIONS);
  return db;
}

let sqliteTemplate: string | null = null;

/**
 * Puts a copy of a SQLite file migrated once per test process at `path` (unless a database is
 * there already), as the PostgreSQL run copies its template database: migrating from nothing
 * costs about 50 ms of CPU, and the suite opens hundreds of databases. The migrations still
 * run on the copy (and find nothing to do); test/core/migrations.test.ts migrates from nothing.
 */
export function seedSqlite(path: string): void {
  if (existsSync(path)) return;
  if (!sqliteTemplate) {
    const template = join(mkdtempSync(join(tmpdir(), "bunker-template-")), "bunker.db");
    const db = openSqliteFile(template);
    migrateSqlite(db, MIGRATIONS);
    // Closing the last connection checkpoints the WAL into the file: the copy is whole.
    db.close();
    sqliteTemplate = template;
  }
  copyFileSync(sqliteTemplate, path);
}
