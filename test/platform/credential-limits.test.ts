// source-only: every test walks rate-limit windows on the injected clock (15-minute locks, per-minute bursts, Retry-After value by value) and sends from distinct loopback addresses the binary (bound to 127.0.0.1) does not listen on
/**
 * Console credential attacks: password spraying from one client address (over real HTTP
 * from distinct loopback addresses, so the server sees them through requestIP), and the
 * Retry-After every sign-in 429 carries, checked value by value on the injected clock.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Server } from "bun";
import { MINUTE, SECOND } from "../../src/core/clock";
import { ADDRESS_LIMITS } from "../../src/core/signin-guard";
import { signup, startTestApp, type TestApp } from "../helpers/app";
import { postFrom } from "../helpers/from-address";

let app: TestApp;
let server: Server<unknown>;
let base: string;
beforeAll(async () => {
  app = await startTestApp();
  server = app.listen(0, "127.0.0.1");
  base = `http://127.0.0.1:${server.port}/platform/v1/auth`;
});
afterAll(async () => {
  await server.stop(true);
  await app.stop();
});

const signinFrom = (address: string, identifier: string, password: string) => postFrom(address, `${base}/signin`, { identifier, password });

describe("password spraying", () => {
  test(`${ADDRESS_LIMITS.signin.failures} failures from one address across identifiers, then 429 for every identifier, registered or not; other addresses unaffected`, async () => {
    const t0 = app.clock.nowMs();
    const victim = await signup(app);
    const registered = await Promise.all([0, 1, 2].map(() => signup(app)));
    // One guess per identifier, as a sprayer does: no identifier ever reaches its own limits.
    const ids = [...registered.map((u) => u.username), ...Array.from({ length: 27 }, (_, i) => `ghost-${i}@example.com`)];
    expect(ids.length).toBe(ADDRESS_LIMITS.signin.failures);
    for (const id of ids) {
      const r = await signinFrom("127.0.0.2", id, "Summer2026!");
      expect(r.status).toBe(401);
      expect(r.body.error.code).toBe("INVALID_CREDENTIALS");
      app.clock.advance(10 * SECOND);
    }
    // now t0 + 300 s; the oldest failure (t0) leaves the 15-minute window at t0 + 900 s
    const known = await signinFrom("127.0.0.2", victim.username, victim.password);
    const unknown = await signinFrom("127.0.0.2", "nobody-at-all", "whatever-1");
    expect(known.status).toBe(429);
    expect(known.body.error.code).toBe("TOO_MANY_ATTEMPTS");
    expect(known.headers["retry-after"]).toBe("600");
    // No enumeration oracle: the same answer for a registered and an unknown identifier.
    expect(unknown.status).toBe(known.status);
    expect(unknown.body).toEqual(known.body);
    const comparable = (h: Record<string, unknown>) => Object.fromEntries(Object.entries(h).filter(([k]) => k !== "x-request-id" && k !== "date"));
    expect(comparable(unknown.headers)).toEqual(comparable(known.headers));

    // Another client address signs in as usual.
    expect((await signinFrom("127.0.0.3", victim.username, victim.password)).status).toBe(200);

    // The window slides: one failure leaves at t0 + 900 s, and exactly one more attempt gets through.
    app.clock.set(t0 + 900 * SECOND - 1);
    expect((await signinFrom("127.0.0.2", victim.username, victim.password)).headers["retry-after"]).toBe("1");
    app.clock.set(t0 + 900 * SECOND);
    expect((await signinFrom("127.0.0.2", "ghost-again", "Winter2026!")).status).toBe(401);
    const next = await signinFrom("127.0.0.2", victim.username, victim.password);
    expect(next.status).toBe(429);
    expect(next.headers["retry-after"]).toBe("10");
    // Successes do not count, so the victim's own address kept its whole budget.
    app.clock.advance(ADDRESS_LIMITS.signin.windowMs);
    expect((await signinFrom("127.0.0.2", victim.username, victim.password)).status).toBe(200);
  });
});

describe("Retry-After tells the truth", () => {
  test("the identifier lock: 900 s after the 4th failure, then the real remainder on every answer", async () => {
    const u = await signup(app);
    const from = "127.0.0.4";
    for (let i = 0; i < 4; i++) expect((await signinFrom(from, u.username, "wrong password")).status).toBe(401);
    const seen: string[] = [];
    for (const step of [0, 1, 29, 30, 60, 600, 179]) {
      app.clock.advance(step * SECOND);
      const r = await signinFrom(from, u.username, u.password);
      expect(r.status).toBe(429);
      seen.push(String(r.headers["retry-after"]));
    }
    // Before the fix the answers after the first said 59, 30 ... (the burst's window).
    expect(seen).toEqual(["900", "899", "870", "840", "780", "180", "1"]);
    app.clock.advance(SECOND);
    expect((await signinFrom(from, u.username, u.password)).status).toBe(200);
  });

  test("the burst: the wait until the oldest of the 5 attempts is a minute old", async () => {
    const u = await signup(app);
    for (let i = 0; i < 5; i++) {
      expect((await signinFrom("127.0.0.5", u.email, u.password)).status).toBe(200);
      app.clock.advance(5 * SECOND);
    }
    const r = await signinFrom("127.0.0.5", u.email, u.password);
    expect(r.status).toBe(429);
    expect(r.headers["retry-after"]).toBe("35");
    app.clock.advance(35 * SECOND);
    expect((await signinFrom("127.0.0.5", u.email, u.password)).status).toBe(200);
  });

  test("console reset codes: 5 wrong per address in 15 minutes, Retry-After until the oldest leaves", async () => {
    const bad = (from: string, n: number) => postFrom(from, `${base}/password/reset`, { token: String(200000 + n), new_password: "whatever-123" });
    const t0 = app.clock.nowMs();
    for (let i = 0; i < ADDRESS_LIMITS.consoleReset.failures; i++) {
      expect((await bad("127.0.0.6", i)).status).toBe(400);
      app.clock.advance(MINUTE);
    }
    const r = await bad("127.0.0.6", 9);
    expect(r.status).toBe(429);
    expect(r.body.error.code).toBe("TOO_MANY_ATTEMPTS");
    expect(r.headers["retry-after"]).toBe(String(15 * 60 - 5 * 60));
    expect((await bad("127.0.0.7", 9)).status).toBe(400);
    app.clock.set(t0 + 15 * MINUTE);
    expect((await bad("127.0.0.6", 10)).status).toBe(400);
  });
});
