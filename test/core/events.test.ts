import { expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DAY, HOUR, ManualClock } from "../../src/core/clock";
import { tx } from "../../src/core/db";
import { EventOutbox } from "../../src/core/events";
import { SqliteDb } from "../../src/core/store/sqlite";
import { MIGRATIONS } from "../../src/app";
import { freshDb } from "../helpers/db";

async function setup() {
  const { db } = await freshDb();
  const clock = new ManualClock(Date.parse("2030-01-01T00:00:00Z"));
  return { db, clock, events: new EventOutbox(db, clock) };
}

test("an event recorded in a transaction that rolls back is gone with the change", async () => {
  const { db, events } = await setup();
  await db.run("CREATE TABLE t (v TEXT)");
  await expect(
    tx(db, async (t) => {
      await t.run("INSERT INTO t (v) VALUES ('x')");
      await events.record(t, { type: "thing.created", scope: "platform:ws_1", data: { v: "x" } });
      throw new Error("validation failed after the insert");
    }),
  ).rejects.toThrow("validation failed");
  expect(await db.get("SELECT COUNT(*) AS n FROM t")).toEqual({ n: 0 });
  expect(await events.pending(10)).toEqual([]);
});

test("committed events are pending, oldest first, until marked dispatched", async () => {
  const { db, clock, events } = await setup();
  await db.run("CREATE TABLE t (v TEXT)");
  const first = await tx(db, async (t) => {
    await t.run("INSERT INTO t (v) VALUES ('a')");
    return events.record(t, { type: "member.added", scope: "platform:ws_1", data: { user: "u1", roles: ["admin"] } });
  });
  clock.advance(1000);
  const second = await events.record(db, { type: "mail.bounced", scope: "mail:ws_2", data: null });
  expect(first.id).toMatch(/^evt_[0-9a-f]{32}$/);
  expect(first.created_at).toBe("2030-01-01T00:00:00.000Z");
  expect(second.created_at).toBe("2030-01-01T00:00:01.000Z");

  const pending = await events.pending(10);
  expect(pending.map((e) => e.id)).toEqual([first.id, second.id]);
  expect(pending[0]).toEqual({ id: first.id, type: "member.added", scope: "platform:ws_1", data: { user: "u1", roles: ["admin"] }, created_at: first.created_at, dispatched_at: null });
  expect((await events.pending(1)).map((e) => e.id)).toEqual([first.id]);
  expect(await events.pendingCount()).toBe(2);

  clock.advance(500);
  expect(await events.markDispatched([first.id, "evt_unknown"])).toBe(1);
  expect((await events.pending(10)).map((e) => e.id)).toEqual([second.id]);
  expect((await events.get(first.id))?.dispatched_at).toBe("2030-01-01T00:00:01.500Z");
  clock.advance(500);
  expect(await events.markDispatched([first.id])).toBe(0); // first dispatch time is kept
  expect((await events.get(first.id))?.dispatched_at).toBe("2030-01-01T00:00:01.500Z");
  expect(await events.get("evt_nope")).toBeNull();
});

test("caller-chosen ids are used, validated and unique", async () => {
  const { db, events } = await setup();
  const { id } = await events.record(db, { id: "evt_custom1", type: "x", scope: "s", data: 1 });
  expect(id).toBe("evt_custom1");
  expect((await events.get("evt_custom1"))?.data).toBe(1);
  await expect(events.record(db, { id: "evt_custom1", type: "x", scope: "s", data: 2 })).rejects.toThrow(expect.objectContaining({ status: 409 }));
  await expect(events.record(db, { id: "nope", type: "x", scope: "s", data: 2 })).rejects.toThrow(expect.objectContaining({ status: 400 }));
  await expect(events.record(db, { type: "", scope: "s", data: 2 })).rejects.toThrow(expect.objectContaining({ status: 400 }));
});

test("claim hands events of one scope prefix to the consumer with the transaction's handle, and marks them dispatched", async () => {
  const { db, clock, events } = await setup();
  await db.run("CREATE TABLE seen (id TEXT)");
  const a = await events.record(db, { type: "a", scope: "webhook:x", data: { n: 1 } });
  await events.record(db, { type: "b", scope: "platform:ws_1", data: {} });
  const c = await events.record(db, { type: "c", scope: "webhook:y", data: { n: 3 } });
  clock.advance(1000);
  const taken = await events.claim("webhook:", 10, async (e, t) => {
    await t.run("INSERT INTO seen (id) VALUES (?)", e.id);
  });
  expect(taken).toBe(2);
  expect((await db.all<{ id: string }>("SELECT id FROM seen ORDER BY id")).map((r) => r.id)).toEqual([a.id, c.id].sort());
  expect((await events.get(a.id))?.dispatched_at).toBe("2030-01-01T00:00:01.000Z");
  expect(await events.pendingCount("webhook:")).toBe(0);
  expect(await events.pendingCount()).toBe(1);

  // A consumer that throws rolls the whole batch back: offered again next time.
  const d = await events.record(db, { type: "d", scope: "webhook:z", data: {} });
  await expect(
    events.claim("webhook:", 10, async (e, t) => {
      await t.run("INSERT INTO seen (id) VALUES (?)", e.id);
      throw new Error("consumer failed");
    }),
  ).rejects.toThrow("consumer failed");
  expect(await db.get("SELECT COUNT(*) AS n FROM seen WHERE id = ?", d.id)).toEqual({ n: 0 });
  expect(await events.pendingCount("webhook:")).toBe(1);
});

test("purge removes only events dispatched before the cutoff", async () => {
  const { db, clock, events } = await setup();
  const old = await events.record(db, { type: "a", scope: "s", data: {} });
  const recent = await events.record(db, { type: "b", scope: "s", data: {} });
  const undispatched = await events.record(db, { type: "c", scope: "s", data: {} });
  await events.markDispatched([old.id]);
  clock.advance(6 * DAY);
  await events.markDispatched([recent.id]);
  clock.advance(2 * DAY);
  expect(await events.purgeDispatchedBefore(clock.nowMs() - 7 * DAY)).toBe(1);
  expect(await events.get(old.id)).toBeNull();
  expect(await events.get(recent.id)).not.toBeNull();
  expect(await events.purgeDispatchedBefore(clock.nowMs() + HOUR)).toBe(1);
  expect((await events.get(undispatched.id))?.dispatched_at).toBeNull();
});

test("the pending query uses the partial index (SQLite's planner)", async () => {
  const db = new SqliteDb(join(mkdtempSync(join(tmpdir(), "bunker-test-")), "bunker.db"), MIGRATIONS);
  try {
    const plan = await db.all<{ detail: string }>("EXPLAIN QUERY PLAN SELECT id FROM core_events WHERE dispatched_at IS NULL ORDER BY created_at, id LIMIT 10");
    expect(plan.map((p) => p.detail).join(" ")).toContain("core_events_pending");
  } finally {
    await db.close();
  }
});
