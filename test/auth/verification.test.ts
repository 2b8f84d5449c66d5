/**
 * Contact verification codes (request-verification, send-verification-email, the sign-up
 * mail, verify-email / verify-phone) and end-user password reset. Mailed codes are read
 * from a real SMTP sink.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { MINUTE, SECOND } from "../../src/core/clock";
import { startTestApp, startTestAppWithMail, type TestApp } from "../helpers/app";
import { claimsOf, createAuthApp, signupEndUser, type TestAuthApp } from "../helpers/auth";
import type { SinkMessage, SmtpSink } from "../helpers/smtp-sink";
import { ON_BINARY, inProcess } from "../helpers/target";

let app: TestApp;
let sink: SmtpSink;
let stop: () => Promise<void>;
let a: TestAuthApp;
beforeAll(async () => {
  ({ app, sink, stop } = await startTestAppWithMail());
  a = await createAuthApp(app);
});
afterAll(() => stop());

let n = 0;
const uniq = (p = "v") => `${p}${++n}x${Date.now().toString(36)}`;
const codeIn = (m: SinkMessage) => /\b(\d{6})\b/.exec(m.text)![1];
const newUser = (target = a) => signupEndUser(app, target, { username: uniq("user"), email: `${uniq("user")}@example.com` });

/** Delivers queued mail and returns the newest message to `to` whose subject contains `about`. */
async function lastMail(to: string, about: string, count = 1) {
  // In-process the test runs the mail job; the binary's scheduler sends on its own (every 5 s).
  if (!ON_BINARY) {
    await app.auth.verification.idle();
    await app.ctx.mailer.deliverPending();
  }
  const match = (m: SinkMessage) => m.to.includes(to) && m.subject.includes(about);
  await sink.waitFor(() => sink.messages.filter(match).length >= count, 20_000);
  return sink.messages.filter(match).at(-1)!;
}

const requestCode = (body: Record<string, unknown>, target = a) => app.call("POST", target.path("/auth/request-verification"), { token: target.key, body });
const verifyEmail = (email: string, code: string, target = a) => app.call("POST", target.path("/auth/verify-email"), { body: { email, code } });
const signin = (identifier: string, password: string, target = a) => app.call("POST", target.path("/auth/signin"), { body: { identifier, password } });
const wrong = (code: string) => String((Number(code) + 1) % 1_000_000).padStart(6, "0");

describe("verification codes", () => {
  inProcess("reads the user.email_verified event from the outbox in the store (app.ctx.db)")("sign-up mails a code; verifying it makes the email a sign-in identifier", async () => {
    const u = await newUser();
    const mail = await lastMail(u.email, "verification");
    expect(mail.headerFrom).toContain("no-reply");
    expect((await signin(u.email, u.password)).status).toBe(401);
    const r = await verifyEmail(u.email, codeIn(mail));
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ verified: true });
    expect((await signin(u.email, u.password)).status).toBe(200);
    // Single use.
    expect((await verifyEmail(u.email, codeIn(mail))).status).toBe(400);
    const events = (await app.ctx.db.all<{ data: string }>("SELECT data FROM core_events WHERE scope = ? AND type = 'user.email_verified'", `webhook:auth:${a.id}`)).map((e) =>
      JSON.parse(e.data),
    );
    expect(events).toContainEqual(expect.objectContaining({ id: claimsOf(u.access).sub, email: u.email, email_verified: true }));
  });

  test("request-verification takes exactly one of email or phone", async () => {
    const u = await newUser();
    for (const body of [{}, { email: u.email, phone: "+14155550123" }, { email: "", phone: "" }]) {
      const r = await requestCode(body);
      expect(r.status).toBe(400);
      expect(r.body.error.details.map((d: any) => d.field).sort()).toEqual(["email", "phone"]);
    }
    expect((await requestCode({ email: "not-an-email" })).status).toBe(400);
    expect((await requestCode({ email: `${uniq("nobody")}@example.com` })).status).toBe(404);
  });

  inProcess("compares expires_at with the frozen injected clock and reads the stored code hash (app.ctx.db)")("the returned code works; a newer code supersedes the older one and the sign-up mail", async () => {
    const u = await newUser();
    const mailed = codeIn(await lastMail(u.email, "verification"));
    const first = await requestCode({ email: u.email });
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({ channel: "email", user_id: claimsOf(u.access).sub, target_masked: `u***@example.com` });
    expect(first.body.code).toMatch(/^\d{6}$/);
    expect(first.body.expires_at).toBe(new Date(app.clock.nowMs() + 15 * MINUTE).toISOString());
    const second = await requestCode({ email: u.email, user_id: claimsOf(u.access).sub });
    expect(second.status).toBe(201);
    if (mailed !== second.body.code) expect((await verifyEmail(u.email, mailed)).status).toBe(400);
    if (first.body.code !== second.body.code) expect((await verifyEmail(u.email, first.body.code)).status).toBe(400);
    expect((await verifyEmail(u.email, second.body.code)).status).toBe(200);
    // The code is stored as an HMAC only.
    const rows = await app.ctx.db.all<{ code_hash: string }>("SELECT code_hash FROM auth_codes WHERE id = ?", second.body.id);
    expect(rows[0].code_hash).toMatch(/^[0-9a-f]{64}$/);
  });

  test("4 wrong codes still leave the code usable; the 5th burns it (429, even for the right code) until a new one", async () => {
    const u1 = await newUser();
    const c1 = (await requestCode({ email: u1.email })).body.code;
    for (let i = 0; i < 4; i++) {
      const r = await verifyEmail(u1.email, wrong(c1));
      expect(r.status).toBe(400);
      expect(r.body.error.code).toBe("INVALID_CODE");
    }
    expect((await verifyEmail(u1.email, c1)).status).toBe(200);

    const u2 = await newUser();
    const c2 = (await requestCode({ email: u2.email })).body.code;
    for (let i = 0; i < 4; i++) expect((await verifyEmail(u2.email, wrong(c2))).status).toBe(400);
    const fifth = await verifyEmail(u2.email, wrong(c2));
    expect(fifth.status).toBe(429);
    expect(fifth.body.error.code).toBe("TOO_MANY_ATTEMPTS");
    expect((await verifyEmail(u2.email, c2)).status).toBe(429);
    const fresh = (await requestCode({ email: u2.email })).body.code;
    expect((await verifyEmail(u2.email, fresh)).status).toBe(200);
  });

  inProcess("moves the injected clock to the edge of the 15-minute lifetime")("codes live 15 minutes", async () => {
    const u1 = await newUser();
    const u2 = await newUser();
    const c1 = (await requestCode({ email: u1.email })).body.code;
    const c2 = (await requestCode({ email: u2.email })).body.code;
    app.clock.advance(15 * MINUTE - SECOND);
    expect((await verifyEmail(u1.email, c1)).status).toBe(200);
    app.clock.advance(SECOND);
    const r = await verifyEmail(u2.email, c2);
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe("INVALID_CODE");
  });

  test("send-verification-email mails the code (by email or user_id) and does not return it", async () => {
    const u = await newUser();
    await lastMail(u.email, "verification");
    const r = await app.call("POST", a.path("/auth/send-verification-email"), { token: a.key, body: { user_id: claimsOf(u.access).sub } });
    expect(r.status).toBe(202);
    expect(r.body.code).toBeUndefined();
    expect(r.body.target_masked).toBe("u***@example.com");
    const code = codeIn(await lastMail(u.email, "verification", 2));
    expect((await verifyEmail(u.email, code)).status).toBe(200);
    expect((await app.call("POST", a.path("/auth/send-verification-email"), { token: a.key, body: {} })).status).toBe(400);
    expect((await app.call("POST", a.path("/auth/send-verification-email"), { token: a.key, body: { email: u.email, user_id: "00000000-0000-7000-8000-000000000000" } })).status).toBe(404);
  });

  inProcess("reads the stored phone contact (app.ctx.db) and compares verified_at with the frozen injected clock")("phone codes: returned to the caller, verify-phone attaches the number as a verified phone", async () => {
    const u = await newUser();
    const userId = claimsOf(u.access).sub;
    expect((await requestCode({ phone: "+14155550100" })).status).toBe(400); // a new number needs user_id
    expect((await requestCode({ phone: "12345", user_id: userId })).status).toBe(400);
    const r = await requestCode({ phone: "+1 (415) 555-0100", user_id: userId });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ channel: "phone", user_id: userId, target_masked: "+*******0100" });
    const v = await app.call("POST", a.path("/auth/verify-phone"), { body: { phone: "+14155550100", code: r.body.code } });
    expect(v.status).toBe(200);
    const phones = await app.ctx.db.all<{ value: string; verified_at: string | null }>("SELECT value, verified_at FROM auth_contacts WHERE user_id = ? AND kind = 'phone'", userId);
    expect(phones).toEqual([{ value: "+14155550100", verified_at: app.clock.iso() }]);
    // Known now: no user_id needed; another user cannot claim it.
    expect((await requestCode({ phone: "+14155550100" })).status).toBe(201);
    const other = await newUser();
    expect((await requestCode({ phone: "+14155550100", user_id: claimsOf(other.access).sub })).status).toBe(409);
  });

  test("minting needs auth.verification.create: no credential 401, end-user token 401", async () => {
    const u = await newUser();
    expect((await app.call("POST", a.path("/auth/request-verification"), { body: { email: u.email } })).status).toBe(401);
    expect((await app.call("POST", a.path("/auth/request-verification"), { token: u.access, body: { email: u.email } })).status).toBe(401);
    expect((await app.call("POST", a.path("/auth/send-verification-email"), { body: { email: u.email } })).status).toBe(401);
  });

  inProcess("reads the system-mail queue in the store (app.ctx.mailer) to show nothing was queued")("no sign-up mail when the App turns it off, or when mail is not set up", async () => {
    const off = await createAuthApp(app, { send_verification_email: false });
    const u = await newUser(off);
    await app.ctx.mailer.deliverPending();
    expect((await app.ctx.mailer.list(1000)).filter((m) => m.to === u.email)).toHaveLength(0);

    const bare = await startTestApp();
    try {
      const b = await createAuthApp(bare);
      await signupEndUser(bare, b, { username: "nomail", email: "nomail@example.com" });
      expect(await bare.ctx.mailer.list(10)).toHaveLength(0);
      // With the App's own sender, mail counts as set up (dev mode logs it).
      const c = await createAuthApp(bare, { mail_from: "Acme <no-reply@acme.example>" });
      await signupEndUser(bare, c, { username: "withmail", email: "withmail@example.com" });
      expect((await bare.ctx.mailer.list(10)).map((m) => [m.to, m.from])).toEqual([["withmail@example.com", "Acme <no-reply@acme.example>"]]);
    } finally {
      await bare.stop();
    }
  });
});

describe("password reset", () => {
  const requestReset = (email: string, target = a) => app.call("POST", target.path("/auth/password/request-reset"), { body: { email } });
  const reset = (email: string, code: string, new_password = "a brand new password", target = a) =>
    app.call("POST", target.path("/auth/password/reset"), { body: { email, code, new_password } });

  test("same status, body and headers whether or not the email exists; only the known one gets mail", async () => {
    const u = await newUser();
    const nobody = `${uniq("nobody")}@example.com`;
    const known = await requestReset(u.email);
    const unknown = await requestReset(nobody);
    expect(known.status).toBe(204);
    expect(unknown.status).toBe(204);
    expect(known.body).toEqual(unknown.body);
    const names = (h: Headers) => [...h.keys()].filter((k) => k !== "x-request-id").sort();
    expect(names(known.headers)).toEqual(names(unknown.headers));
    const mail = await lastMail(u.email, "password reset");
    expect(codeIn(mail)).toMatch(/^\d{6}$/);
    expect(sink.messages.filter((m) => m.to.includes(nobody))).toHaveLength(0);
    expect((await requestReset("not-an-email")).status).toBe(400);
  });

  test("reset sets the password, revokes every session, verifies the email and is single use", async () => {
    const u = await newUser();
    const other = await signin(u.username, u.password);
    await requestReset(u.email);
    const code = codeIn(await lastMail(u.email, "password reset"));
    expect((await reset(u.email, code, "short")).status).toBe(400); // App policy, checked before the code
    const r = await reset(u.email, code);
    expect(r.status).toBe(204);
    for (const refresh of [u.refresh, other.body.refresh_token]) {
      expect((await app.call("POST", a.path("/auth/refresh"), { body: { refresh_token: refresh } })).status).toBe(400);
    }
    expect((await signin(u.username, u.password)).status).toBe(401);
    expect((await signin(u.username, "a brand new password")).status).toBe(200);
    // The code proved the mailbox: the email now signs in too.
    expect((await signin(u.email, "a brand new password")).status).toBe(200);
    const again = await reset(u.email, code, "yet another password");
    expect(again.status).toBe(400);
    expect(again.body.error.code).toBe("INVALID_CODE");
  });

  test("an unknown email answers like a wrong code; the 5th wrong code burns the code", async () => {
    const unknown = await reset(`${uniq("nobody")}@example.com`, "123456");
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.code).toBe("INVALID_CODE");

    const u = await newUser();
    await requestReset(u.email);
    const code = codeIn(await lastMail(u.email, "password reset"));
    for (let i = 0; i < 4; i++) expect((await reset(u.email, wrong(code))).status).toBe(400);
    expect((await reset(u.email, wrong(code))).status).toBe(429);
    expect((await reset(u.email, code)).status).toBe(429);
    expect((await signin(u.username, u.password)).status).toBe(200);
    // A new request mints a new code with a fresh allowance.
    await requestReset(u.email);
    const fresh = codeIn(await lastMail(u.email, "password reset", 2));
    expect((await reset(u.email, fresh)).status).toBe(204);
  });

  inProcess("moves the injected clock past the 15-minute lifetime")("reset codes expire after 15 minutes", async () => {
    const u = await newUser();
    await requestReset(u.email);
    const code = codeIn(await lastMail(u.email, "password reset"));
    app.clock.advance(15 * MINUTE);
    expect((await reset(u.email, code)).status).toBe(400);
  });

  inProcess("counts the queued system mail in the store (app.ctx.mailer) and moves the injected clock an hour")("at most 5 reset mails per address and hour; the 6th request is dropped silently", async () => {
    const u = await newUser();
    for (let i = 0; i < 6; i++) expect((await requestReset(u.email)).status).toBe(204);
    await app.auth.verification.idle();
    const queued = async () => (await app.ctx.mailer.list(1000)).filter((m) => m.to === u.email && m.subject.includes("password reset")).length;
    expect(await queued()).toBe(5);
    app.clock.advance(60 * MINUTE);
    await requestReset(u.email);
    await app.auth.verification.idle();
    expect(await queued()).toBe(6);
  });
});
