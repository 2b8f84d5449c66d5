/**
 * Admin session list / revoke and admin MFA reset over real HTTP: /admin/users/{id}/sessions,
 * /admin/users/{id}/sessions/{sid}, /admin/users/{id}/mfa.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import * as OTPAuth from "otpauth";
import { SECOND } from "../../src/core/clock";
import { startTestApp, type TestApp } from "../helpers/app";
import { claimsOf, createAuthApp, signupEndUser, type TestAuthApp } from "../helpers/auth";
import { inProcess } from "../helpers/target";

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.stop());

const totpNow = (secret: string) => new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(secret), digits: 6, period: 30, algorithm: "SHA1" }).generate({ timestamp: app.clock.nowMs() });
const auditActions = async (a: TestAuthApp) => (await app.ctx.db.all<{ action: string }>("SELECT action FROM auth_audit WHERE app_id = ? ORDER BY created_at, id", a.id)).map((r) => r.action);
const signin = (a: TestAuthApp, identifier: string, password: string, ua = "test-agent/1") =>
  app.call("POST", a.path("/auth/signin"), { body: { identifier, password }, headers: { "user-agent": ua } });

describe("admin: a user's sessions", () => {
  inProcess("moves the injected clock between sign-ins to order the sessions and reads audit rows from the store (app.ctx.db)")("list the live ones newest first; revoke one (204): its refresh token and access token stop working; 404s", async () => {
    const a = await createAuthApp(app);
    const b = await createAuthApp(app);
    const u = await signupEndUser(app, a);
    const userId = claimsOf(u.access).sub as string;
    app.clock.advance(SECOND);
    const second = await signin(a, u.username, u.password, "Browser/2");
    expect(second.status).toBe(200);
    const sid2 = claimsOf(second.body.access_token).sid;

    const list = await app.call("GET", a.path(`/admin/users/${userId}/sessions`), { token: a.key });
    expect(list.status).toBe(200);
    expect(list.body.data.map((s: any) => s.id)).toEqual([sid2, claimsOf(u.access).sid]);
    expect(list.body.data[0]).toMatchObject({ user_agent: "Browser/2", amr: ["pwd"], mfa_at: null, tenant_id: null });
    expect(Date.parse(list.body.data[0].expires_at)).toBeGreaterThan(app.clock.nowMs());

    const del = await app.call("DELETE", a.path(`/admin/users/${userId}/sessions/${sid2}`), { token: a.key });
    expect(del.status).toBe(204);
    expect((await app.call("POST", a.path("/auth/refresh"), { body: { refresh_token: second.body.refresh_token } })).status).toBe(400);
    expect((await app.call("GET", a.path("/me"), { token: second.body.access_token })).status).toBe(401);
    // The other session lives on.
    expect((await app.call("GET", a.path("/me"), { token: u.access })).status).toBe(200);
    const after = await app.call("GET", a.path(`/admin/users/${userId}/sessions`), { token: a.key });
    expect(after.body.data.map((s: any) => s.id)).toEqual([claimsOf(u.access).sid]);
    expect(await auditActions(a)).toContain("user.session.revoke");

    // Revoked already, unknown, malformed, another user's session, another App, no credential.
    expect((await app.call("DELETE", a.path(`/admin/users/${userId}/sessions/${sid2}`), { token: a.key })).status).toBe(404);
    expect((await app.call("DELETE", a.path(`/admin/users/${userId}/sessions/${crypto.randomUUID()}`), { token: a.key })).status).toBe(404);
    expect((await app.call("DELETE", a.path(`/admin/users/${userId}/sessions/nope`), { token: a.key })).status).toBe(400); // malformed: 400 naming session_id
    const other = await signupEndUser(app, a);
    expect((await app.call("DELETE", a.path(`/admin/users/${claimsOf(other.access).sub}/sessions/${claimsOf(u.access).sid}`), { token: a.key })).status).toBe(404);
    expect((await app.call("GET", b.path(`/admin/users/${userId}/sessions`), { token: b.key })).status).toBe(404);
    expect((await app.call("GET", a.path(`/admin/users/${crypto.randomUUID()}/sessions`), { token: a.key })).status).toBe(404);
    expect((await app.call("GET", a.path(`/admin/users/${userId}/sessions`))).status).toBe(401);
  });
});

describe("admin: MFA reset", () => {
  inProcess("counts recovery codes and reads audit rows in the store (app.ctx.db)")("removes the factors and recovery codes (204, audited): the next sign-in needs the password only", async () => {
    const a = await createAuthApp(app);
    const u = await signupEndUser(app, a);
    const userId = claimsOf(u.access).sub as string;
    const e = await app.call("POST", a.path("/me/mfa/factors"), { token: u.access, body: { type: "totp" } });
    expect(e.status).toBe(201);
    const c = await app.call("POST", a.path(`/me/mfa/factors/${e.body.id}/confirm`), { token: u.access, body: { code: totpNow(e.body.secret) } });
    expect(c.status).toBe(200);
    expect((await signin(a, u.username, u.password)).body.mfa_required).toBe(true);

    const r = await app.call("DELETE", a.path(`/admin/users/${userId}/mfa`), { token: a.key });
    expect(r.status).toBe(204);
    const s = await signin(a, u.username, u.password);
    expect([s.status, s.body.mfa_required, typeof s.body.access_token]).toEqual([200, undefined, "string"]);
    expect((await app.call("GET", a.path("/me/mfa/factors"), { token: s.body.access_token })).body.data).toEqual([]);
    expect((await app.ctx.db.get<{ n: number }>("SELECT COUNT(*) AS n FROM auth_recovery_codes WHERE user_id = ?", userId))?.n).toBe(0);
    expect(await auditActions(a)).toContain("mfa.reset");
    // Idempotent for a user without factors; 404 for an unknown user; 401 without a credential.
    expect((await app.call("DELETE", a.path(`/admin/users/${userId}/mfa`), { token: a.key })).status).toBe(204);
    expect((await app.call("DELETE", a.path(`/admin/users/${crypto.randomUUID()}/mfa`), { token: a.key })).status).toBe(404);
    expect((await app.call("DELETE", a.path(`/admin/users/${userId}/mfa`))).status).toBe(401);
  });
});
