// source-only: every test walks rate-limit windows on the injected clock (30 failures per address, the identifier lock, Retry-After value by value)
/**
 * Credential attacks on an App: password spraying and code guessing spread over many
 * identifiers from one client address (over real HTTP from distinct loopback addresses, so
 * the server sees them through requestIP), and the Retry-After of every sign-in 429.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Server } from "bun";
import { SECOND } from "../../src/core/clock";
import { ADDRESS_LIMITS } from "../../src/core/signin-guard";
import { startTestApp, type TestApp } from "../helpers/app";
import { createAuthApp, signupEndUser, type TestAuthApp } from "../helpers/auth";
import { postFrom } from "../helpers/from-address";

let app: TestApp;
let server: Server<unknown>;
let origin: string;
beforeAll(async () => {
  app = await startTestApp();
  server = app.listen(0, "127.0.0.1");
  origin = `http://127.0.0.1:${server.port}`;
});
afterAll(async () => {
  await server.stop(true);
  await app.stop();
});

const post = (from: string, a: TestAuthApp, path: string, body: unknown) => postFrom(from, `${origin}${a.path(path)}`, body);
const signinFrom = (from: string, a: TestAuthApp, identifier: string, password: string) => post(from, a, "/auth/signin", { identifier, password });
const without = (h: Record<string, unknown>) => Object.fromEntries(Object.entries(h).filter(([k]) => k !== "x-request-id" && k !== "date"));

describe("password spraying", () => {
  test(`${ADDRESS_LIMITS.signin.failures} failed sign-ins from one address across identifiers, then 429 for all; per App, per address`, async () => {
    const a = await createAuthApp(app);
    const b = await createAuthApp(app);
    const victim = await signupEndUser(app, a);
    const inB = await signupEndUser(app, b);
    const others = await Promise.all([0, 1, 2, 3].map(() => signupEndUser(app, a)));
    const ids = [...others.map((u) => u.username), ...Array.from({ length: ADDRESS_LIMITS.signin.failures - others.length }, (_, i) => `ghost${i}`)];
    for (const id of ids) {
      const r = await signinFrom("127.0.0.2", a, id, "Summer2026!");
      expect(r.status).toBe(401);
      app.clock.advance(SECOND);
    }
    const known = await signinFrom("127.0.0.2", a, victim.username, victim.password);
    const unknown = await signinFrom("127.0.0.2", a, "no-such-user", "x-password");
    expect(known.status).toBe(429);
    expect(known.body.error.code).toBe("TOO_MANY_ATTEMPTS");
    expect(known.headers["retry-after"]).toBe(String(15 * 60 - 30));
    expect(unknown.status).toBe(429);
    expect(unknown.body).toEqual(known.body);
    expect(without(unknown.headers)).toEqual(without(known.headers));

    expect((await signinFrom("127.0.0.3", a, victim.username, victim.password)).status).toBe(200);
    // Each App counts on its own: its users are another customer's.
    expect((await signinFrom("127.0.0.2", b, inB.username, inB.password)).status).toBe(200);
  });

  test("Retry-After after the identifier lock is the lock's remainder on every answer", async () => {
    const a = await createAuthApp(app);
    const u = await signupEndUser(app, a);
    for (let i = 0; i < 4; i++) expect((await signinFrom("127.0.0.4", a, u.username, "wrong")).status).toBe(401);
    const seen: string[] = [];
    for (const step of [0, 1, 58, 1, 240, 599]) {
      app.clock.advance(step * SECOND);
      seen.push(String((await signinFrom("127.0.0.4", a, u.username, u.password)).headers["retry-after"]));
    }
    // Before the fix every answer after the first said 60 (the burst's window), or less.
    expect(seen).toEqual(["900", "899", "841", "840", "600", "1"]);
    app.clock.advance(SECOND);
    expect((await signinFrom("127.0.0.4", a, u.username, u.password)).status).toBe(200);
  });
});

describe("code guessing across targets", () => {
  test(`${ADDRESS_LIMITS.codes.failures} wrong verification or reset codes from one address, then 429 on every code route of the App`, async () => {
    const a = await createAuthApp(app);
    for (let i = 0; i < ADDRESS_LIMITS.codes.failures; i++) {
      // Different targets every time, most of them unknown: each stays far below its own 5.
      const r = i % 2
        ? await post("127.0.0.5", a, "/auth/verify-email", { email: `target${i}@example.com`, code: "123456" })
        : await post("127.0.0.5", a, "/auth/password/reset", { email: `target${i}@example.com`, code: "123456", new_password: "a new password" });
      expect(r.status).toBe(400);
      expect(r.body.error.code).toBe("INVALID_CODE");
    }
    app.clock.advance(60 * SECOND);
    for (const [path, body] of [
      ["/auth/verify-email", { email: "fresh@example.com", code: "654321" }],
      ["/auth/verify-phone", { phone: "+14155550123", code: "654321" }],
      ["/auth/password/reset", { email: "fresh@example.com", code: "654321", new_password: "a new password" }],
    ] as const) {
      const r = await post("127.0.0.5", a, path, body);
      expect(r.status).toBe(429);
      expect(r.body.error.code).toBe("TOO_MANY_ATTEMPTS");
      expect(r.headers["retry-after"]).toBe(String(15 * 60 - 60));
    }
    expect((await post("127.0.0.6", a, "/auth/verify-email", { email: "fresh@example.com", code: "654321" })).status).toBe(400);
    app.clock.advance((15 * 60 - 60) * SECOND);
    expect((await post("127.0.0.5", a, "/auth/verify-email", { email: "fresh@example.com", code: "654321" })).status).toBe(400);
  });
});
