import { expect, test } from "bun:test";
import { mkdtempSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MIGRATIONS } from "../../migrations/index";
import { migrateSqlite, SqliteDb } from "../../src/core/store/sqlite";
import { freshDb } from "../helpers/db";

test("every .sql file in migrations/ is listed, in order, exactly once", () => {
  const files = readdirSync(join(import.meta.dir, "../../migrations")).filter((f) => f.endsWith(".sql")).map((f) => f.replace(/\.sql$/, "")).sort();
  expect(MIGRATIONS.map((m) => m.name)).toEqual(files);
});

test("migrations apply to an empty SQLite database and are idempotent", async () => {
  const db = new SqliteDb(join(mkdtempSync(join(tmpdir(), "bunker-test-")), "bunker.db"));
  try {
    expect(db.migrated).toEqual(MIGRATIONS.map((m) => m.name)); // the open applied all
    expect(migrateSqlite(db.writer)).toEqual([]); // and a second run applies none
    const names = (await db.all<{ name: string }>("SELECT name FROM core_migrations ORDER BY name")).map((r) => r.name);
    expect(names).toEqual(MIGRATIONS.map((m) => m.name));
    expect(db.writer.query<{ journal_mode: string }, []>("PRAGMA journal_mode").get()?.journal_mode).toBe("wal");
    expect(db.writer.query<{ foreign_keys: number }, []>("PRAGMA foreign_keys").get()?.foreign_keys).toBe(1);
  } finally {
    await db.close();
  }
});

test("the suite's database has every migration recorded", async () => {
  const { db } = await freshDb();
  const names = (await db.all<{ name: string }>("SELECT name FROM core_migrations ORDER BY name")).map((r) => r.name);
  expect(names).toEqual(MIGRATIONS.map((m) => m.name));
  await db.close();
});
