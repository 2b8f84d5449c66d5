import { expect, test } from "bun:test";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { MIGRATIONS } from "../../migrations/index";
import { freshDb } from "../helpers/db";

test("every .sql file in migrations/ is listed, in order, exactly once", () => {
  const files = readdirSync(join(import.meta.dir, "../../migrations")).filter((f) => f.endsWith(".sql")).map((f) => f.replace(/\.sql$/, "")).sort();
  expect(MIGRATIONS.map((m) => m.name)).toEqual(files);
});

test("migrations apply to an empty database and are idempotent", async () => {
  const { db } = freshDb();
  const { migrate } = await import("../../src/core/db");
  expect(migrate(db)).toEqual([]); // freshDb already applied all
  const names = db.query<{ name: string }, []>("SELECT name FROM core_migrations ORDER BY name").all().map((r) => r.name);
  expect(names).toEqual(MIGRATIONS.map((m) => m.name));
  expect(db.query<{ journal_mode: string }, []>("PRAGMA journal_mode").get()?.journal_mode).toBe("wal");
  expect(db.query<{ foreign_keys: number }, []>("PRAGMA foreign_keys").get()?.foreign_keys).toBe(1);
});
