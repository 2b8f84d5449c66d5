import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { MINUTE } from "../../src/core/clock";
import { signup, startTestApp, startTestAppWithMail, type TestApp } from "../helpers/app";
import type { SmtpSink } from "../helpers/smtp-sink";
import { ON_BINARY, inProcess } from "../helpers/target";

let app: TestApp;
let sink: SmtpSink;
let stop: () => Promise<void>;
beforeAll(async () => {
  ({ app, sink, stop } = await startTestAppWithMail());
});
afterAll(() => stop());

const me = (token: string) => app.call("GET", "/platform/v1/introspect", { token });

describe("refresh and logout", () => {
  test("refresh rotates: the new pair works, the old refresh token stops working", async () => {
    const u = await signup(app);
    const r1 = await app.call("POST", "/platform/v1/auth/refresh", { body: { refresh_token: u.refresh } });
    expect(r1.status).toBe(200);
    expect(r1.body.refresh_token).not.toBe(u.refresh);
    expect((await me(r1.body.access_token)).status).toBe(200);
    const again = await app.call("POST", "/platform/v1/auth/refresh", { body: { refresh_token: u.refresh } });
    expect(again.status).toBe(400);
    expect(again.body.error.code).toBe("INVALID_TOKEN");
  });

  test("replaying a rotated refresh token revokes the whole session", async () => {
    const u = await signup(app);
    const r1 = await app.call("POST", "/platform/v1/auth/refresh", { body: { refresh_token: u.refresh } });
    await app.call("POST", "/platform/v1/auth/refresh", { body: { refresh_token: u.refresh } }); // replay
    expect((await me(r1.body.access_token)).status).toBe(401);
    // Every route resolves the caller through the session row: both access tokens of the session are dead.
    for (const token of [u.token, r1.body.access_token]) expect((await app.call("GET", "/platform/v1/workspaces", { token })).status).toBe(401);
    expect((await app.call("POST", "/platform/v1/auth/refresh", { body: { refresh_token: r1.body.refresh_token } })).status).toBe(400);
  });

  test("garbage and missing refresh tokens are 400, never 500", async () => {
    expect((await app.call("POST", "/platform/v1/auth/refresh", { body: { refresh_token: "abc" } })).status).toBe(400);
    expect((await app.call("POST", "/platform/v1/auth/refresh", { body: {} })).status).toBe(400);
    expect((await app.call("POST", "/platform/v1/auth/logout", { body: { refresh_token: "x.y.z" } })).status).toBe(400);
  });

  test("logout ends the session of the refresh token", async () => {
    const u = await signup(app);
    const r = await app.call("POST", "/platform/v1/auth/logout", { body: { refresh_token: u.refresh } });
    expect(r.status).toBe(204);
    expect((await app.call("POST", "/platform/v1/auth/refresh", { body: { refresh_token: u.refresh } })).status).toBe(400);
    expect((await me(u.token)).status).toBe(401);
  });

  test("logout-current revokes the session of the access token; that token is rejected afterwards", async () => {
    const u = await signup(app);
    const other = await app.call("POST", "/platform/v1/auth/signin", { body: { identifier: u.username, password: u.password } });
    expect((await app.call("POST", "/platform/v1/auth/logout-current", { token: u.token })).status).toBe(204);
    expect((await me(u.token)).status).toBe(401);
    expect((await app.call("POST", "/platform/v1/auth/logout-current", { token: u.token })).status).toBe(401);
    // Only that session: the other one lives on.
    expect((await me(other.body.access_token)).status).toBe(200);
  });

  test("logout-current clears the auth_token cookie the browser sent, and sets none for a bearer-only client", async () => {
    const u = await signup(app);
    const bearerOnly = await app.call("POST", "/platform/v1/auth/logout-current", { token: u.token });
    expect(bearerOnly.status).toBe(204);
    expect(bearerOnly.headers.get("set-cookie")).toBeNull();
    const v = await app.call("POST", "/platform/v1/auth/signin", { body: { identifier: u.username, password: u.password } });
    const browser = await app.call("POST", "/platform/v1/auth/logout-current", { headers: { cookie: `theme=dark; auth_token=${v.body.access_token}` } });
    expect(browser.status).toBe(204);
    expect(browser.headers.get("set-cookie")).toMatch(/^auth_token=; .*Max-Age=0/);
    expect((await me(v.body.access_token)).status).toBe(401);
  });

  test("a bearer token wins over the auth_token cookie", async () => {
    const u = await signup(app);
    const withBad = await app.call("GET", "/platform/v1/introspect", { token: "not-a-token", headers: { cookie: `auth_token=${u.token}` } });
    expect(withBad.status).toBe(401);
    const withGood = await app.call("GET", "/platform/v1/introspect", { token: u.token, headers: { cookie: "auth_token=garbage" } });
    expect(withGood.status).toBe(200);
  });

  test("logout-current without or with an invalid token is 401", async () => {
    expect((await app.call("POST", "/platform/v1/auth/logout-current")).status).toBe(401);
    const r = await app.call("POST", "/platform/v1/auth/logout-current", { token: "not-a-token" });
    expect(r.status).toBe(401);
    expect(r.body.error.code).toBe("UNAUTHORIZED");
  });

  inProcess("moves the injected clock past the access-token lifetime")("access tokens expire with their lifetime (injected clock)", async () => {
    const u = await signup(app);
    app.clock.advance(3600 * 1000 - 1000);
    expect((await me(u.token)).status).toBe(200);
    app.clock.advance(2000);
    expect((await me(u.token)).status).toBe(401);
  });
});

describe("password reset", () => {
  const requestReset = (email: string) => app.call("POST", "/platform/v1/auth/password/request-reset", { body: { email } });
  const codeFrom = (text: string) => /\b(\d{6})\b/.exec(text)![1];

  test("same status and body whether or not the email exists; the code arrives by real SMTP", async () => {
    const u = await signup(app);
    const known = await requestReset(u.email);
    const unknown = await requestReset(`nobody-${Date.now()}@example.com`);
    expect(known.status).toBe(204);
    expect(unknown.status).toBe(204);
    expect(known.body).toEqual(unknown.body);
    expect([...known.headers.keys()].filter((k) => k !== "x-request-id").sort()).toEqual([...unknown.headers.keys()].filter((k) => k !== "x-request-id").sort());
    // In-process the test runs the mail job; the binary's scheduler sends on its own (every 5 s).
    if (!ON_BINARY) {
      await app.platform.accounts.idle();
      await app.ctx.mailer.deliverPending();
    }
    const mail = await sink.waitFor((m) => m.to.includes(u.email), 20_000);
    expect(mail.subject).toContain("password reset");
    expect(sink.messages.filter((m) => m.to.some((t) => t.startsWith("nobody-")))).toHaveLength(0);
    const code = codeFrom(mail.text);

    const other = await app.call("POST", "/platform/v1/auth/signin", { body: { identifier: u.email, password: u.password } });
    const reset = await app.call("POST", "/platform/v1/auth/password/reset", { body: { token: code, new_password: "a brand new password" } });
    expect(reset.status).toBe(204);
    // every session revoked
    expect((await me(u.token)).status).toBe(401);
    expect((await me(other.body.access_token)).status).toBe(401);
    // old password out, new in; code single use
    expect((await app.call("POST", "/platform/v1/auth/signin", { body: { identifier: u.username, password: u.password } })).status).toBe(401);
    expect((await app.call("POST", "/platform/v1/auth/signin", { body: { identifier: u.username, password: "a brand new password" } })).status).toBe(200);
    const reuse = await app.call("POST", "/platform/v1/auth/password/reset", { body: { token: code, new_password: "another password" } });
    expect(reuse.status).toBe(400);
  });

  inProcess("runs the mail job by hand and reads the system-mail queue (app.ctx.mailer) to show the message is kept")("a mail outage still answers success", async () => {
    const down = await startTestApp({ SMTP_RELAY_URL: "smtp://127.0.0.1:1" });
    const u = await signup(down);
    const r = await down.call("POST", "/platform/v1/auth/password/request-reset", { body: { email: u.email } });
    expect(r.status).toBe(204);
    await down.platform.accounts.idle();
    const res = await down.ctx.mailer.deliverPending();
    expect(res.sent).toBe(0);
    expect((await down.ctx.mailer.list(10))[0].status).toBe("queued"); // kept for retry, not lost
    await down.stop();
  });

  inProcess("moves the injected clock past the 15-minute code lifetime")("codes expire after 15 minutes", async () => {
    const u = await signup(app);
    await requestReset(u.email);
    await app.platform.accounts.idle();
    await app.ctx.mailer.deliverPending();
    const code = codeFrom((await sink.waitFor((m) => m.to.includes(u.email))).text);
    app.clock.advance(15 * MINUTE);
    const r = await app.call("POST", "/platform/v1/auth/password/reset", { body: { token: code, new_password: "whatever-123" } });
    expect(r.status).toBe(400);
  });

  inProcess("moves the injected clock through the 15-minute attempt window")("wrong codes are attempt-limited: 5 per client per 15 minutes, then 429", async () => {
    const a = await startTestApp();
    const bad = (n: number) => a.call("POST", "/platform/v1/auth/password/reset", { body: { token: String(100000 + n), new_password: "whatever-123" } });
    for (let i = 0; i < 5; i++) expect((await bad(i)).status).toBe(400);
    const sixth = await bad(6);
    expect(sixth.status).toBe(429);
    a.clock.advance(15 * MINUTE);
    expect((await bad(7)).status).toBe(400);
    await a.stop();
  });

  test("validation: 6-digit token and 8+ char password", async () => {
    expect((await app.call("POST", "/platform/v1/auth/password/reset", { body: { token: "12345", new_password: "12345678" } })).status).toBe(400);
    expect((await app.call("POST", "/platform/v1/auth/password/reset", { body: { token: "123456", new_password: "1234567" } })).status).toBe(400);
    expect((await requestReset("not-an-email")).status).toBe(400);
  });
});
