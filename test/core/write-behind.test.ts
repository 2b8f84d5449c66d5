import { expect, test } from "bun:test";
import { createLogger } from "../../src/core/log";
import { WriteBehind } from "../../src/core/write-behind";
import { freshDb } from "../helpers/db";

async function setup(opts = { delayMs: 50, maxBatch: 3 }) {
  const { db } = await freshDb();
  // `id` keeps the order rows were written in (rowid on SQLite, a sequence on PostgreSQL).
  await db.run(`CREATE TABLE t (id ${db.engine === "postgres" ? "SERIAL" : "INTEGER"} PRIMARY KEY, v INTEGER NOT NULL UNIQUE)`);
  const lines: any[] = [];
  const wb = new WriteBehind(db, createLogger("error", {}, (l) => lines.push(JSON.parse(l))), "test log", opts);
  const insert = (v: number) => wb.add((t) => t.run("INSERT INTO t (v) VALUES (?)", v));
  const rows = async () => (await db.all<{ v: number }>("SELECT v FROM t ORDER BY id")).map((r) => r.v);
  return { db, wb, insert, rows, lines };
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
