import { describe, expect, test } from "bun:test";
import { ManualClock, MINUTE, SECOND } from "../../src/core/clock";
import { openDb, type Db } from "../../src/core/db";
import { RateLimiter } from "../../src/core/ratelimit";
import { freshDb } from "../helpers/db";

const T0 = Date.UTC(2030, 0, 1, 12, 0, 0);

function setup() {
  const { db, path } = freshDb();
  const clock = new ManualClock(T0);
  return { db, path, clock, rl: new RateLimiter(db, clock) };
}

const rows = (db: Db, table: string) => db.query<{ n: number }, []>(`SELECT COUNT(*) AS n FROM ${table}`).get()!.n;

describe("hit", () => {
  test("5 per minute: the 5th is allowed, the 6th is not", () => {
    const { rl } = setup();
    for (let i = 1; i <= 5; i++) expect(rl.hit("signin:burst:u1", 5, MINUTE)).toEqual({ allowed: true, count: i, retryAfterMs: 0 });
    expect(rl.hit("signin:burst:u1", 5, MINUTE)).toEqual({ allowed: false, count: 5, retryAfterMs: MINUTE });
  });

  test("the window slides: a slot frees exactly when the oldest hit is windowMs old", () => {
    const { rl, clock } = setup();
    for (let i = 0; i < 5; i++) {
      expect(rl.hit("k", 5, MINUTE).allowed).toBe(true);
      clock.advance(10 * SECOND); // hits at 0s, 10s, 20s, 30s, 40s
    }
    clock.set(T0 + MINUTE - 1);
    expect(rl.hit("k", 5, MINUTE)).toEqual({ allowed: false, count: 5, retryAfterMs: 1 });
    clock.set(T0 + MINUTE); // the 0s hit leaves; the 10s..40s ones still count
    expect(rl.hit("k", 5, MINUTE)).toEqual({ allowed: true, count: 5, retryAfterMs: 0 });
    expect(rl.hit("k", 5, MINUTE)).toEqual({ allowed: false, count: 5, retryAfterMs: 10 * SECOND });
  });

  test("no burst across a window boundary (unlike a fixed window)", () => {
    const { rl, clock } = setup();
    clock.set(T0 + MINUTE - SECOND); // the last second of a clock-aligned minute
    for (let i = 0; i < 5; i++) expect(rl.hit("k", 5, MINUTE).allowed).toBe(true);
    clock.advance(2 * SECOND); // into the next aligned minute
    expect(rl.hit("k", 5, MINUTE)).toEqual({ allowed: false, count: 5, retryAfterMs: MINUTE - 2 * SECOND });
  });

  test("the whole budget returns after a full window", () => {
    const { rl, clock } = setup();
    for (let i = 0; i < 6; i++) rl.hit("k", 5, MINUTE);
    clock.advance(MINUTE);
    expect(rl.count("k", MINUTE)).toBe(0);
    for (let i = 1; i <= 5; i++) expect(rl.hit("k", 5, MINUTE).count).toBe(i);
  });

  test("denied attempts add no rows, however many there are", () => {
    const { rl, db } = setup();
    for (let i = 0; i < 100; i++) rl.hit("k", 5, MINUTE);
    expect(rows(db, "core_ratelimit_hits")).toBe(5);
    expect(rl.count("k", MINUTE)).toBe(5);
  });

  test("count does not increment; keys are independent", () => {
    const { rl } = setup();
    rl.hit("a", 5, MINUTE);
    rl.hit("a", 5, MINUTE);
    expect(rl.count("a", MINUTE)).toBe(2);
    expect(rl.count("a", MINUTE)).toBe(2);
    expect(rl.count("b", MINUTE)).toBe(0);
    expect(rl.hit("b", 1, MINUTE)).toEqual({ allowed: true, count: 1, retryAfterMs: 0 });
    expect(rl.hit("b", 1, MINUTE).allowed).toBe(false);
    expect(rl.hit("a", 5, MINUTE).count).toBe(3);
  });

  test("nonsense limits are programming errors", () => {
    const { rl } = setup();
    expect(() => rl.hit("k", 0, MINUTE)).toThrow(RangeError);
    expect(() => rl.hit("k", 1.5, MINUTE)).toThrow(RangeError);
    expect(() => rl.hit("k", 5, 0)).toThrow(RangeError);
    expect(() => rl.recordFailure("k", -1)).toThrow(RangeError);
  });
});

describe("failures and locks", () => {
  test("sign-in flow: 4 failures lock for exactly 15 minutes", () => {
    const { rl, clock } = setup();
    const fail = "signin:fail:u1";
    const lock = "signin:lock:u1";
    for (let i = 1; i <= 3; i++) expect(rl.recordFailure(fail, 15 * MINUTE)).toBe(i);
    expect(rl.lockedUntil(lock)).toBeNull();
    expect(rl.recordFailure(fail, 15 * MINUTE)).toBe(4);
    expect(rl.lock(lock, clock.nowMs() + 15 * MINUTE)).toBe(T0 + 15 * MINUTE);
    rl.clearFailures(fail);
    expect(rl.failures(fail)).toBe(0);

    clock.advance(15 * MINUTE - 1);
    expect(rl.lockedUntil(lock)).toBe(T0 + 15 * MINUTE);
    clock.advance(1);
    expect(rl.lockedUntil(lock)).toBeNull();
  });

  test("a streak ends after windowMs without a failure, and on clearFailures", () => {
    const { rl, clock } = setup();
    expect(rl.recordFailure("f", MINUTE)).toBe(1);
    clock.advance(MINUTE - 1);
    expect(rl.recordFailure("f", MINUTE)).toBe(2); // window now counts from this failure
    clock.advance(MINUTE - 1);
    expect(rl.failures("f")).toBe(2);
    expect(rl.recordFailure("f", MINUTE)).toBe(3);
    clock.advance(MINUTE);
    expect(rl.failures("f")).toBe(0);
    expect(rl.recordFailure("f", MINUTE)).toBe(1);
    rl.clearFailures("f");
    expect(rl.recordFailure("f", MINUTE)).toBe(1);
    expect(rl.failures("other")).toBe(0);
  });

  test("a lock is never shortened by lock(), but unlock() ends it", () => {
    const { rl, clock } = setup();
    const now = clock.nowMs();
    expect(rl.lock("l", now + 15 * MINUTE)).toBe(now + 15 * MINUTE);
    expect(rl.lock("l", now + MINUTE)).toBe(now + 15 * MINUTE);
    expect(rl.lock("l", now + 20 * MINUTE)).toBe(now + 20 * MINUTE);
    expect(rl.lockedUntil("l")).toBe(now + 20 * MINUTE);
    expect(rl.lockedUntil("other")).toBeNull();
    rl.unlock("l");
    expect(rl.lockedUntil("l")).toBeNull();
    expect(rl.lock("l", now + MINUTE)).toBe(now + MINUTE);
  });

  test("an expired lock can be replaced by a new one", () => {
    const { rl, clock } = setup();
    rl.lock("l", clock.nowMs() + MINUTE);
    clock.advance(2 * MINUTE);
    expect(rl.lockedUntil("l")).toBeNull();
    rl.lock("l", clock.nowMs() + MINUTE);
    expect(rl.lockedUntil("l")).toBe(clock.nowMs() + MINUTE);
  });
});

test("counts, streaks and locks survive a restart (new instance on the same db file)", () => {
  const { rl, path, clock, db } = setup();
  for (let i = 0; i < 3; i++) rl.hit("k", 5, MINUTE);
  rl.recordFailure("f", 15 * MINUTE);
  rl.recordFailure("f", 15 * MINUTE);
  rl.lock("l", T0 + 15 * MINUTE);
  db.close();

  const reopened = openDb(path);
  const again = new RateLimiter(reopened, clock);
  expect(again.count("k", MINUTE)).toBe(3);
  expect(again.hit("k", 5, MINUTE).count).toBe(4);
  expect(again.hit("k", 5, MINUTE).count).toBe(5);
  expect(again.hit("k", 5, MINUTE).allowed).toBe(false);
  expect(again.failures("f")).toBe(2);
  expect(again.recordFailure("f", 15 * MINUTE)).toBe(3);
  expect(again.lockedUntil("l")).toBe(T0 + 15 * MINUTE);
  reopened.close();
});

test("purgeExpired removes exactly what has expired", () => {
  const { rl, clock, db } = setup();
  rl.hit("short", 5, MINUTE);
  rl.hit("short", 5, MINUTE);
  rl.hit("long", 5, 10 * MINUTE);
  rl.recordFailure("f-short", MINUTE);
  rl.recordFailure("f-long", 10 * MINUTE);
  rl.lock("l-short", T0 + MINUTE);
  rl.lock("l-long", T0 + 10 * MINUTE);
  expect(rl.purgeExpired()).toBe(0);

  clock.advance(MINUTE);
  expect(rl.purgeExpired()).toBe(4); // 2 short hits, the short streak, the short lock
  expect(rows(db, "core_ratelimit_hits")).toBe(1);
  expect(rl.count("long", 10 * MINUTE)).toBe(1);
  expect(rl.failures("f-long")).toBe(1);
  expect(rl.lockedUntil("l-long")).toBe(T0 + 10 * MINUTE);

  clock.advance(9 * MINUTE);
  expect(rl.purgeExpired()).toBe(3);
  for (const t of ["core_ratelimit_hits", "core_ratelimit_failures", "core_ratelimit_locks"]) expect(rows(db, t)).toBe(0);
});
