import { expect, test } from "bun:test";
import { createLogger } from "../../src/core/log";
import { WriteBehind } from "../../src/core/write-behind";
import { freshDb } from "../helpers/db";

function setup(opts = { delayMs: 50, maxBatch: 3 }) {
  const { db } = freshDb();
  db.exec("CREATE TABLE t (v INTEGER NOT NULL UNIQUE)");
  const lines: any[] = [];
  const wb = new WriteBehind(db, createLogger("error", {}, (l) => lines.push(JSON.parse(l))), "test log", opts);
  const insert = (v: number) => wb.add(() => void db.query("INSERT INTO t (v) VALUES (?)").run(v));
  const rows = () => db.query<{ v: number }, []>("SELECT v FROM t ORDER BY rowid").all().map((r) => r.v);
  return { db, wb, insert, rows, lines };
}

test("queued writes land together after the delay, in order", async () => {
  const { wb, insert, rows } = setup();
  insert(1);
  insert(2);
  expect(rows()).toEqual([]);
  expect(wb.pending).toBe(2);
  await Bun.sleep(120);
  expect(rows()).toEqual([1, 2]);
  expect(wb.pending).toBe(0);
});

test("a full batch is written at once; flush() writes the rest now", () => {
  const { wb, insert, rows } = setup();
  for (const v of [1, 2, 3]) insert(v);
  expect(rows()).toEqual([1, 2, 3]);
  insert(4);
  expect(rows()).toEqual([1, 2, 3]);
  wb.flush();
  expect(rows()).toEqual([1, 2, 3, 4]);
  wb.flush(); // nothing queued: no-op
  expect(rows()).toEqual([1, 2, 3, 4]);
});

test("a failing write is logged and the rest of its batch is still written", () => {
  const { wb, insert, rows, lines } = setup();
  insert(1);
  insert(1); // UNIQUE violation
  insert(2);
  expect(rows()).toEqual([1, 2]);
  expect(wb.pending).toBe(0);
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatchObject({ level: "error", msg: "test log: a deferred write failed" });
  expect(lines[0].err).toContain("UNIQUE");
});
