/**
 * Both engines end with the same schema: every migration applies on PostgreSQL, and every
 * table, column (type, nullability, default, primary key), index and foreign key of the
 * migrated SQLite database has its PostgreSQL counterpart, and nothing more.
 */
import { SQL } from "bun";
import { afterAll, beforeAll, expect, test } from "bun:test";
import { MIGRATIONS } from "../../src/app";
import type { Database as Db } from "bun:sqlite";
import { migratePg } from "../../src/core/store/migrate-pg";
import { rawSqlite } from "../helpers/engine";
import { type PgCluster, startPgCluster } from "../helpers/pg-cluster";
import { basename, join } from "node:path";

let cluster: PgCluster;
let pg: SQL;
let lite: Db;
let applied: string[];

beforeAll(async () => {
  cluster = await startPgCluster();
  pg = new SQL(await cluster.createDatabase("schema"));
  applied = await migratePg(pg, MIGRATIONS);
  lite = rawSqlite();
}, 30_000);

afterAll(async () => {
  await pg?.close();
  await cluster?.stop();
});

/** Epoch-ms columns: past 2^31 today, so they must be BIGINT on PostgreSQL. */
const EPOCH_MS = /(_ms|^expires_at|^drop_after|^code_expires_at|^last_send_at)$/;
const DURATIONS = new Set(["latency_ms"]);

test("every pg/ variant overrides a migration of the same name, and every file in pg/ is listed", () => {
  // Each owner's migrations folder has its own pg/ (src/kernel/migrations/pg, src/services/<name>/migrations/pg).
  const src = join(import.meta.dir, "../../src");
  const files = [...new Bun.Glob("**/migrations/pg/*.sql").scanSync(src)].map((f) => basename(f).replace(/\.sql$/, "")).sort();
  expect(MIGRATIONS.filter((m) => m.pg !== undefined).map((m) => m.name).sort()).toEqual(files);
  const names = MIGRATIONS.map((m) => m.name);
  for (const name of files) expect(names).toContain(name);
});

test("every migration applies on PostgreSQL, in order, and is recorded once", async () => {
  expect(applied).toEqual(MIGRATIONS.map((m) => m.name));
  const rows = await pg<{ name: string }[]>`SELECT name FROM core_migrations ORDER BY name`;
  expect(rows.map((r) => r.name)).toEqual(MIGRATIONS.map((m) => m.name));
  expect(await migratePg(pg, MIGRATIONS)).toEqual([]);
});

test("same tables on both engines", async () => {
  const pgTables = (await pg<{ name: string }[]>`
    SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = 'public' AND c.relkind = 'r' ORDER BY 1`).map((r) => r.name).filter((name) => !FULL_TEXT.test(name));
  expect(pgTables).toEqual(sqliteTables().map((t) => t.name).sort());
});

test("every column has the same type, nullability, default and primary key on both engines", async () => {
  const pgCols = await pg<{ table: string; name: string; udt: string; nullable: string; dflt: string | null; identity: string }[]>`
    SELECT table_name AS table, column_name AS name, udt_name AS udt, is_nullable AS nullable,
           column_default AS dflt, is_identity AS identity
      FROM information_schema.columns WHERE table_schema = 'public'`;
  const pgPk = await pg<{ table: string; cols: string[] }[]>`
    SELECT t.relname AS table, array_agg(a.attname ORDER BY k.ord) AS cols
      FROM pg_index x JOIN pg_class t ON t.oid = x.indrelid JOIN pg_namespace n ON n.oid = t.relnamespace
      CROSS JOIN LATERAL unnest(x.indkey::int2[]) WITH ORDINALITY k(attnum, ord)
      JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum
     WHERE n.nspname = 'public' AND x.indisprimary GROUP BY t.relname`;

  for (const { name: table, sql } of sqliteTables()) {
    const nocase = new Set([...sql.matchAll(/(\w+)\s+TEXT\b[^,\n]*COLLATE NOCASE/gi)].map((m) => m[1]));
    const cols = lite.query<{ name: string; type: string; notnull: number; dflt_value: string | null; pk: number }, []>(`PRAGMA table_info(${table})`).all();
    const expected = cols.map((c) => ({
      name: c.name,
      // BIGINT is SQLite's INTEGER (same affinity, 64-bit): what src/kernel/migrations/index.ts asks new shared files to write.
      type: c.type === "TEXT" ? (nocase.has(c.name) ? "citext" : "text") : c.type === "BIGINT" ? "INTEGER" : c.type,
      // SQLite lets a non-INTEGER primary key column hold NULL (a legacy quirk); no store writes one.
      nullable: c.notnull || c.pk ? "NO" : "YES",
      dflt: c.dflt_value,
    }));
    const actual = pgCols
      .filter((c) => c.table === table)
      .map((c) => ({
        name: c.name,
        // INTEGER is 64-bit in SQLite; int4 is enough for counts, flags and status codes.
        type: c.udt === "int8" || c.udt === "int4" ? "INTEGER" : c.udt,
        nullable: c.nullable,
        dflt: c.dflt?.replace(/::[a-z ]+$/, "") ?? null,
      }));
    const byName = (a: { name: string }, b: { name: string }) => a.name.localeCompare(b.name);
    expect({ table, columns: actual.sort(byName) }).toEqual({ table, columns: expected.sort(byName) });

    const pk = cols.filter((c) => c.pk > 0).sort((a, b) => a.pk - b.pk).map((c) => c.name);
    expect({ table, pk: pgPk.find((p) => p.table === table)?.cols ?? [] }).toEqual({ table, pk });

    for (const c of pgCols.filter((c) => c.table === table && (c.udt === "int4" || c.udt === "int8"))) {
      const epochMs = EPOCH_MS.test(c.name) && !DURATIONS.has(c.name);
      const want = epochMs || c.identity === "YES" ? "int8" : c.udt;
      expect(`${table}.${c.name} ${c.udt}`).toBe(`${table}.${c.name} ${want}`);
    }
  }
});

test("every index has a counterpart: same columns, order, uniqueness and partialness; named ones by name", async () => {
  const pgIdx = await pg<{ table: string; name: string; unique: boolean; partial: boolean; cols: string[] }[]>`
    SELECT t.relname AS table, i.relname AS name, x.indisunique AS unique, x.indpred IS NOT NULL AS partial,
           array_agg(CASE WHEN k.attnum = 0 THEN '<expr>' ELSE a.attname END
                     || CASE WHEN x.indoption[k.ord - 1] & 1 = 1 THEN ' DESC' ELSE '' END ORDER BY k.ord) AS cols
      FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class t ON t.oid = x.indrelid
      JOIN pg_namespace n ON n.oid = t.relnamespace
      CROSS JOIN LATERAL unnest(x.indkey::int2[]) WITH ORDINALITY k(attnum, ord)
      LEFT JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum
     WHERE n.nspname = 'public'
     GROUP BY t.relname, i.relname, x.indisunique, x.indpred, x.indexrelid`;
  const signature = (unique: boolean, cols: string[], partial: boolean) =>
    `${unique ? "UNIQUE " : ""}(${cols.join(", ")})${partial ? " WHERE ..." : ""}`;

  let named = 0;
  for (const { name: table } of sqliteTables()) {
    const list = lite.query<{ name: string; unique: number; origin: string; partial: number }, []>(`PRAGMA index_list(${table})`).all();
    const names = new Set(list.filter((i) => i.origin === "c").map((i) => i.name));
    const expected = list.map((i) => {
      const cols = lite
        .query<{ name: string | null; desc: number; key: number }, []>(`PRAGMA index_xinfo(${i.name})`)
        .all()
        .filter((c) => c.key)
        .map((c) => (c.name ?? "<expr>") + (c.desc ? " DESC" : ""));
      const sig = signature(!!i.unique, cols, !!i.partial);
      return i.origin === "c" ? `${i.name}: ${sig}` : sig;
    });
    // SQLite's INTEGER PRIMARY KEY is the rowid itself, not an index; PostgreSQL indexes it.
    const rowidPk = lite.query<{ n: number }, []>(`SELECT count(*) AS n FROM pragma_table_info('${table}') WHERE pk = 1 AND type = 'INTEGER'`).get()!.n === 1 &&
      !list.some((i) => i.origin === "pk");
    if (rowidPk) expected.push(signature(true, lite.query<{ name: string }, []>(`SELECT name FROM pragma_table_info('${table}') WHERE pk = 1`).all().map((c) => c.name), false));
    const actual = pgIdx
      .filter((i) => i.table === table)
      .map((i) => {
        const sig = signature(i.unique, i.cols, i.partial);
        return names.has(i.name) ? `${i.name}: ${sig}` : sig;
      });
    expect({ table, indexes: actual.sort() }).toEqual({ table, indexes: expected.sort() });
    named += names.size;
  }
  expect(named).toBeGreaterThan(50); // the comparison saw the schema, not an empty list
});

test("every foreign key has the same columns, target and ON DELETE action", async () => {
  const action: Record<string, string> = { a: "NO ACTION", r: "RESTRICT", c: "CASCADE", n: "SET NULL", d: "SET DEFAULT" };
  const pgFks = await pg<{ table: string; ref: string; del: string; cols: string[]; refcols: string[] }[]>`
    SELECT c.conrelid::regclass::text AS table, c.confrelid::regclass::text AS ref, c.confdeltype AS del,
           (SELECT array_agg(a.attname ORDER BY k.ord) FROM unnest(c.conkey) WITH ORDINALITY k(n, ord)
              JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.n) AS cols,
           (SELECT array_agg(a.attname ORDER BY k.ord) FROM unnest(c.confkey) WITH ORDINALITY k(n, ord)
              JOIN pg_attribute a ON a.attrelid = c.confrelid AND a.attnum = k.n) AS refcols
      FROM pg_constraint c WHERE c.contype = 'f'`;
  const actual = pgFks.map((f) => `${f.table}(${f.cols.join(",")}) -> ${f.ref}(${f.refcols.join(",")}) ON DELETE ${action[f.del]}`).sort();

  const expected: string[] = [];
  for (const { name: table } of sqliteTables()) {
    const rows = lite.query<{ id: number; seq: number; table: string; from: string; to: string; on_delete: string }, []>(`PRAGMA foreign_key_list(${table})`).all();
    for (const id of new Set(rows.map((r) => r.id))) {
      const fk = rows.filter((r) => r.id === id).sort((a, b) => a.seq - b.seq);
      expected.push(`${table}(${fk.map((r) => r.from).join(",")}) -> ${fk[0]!.table}(${fk.map((r) => r.to).join(",")}) ON DELETE ${fk[0]!.on_delete}`);
    }
  }
  expect(actual).toEqual(expected.sort());
  expect(actual.length).toBeGreaterThan(40);
});

test("rows the migrations seed are the same on both engines", async () => {
  const cols = "id, workspace_id, name, description, policy, builtin, created_at";
  const fromLite = lite.query(`SELECT ${cols} FROM platform_roles ORDER BY id`).all();
  const fromPg = await pg.unsafe(`SELECT ${cols} FROM platform_roles ORDER BY id`);
  expect([...fromPg]).toEqual(fromLite);
  expect(fromLite).toHaveLength(3);
  // 0033 stamps updated_at with the current time: both engines write the same ISO format.
  const iso = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
  const [member] = await pg<{ updated_at: string }[]>`SELECT updated_at FROM platform_roles WHERE name = 'member'`;
  expect(member!.updated_at).toMatch(iso);
  expect(lite.query<{ updated_at: string }, []>("SELECT updated_at FROM platform_roles WHERE name = 'member'").get()!.updated_at).toMatch(iso);
});

/**
 * Full-text search tables are engine-specific by design (SQLite: an FTS5 virtual table and its
 * shadow tables; PostgreSQL: a tsvector table with a GIN index, the pg/ variant): named
 * <table>_fts, they are left out of the comparison on both sides.
 */
const FULL_TEXT = /_fts(_|$)/;

function sqliteTables() {
  return lite
    .query<{ name: string; sql: string }, []>("SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
    .all()
    .filter((t) => !FULL_TEXT.test(t.name));
}
