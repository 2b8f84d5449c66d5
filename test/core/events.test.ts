import { expect, test } from "bun:test";
import { DAY, HOUR, ManualClock } from "../../src/core/clock";
import { tx } from "../../src/core/db";
import { EventOutbox } from "../../src/core/events";
import { freshDb } from "../helpers/db";

function setup() {
  const { db } = freshDb();
  const clock = new ManualClock(Date.parse("2030-01-01T00:00:00Z"));
  return { db, clock, events: new EventOutbox(db, clock) };
}

test("an event recorded in a transaction that rolls back is gone with the change", () => {
  const { db, events } = setup();
  db.exec("CREATE TABLE t (v TEXT)");
  expect(() =>
    tx(db, () => {
      db.query("INSERT INTO t (v) VALUES ('x')").run();
      events.record({ type: "thing.created", scope: "platform:ws_1", data: { v: "x" } });
      throw new Error("validation failed after the insert");
    }),
  ).toThrow("validation failed");
  expect(db.query("SELECT COUNT(*) AS n FROM t").get()).toEqual({ n: 0 });
  expect(events.pending(10)).toEqual([]);
});

test("committed events are pending, oldest first, until marked dispatched", () => {
  const { db, clock, events } = setup();
  db.exec("CREATE TABLE t (v TEXT)");
  const first = tx(db, () => {
    db.query("INSERT INTO t (v) VALUES ('a')").run();
    return events.record({ type: "member.added", scope: "platform:ws_1", data: { user: "u1", roles: ["admin"] } });
  });
  clock.advance(1000);
  const second = events.record({ type: "mail.bounced", scope: "mail:ws_2", data: null });
  expect(first.id).toMatch(/^evt_[0-9a-f]{32}$/);
  expect(first.created_at).toBe("2030-01-01T00:00:00.000Z");
  expect(second.created_at).toBe("2030-01-01T00:00:01.000Z");

  const pending = events.pending(10);
  expect(pending.map((e) => e.id)).toEqual([first.id, second.id]);
  expect(pending[0]).toEqual({ id: first.id, type: "member.added", scope: "platform:ws_1", data: { user: "u1", roles: ["admin"] }, created_at: first.created_at, dispatched_at: null });
  expect(events.pending(1).map((e) => e.id)).toEqual([first.id]);
  expect(events.pendingCount()).toBe(2);

  clock.advance(500);
  expect(events.markDispatched([first.id, "evt_unknown"])).toBe(1);
  expect(events.pending(10).map((e) => e.id)).toEqual([second.id]);
  expect(events.get(first.id)?.dispatched_at).toBe("2030-01-01T00:00:01.500Z");
  clock.advance(500);
  expect(events.markDispatched([first.id])).toBe(0); // first dispatch time is kept
  expect(events.get(first.id)?.dispatched_at).toBe("2030-01-01T00:00:01.500Z");
  expect(events.get("evt_nope")).toBeNull();
});

test("caller-chosen ids are used, validated and unique", () => {
  const { events } = setup();
  const { id } = events.record({ id: "evt_custom1", type: "x", scope: "s", data: 1 });
  expect(id).toBe("evt_custom1");
  expect(events.get("evt_custom1")?.data).toBe(1);
  expect(() => events.record({ id: "evt_custom1", type: "x", scope: "s", data: 2 })).toThrow(expect.objectContaining({ status: 409 }));
  expect(() => events.record({ id: "nope", type: "x", scope: "s", data: 2 })).toThrow(expect.objectContaining({ status: 400 }));
  expect(() => events.record({ type: "", scope: "s", data: 2 })).toThrow(expect.objectContaining({ status: 400 }));
});

test("purge removes only events dispatched before the cutoff", () => {
  const { clock, events } = setup();
  const old = events.record({ type: "a", scope: "s", data: {} });
  const recent = events.record({ type: "b", scope: "s", data: {} });
  const undispatched = events.record({ type: "c", scope: "s", data: {} });
  events.markDispatched([old.id]);
  clock.advance(6 * DAY);
  events.markDispatched([recent.id]);
  clock.advance(2 * DAY);
  expect(events.purgeDispatchedBefore(clock.nowMs() - 7 * DAY)).toBe(1);
  expect(events.get(old.id)).toBeNull();
  expect(events.get(recent.id)).not.toBeNull();
  expect(events.purgeDispatchedBefore(clock.nowMs() + HOUR)).toBe(1);
  expect(events.get(undispatched.id)?.dispatched_at).toBeNull();
});

test("the pending query uses the partial index", () => {
  const { db } = setup();
  const plan = db.query<{ detail: string }, []>("EXPLAIN QUERY PLAN SELECT id FROM core_events WHERE dispatched_at IS NULL ORDER BY created_at, id LIMIT 10").all();
  expect(plan.map((p) => p.detail).join(" ")).toContain("core_events_pending");
});
