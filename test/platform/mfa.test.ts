// source-only: every test moves the injected clock: a fresh limit window per test (beforeEach), the next TOTP step for each code, 10-minute expiries and 15-minute locks; the MFA routes run on the binary in platform/every-route
/**
 * MFA of console accounts over HTTP: enrolment and confirmation with real TOTP codes computed
 * from the secret, the sign-in challenge, verify and recover, the locks, recovery codes,
 * disable, the operator's reset and isolation between accounts.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { base32 } from "oslo/encoding";
import { MINUTE, SECOND } from "../../src/core/clock";
import { totpCodeAt } from "../../src/core/totp";
import { signup, startTestApp, type TestApp } from "../helpers/app";

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.stop());
// Fresh sign-in, MFA and per-address budgets for every test (all requests share the "unknown" address).
beforeEach(() => app.clock.advance(16 * MINUTE));

type User = Awaited<ReturnType<typeof signup>>;

/** The code of the next TOTP step (the clock moves 30 s first, so no code is a replay). */
async function nextCode(secret: string) {
  app.clock.advance(30 * SECOND);
  return totpCodeAt(base32.decode(secret), app.clock.nowMs());
}

const signin = (u: { username: string; password: string }, extra: Record<string, unknown> = {}) =>
  app.call("POST", "/platform/v1/auth/signin", { body: { identifier: u.username, password: u.password, ...extra } });
const verify = (mfa_token: string, code: string) => app.call("POST", "/platform/v1/auth/mfa/verify", { body: { mfa_token, code } });
const recover = (mfa_token: string, recovery_code: string) => app.call("POST", "/platform/v1/auth/mfa/recover", { body: { mfa_token, recovery_code } });
const audits = (action: string, actor: string) =>
  app.ctx.db.all<{ target_id: string | null; metadata: string }>("SELECT target_id, metadata FROM platform_audit_log WHERE action = ? AND actor_id = ? ORDER BY created_at, id", action, actor);
const accountId = async (token: string) => (await app.call("GET", "/platform/v1/introspect", { token })).body.account.id as string;

/** A user with a confirmed TOTP factor: its secret and recovery codes. */
async function withMfa(u?: User) {
  const user = u ?? (await signup(app));
  const e = await app.call("POST", "/platform/v1/me/mfa/totp", { token: user.token, body: {} });
  expect(e.status).toBe(201);
  const c = await app.call("POST", `/platform/v1/me/mfa/totp/${e.body.factor_id}/confirm`, { token: user.token, body: { code: await nextCode(e.body.secret) } });
  expect(c.status).toBe(200);
  return { ...user, secret: e.body.secret as string, factorId: e.body.factor_id as string, recovery: c.body.recovery_codes as string[] };
}

async function challenge(u: { username: string; password: string }) {
  const r = await signin(u);
  expect(r.status).toBe(200);
  expect(r.body.mfa_required).toBe(true);
  return r.body.mfa_token as string;
}

describe("enrolment", () => {
  test("enrol answers the secret and otpauth URI once; confirm with a real code activates it and shows 10 recovery codes once", async () => {
    const u = await signup(app);
    const e = await app.call("POST", "/platform/v1/me/mfa/totp", { token: u.token, body: { name: "Phone" } });
    expect(e.status).toBe(201);
    expect(e.body).toMatchObject({ id: e.body.factor_id, type: "totp", name: "Phone", status: "pending", confirmed_at: null });
    expect(e.body.secret).toMatch(/^[A-Z2-7]{32}$/);
    expect(e.body.otpauth_uri).toStartWith("otpauth://totp/");
    expect(e.body.otpauth_uri).toContain(`secret=${e.body.secret}`);
    expect(e.body.otpauth_uri).toContain(encodeURIComponent(u.email));
    // Pending: sign-in does not ask for a code yet.
    expect((await signin(u)).body.access_token).toBeString();
    let list = await app.call("GET", "/platform/v1/me/mfa", { token: u.token });
    expect(list.body).toMatchObject({ enabled: false, recovery_codes_left: 0, data: [{ id: e.body.factor_id, status: "pending" }] });
    expect(list.body.data[0].secret).toBeUndefined();

    const wrong = await app.call("POST", `/platform/v1/me/mfa/totp/${e.body.factor_id}/confirm`, { token: u.token, body: { code: "000000" === (await nextCode(e.body.secret)) ? "111111" : "000000" } });
    expect(wrong.status).toBe(400);
    expect(wrong.body.error.code).toBe("INVALID_CODE");
    const bad = await app.call("POST", `/platform/v1/me/mfa/totp/${e.body.factor_id}/confirm`, { token: u.token, body: { code: "12ab56" } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details[0].field).toBe("code");

    const c = await app.call("POST", `/platform/v1/me/mfa/totp/${e.body.factor_id}/confirm`, { token: u.token, body: { code: await nextCode(e.body.secret) } });
    expect(c.status).toBe(200);
    expect(c.body.status).toBe("active");
    expect(c.body.recovery_codes).toHaveLength(10);
    for (const rc of c.body.recovery_codes) expect(rc).toMatch(/^[0-9a-f]{16}$/);
    list = await app.call("GET", "/platform/v1/me/mfa", { token: u.token });
    expect(list.body).toMatchObject({ enabled: true, recovery_codes_left: 10, data: [{ status: "active" }] });
    const again = await app.call("POST", `/platform/v1/me/mfa/totp/${e.body.factor_id}/confirm`, { token: u.token, body: { code: await nextCode(e.body.secret) } });
    expect(again.status).toBe(409);

    // At rest: the seed is encrypted, the recovery codes hashed.
    const row = await app.ctx.db.get<{ secret_enc: string }>("SELECT secret_enc FROM platform_mfa_factors WHERE id = ?", e.body.factor_id);
    expect(row!.secret_enc).not.toContain(e.body.secret);
    const hashes = await app.ctx.db.all<{ code_hash: string }>("SELECT code_hash FROM platform_recovery_codes WHERE account_id = ?", await accountId(u.token));
    expect(hashes).toHaveLength(10);
    expect(hashes.map((h) => h.code_hash)).not.toContain(c.body.recovery_codes[0]);
    const id = await accountId(u.token);
    expect((await audits("account.mfa.enrol", id)).length).toBe(1);
    expect((await audits("account.mfa.confirm", id)).length).toBe(1);
  });

  test("5 wrong confirmation codes delete the pending factor; a pending factor expires after 10 minutes", async () => {
    const u = await signup(app);
    const e = await app.call("POST", "/platform/v1/me/mfa/totp", { token: u.token });
    expect(e.status).toBe(201);
    const right = await nextCode(e.body.secret);
    const wrong = right === "000000" ? "111111" : "000000";
    for (let i = 1; i <= 4; i++) expect((await app.call("POST", `/platform/v1/me/mfa/totp/${e.body.factor_id}/confirm`, { token: u.token, body: { code: wrong } })).status).toBe(400);
    expect((await app.call("POST", `/platform/v1/me/mfa/totp/${e.body.factor_id}/confirm`, { token: u.token, body: { code: wrong } })).status).toBe(429);
    expect((await app.call("POST", `/platform/v1/me/mfa/totp/${e.body.factor_id}/confirm`, { token: u.token, body: { code: right } })).status).toBe(404);

    const late = await app.call("POST", "/platform/v1/me/mfa/totp", { token: u.token });
    app.clock.advance(10 * MINUTE);
    const r = await app.call("POST", `/platform/v1/me/mfa/totp/${late.body.factor_id}/confirm`, { token: u.token, body: { code: await nextCode(late.body.secret) } });
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe("ENROLMENT_EXPIRED");
  });

  test("personal access tokens cannot enrol (console session only); no credential is 401", async () => {
    const u = await signup(app);
    const pat = await app.call("POST", "/platform/v1/me/tokens", { token: u.token, body: { name: "cli" } });
    expect((await app.call("POST", "/platform/v1/me/mfa/totp", { token: pat.body.token })).status).toBe(403);
    expect((await app.call("POST", "/platform/v1/me/mfa/totp")).status).toBe(401);
    expect((await app.call("GET", "/platform/v1/me/mfa")).status).toBe(401);
  });
});

describe("sign-in challenge", () => {
  test("a correct password answers the challenge (no cookie, no tokens); verify finishes like sign-in; the token is single use", async () => {
    const u = await withMfa();
    const r = await signin(u, { session_duration: "short" });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ mfa_required: true, mfa_token: expect.any(String), factors: [{ id: u.factorId, type: "totp", name: "Authenticator app" }], expires_at: expect.any(String) });
    expect(Date.parse(r.body.expires_at) - app.clock.nowMs()).toBe(10 * MINUTE);
    expect(r.headers.get("set-cookie")).toBeNull();
    // Wrong password and unknown account still look the same.
    const wrongPw = await signin({ username: u.username, password: "not the password" });
    const unknown = await signin({ username: `nobody-${Date.now()}`, password: "not the password" });
    expect([wrongPw.status, wrongPw.body]).toEqual([unknown.status, unknown.body]);

    const code = await nextCode(u.secret);
    const v = await verify(r.body.mfa_token, code);
    expect(v.status).toBe(200);
    expect(Object.keys(v.body).sort()).toEqual(["access_token", "expires_in", "refresh_token", "token_type"]);
    expect(v.headers.get("set-cookie")).toContain("auth_token=");
    expect((await app.call("GET", "/platform/v1/introspect", { token: v.body.access_token })).status).toBe(200);
    // The session lasts what sign-in asked for (short = 24 h).
    const refreshed = await app.call("POST", "/platform/v1/auth/refresh", { body: { refresh_token: v.body.refresh_token } });
    expect(refreshed.status).toBe(200);
    const session = await app.ctx.db.get<{ expires_at: number }>("SELECT expires_at FROM platform_sessions WHERE account_id = ? ORDER BY created_at DESC LIMIT 1", await accountId(u.token));
    expect(Number(session!.expires_at) - app.clock.nowMs()).toBeLessThanOrEqual(24 * 3600 * 1000);

    const reuse = await verify(r.body.mfa_token, await nextCode(u.secret));
    expect(reuse.status).toBe(400);
    expect(reuse.body.error.code).toBe("INVALID_TOKEN");
    // The code just accepted cannot be replayed on a new challenge.
    const t2 = await challenge(u);
    expect((await verify(t2, code)).status).toBe(401);
    const id = await accountId(u.token);
    expect((await audits("account.signin.mfa_required", id)).length).toBe(2);
    expect((await audits("account.signin", id)).some((a) => JSON.parse(a.metadata).method === "password+totp")).toBe(true);
  });

  test("the 5th wrong code locks the challenge (429 MFA_LOCKED, then even for the right code)", async () => {
    const u = await withMfa();
    const t = await challenge(u);
    const right = await nextCode(u.secret);
    const wrong = right === "000000" ? "111111" : "000000";
    for (let i = 1; i <= 4; i++) {
      const r = await verify(t, wrong);
      expect([r.status, r.body.error.code]).toEqual([401, "INVALID_CODE"]);
    }
    const fifth = await verify(t, wrong);
    expect([fifth.status, fifth.body.error.code]).toEqual([429, "MFA_LOCKED"]);
    const after = await verify(t, right);
    expect([after.status, after.body.error.code]).toEqual([429, "MFA_LOCKED"]);
    expect((await audits("account.mfa.challenge_locked", await accountId(u.token))).length).toBe(1);
    // A new sign-in gets a new challenge that works.
    expect((await verify(await challenge(u), await nextCode(u.secret))).status).toBe(200);
  });

  test("10 wrong answers over challenges lock the account's MFA sign-in for 15 minutes", async () => {
    const u = await withMfa();
    const wrong = async (t: string) => verify(t, (await nextCode(u.secret)) === "000000" ? "111111" : "000000");
    const t1 = await challenge(u);
    for (let i = 0; i < 5; i++) await wrong(t1);
    const t2 = await challenge(u);
    for (let i = 0; i < 4; i++) expect((await wrong(t2)).status).toBe(401);
    const tenth = await wrong(t2);
    expect([tenth.status, tenth.body.error.code]).toEqual([429, "MFA_LOCKED"]);
    expect(Number(tenth.headers.get("retry-after"))).toBeGreaterThan(0);
    const t3 = await challenge(u);
    expect((await verify(t3, await nextCode(u.secret))).status).toBe(429);
    app.clock.advance(15 * MINUTE);
    expect((await verify(t3, await nextCode(u.secret))).status).toBe(400); // t3 expired meanwhile (10 minutes)
    expect((await verify(await challenge(u), await nextCode(u.secret))).status).toBe(200);
  });

  test("the challenge expires after 10 minutes", async () => {
    const u = await withMfa();
    const t = await challenge(u);
    app.clock.advance(10 * MINUTE - 31 * SECOND);
    const code = await nextCode(u.secret); // exactly 10 minutes - 1 s after issue
    app.clock.advance(1 * SECOND);
    const r = await verify(t, code);
    expect([r.status, r.body.error.code]).toEqual([400, "INVALID_TOKEN"]);
    expect((await verify("not-a-token", code)).status).toBe(400);
  });

  test("a recovery code works once (hyphens and case ignored); regenerating invalidates the old ones", async () => {
    const u = await withMfa();
    const [first, second] = u.recovery;
    const typed = `${first!.slice(0, 8).toUpperCase()}-${first!.slice(8)}`;
    const r = await recover(await challenge(u), typed);
    expect(r.status).toBe(200);
    expect(r.body.access_token).toBeString();
    expect(r.headers.get("set-cookie")).toContain("auth_token=");
    const again = await recover(await challenge(u), first!);
    expect([again.status, again.body.error.code]).toEqual([401, "INVALID_CODE"]);
    expect((await app.call("GET", "/platform/v1/me/mfa", { token: u.token })).body.recovery_codes_left).toBe(9);
    const malformed = await recover(await challenge(u), "xyz");
    expect(malformed.status).toBe(400);

    const regen = await app.call("POST", "/platform/v1/me/mfa/recovery-codes/regenerate", { token: u.token });
    expect(regen.status).toBe(200);
    expect(regen.body.recovery_codes).toHaveLength(10);
    expect((await recover(await challenge(u), second!)).status).toBe(401);
    expect((await recover(await challenge(u), regen.body.recovery_codes[0])).status).toBe(200);
    const id = await accountId(u.token);
    expect((await audits("account.mfa.recovery_code.use", id)).length).toBe(2);
    expect((await audits("account.mfa.recovery_codes.regenerate", id)).length).toBe(1);
    // Without an active factor there is nothing to regenerate.
    const plain = await signup(app);
    const none = await app.call("POST", "/platform/v1/me/mfa/recovery-codes/regenerate", { token: plain.token });
    expect([none.status, none.body.error.code]).toEqual([400, "MFA_NOT_ENROLLED"]);
  });

  test("30 wrong answers from one client address over any accounts: 429 TOO_MANY_ATTEMPTS with Retry-After before the token is read", async () => {
    let sent = 0;
    const users = [await withMfa(), await withMfa(), await withMfa(), await withMfa()];
    // 9 per account (a 10th would lock the account) over two challenges each.
    for (const u of users) {
      for (const n of [5, 4]) {
        const t = await challenge(u);
        for (let i = 0; i < n && sent < 30; i++, sent++) await verify(t, "000000" === (await totpCodeAt(base32.decode(u.secret), app.clock.nowMs())) ? "111111" : "000000");
      }
    }
    expect(sent).toBe(30);
    const u = users[3]!;
    const r = await verify(await challenge(u), await nextCode(u.secret));
    expect([r.status, r.body.error.code]).toEqual([429, "TOO_MANY_ATTEMPTS"]);
    expect(Number(r.headers.get("retry-after"))).toBeGreaterThan(0);
    expect((await recover("00000000-0000-4000-8000-000000000000", u.recovery[0]!)).status).toBe(429);
  });
});

describe("disable, reset, isolation", () => {
  test("disabling needs a current code or a recovery code (JSON body); then sign-in asks for the password only", async () => {
    const u = await withMfa();
    const del = (body?: unknown) => app.call("DELETE", `/platform/v1/me/mfa/${u.factorId}`, { token: u.token, ...(body === undefined ? {} : { body }) });
    const missing = await del();
    expect([missing.status, missing.body.error.details?.[0]?.field]).toEqual([400, "code"]);
    const wrong = await del({ code: (await nextCode(u.secret)) === "000000" ? "111111" : "000000" });
    expect([wrong.status, wrong.body.error.code]).toEqual([400, "INVALID_CODE"]);
    expect((await del({ code: await nextCode(u.secret) })).status).toBe(204);
    expect((await del({ code: "whatever" })).status).toBe(204); // already disabled: nothing to prove
    const s = await signin(u);
    expect(s.body.access_token).toBeString();
    expect(s.body.mfa_required).toBeUndefined();
    const list = await app.call("GET", "/platform/v1/me/mfa", { token: u.token });
    expect(list.body).toMatchObject({ enabled: false, recovery_codes_left: 0, data: [{ status: "disabled" }] });
    expect((await audits("account.mfa.disable", await accountId(u.token))).length).toBe(1);

    // A recovery code is proof too (the phone is lost, the session is not).
    const v = await withMfa(u);
    expect((await app.call("DELETE", `/platform/v1/me/mfa/${v.factorId}`, { token: u.token, body: { code: v.recovery[0] } })).status).toBe(204);
    // A pending factor is removed without proof.
    const p = await app.call("POST", "/platform/v1/me/mfa/totp", { token: u.token });
    expect((await app.call("DELETE", `/platform/v1/me/mfa/${p.body.factor_id}`, { token: u.token })).status).toBe(204);
  });

  test("another account can neither see, confirm nor disable your factors (404)", async () => {
    const u = await withMfa();
    const pending = await app.call("POST", "/platform/v1/me/mfa/totp", { token: u.token });
    const other = await signup(app);
    expect((await app.call("GET", "/platform/v1/me/mfa", { token: other.token })).body.data).toEqual([]);
    expect((await app.call("POST", `/platform/v1/me/mfa/totp/${pending.body.factor_id}/confirm`, { token: other.token, body: { code: await nextCode(pending.body.secret) } })).status).toBe(404);
    expect((await app.call("DELETE", `/platform/v1/me/mfa/${u.factorId}`, { token: other.token, body: { code: await nextCode(u.secret) } })).status).toBe(404);
    expect((await signin(u)).body.mfa_required).toBe(true);
    // Other accounts cannot reset it either: operators only.
    const reset = await app.call("DELETE", `/platform/v1/admin/accounts/${await accountId(u.token)}/mfa`, { token: other.token });
    expect([reset.status, reset.body.error.code]).toEqual([403, "OPERATOR_REQUIRED"]);
  });

  test("an operator resets a locked-out account's MFA (audited): open challenges end, sign-in needs the password only", async () => {
    const boot = await app.platform.setup.bootstrap();
    let opToken: string;
    if (boot?.setupUrl) {
      const s = await app.call("POST", "/platform/v1/auth/setup", { body: { email: "ops@example.com", username: "ops", password: "operator-password-1", setup_token: boot.setupUrl.split("#setup=")[1] } });
      opToken = s.body.access_token;
    } else opToken = (await signin({ username: "ops", password: "operator-password-1" })).body.access_token;
    const u = await withMfa();
    const id = await accountId(u.token);
    const open = await challenge(u);
    const r = await app.call("DELETE", `/platform/v1/admin/accounts/${id}/mfa`, { token: opToken });
    expect(r.status).toBe(204);
    expect((await verify(open, await nextCode(u.secret))).status).toBe(400);
    expect((await signin(u)).body.access_token).toBeString();
    expect((await app.call("GET", "/platform/v1/me/mfa", { token: u.token })).body).toMatchObject({ enabled: false, recovery_codes_left: 0 });
    const rows = await app.ctx.db.all<{ actor_id: string; target_id: string; metadata: string }>("SELECT actor_id, target_id, metadata FROM platform_audit_log WHERE action = 'account.mfa.reset'");
    expect(rows).toEqual([{ actor_id: await accountId(opToken), target_id: id, metadata: JSON.stringify({ factors_disabled: 1 }) }]);
    expect((await app.call("DELETE", "/platform/v1/admin/accounts/00000000-0000-4000-8000-000000000000/mfa", { token: opToken })).status).toBe(404);
    // Not your own: that is a disable with a code.
    const self = await app.call("DELETE", `/platform/v1/admin/accounts/${await accountId(opToken)}/mfa`, { token: opToken });
    expect([self.status, self.body.error.details[0].field]).toEqual([400, "account_id"]);
    // The account enrols again.
    await withMfa(u);
    expect((await signin(u)).body.mfa_required).toBe(true);
  });
});
