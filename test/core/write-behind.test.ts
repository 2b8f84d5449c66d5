import { expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { SQL } from "bun";
import type { Db } from "../../src/core/db";
import { createLogger } from "../../src/core/log";
import { PostgresDb } from "../../src/core/store/postgres";
import { SqliteDb } from "../../src/core/store/sqlite";
import { MIGRATIONS } from "../../src/app";
import { WriteBehind, type WriteBehindOptions } from "../../src/core/write-behind";
import { freshDb } from "../helpers/db";
import { freshPgUrl, TEST_ENGINE } from "../helpers/engine";
import { until } from "../helpers/until";

/**
 * Another connection holding the database for writes until release(): on SQLite a write
 * transaction on the same file (the way a bulk write by another process holds it), on
 * PostgreSQL an exclusive lock on the table.
 */
type Hold = () => Promise<() => Promise<void>>;

async function setup(opts: WriteBehindOptions = { delayMs: 50, maxBatch: 3 }) {
  let db: Db;
  let hold: Hold;
  if (TEST_ENGINE === "postgres") {
    const url = await freshPgUrl();
    db = await PostgresDb.open(url, { max: 4, migrations: MIGRATIONS });
    hold = async () => {
      const sql = new SQL(url, { max: 1 });
      const c = await sql.reserve();
      await c`BEGIN`;
      await c`LOCK TABLE t IN ACCESS EXCLUSIVE MODE`;
      return async () => {
        await c`ROLLBACK`;
        await c.release();
        await sql.close();
      };
    };
  } else {
    const fresh = await freshDb();
    db = fresh.db;
    // A refused BEGIN answers after 50 ms instead of the engine's 5 s busy wait.
    (db as SqliteDb).writer.exec("PRAGMA busy_timeout = 50");
    hold = async () => {
      const other = new Database(fresh.path);
      other.exec("BEGIN IMMEDIATE");
      return async () => {
        other.exec("ROLLBACK");
        other.close();
      };
    };
  }
  // `id` keeps the order rows were written in (rowid on SQLite, a sequence on PostgreSQL).
  await db.run(`CREATE TABLE t (id ${db.engine === "postgres" ? "SERIAL" : "INTEGER"} PRIMARY KEY, v INTEGER NOT NULL UNIQUE)`);
  const lines: any[] = [];
  const wb = new WriteBehind(db, createLogger("info", {}, (l) => lines.push(JSON.parse(l))), "test log", opts);
  const insert = (v: number) =>
    wb.add(
      async (t) => {
        // PostgreSQL waits for a lock as long as it is held: give up after 50 ms, as a busy SQLite does.
        if (db.engine === "postgres") await t.run("SET LOCAL lock_timeout = '50ms'");
        await t.run("INSERT INTO t (v) VALUES (?)", v);
      },
      { v },
    );
  const rows = async () => (await db.all<{ v: number }>("SELECT v FROM t ORDER BY id")).map((r) => r.v);
  return { db, wb, insert, rows, lines, hold };
}

test("queued writes land together after the delay, in order", async () => {
  const { wb, insert, rows } = await setup();
  insert(1);
  insert(2);
  expect(await rows()).toEqual([]);
  expect(wb.pending).toBe(2);
  await Bun.sleep(120);
  expect(await rows()).toEqual([1, 2]);
  expect(wb.pending).toBe(0);
});

test("a full batch is written at once; flush() writes the rest now", async () => {
  // A delay far beyond the test: only the full batch (or flush) can write anything.
  const { wb, insert, rows } = await setup({ delayMs: 60_000, maxBatch: 3 });
  for (const v of [1, 2, 3]) insert(v);
  expect(wb.pending).toBe(0); // the full batch was taken at once ...
  const deadline = Date.now() + 5000;
  while ((await rows()).length < 3 && Date.now() < deadline) await Bun.sleep(5);
  expect(await rows()).toEqual([1, 2, 3]); // ... and written without a flush() or the timer
  insert(4);
  expect(await rows()).toEqual([1, 2, 3]);
  await wb.flush();
  expect(await rows()).toEqual([1, 2, 3, 4]);
  await wb.flush(); // nothing queued: no-op
  expect(await rows()).toEqual([1, 2, 3, 4]);
});

test("a failing write is logged and the rest of its batch is still written", async () => {
  const { db, wb, insert, rows, lines } = await setup();
  insert(1);
  insert(1); // UNIQUE violation
  insert(2);
  await wb.flush(); // waits for the full batch's write
  expect(await rows()).toEqual([1, 2]);
  expect(wb.pending).toBe(0);
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatchObject({ level: "error", msg: "test log: a deferred write failed" });
  expect(lines[0].err).toContain(db.engine === "postgres" ? "unique constraint" : "UNIQUE");
});

test("a batch the database refuses is kept and tried again until written, in order; one warning per outage", async () => {
  const { wb, insert, rows, lines, hold } = await setup({ delayMs: 60_000, maxBatch: 100, retryMs: 20, retryMaxMs: 100 });
  const release = await hold();
  insert(1);
  insert(2);
  const first = wb.flush();
  await until("a refused attempt", () => wb.retrying);
  insert(3);
  const second = wb.flush(); // queued behind the refused batch
  await release();
  await first;
  await second;
  expect(await rows()).toEqual([1, 2, 3]);
  expect(wb.retrying).toBe(false);
  expect(lines.map((l) => [l.level, l.msg])).toEqual([
    ["warn", "test log: the database refused deferred writes; they are kept and tried again until written"],
    ["info", "test log: deferred writes written again"],
  ]);
  expect(lines[1].refused_attempts).toBeGreaterThanOrEqual(1);
});

test("close() (shutdown) gives a batch up after closeTimeoutMs of refusals and logs each record it lost", async () => {
  const { wb, insert, rows, lines, hold } = await setup({ delayMs: 60_000, maxBatch: 100, retryMs: 20, retryMaxMs: 50, closeTimeoutMs: 300 });
  const release = await hold();
  insert(7);
  insert(8);
  await wb.close(); // resolves although nothing could be written
  await release();
  expect(await rows()).toEqual([]);
  const lost = lines.find((l) => l.level === "error");
  expect(lost).toMatchObject({ msg: "test log: deferred writes lost: the database refused them until shutdown", lost: 2, records: [{ v: 7 }, { v: 8 }] });
});
