// source-only: TOTP steps, challenge and enrolment windows, send spacing and 15-minute locks are walked on the injected clock (totpUser moves it past the confirming step; nextMail runs the mail job by hand; audit rows read from the store); the MFA routes run on the binary in auth/every-route
/**
 * MFA over real HTTP: TOTP codes from the independent `otpauth` library at the injected
 * clock's time, emailed codes read from a real SMTP sink.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import * as OTPAuth from "otpauth";
import { MINUTE, SECOND } from "../../src/core/clock";
import { ADDRESS_LIMITS } from "../../src/core/signin-guard";
import { MFA_LIMITS } from "../../src/services/auth/identity/mfa";
import { startTestAppWithMail, type TestApp } from "../helpers/app";
import { claimsOf, createAuthApp, signupEndUser, type TestAuthApp, type TestEndUser } from "../helpers/auth";
import type { SmtpSink } from "../helpers/smtp-sink";

let app: TestApp;
let sink: SmtpSink;
let stop: () => Promise<void>;
beforeAll(async () => {
  ({ app, sink, stop } = await startTestAppWithMail());
});
afterAll(() => stop());

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

// --- helpers -----------------------------------------------------------------------------

const totpAt = (secret: string, ms: number) => new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(secret), digits: 6, period: 30, algorithm: "SHA1" }).generate({ timestamp: ms });
const totpNow = (secret: string) => totpAt(secret, app.clock.nowMs());

/** A 6-digit code that matches none of the steps the server accepts right now. */
function wrongCode(secret: string) {
  const near = new Set([-30, 0, 30].map((d) => totpAt(secret, app.clock.nowMs() + d * SECOND)));
  for (let n = 0; ; n++) {
    const c = String((123456 + n * 7919) % 1_000_000).padStart(6, "0");
    if (!near.has(c)) return c;
  }
}

/** The next mail to `to` whose subject contains `subject`, after delivering the queue. */
const seen = new Set<string>();
async function nextMail(to: string, subject: string) {
  await app.ctx.mailer.deliverPending();
  const m = await sink.waitFor((x) => x.to.includes(to) && x.subject.includes(subject) && !seen.has(x.raw));
  seen.add(m.raw);
  return m;
}
const codeIn = (text: string) => text.match(/\b(\d{6})\b/)![1];

async function signin(a: TestAuthApp, u: TestEndUser) {
  const r = await app.call("POST", a.path("/auth/signin"), { body: { identifier: u.username, password: u.password } });
  expect(r.status).toBe(200);
  return r.body;
}

/** Signs in and expects the MFA challenge; returns its token. */
async function challenge(a: TestAuthApp, u: TestEndUser) {
  const body = await signin(a, u);
  expect(body.mfa_required).toBe(true);
  return body.mfa_token as string;
}

const verify = (a: TestAuthApp, mfa_token: string, code: string) => app.call("POST", a.path("/auth/mfa/verify"), { body: { mfa_token, code } });
const recover = (a: TestAuthApp, mfa_token: string, recovery_code: string) => app.call("POST", a.path("/auth/mfa/recover"), { body: { mfa_token, recovery_code } });
const stepUp = (a: TestAuthApp, token: string, code: string) => app.call("POST", a.path("/me/mfa/step-up"), { token, body: { code } });

/** A user with a confirmed TOTP factor; the clock is moved past the confirming step. */
async function totpUser(a: TestAuthApp) {
  const u = await signupEndUser(app, a);
  const e = await app.call("POST", a.path("/me/mfa/factors"), { token: u.access, body: { type: "totp", name: "Phone" } });
  expect(e.status).toBe(201);
  const c = await app.call("POST", a.path(`/me/mfa/factors/${e.body.id}/confirm`), { token: u.access, body: { code: totpNow(e.body.secret) } });
  expect(c.status).toBe(200);
  app.clock.advance(30 * SECOND);
  return { u, factorId: e.body.id as string, secret: e.body.secret as string, recovery: c.body.recovery_codes as string[] };
}

const auditActions = async (a: TestAuthApp) =>
  (await app.ctx.db.all<{ action: string; outcome: string }>("SELECT action, outcome FROM auth_audit WHERE app_id = ? ORDER BY created_at, id", a.id)).map((r) => `${r.action}:${r.outcome}`);

// --- tests -------------------------------------------------------------------------------

describe("TOTP factor", () => {
  test("enrol, confirm, sign-in challenge, verify gives tokens with amr [pwd,totp] and mfa_at", async () => {
    const a = await createAuthApp(app);
    const u = await signupEndUser(app, a);
    const e = await app.call("POST", a.path("/me/mfa/factors"), { token: u.access, body: { type: "totp" } });
    expect(e.status).toBe(201);
    expect(e.body).toMatchObject({ type: "totp", status: "pending", confirmed_at: null, disabled_at: null });
    expect(e.body.id).toMatch(UUID);
    expect(e.body.secret).toMatch(/^[A-Z2-7]{32}$/);
    const parsed = OTPAuth.URI.parse(e.body.otpauth_uri) as OTPAuth.TOTP;
    expect(parsed).toBeInstanceOf(OTPAuth.TOTP);
    expect(parsed.secret.base32).toBe(e.body.secret);
    expect(parsed.period).toBe(30);
    expect(parsed.issuer).toBe(`App ${a.slug}`);

    // Pending factors do not gate sign-in.
    expect((await signin(a, u)).access_token).toBeString();

    const bad = await app.call("POST", a.path(`/me/mfa/factors/${e.body.id}/confirm`), { token: u.access, body: { code: wrongCode(e.body.secret) } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe("INVALID_CODE");
    const ok = await app.call("POST", a.path(`/me/mfa/factors/${e.body.id}/confirm`), { token: u.access, body: { code: totpNow(e.body.secret) } });
    expect(ok.status).toBe(200);
    expect(ok.body.status).toBe("active");
    expect(ok.body.recovery_codes).toHaveLength(10);
    for (const c of ok.body.recovery_codes) expect(c).toMatch(/^[0-9a-f]{16}$/);
    expect(new Set(ok.body.recovery_codes).size).toBe(10);
    const again = await app.call("POST", a.path(`/me/mfa/factors/${e.body.id}/confirm`), { token: u.access, body: { code: totpNow(e.body.secret) } });
    expect(again.status).toBe(409);

    const list = await app.call("GET", a.path("/me/mfa/factors"), { token: u.access });
    expect(list.status).toBe(200);
    expect(list.body.data).toEqual([expect.objectContaining({ id: e.body.id, type: "totp", status: "active", name: "Authenticator app" })]);
    expect(list.body.data[0].secret).toBeUndefined();
    expect(list.body.pagination).toEqual({ next_cursor: null, has_more: false });

    app.clock.advance(30 * SECOND);
    const ch = await signin(a, u);
    expect(ch).toMatchObject({ mfa_required: true, factors: [{ id: e.body.id, type: "totp" }] });
    expect(ch.mfa_token).toMatch(UUID);
    expect(ch.access_token).toBeUndefined();
    expect(Date.parse(ch.expires_at)).toBe(app.clock.nowMs() + 10 * MINUTE);

    const v = await verify(a, ch.mfa_token, totpNow(e.body.secret));
    expect(v.status).toBe(200);
    const claims = claimsOf(v.body.access_token);
    expect(claims.amr).toEqual(["pwd", "totp"]);
    expect(claims.mfa_at).toBe(Math.floor(app.clock.nowMs() / 1000));
    expect(claims.sub).toBe(claimsOf(u.access).sub);

    // Single use.
    app.clock.advance(30 * SECOND);
    const reuse = await verify(a, ch.mfa_token, totpNow(e.body.secret));
    expect(reuse.status).toBe(400);
    expect(reuse.body.error.code).toBe("INVALID_TOKEN");
    expect((await verify(a, "not-a-token", "123456")).status).toBe(400);
    expect((await verify(a, crypto.randomUUID(), "123456")).body.error.code).toBe("INVALID_TOKEN");

    const actions = await auditActions(a);
    for (const x of ["mfa.factor.enrol:success", "mfa.factor.confirm:failure", "mfa.factor.confirm:success", "mfa.recovery_codes.generate:success", "user.signin.mfa_required:success", "mfa.verify:success"]) expect(actions).toContain(x);
  });

  test("a code's time step is never accepted twice; neighbouring steps are", async () => {
    const a = await createAuthApp(app);
    const u = await signupEndUser(app, a);
    const e = await app.call("POST", a.path("/me/mfa/factors"), { token: u.access, body: { type: "totp" } });
    const secret = e.body.secret as string;
    const code = totpNow(secret);
    expect((await app.call("POST", a.path(`/me/mfa/factors/${e.body.id}/confirm`), { token: u.access, body: { code } })).status).toBe(200);
    // Same instant, same step: the code that confirmed the factor is spent.
    const t1 = await challenge(a, u);
    const replay = await verify(a, t1, code);
    expect(replay.status).toBe(401);
    expect(replay.body.error.code).toBe("INVALID_CODE");
    // The next step's code (clock skew of +1 step) works...
    expect((await verify(a, t1, totpAt(secret, app.clock.nowMs() + 30 * SECOND))).status).toBe(200);
    // ...and afterwards the current step (now older than the last accepted one) does not.
    const t2 = await challenge(a, u);
    expect((await verify(a, t2, totpNow(secret))).status).toBe(401);
    app.clock.advance(60 * SECOND); // the step after the accepted one
    expect((await verify(a, t2, totpNow(secret))).status).toBe(200);
    // The previous step is accepted (clock skew of -1 step), two steps away is not.
    app.clock.advance(5 * MINUTE);
    const t3 = await challenge(a, u);
    expect((await verify(a, t3, totpAt(secret, app.clock.nowMs() - 60 * SECOND))).status).toBe(401);
    expect((await verify(a, t3, totpAt(secret, app.clock.nowMs() + 60 * SECOND))).status).toBe(401);
    expect((await verify(a, t3, totpAt(secret, app.clock.nowMs() - 30 * SECOND))).status).toBe(200);
  });

  test("4 wrong codes still allow the right one; the 5th wrong code locks the challenge", async () => {
    const a = await createAuthApp(app);
    const { u, secret } = await totpUser(a);
    const t1 = await challenge(a, u);
    for (let i = 0; i < 4; i++) {
      const r = await verify(a, t1, wrongCode(secret));
      expect(r.status).toBe(401);
      expect(r.body.error.code).toBe("INVALID_CODE");
    }
    expect((await verify(a, t1, totpNow(secret))).status).toBe(200);

    app.clock.advance(30 * SECOND);
    const t2 = await challenge(a, u);
    // Wrong recovery codes count toward the same lock.
    for (let i = 0; i < 2; i++) expect((await recover(a, t2, "0000-0000-0000-0000")).status).toBe(401);
    for (let i = 0; i < 2; i++) expect((await verify(a, t2, wrongCode(secret))).status).toBe(401);
    const fifth = await verify(a, t2, wrongCode(secret));
    expect(fifth.status).toBe(429);
    expect(fifth.body.error.code).toBe("MFA_LOCKED");
    app.clock.advance(30 * SECOND); // a step whose code has not been used: it would be right
    const right = await verify(a, t2, totpNow(secret));
    expect(right.status).toBe(429);
    expect(right.body.error.code).toBe("MFA_LOCKED");
    expect((await app.call("POST", a.path("/auth/mfa/recover"), { body: { mfa_token: t2, recovery_code: "0123456789abcdef" } })).status).toBe(429);
    expect(await auditActions(a)).toContain("mfa.challenge.lock:failure");
    // That 5th wrong code in a row also locked the user for 15 minutes (next describe).
    app.clock.advance(15 * MINUTE);
    // A malformed code is bad input, not a guess.
    const t3 = await challenge(a, u);
    expect((await verify(a, t3, "12345")).status).toBe(400);
    app.clock.advance(30 * SECOND);
    expect((await verify(a, t3, totpNow(secret))).status).toBe(200);
  });

  test("the challenge lives 10 minutes", async () => {
    const a = await createAuthApp(app);
    const { u, secret } = await totpUser(a);
    const t1 = await challenge(a, u);
    app.clock.advance(10 * MINUTE - SECOND);
    expect((await verify(a, t1, totpNow(secret))).status).toBe(200);
    const t2 = await challenge(a, u);
    app.clock.advance(10 * MINUTE);
    const late = await verify(a, t2, totpNow(secret));
    expect(late.status).toBe(400);
    expect(late.body.error.code).toBe("INVALID_TOKEN");
  });

  test("the tenant chosen at sign-in is carried through the challenge", async () => {
    const a = await createAuthApp(app);
    const { u, secret } = await totpUser(a);
    // Fixture rows straight into the tables: the tenant routes are another module's.
    const tenantId = crypto.randomUUID();
    const now = app.clock.iso();
    const userId = claimsOf(u.access).sub;
    await app.ctx.db.run("INSERT INTO auth_tenants (id, app_id, display_id, slug, display_name, created_at, updated_at) VALUES (?, ?, ?, 'acme', 'Acme', ?, ?)", tenantId, a.id, `tnt_${tenantId.slice(0, 12).replace("-", "0")}`, now, now);
    await app.ctx.db.run("INSERT INTO auth_tenant_members (id, tenant_id, user_id, joined_at) VALUES (?, ?, ?, ?)", crypto.randomUUID(), tenantId, userId, now);
    const r = await app.call("POST", a.path("/auth/signin"), { body: { identifier: u.username, password: u.password, tenant_id: tenantId } });
    expect(r.body.mfa_required).toBe(true);
    const v = await verify(a, r.body.mfa_token, totpNow(secret));
    expect(v.status).toBe(200);
    expect(claimsOf(v.body.access_token).tid).toBe(tenantId);
  });
});

describe("wrong codes per user, across challenges", () => {
  test("a new challenge does not reset the count: the 5th wrong code locks MFA sign-in for 15 minutes, right codes included", async () => {
    const a = await createAuthApp(app);
    const { u, secret, recovery, factorId } = await totpUser(a);
    const t1 = await challenge(a, u);
    for (let i = 0; i < 4; i++) expect((await verify(a, t1, wrongCode(secret))).status).toBe(401);
    // Signing in again gives a fresh challenge but no fresh guesses.
    app.clock.advance(30 * SECOND);
    const t2 = await challenge(a, u);
    const fifth = await verify(a, t2, wrongCode(secret));
    expect(fifth.status).toBe(429);
    expect(fifth.body.error.code).toBe("MFA_LOCKED");
    expect(fifth.headers.get("retry-after")).toBe(String(15 * 60));
    expect(await auditActions(a)).toContain("mfa.user.lock:failure");

    app.clock.advance(30 * SECOND);
    const t3 = await challenge(a, u);
    const right = await verify(a, t3, totpNow(secret));
    expect(right.status).toBe(429);
    expect(right.body.error.code).toBe("MFA_LOCKED");
    expect(right.headers.get("retry-after")).toBe(String(15 * 60 - 30));
    expect((await recover(a, t3, recovery[0])).status).toBe(429);
    expect((await app.call("POST", a.path("/auth/mfa/send-code"), { body: { mfa_token: t3, factor_id: factorId } })).status).toBe(429);

    // The lock ends 15 minutes after it was set; the recovery code was not spent meanwhile.
    app.clock.advance(15 * MINUTE - 30 * SECOND - SECOND);
    const t4 = await challenge(a, u);
    expect((await recover(a, t4, recovery[0])).status).toBe(429);
    app.clock.advance(SECOND);
    expect((await recover(a, t4, recovery[0])).status).toBe(200);
  });

  test("a success ends the streak; so does a day without wrong codes", async () => {
    const a = await createAuthApp(app);
    const { u, secret } = await totpUser(a);
    const wrongs = async (n: number) => {
      app.clock.advance(30 * SECOND);
      const t = await challenge(a, u);
      const statuses: number[] = [];
      for (let i = 0; i < n; i++) statuses.push((await verify(a, t, wrongCode(secret))).status);
      return { t, statuses };
    };
    const first = await wrongs(4);
    expect(first.statuses).toEqual([401, 401, 401, 401]);
    expect((await verify(a, first.t, totpNow(secret))).status).toBe(200);
    expect((await wrongs(4)).statuses).toEqual([401, 401, 401, 401]);
    // 4 wrong codes, then a day passes: the streak is over and 4 more do not lock.
    app.clock.advance(24 * 60 * MINUTE - 30 * SECOND);
    expect((await wrongs(4)).statuses).toEqual([401, 401, 401, 401]);
    expect((await wrongs(1)).statuses).toEqual([429]);
  });

  test("guesses sent in parallel over several challenges still stop at 5", async () => {
    const a = await createAuthApp(app);
    const { u, secret } = await totpUser(a);
    const t1 = await challenge(a, u);
    const t2 = await challenge(a, u);
    // 4 per challenge: below the per-challenge lock, so only the per-user count can stop them.
    const answers = await Promise.all([t1, t2].flatMap((t) => Array.from({ length: 4 }, () => verify(a, t, wrongCode(secret)))));
    const statuses = answers.map((r) => r.status).sort();
    expect(statuses).toEqual([401, 401, 401, 401, 429, 429, 429, 429]);
  });

  test("Apps are separate: a lock in one App leaves the same person's account in another alone", async () => {
    const a = await createAuthApp(app);
    const b = await createAuthApp(app);
    const ua = await totpUser(a);
    const ub = await totpUser(b);
    const ta = await challenge(a, ua.u);
    for (let i = 0; i < 4; i++) await verify(a, ta, wrongCode(ua.secret));
    expect((await verify(a, ta, wrongCode(ua.secret))).status).toBe(429);
    expect((await verify(b, await challenge(b, ub.u), totpNow(ub.secret))).status).toBe(200);
  });
});

describe("email factor", () => {
  test("enrol by mailed code, then send limits: 30 s spacing, 3 sends, superseded codes refused", async () => {
    const a = await createAuthApp(app, { mail_from: "Acme <no-reply@acme.test>" });
    const u = await signupEndUser(app, a);
    const e = await app.call("POST", a.path("/me/mfa/factors"), { token: u.access, body: { type: "email" } });
    expect(e.status).toBe(201);
    expect(e.body).toMatchObject({ type: "email", status: "pending", email: u.email });
    expect(e.body.secret).toBeUndefined();
    const confirmMail = await nextMail(u.email, "confirm");
    expect(confirmMail.headerFrom).toContain("no-reply@acme.test");
    const c = await app.call("POST", a.path(`/me/mfa/factors/${e.body.id}/confirm`), { token: u.access, body: { code: codeIn(confirmMail.text) } });
    expect(c.status).toBe(200);
    expect(c.body.recovery_codes).toHaveLength(10);

    const ch = await signin(a, u);
    expect(ch.factors).toEqual([{ id: e.body.id, type: "email", name: "Email", email_masked: `u***${u.email.split("@")[0].slice(-1)}@example.com` }]);
    const send = () => app.call("POST", a.path("/auth/mfa/send-code"), { body: { mfa_token: ch.mfa_token, factor_id: e.body.id } });

    const s1 = await send();
    expect(s1.status).toBe(200);
    expect(s1.body.email_masked).toBe(ch.factors[0].email_masked);
    expect(Date.parse(s1.body.code_expires_at)).toBe(app.clock.nowMs() + 10 * MINUTE);
    const m1 = await nextMail(u.email, "sign-in code");
    expect(m1.headerFrom).toContain("no-reply@acme.test");
    const code1 = codeIn(m1.text);

    const soon = await send();
    expect(soon.status).toBe(429);
    expect(soon.body.error.code).toBe("MFA_SEND_TOO_SOON");
    expect(soon.headers.get("retry-after")).toBe("30");
    app.clock.advance(29 * SECOND);
    expect((await send()).status).toBe(429);
    app.clock.advance(SECOND);
    expect((await send()).status).toBe(200);
    const code2 = codeIn((await nextMail(u.email, "sign-in code")).text);

    app.clock.advance(30 * SECOND);
    expect((await send()).status).toBe(200); // the 3rd send
    const code3 = codeIn((await nextMail(u.email, "sign-in code")).text);
    app.clock.advance(30 * SECOND);
    const fourth = await send();
    expect(fourth.status).toBe(429);
    expect(fourth.body.error.code).toBe("MFA_SEND_LIMIT");

    // Superseded codes are refused (unless a later code happens to be the same digits).
    if (code1 !== code3) expect((await verify(a, ch.mfa_token, code1)).status).toBe(401);
    if (code2 !== code3) expect((await verify(a, ch.mfa_token, code2)).status).toBe(401);
    const v = await verify(a, ch.mfa_token, code3);
    expect(v.status).toBe(200);
    expect(claimsOf(v.body.access_token).amr).toEqual(["pwd", "email"]);
    expect(claimsOf(v.body.access_token).mfa_at).toBe(Math.floor(app.clock.nowMs() / 1000));
    expect((await auditActions(a)).filter((x) => x === "mfa.code.send:success")).toHaveLength(3);
  });

  test("send-code refuses non-email factors and unknown tokens; emailed codes expire", async () => {
    const a = await createAuthApp(app);
    const { u, factorId, secret } = await totpUser(a);
    const e = await app.call("POST", a.path("/me/mfa/factors"), { token: u.access, body: { type: "email", email: "Other.Box@Example.com", name: "Work" } });
    expect(e.body.email).toBe("other.box@example.com");
    const cm = await nextMail("other.box@example.com", "confirm");
    expect((await app.call("POST", a.path(`/me/mfa/factors/${e.body.id}/confirm`), { token: u.access, body: { code: codeIn(cm.text) } })).body.recovery_codes).toBeUndefined();

    const ch = await signin(a, u);
    expect(ch.factors.map((f: any) => f.type)).toEqual(["totp", "email"]);
    const totpSend = await app.call("POST", a.path("/auth/mfa/send-code"), { body: { mfa_token: ch.mfa_token, factor_id: factorId } });
    expect(totpSend.status).toBe(400);
    expect(totpSend.body.error.details[0].field).toBe("factor_id");
    expect((await app.call("POST", a.path("/auth/mfa/send-code"), { body: { mfa_token: crypto.randomUUID(), factor_id: e.body.id } })).body.error.code).toBe("INVALID_TOKEN");

    const s = await app.call("POST", a.path("/auth/mfa/send-code"), { body: { mfa_token: ch.mfa_token, factor_id: e.body.id } });
    expect(s.body.email_masked).toBe("o***x@example.com");
    const code = codeIn((await nextMail("other.box@example.com", "sign-in code")).text);
    // The code never outlives the challenge (10 minutes from sign-in).
    app.clock.advance(10 * MINUTE);
    expect((await verify(a, ch.mfa_token, code)).status).toBe(400);
    // The TOTP factor keeps working alongside.
    const ch2 = await challenge(a, u);
    expect((await verify(a, ch2, totpNow(secret))).status).toBe(200);
  });
});

describe("recovery codes", () => {
  test("single use, hyphenated and upper-case forms accepted, regenerate invalidates old codes", async () => {
    const a = await createAuthApp(app);
    const { u, recovery } = await totpUser(a);
    const hyphenated = recovery[0].toUpperCase().replace(/(.{4})(?=.)/g, "$1-");
    expect(hyphenated).toMatch(/^[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{4}$/);
    const r1 = await recover(a, await challenge(a, u), hyphenated);
    expect(r1.status).toBe(200);
    expect(claimsOf(r1.body.access_token).amr).toEqual(["pwd", "recovery_code"]);
    expect(claimsOf(r1.body.access_token).mfa_at).toBe(Math.floor(app.clock.nowMs() / 1000));

    const t2 = await challenge(a, u);
    const reused = await recover(a, t2, recovery[0]);
    expect(reused.status).toBe(401);
    expect(reused.body.error.code).toBe("INVALID_CODE");
    expect((await recover(a, t2, "xyz")).status).toBe(400);

    const regen = await app.call("POST", a.path("/me/mfa/recovery-codes/regenerate"), { token: u.access });
    expect(regen.status).toBe(200);
    expect(regen.body.recovery_codes).toHaveLength(10);
    expect(regen.body.recovery_codes.some((c: string) => recovery.includes(c))).toBe(false);
    expect((await recover(a, t2, recovery[1])).status).toBe(401);
    expect((await recover(a, t2, regen.body.recovery_codes[0])).status).toBe(200);
    const rows = await app.ctx.db.all<{ code_hash: string }>("SELECT code_hash FROM auth_recovery_codes");
    expect(rows.some((r) => regen.body.recovery_codes.includes(r.code_hash))).toBe(false);
    expect(await auditActions(a)).toContain("mfa.recovery_codes.regenerate:success");
    expect(await auditActions(a)).toContain("mfa.recovery_code.use:success");
  });
});

describe("step-up", () => {
  test("records amr/mfa_at on the session; the 5th consecutive wrong code locks it for 15 minutes", async () => {
    const a = await createAuthApp(app);
    const { u, secret } = await totpUser(a); // u.access / u.refresh: the sign-up session, amr [pwd]
    expect(claimsOf(u.access).amr).toEqual(["pwd"]);

    // A success resets the streak: 4 wrong, 1 right, 4 wrong again is not locked.
    for (let i = 0; i < 4; i++) expect((await stepUp(a, u.access, wrongCode(secret))).body.error.code).toBe("INVALID_CODE");
    const ok = await stepUp(a, u.access, totpNow(secret));
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ amr: ["pwd", "totp"], mfa_at: app.clock.iso() });
    const refreshed = await app.call("POST", a.path("/auth/refresh"), { body: { refresh_token: u.refresh } });
    expect(claimsOf(refreshed.body.access_token).amr).toEqual(["pwd", "totp"]);
    expect(claimsOf(refreshed.body.access_token).mfa_at).toBe(Math.floor(app.clock.nowMs() / 1000));
    // The same step's code does not work twice.
    expect((await stepUp(a, u.access, totpNow(secret))).status).toBe(400);

    for (let i = 0; i < 3; i++) expect((await stepUp(a, u.access, wrongCode(secret))).status).toBe(400);
    const fifth = await stepUp(a, u.access, wrongCode(secret));
    expect(fifth.status).toBe(429);
    expect(fifth.body.error.code).toBe("STEP_UP_LOCKED");
    expect(fifth.headers.get("retry-after")).toBe("900");
    app.clock.advance(30 * SECOND);
    expect((await stepUp(a, u.access, totpNow(secret))).status).toBe(429);
    app.clock.advance(15 * MINUTE - 30 * SECOND - SECOND);
    expect((await stepUp(a, u.access, totpNow(secret))).status).toBe(429);

    app.clock.advance(SECOND);
    const after = await stepUp(a, u.access, totpNow(secret));
    expect(after.status).toBe(200);
    expect(await auditActions(a)).toContain("mfa.step_up.lock:failure");
  });

  test("a recovery code steps up too; other sessions keep their own streak", async () => {
    const a = await createAuthApp(app);
    const { u, secret, recovery } = await totpUser(a);
    const s2 = await verify(a, await challenge(a, u), totpNow(secret));
    for (let i = 0; i < 5; i++) await stepUp(a, u.access, wrongCode(secret));
    expect((await stepUp(a, u.access, recovery[0])).status).toBe(429);
    const r = await stepUp(a, s2.body.access_token, recovery[0].replace(/(.{8})/, "$1-"));
    expect(r.status).toBe(200);
    expect(r.body.amr).toEqual(["pwd", "totp", "recovery_code"]);
    expect((await stepUp(a, s2.body.access_token, "not-a-code")).status).toBe(400);
    expect((await stepUp(a, "garbage", totpNow(secret))).status).toBe(401);
    // Without an enabled factor there is nothing to step up with.
    const plain = await signupEndUser(app, a);
    expect((await stepUp(a, plain.access, "123456")).body.error.code).toBe("MFA_NOT_ENROLLED");
  });
});

describe("disable and isolation", () => {
  test("disabling the only factor removes the MFA requirement; existing sessions are unaffected", async () => {
    const a = await createAuthApp(app);
    const { u, factorId, secret } = await totpUser(a);
    const s = await verify(a, await challenge(a, u), totpNow(secret));
    expect(s.status).toBe(200);
    const d = await app.call("DELETE", a.path(`/me/mfa/factors/${factorId}`), { token: u.access });
    expect(d.status).toBe(204);
    expect((await app.call("DELETE", a.path(`/me/mfa/factors/${factorId}`), { token: u.access })).status).toBe(204);
    const list = await app.call("GET", a.path("/me/mfa/factors"), { token: u.access });
    expect(list.body.data).toEqual([expect.objectContaining({ id: factorId, status: "disabled", disabled_at: app.clock.iso() })]);

    const direct = await signin(a, u);
    expect(direct.mfa_required).toBeUndefined();
    expect(claimsOf(direct.access_token).amr).toEqual(["pwd"]);

    const r = await app.call("POST", a.path("/auth/refresh"), { body: { refresh_token: s.body.refresh_token } });
    expect(r.status).toBe(200);
    expect(claimsOf(r.body.access_token).amr).toEqual(["pwd", "totp"]);
    expect(await auditActions(a)).toContain("mfa.factor.disable:success");
    expect((await app.call("POST", a.path("/me/mfa/recovery-codes/regenerate"), { token: u.access })).body.error.code).toBe("MFA_NOT_ENROLLED");
  });

  test("a factor of App A's user is not visible through App B", async () => {
    const A = await createAuthApp(app);
    const B = await createAuthApp(app);
    const { u, factorId, secret } = await totpUser(A);
    const ub = await signupEndUser(app, B);
    const listB = await app.call("GET", B.path("/me/mfa/factors"), { token: ub.access });
    expect(listB.status).toBe(200);
    expect(listB.body.data).toEqual([]);
    expect((await app.call("DELETE", B.path(`/me/mfa/factors/${factorId}`), { token: ub.access })).status).toBe(404);
    expect((await app.call("POST", B.path(`/me/mfa/factors/${factorId}/confirm`), { token: ub.access, body: { code: totpNow(secret) } })).status).toBe(404);
    // App A's token means nothing to App B.
    expect((await app.call("GET", B.path("/me/mfa/factors"), { token: u.access })).status).toBe(401);
    const tA = await challenge(A, u);
    expect((await verify(B, tA, totpNow(secret))).body.error.code).toBe("INVALID_TOKEN");
    // Still usable where it belongs.
    expect((await verify(A, tA, totpNow(secret))).status).toBe(200);
    // Another user of App A does not see it either.
    const u2 = await signupEndUser(app, A);
    expect((await app.call("DELETE", A.path(`/me/mfa/factors/${factorId}`), { token: u2.access })).status).toBe(404);
  });
});

describe("enrolment limits", () => {
  test("confirmation: 4 wrong codes still allow, the 5th deletes the pending factor; 10-minute window", async () => {
    const a = await createAuthApp(app);
    const u = await signupEndUser(app, a);
    const enrol = async () => (await app.call("POST", a.path("/me/mfa/factors"), { token: u.access, body: { type: "totp" } })).body;
    const confirm = (id: string, code: string) => app.call("POST", a.path(`/me/mfa/factors/${id}/confirm`), { token: u.access, body: { code } });

    const f1 = await enrol();
    for (let i = 0; i < 4; i++) expect((await confirm(f1.id, wrongCode(f1.secret))).status).toBe(400);
    expect((await confirm(f1.id, totpNow(f1.secret))).status).toBe(200);

    const f2 = await enrol();
    for (let i = 0; i < 4; i++) expect((await confirm(f2.id, wrongCode(f2.secret))).status).toBe(400);
    const fifth = await confirm(f2.id, wrongCode(f2.secret));
    expect(fifth.status).toBe(429);
    expect((await confirm(f2.id, totpNow(f2.secret))).status).toBe(404);

    const f3 = await enrol();
    app.clock.advance(10 * MINUTE - SECOND);
    expect((await confirm(f3.id, totpNow(f3.secret))).status).toBe(200);
    const f4 = await enrol();
    app.clock.advance(10 * MINUTE);
    const late = await confirm(f4.id, totpNow(f4.secret));
    expect(late.status).toBe(400);
    expect(late.body.error.code).toBe("ENROLMENT_EXPIRED");
  });

  test("at most 10 enrolments per user per hour; bad input is 400", async () => {
    const a = await createAuthApp(app, { access_token_ttl: 7200 });
    const u = await signupEndUser(app, a);
    const enrol = (body: unknown) => app.call("POST", a.path("/me/mfa/factors"), { token: u.access, body });
    expect((await enrol({ type: "sms" })).status).toBe(400);
    expect((await enrol({ type: "email", email: "not an email" })).status).toBe(400);
    expect((await app.call("POST", a.path("/me/mfa/factors"), { body: { type: "totp" } })).status).toBe(401);
    expect((await app.call("GET", a.path("/me/mfa/factors?cursor=!!"), { token: u.access })).status).toBe(400);
    // Refused requests did not count: 10 are allowed.
    for (let i = 0; i < 10; i++) expect((await enrol({ type: "totp" })).status).toBe(201);
    const eleventh = await enrol({ type: "totp" });
    expect(eleventh.status).toBe(429);
    expect(eleventh.body.error.code).toBe("TOO_MANY_ENROLMENTS");
    app.clock.advance(60 * MINUTE);
    expect((await enrol({ type: "totp" })).status).toBe(201);
  });
});

describe("guessing across challenges from one address", () => {
  test(`${ADDRESS_LIMITS.mfa.failures} wrong codes over many challenges, then verify and recover answer 429 with Retry-After`, async () => {
    const a = await createAuthApp(app);
    const perChallenge = MFA_LIMITS.maxFailures;
    let firstFailureAt = 0;
    // Several users, each challenge locked after its own 5: only the address sees them all.
    for (let i = 0; i < ADDRESS_LIMITS.mfa.failures / perChallenge; i++) {
      const { u, secret } = await totpUser(a);
      const token = await challenge(a, u);
      firstFailureAt ||= app.clock.nowMs();
      for (let k = 1; k <= perChallenge; k++) expect((await verify(a, token, wrongCode(secret))).status).toBe(k < perChallenge ? 401 : 429);
    }
    const { u, secret, recovery } = await totpUser(a);
    const token = await challenge(a, u);
    const remaining = String(Math.ceil((firstFailureAt + ADDRESS_LIMITS.mfa.windowMs - app.clock.nowMs()) / 1000));
    for (const r of [await verify(a, token, totpNow(secret)), await recover(a, token, recovery[0])]) {
      expect(r.status).toBe(429);
      expect(r.body.error.code).toBe("TOO_MANY_ATTEMPTS");
      expect(r.headers.get("retry-after")).toBe(remaining);
    }
    app.clock.set(firstFailureAt + ADDRESS_LIMITS.mfa.windowMs);
    const again = await challenge(a, u);
    expect((await verify(a, again, totpNow(secret))).status).toBe(200);
  });
});
