/**
 * The credential throttles on their own: client-address keys, the per-address failure
 * budget, and the Retry-After SigninGuard gives when several limits hold at once.
 */
import { describe, expect, test } from "bun:test";
import { ManualClock, MINUTE, SECOND } from "../../src/core/clock";
import { ApiError } from "../../src/core/errors";
import { RateLimiter } from "../../src/core/ratelimit";
import { AddressLimit, SigninGuard, SIGNIN_LOCK, addressKey } from "../../src/core/signin-guard";
import { freshDb } from "../helpers/db";

const T0 = Date.UTC(2030, 0, 1, 12, 0, 0);

async function setup() {
  const clock = new ManualClock(T0);
  const rl = new RateLimiter((await freshDb()).db, clock);
  return { clock, rl, guard: new SigninGuard(rl, () => clock.nowMs(), "signin") };
}

/** The 429 a call rejects with: its Retry-After in seconds. */
async function retryAfter(fn: () => Promise<unknown>): Promise<number> {
  try {
    await fn();
  } catch (e) {
    if (e instanceof ApiError && e.status === 429 && e.code === "TOO_MANY_ATTEMPTS") return Number(e.headers!["retry-after"]);
    throw e;
  }
  throw new Error("expected 429");
}

describe("addressKey", () => {
  test("IPv4 as is; IPv4-mapped IPv6 as IPv4; no address is one shared 'unknown'", () => {
    expect(addressKey("203.0.113.7")).toBe("203.0.113.7");
    expect(addressKey("::ffff:203.0.113.7")).toBe("203.0.113.7");
    expect(addressKey(null)).toBe("unknown");
    expect(addressKey("")).toBe("unknown");
  });

  test("IPv6 by its /64, however the address is written", () => {
    const k = "2001:db8:aa:bb::/64";
    expect(addressKey("2001:db8:aa:bb::1")).toBe(k);
    expect(addressKey("2001:0DB8:00aa:00bb:ffff:1:2:3")).toBe(k);
    expect(addressKey("2001:db8:aa:bb:1::")).toBe(k);
    expect(addressKey("fe80::1%eth0")).toBe("fe80:0:0:0::/64");
    expect(addressKey("::1")).toBe("0:0:0:0::/64");
    expect(addressKey("2001:db8:aa:bb::192.0.2.1")).toBe(k);
    expect(addressKey("2001:db8:aa:bc::1")).not.toBe(k);
  });

  test("something that is not an address is still a key of its own (never shared with another)", () => {
    expect(addressKey("1:2:3::4::5")).toBe("1:2:3::4::5");
  });
});

describe("RateLimiter.waitMs", () => {
  test("0 under the limit; at it, until the oldest counted hit leaves; never counts", async () => {
    const { rl, clock } = await setup();
    expect(await rl.waitMs("k", 2, MINUTE)).toBe(0);
    await rl.hit("k", 2, MINUTE);
    clock.advance(10 * SECOND);
    await rl.hit("k", 2, MINUTE);
    expect(await rl.waitMs("k", 2, MINUTE)).toBe(50 * SECOND);
    expect(await rl.waitMs("k", 2, MINUTE)).toBe(50 * SECOND);
    expect(await rl.count("k", MINUTE)).toBe(2);
    clock.advance(50 * SECOND);
    expect(await rl.waitMs("k", 2, MINUTE)).toBe(0);
  });

  test("with more hits than a lower limit, waits for enough of them to leave", async () => {
    const { rl, clock } = await setup();
    for (let i = 0; i < 3; i++) {
      await rl.hit("k", 3, MINUTE); // at 0 s, 10 s, 20 s
      clock.advance(10 * SECOND);
    }
    // now 30 s; under a limit of 2 the hits at 0 s and 10 s must both leave: at 70 s
    expect(await rl.waitMs("k", 2, MINUTE)).toBe(40 * SECOND);
  });
});

describe("AddressLimit", () => {
  test("the budget is per address, counts failures only, and refills as the window slides", async () => {
    const { rl, clock } = await setup();
    const spec = { failures: 3, windowMs: 15 * MINUTE };
    const limit = new AddressLimit(rl, "t", spec);
    for (let i = 0; i < 3; i++) {
      await limit.admit("192.0.2.1", "x");
      await limit.failed("192.0.2.1");
      clock.advance(MINUTE);
    }
    // failures at 0, 1 and 2 minutes; now 3 minutes
    expect(await retryAfter(() => limit.admit("192.0.2.1", "x"))).toBe(12 * 60);
    await limit.admit("192.0.2.2", "x");
    await limit.admit(null, "x");
    clock.set(T0 + 15 * MINUTE - 1);
    expect(await retryAfter(() => limit.admit("192.0.2.1", "x"))).toBe(1);
    clock.set(T0 + 15 * MINUTE);
    await limit.admit("192.0.2.1", "x");
    await limit.failed("192.0.2.1");
    expect(await retryAfter(() => limit.admit("192.0.2.1", "x"))).toBe(60);
  });
});

describe("SigninGuard Retry-After", () => {
  test("a lock answers its own remaining time, not the burst's", async () => {
    const { guard, clock } = await setup();
    for (let i = 0; i < SIGNIN_LOCK.failures; i++) {
      await guard.admit("ann", "192.0.2.1");
      await guard.failed("ann", null, "192.0.2.1");
    }
    expect(await retryAfter(() => guard.admit("ann", "192.0.2.1"))).toBe(900);
    clock.advance(SECOND);
    expect(await retryAfter(() => guard.admit("ann", "192.0.2.1"))).toBe(899);
    clock.advance(14 * MINUTE);
    expect(await retryAfter(() => guard.admit("ann", "192.0.2.1"))).toBe(59);
    clock.advance(59 * SECOND);
    await guard.admit("ann", "192.0.2.1");
  });

  test("the address budget and a lock: whichever ends later", async () => {
    const { guard, clock } = await setup();
    // 26 failures on distinct identifiers at 0 s ...
    for (let i = 0; i < 26; i++) await guard.failed(`id${i}`, null, "192.0.2.9");
    clock.advance(5 * MINUTE);
    // ... then 4 on one identifier at 5 minutes: it is locked until 20 min, the address until 15 min
    for (let i = 0; i < 4; i++) {
      await guard.admit("bob", "192.0.2.9");
      await guard.failed("bob", null, "192.0.2.9");
    }
    expect(await retryAfter(() => guard.admit("bob", "192.0.2.9"))).toBe(15 * 60);
    expect(await retryAfter(() => guard.admit("carol", "192.0.2.9"))).toBe(10 * 60);
    clock.advance(10 * MINUTE);
    await guard.admit("carol", "192.0.2.9");
    expect(await retryAfter(() => guard.admit("bob", "192.0.2.9"))).toBe(5 * 60);
  });

  test("a blocked attempt is not counted against the burst, so the wait it names is enough", async () => {
    const { guard, clock } = await setup();
    for (let i = 0; i < SIGNIN_LOCK.failures; i++) await guard.failed("dan", null, "192.0.2.1");
    for (let i = 0; i < 20; i++) await retryAfter(() => guard.admit("dan", "192.0.2.1"));
    clock.advance(15 * MINUTE);
    for (let i = 0; i < 5; i++) await guard.admit("dan", "192.0.2.1");
    expect(await retryAfter(() => guard.admit("dan", "192.0.2.1"))).toBe(60);
  });
});
