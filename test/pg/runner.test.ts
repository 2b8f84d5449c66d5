/**
 * The PostgreSQL migration runner: several nodes starting at once migrate exactly once, a
 * failing file leaves nothing behind, and databases whose text compares differently from
 * SQLite's are refused before anything is created.
 */
import { SQL } from "bun";
import { afterAll, beforeAll, expect, test } from "bun:test";
import { MIGRATIONS } from "../../src/app";
import { MIGRATION_LOCK_KEY, migratePg } from "../../src/core/store/migrate-pg";
import { type PgCluster, startPgCluster } from "../helpers/pg-cluster";

let cluster: PgCluster;
const clients: SQL[] = [];

beforeAll(async () => {
  cluster = await startPgCluster();
}, 30_000);

afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await cluster?.stop();
});

/** A small pool: the runner needs one connection for its checks and one it holds the lock on. */
function connect(url: string): SQL {
  const sql = new SQL(url, { max: 2 });
  clients.push(sql);
  return sql;
}

test("runners started together on one empty database apply each migration exactly once", async () => {
  const url = await cluster.createDatabase("concurrent");
  // One pool per runner, as separate nodes would have.
  const runners = [connect(url), connect(url), connect(url)];
  const results = await Promise.all(runners.map((sql) => migratePg(sql, MIGRATIONS)));

  const names = MIGRATIONS.map((m) => m.name);
  expect(results.flat().sort()).toEqual(names); // every name applied once, by one runner or another
  expect(results.filter((r) => r.length > 0)).toHaveLength(1); // the lock holder did all; the others found them recorded
  const rows = await runners[0]!<{ name: string; n: number }[]>`SELECT name, count(*)::int AS n FROM core_migrations GROUP BY name ORDER BY name`;
  expect(rows.map((r) => [r.name, r.n])).toEqual(names.map((n) => [n, 1]));
  // Each runner released the lock it took.
  const held = await runners[0]!<{ n: number }[]>`SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND objid = ${MIGRATION_LOCK_KEY}`;
  expect(held[0]!.n).toBe(0);
});

test("a runner waits while another holds the migration lock", async () => {
  const url = await cluster.createDatabase("waiting");
  const holder = await connect(url).reserve();
  await holder.unsafe(`SELECT pg_advisory_lock(${MIGRATION_LOCK_KEY})`);
  let finished = false;
  const run = migratePg(connect(url), MIGRATIONS).then((r) => ((finished = true), r));
  await Bun.sleep(300);
  expect(finished).toBe(false);
  const tables = await holder<{ n: number }[]>`SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = 'public'`;
  expect(tables[0]!.n).toBe(0); // nothing created before the lock was granted
  await holder.unsafe(`SELECT pg_advisory_unlock(${MIGRATION_LOCK_KEY})`);
  void holder.release();
  expect(await run).toHaveLength(MIGRATIONS.length);
});

test("a failing migration is rolled back and not recorded; earlier ones stay; the lock is released", async () => {
  const sql = connect(await cluster.createDatabase("failing"));
  const list = [
    { name: "9001_ok", sql: "CREATE TABLE t_ok (x INTEGER)" },
    { name: "9002_bad", sql: "CREATE TABLE t_bad (x INTEGER);\nINSERT INTO t_missing VALUES (1);" },
    { name: "9003_after", sql: "CREATE TABLE t_after (x INTEGER)" },
  ];
  await expect(migratePg(sql, list)).rejects.toThrow(/t_missing/);
  const tables = await sql<{ t: string }[]>`SELECT tablename AS t FROM pg_tables WHERE schemaname = 'public' ORDER BY 1`;
  expect(tables.map((r) => r.t)).toEqual(["core_migrations", "t_ok"]);
  expect((await sql<{ name: string }[]>`SELECT name FROM core_migrations`).map((r) => r.name)).toEqual(["9001_ok"]);
  const held = await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND objid = ${MIGRATION_LOCK_KEY}`;
  expect(held[0]!.n).toBe(0);
  // Fixed file: the next start applies it and what follows.
  expect(await migratePg(sql, [list[0]!, { name: "9002_bad", sql: "CREATE TABLE t_bad (x INTEGER)" }, list[2]!])).toEqual(["9002_bad", "9003_after"]);
});

test("a file of only comments is recorded, as on SQLite", async () => {
  const sql = connect(await cluster.createDatabase("comments"));
  expect(await migratePg(sql, [{ name: "9001_note", sql: "-- nothing to do on this engine\n" }])).toEqual(["9001_note"]);
});

test("refuses a database that does not compare text in byte order, or is not UTF-8, before creating anything", async () => {
  const admin = connect(cluster.url);
  await admin.unsafe("CREATE DATABASE icu_db TEMPLATE template0 ENCODING 'UTF8' LOCALE 'C' LOCALE_PROVIDER icu ICU_LOCALE 'en-US'");
  await admin.unsafe("CREATE DATABASE ascii_db TEMPLATE template0 ENCODING 'SQL_ASCII' LOCALE 'C'");
  const base = cluster.url.replace(/\/postgres$/, "");

  const icu = connect(`${base}/icu_db`);
  await expect(migratePg(icu, MIGRATIONS)).rejects.toThrow(`database "icu_db" has collation C (ICU); Bunker compares text in byte order, as SQLite does: create it with: CREATE DATABASE icu_db TEMPLATE template0 ENCODING 'UTF8' LOCALE 'C'`);
  const ascii = connect(`${base}/ascii_db`);
  await expect(migratePg(ascii, MIGRATIONS)).rejects.toThrow(`database "ascii_db" has encoding SQL_ASCII, not UTF8`);
  for (const sql of [icu, ascii]) {
    const tables = await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = 'public'`;
    expect(tables[0]!.n).toBe(0);
  }
});
