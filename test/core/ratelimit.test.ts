import { describe, expect, test } from "bun:test";
import { ManualClock, MINUTE, SECOND } from "../../src/core/clock";
import type { Db } from "../../src/core/db";
import { EXACT_LIMIT_MAX, RateLimiter } from "../../src/core/ratelimit";
import { PostgresDb } from "../../src/core/store/postgres";
import { SqliteDb } from "../../src/core/store/sqlite";
import { MIGRATIONS } from "../../src/app";
import { freshDb } from "../helpers/db";

const T0 = Date.UTC(2030, 0, 1, 12, 0, 0);

async function setup() {
  const { db, path } = await freshDb();
  const clock = new ManualClock(T0);
  return { db, path, clock, rl: new RateLimiter(db, clock) };
}

const rows = async (db: Db, table: string) => (await db.get<{ n: number }>(`SELECT COUNT(*) AS n FROM ${table}`))!.n;

describe("hit", () => {
  test("5 per minute: the 5th is allowed, the 6th is not", async () => {
    const { rl } = await setup();
    for (let i = 1; i <= 5; i++) expect(await rl.hit("signin:burst:u1", 5, MINUTE)).toEqual({ allowed: true, count: i, retryAfterMs: 0 });
    expect(await rl.hit("signin:burst:u1", 5, MINUTE)).toEqual({ allowed: false, count: 5, retryAfterMs: MINUTE });
  });

  test("the window slides: a slot frees exactly when the oldest hit is windowMs old", async () => {
    const { rl, clock } = await setup();
    for (let i = 0; i < 5; i++) {
      expect((await rl.hit("k", 5, MINUTE)).allowed).toBe(true);
      clock.advance(10 * SECOND); // hits at 0s, 10s, 20s, 30s, 40s
    }
    clock.set(T0 + MINUTE - 1);
    expect(await rl.hit("k", 5, MINUTE)).toEqual({ allowed: false, count: 5, retryAfterMs: 1 });
    clock.set(T0 + MINUTE); // the 0s hit leaves; the 10s..40s ones still count
    expect(await rl.hit("k", 5, MINUTE)).toEqual({ allowed: true, count: 5, retryAfterMs: 0 });
    expect(await rl.hit("k", 5, MINUTE)).toEqual({ allowed: false, count: 5, retryAfterMs: 10 * SECOND });
  });

  test("no burst across a window boundary (unlike a fixed window)", async () => {
    const { rl, clock } = await setup();
    clock.set(T0 + MINUTE - SECOND); // the last second of a clock-aligned minute
    for (let i = 0; i < 5; i++) expect((await rl.hit("k", 5, MINUTE)).allowed).toBe(true);
    clock.advance(2 * SECOND); // into the next aligned minute
    expect(await rl.hit("k", 5, MINUTE)).toEqual({ allowed: false, count: 5, retryAfterMs: MINUTE - 2 * SECOND });
  });

  test("the whole budget returns after a full window", async () => {
    const { rl, clock } = await setup();
    for (let i = 0; i < 6; i++) await rl.hit("k", 5, MINUTE);
    clock.advance(MINUTE);
    expect(await rl.count("k", MINUTE)).toBe(0);
    for (let i = 1; i <= 5; i++) expect((await rl.hit("k", 5, MINUTE)).count).toBe(i);
  });

  test("denied attempts add no rows, however many there are", async () => {
    const { rl, db } = await setup();
    for (let i = 0; i < 100; i++) await rl.hit("k", 5, MINUTE);
    expect(await rows(db, "core_ratelimit_hits")).toBe(5);
    expect(await rl.count("k", MINUTE)).toBe(5);
  });

  test("concurrent hits never exceed the limit", async () => {
    const { rl, db } = await setup();
    const results = await Promise.all(Array.from({ length: 20 }, () => rl.hit("k", 5, MINUTE)));
    expect(results.filter((r) => r.allowed)).toHaveLength(5);
    expect(await rows(db, "core_ratelimit_hits")).toBe(5);
  });

  test("count does not increment; keys are independent", async () => {
    const { rl } = await setup();
    await rl.hit("a", 5, MINUTE);
    await rl.hit("a", 5, MINUTE);
    expect(await rl.count("a", MINUTE)).toBe(2);
    expect(await rl.count("a", MINUTE)).toBe(2);
    expect(await rl.count("b", MINUTE)).toBe(0);
    expect(await rl.hit("b", 1, MINUTE)).toEqual({ allowed: true, count: 1, retryAfterMs: 0 });
    expect((await rl.hit("b", 1, MINUTE)).allowed).toBe(false);
    expect((await rl.hit("a", 5, MINUTE)).count).toBe(3);
  });

  test("nonsense limits are programming errors", async () => {
    const { rl } = await setup();
    // Whether the check throws at once or rejects the promise, awaiting the call fails.
    const refused = (call: () => Promise<unknown>) => expect((async () => call())()).rejects.toThrow(RangeError);
    await refused(() => rl.hit("k", 0, MINUTE));
    await refused(() => rl.hit("k", 1.5, MINUTE));
    await refused(() => rl.hit("k", 5, 0));
    await refused(() => rl.recordFailure("k", -1));
  });
});

describe("hitMany", () => {
  test("records n hits at once when they fit, none when they do not", async () => {
    const { rl, db, clock } = await setup();
    expect(await rl.hitMany("k", 3, 5, MINUTE)).toEqual({ allowed: true, count: 3, retryAfterMs: 0 });
    clock.advance(10 * SECOND);
    expect(await rl.hitMany("k", 2, 5, MINUTE)).toEqual({ allowed: true, count: 5, retryAfterMs: 0 });
    expect(await rows(db, "core_ratelimit_hits")).toBe(5);
    // Full: a denied call records nothing; 2 slots free once the 3 hits of T0 leave.
    expect(await rl.hitMany("k", 2, 5, MINUTE)).toEqual({ allowed: false, count: 5, retryAfterMs: MINUTE - 10 * SECOND });
    expect(await rows(db, "core_ratelimit_hits")).toBe(5);
    clock.set(T0 + MINUTE);
    expect(await rl.hitMany("k", 4, 5, MINUTE)).toEqual({ allowed: false, count: 2, retryAfterMs: 10 * SECOND });
    expect(await rl.hitMany("k", 3, 5, MINUTE)).toEqual({ allowed: true, count: 5, retryAfterMs: 0 });
    // The boundary: exactly limit at once fits on an empty key; limit + 1 never does.
    expect((await rl.hitMany("b", 5, 5, MINUTE)).allowed).toBe(true);
    expect(await rl.hitMany("c", 6, 5, MINUTE)).toEqual({ allowed: false, count: 0, retryAfterMs: MINUTE });
    expect(await rl.count("c", MINUTE)).toBe(0);
    await expect((async () => rl.hitMany("c", 0, 5, MINUTE))()).rejects.toThrow(RangeError);
  });

  test("concurrent bulk hits never exceed the limit", async () => {
    const { rl, db } = await setup();
    const results = await Promise.all(Array.from({ length: 10 }, () => rl.hitMany("k", 3, 10, MINUTE)));
    expect(results.filter((r) => r.allowed)).toHaveLength(3);
    expect(await rows(db, "core_ratelimit_hits")).toBe(9);
  });
});

describe("failures and locks", () => {
  test("sign-in flow: 4 failures lock for exactly 15 minutes", async () => {
    const { rl, clock } = await setup();
    const fail = "signin:fail:u1";
    const lock = "signin:lock:u1";
    for (let i = 1; i <= 3; i++) expect(await rl.recordFailure(fail, 15 * MINUTE)).toBe(i);
    expect(await rl.lockedUntil(lock)).toBeNull();
    expect(await rl.recordFailure(fail, 15 * MINUTE)).toBe(4);
    expect(await rl.lock(lock, clock.nowMs() + 15 * MINUTE)).toBe(T0 + 15 * MINUTE);
    await rl.clearFailures(fail);
    expect(await rl.failures(fail)).toBe(0);

    clock.advance(15 * MINUTE - 1);
    expect(await rl.lockedUntil(lock)).toBe(T0 + 15 * MINUTE);
    clock.advance(1);
    expect(await rl.lockedUntil(lock)).toBeNull();
  });

  test("a streak ends after windowMs without a failure, and on clearFailures", async () => {
    const { rl, clock } = await setup();
    expect(await rl.recordFailure("f", MINUTE)).toBe(1);
    clock.advance(MINUTE - 1);
    expect(await rl.recordFailure("f", MINUTE)).toBe(2); // window now counts from this failure
    clock.advance(MINUTE - 1);
    expect(await rl.failures("f")).toBe(2);
    expect(await rl.recordFailure("f", MINUTE)).toBe(3);
    clock.advance(MINUTE);
    expect(await rl.failures("f")).toBe(0);
    expect(await rl.recordFailure("f", MINUTE)).toBe(1);
    await rl.clearFailures("f");
    expect(await rl.recordFailure("f", MINUTE)).toBe(1);
    expect(await rl.failures("other")).toBe(0);
  });

  test("a lock is never shortened by lock(), but unlock() ends it", async () => {
    const { rl, clock } = await setup();
    const now = clock.nowMs();
    expect(await rl.lock("l", now + 15 * MINUTE)).toBe(now + 15 * MINUTE);
    expect(await rl.lock("l", now + MINUTE)).toBe(now + 15 * MINUTE);
    expect(await rl.lock("l", now + 20 * MINUTE)).toBe(now + 20 * MINUTE);
    expect(await rl.lockedUntil("l")).toBe(now + 20 * MINUTE);
    expect(await rl.lockedUntil("other")).toBeNull();
    await rl.unlock("l");
    expect(await rl.lockedUntil("l")).toBeNull();
    expect(await rl.lock("l", now + MINUTE)).toBe(now + MINUTE);
  });

  test("an expired lock can be replaced by a new one", async () => {
    const { rl, clock } = await setup();
    await rl.lock("l", clock.nowMs() + MINUTE);
    clock.advance(2 * MINUTE);
    expect(await rl.lockedUntil("l")).toBeNull();
    await rl.lock("l", clock.nowMs() + MINUTE);
    expect(await rl.lockedUntil("l")).toBe(clock.nowMs() + MINUTE);
  });
});

test("counts, streaks and locks survive a restart (new instance on the same database)", async () => {
  const { rl, path, clock, db } = await setup();
  for (let i = 0; i < 3; i++) await rl.hit("k", 5, MINUTE);
  await rl.recordFailure("f", 15 * MINUTE);
  await rl.recordFailure("f", 15 * MINUTE);
  await rl.lock("l", T0 + 15 * MINUTE);
  // The suite's PostgreSQL URLs carry no password, so the logged location reopens it.
  const location = db.location;
  await db.close();

  const reopened: Db = db.engine === "postgres" ? await PostgresDb.open(location, { max: 2, migrations: MIGRATIONS }) : new SqliteDb(path, MIGRATIONS);
  const again = new RateLimiter(reopened, clock);
  expect(await again.count("k", MINUTE)).toBe(3);
  expect((await again.hit("k", 5, MINUTE)).count).toBe(4);
  expect((await again.hit("k", 5, MINUTE)).count).toBe(5);
  expect((await again.hit("k", 5, MINUTE)).allowed).toBe(false);
  expect(await again.failures("f")).toBe(2);
  expect(await again.recordFailure("f", 15 * MINUTE)).toBe(3);
  expect(await again.lockedUntil("l")).toBe(T0 + 15 * MINUTE);
  await reopened.close();
});

test("purgeExpired removes exactly what has expired", async () => {
  const { rl, clock, db } = await setup();
  await rl.hit("short", 5, MINUTE);
  await rl.hit("short", 5, MINUTE);
  await rl.hit("long", 5, 10 * MINUTE);
  await rl.recordFailure("f-short", MINUTE);
  await rl.recordFailure("f-long", 10 * MINUTE);
  await rl.lock("l-short", T0 + MINUTE);
  await rl.lock("l-long", T0 + 10 * MINUTE);
  expect(await rl.purgeExpired()).toBe(0);

  clock.advance(MINUTE);
  expect(await rl.purgeExpired()).toBe(4); // 2 short hits, the short streak, the short lock
  expect(await rows(db, "core_ratelimit_hits")).toBe(1);
  expect(await rl.count("long", 10 * MINUTE)).toBe(1);
  expect(await rl.failures("f-long")).toBe(1);
  expect(await rl.lockedUntil("l-long")).toBe(T0 + 10 * MINUTE);

  clock.advance(9 * MINUTE);
  expect(await rl.purgeExpired()).toBe(3);
  for (const t of ["core_ratelimit_hits", "core_ratelimit_failures", "core_ratelimit_locks"]) expect(await rows(db, t)).toBe(0);
});

describe(`limits above ${EXACT_LIMIT_MAX} per window: sliding-window counter`, () => {
  const L = 2000;

  test("two rows per key however many hits; the limit holds at its boundary within a window", async () => {
    const { rl, db } = await setup(); // T0 is a whole minute: the window starts now
    expect(await rl.hitMany("big", L - 1, L, MINUTE)).toEqual({ allowed: true, count: L - 1, retryAfterMs: 0 });
    expect(await rl.hit("big", L, MINUTE)).toEqual({ allowed: true, count: L, retryAfterMs: 0 });
    expect(await rl.hit("big", L, MINUTE)).toEqual({ allowed: false, count: L, retryAfterMs: MINUTE });
    expect(await rl.hitMany("other", L + 1, L, MINUTE)).toEqual({ allowed: false, count: 0, retryAfterMs: MINUTE });
    expect(await rows(db, "core_ratelimit_windows")).toBe(1);
    expect(await rows(db, "core_ratelimit_hits")).toBe(0);
  });

  test("the previous window's hits fade out linearly: no burst of twice the limit across the boundary", async () => {
    const { rl, clock } = await setup();
    clock.set(T0 + 30 * SECOND);
    expect((await rl.hitMany("k", L, L, MINUTE)).allowed).toBe(true); // all in the second half of window 0
    clock.set(T0 + MINUTE + 15 * SECOND); // a quarter into window 1: 75% of window 0 still counts
    const denied = await rl.hitMany("k", 600, L, MINUTE);
    expect(denied.allowed).toBe(false);
    expect(denied.count).toBe(1500);
    // Room for 600 once the previous window's share is at most 1,400: 70% left, 30 s in.
    expect(denied.retryAfterMs).toBe(3 * SECOND);
    expect(await rl.hitMany("k", 500, L, MINUTE)).toEqual({ allowed: true, count: 2000, retryAfterMs: 0 });
    clock.set(T0 + MINUTE + 18 * SECOND);
    expect((await rl.hitMany("k", 60, L, MINUTE)).allowed).toBe(true); // 1,400 + 500 + 60 <= 2,000
  });

  test("concurrent hits never pass the limit", async () => {
    const { rl } = await setup();
    const results = await Promise.all(Array.from({ length: 30 }, () => rl.hitMany("c", 100, L, MINUTE)));
    expect(results.filter((r) => r.allowed)).toHaveLength(20);
    expect((await rl.hitMany("c", 1, L, MINUTE)).allowed).toBe(false);
  });

  test("hitWindow on a transaction handle: the slots go with the transaction; any limit size", async () => {
    const { rl, db } = await setup();
    await db
      .tx(async (t) => {
        expect((await rl.hitWindow("tx", 3, 5, MINUTE, t)).allowed).toBe(true);
        throw new Error("rolled back");
      })
      .catch(() => {});
    expect(await rows(db, "core_ratelimit_windows")).toBe(0);
    await db.tx(async (t) => {
      expect(await rl.hitWindow("tx", 5, 5, MINUTE, t)).toEqual({ allowed: true, count: 5, retryAfterMs: 0 });
    });
    expect(await rl.hitWindow("tx", 1, 5, MINUTE)).toEqual({ allowed: false, count: 5, retryAfterMs: MINUTE });
  });

  test("purgeExpired drops a window's counter once the next window is over too", async () => {
    const { rl, db, clock } = await setup();
    await rl.hit("p", L, MINUTE);
    clock.advance(MINUTE);
    expect(await rl.purgeExpired()).toBe(0); // still read as the previous window
    clock.advance(MINUTE);
    expect(await rl.purgeExpired()).toBe(1);
    expect(await rows(db, "core_ratelimit_windows")).toBe(0);
  });
});
