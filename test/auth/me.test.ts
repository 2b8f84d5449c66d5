/** The end user's own profile: GET / PATCH /me and POST /me/password. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { MINUTE } from "../../src/core/clock";
import { startTestApp, type TestApp } from "../helpers/app";
import { claimsOf, createAuthApp, signupEndUser, type TestAuthApp, type TestEndUser } from "../helpers/auth";
import { inProcess, ON_BINARY } from "../helpers/target";

let app: TestApp;
let a: TestAuthApp;
beforeAll(async () => {
  app = await startTestApp();
  a = await createAuthApp(app);
});
afterAll(() => app.stop());

let n = 0;
const uniq = (p = "me") => `${p}${++n}x${Date.now().toString(36)}`;
const newUser = (target = a) => signupEndUser(app, target, { username: uniq("user"), email: `${uniq("user")}@example.com` });
const getMe = (token?: string, target = a) => app.call("GET", target.path("/me"), { token });
const patchMe = (token: string, body: Record<string, unknown>) => app.call("PATCH", a.path("/me"), { token, body });
const changePassword = (u: TestEndUser, current_password: string, new_password = "a brand new password") =>
  app.call("POST", a.path("/me/password"), { token: u.access, body: { current_password, new_password } });
const events = async (type: string) =>
  (await app.ctx.db.all<{ data: string }>("SELECT data FROM core_events WHERE scope = ? AND type = ? ORDER BY id", `webhook:auth:${a.id}`, type)).map((e) => JSON.parse(e.data));

describe("GET /me", () => {
  test("the public user with tenants and MFA state", async () => {
    const u = await newUser();
    const r = await getMe(u.access);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      id: claimsOf(u.access).sub,
      app_id: a.id,
      username: u.username,
      email: u.email,
      email_verified: false,
      status: "active",
      metadata: {},
      tenants: [],
      mfa_enabled: false,
    });
    expect(JSON.stringify(r.body)).not.toContain("password");

    const tenant = await app.call("POST", a.path("/tenants"), { token: a.key, body: { display_name: `Acme ${uniq()}` } });
    const added = await app.call("POST", a.path(`/tenants/${tenant.body.id}/members`), { token: a.key, body: { accountId: r.body.id } });
    expect(added.status).toBe(201);
    const after = await getMe(u.access);
    expect(after.body.tenants).toEqual([{ id: tenant.body.id, display_id: tenant.body.display_id, slug: tenant.body.slug, display_name: tenant.body.display_name, status: "active", role: null }]);
  });

  test("tenants come oldest membership first, each with the user's role there; another user's tenants never show", async () => {
    const u = await newUser();
    const other = await newUser();
    const id = claimsOf(u.access).sub;
    const role = await app.call("POST", a.path("/roles"), { token: a.key, body: { name: "me-test-editor", permissions: [] } });
    expect(role.status).toBe(201);
    const tenants: string[] = [];
    for (let i = 0; i < 3; i++) tenants.push((await app.call("POST", a.path("/tenants"), { token: a.key, body: { display_name: `T${i} ${uniq()}` } })).body.id);
    // Joined in another order than created, a second apart: the answer follows the joins.
    const joins = [[tenants[2], null], [tenants[0], role.body.name], [tenants[1], null]] as const;
    for (const [tenantId, as] of joins) {
      // Apart in time (the binary's real clock moves on its own; a few ms keep the joins apart).
      if (ON_BINARY) await Bun.sleep(5);
      else app.clock.advance(1000);
      expect((await app.call("POST", a.path(`/tenants/${tenantId}/members`), { token: a.key, body: { accountId: id, ...(as ? { role: as } : {}) } })).status).toBe(201);
    }
    const me = (await getMe(u.access)).body.tenants;
    expect(me.map((t: any) => [t.id, t.role])).toEqual(joins.map(([t, r]) => [t, r]));
    expect((await getMe(other.access)).body.tenants).toEqual([]);
  });

  test("mfa_enabled turns true once a factor is confirmed", async () => {
    const { Secret, TOTP } = await import("otpauth");
    const u = await newUser();
    const enrol = await app.call("POST", a.path("/me/mfa/factors"), { token: u.access, body: { type: "totp" } });
    expect(enrol.status).toBe(201);
    expect((await getMe(u.access)).body.mfa_enabled).toBe(false);
    const secret = enrol.body.secret ?? new URL(enrol.body.otpauth_uri).searchParams.get("secret");
    const code = new TOTP({ secret: Secret.fromBase32(secret) }).generate({ timestamp: app.clock.nowMs() });
    expect((await app.call("POST", a.path(`/me/mfa/factors/${enrol.body.id}/confirm`), { token: u.access, body: { code } })).status).toBe(200);
    expect((await getMe(u.access)).body.mfa_enabled).toBe(true);
  });

  test("401 without a token, with a bad token, with another App's token, and for a deleted user", async () => {
    const u = await newUser();
    for (const token of [undefined, "garbage", u.refresh]) {
      const r = await getMe(token);
      expect(r.status).toBe(401);
      expect(r.body.error.code).toBeDefined();
    }
    const b = await createAuthApp(app);
    expect((await getMe(u.access, b)).status).toBe(401);
    const ub = await newUser(b);
    expect((await getMe(ub.access, b)).status).toBe(200);
    expect((await getMe(ub.access)).status).toBe(401);

    const del = await app.call("DELETE", a.path(`/admin/users/${claimsOf(u.access).sub}`), { token: a.key });
    expect(del.status).toBe(204);
    expect((await getMe(u.access)).status).toBe(401);
  });
});

describe("PATCH /me", () => {
  inProcess("reads the user.updated event from the outbox in the store (app.ctx.db)")("changes display name, username and metadata; emits user.updated with the changed fields", async () => {
    const u = await newUser();
    const username = uniq("renamed");
    const r = await patchMe(u.access, { display_name: "Ada Lovelace", username, metadata: { theme: "dark" } });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ display_name: "Ada Lovelace", username, metadata: { theme: "dark" }, tenants: [], mfa_enabled: false });
    const ev = (await events("user.updated")).filter((e) => e.id === r.body.id);
    expect(ev).toHaveLength(1);
    expect(ev[0].changed_fields.sort()).toEqual(["display_name", "metadata", "username"]);
    // The new username signs in, the old one no longer does.
    const signin = (identifier: string) => app.call("POST", a.path("/auth/signin"), { body: { identifier, password: u.password } });
    expect((await signin(username)).status).toBe(200);
    expect((await signin(u.username)).status).toBe(401);

    // A no-op patch changes nothing and emits nothing; null clears the display name.
    expect((await patchMe(u.access, { username, metadata: { theme: "dark" } })).status).toBe(200);
    expect((await events("user.updated")).filter((e) => e.id === r.body.id)).toHaveLength(1);
    const cleared = await patchMe(u.access, { display_name: null });
    expect(cleared.body.display_name).toBeNull();
    expect((await events("user.updated")).filter((e) => e.id === r.body.id).at(-1).changed_fields).toEqual(["display_name"]);
  });

  test("409 for another user's username (any case), own name in another case is fine; 400 for bad values", async () => {
    const u = await newUser();
    const other = await newUser();
    const taken = await patchMe(u.access, { username: other.username.toUpperCase() });
    expect(taken.status).toBe(409);
    expect(taken.body.error.code).toBe("USERNAME_TAKEN");
    const recased = await patchMe(u.access, { username: u.username.toUpperCase() });
    expect(recased.status).toBe(200);
    expect(recased.body.username).toBe(u.username.toUpperCase());
    expect((await patchMe(u.access, { username: "a b" })).status).toBe(400);
    expect((await patchMe(u.access, { username: "ab" })).status).toBe(400);
    expect((await patchMe(u.access, { display_name: "x".repeat(201) })).status).toBe(400);
    expect((await patchMe(u.access, { metadata: { big: "x".repeat(16 * 1024) } })).status).toBe(400);
    expect((await patchMe(u.access, { metadata: [1, 2] as unknown as Record<string, unknown> })).status).toBe(400);
    expect((await app.call("PATCH", a.path("/me"), { body: { display_name: "x" } })).status).toBe(401);
  });
});

describe("POST /me/password", () => {
  test("changes the password and revokes the other sessions, not the caller's", async () => {
    const u = await newUser();
    const other = await app.call("POST", a.path("/auth/signin"), { body: { identifier: u.username, password: u.password } });
    expect((await changePassword(u, u.password, "short")).status).toBe(400);
    const r = await changePassword(u, u.password);
    expect(r.status).toBe(204);
    const refresh = (t: string) => app.call("POST", a.path("/auth/refresh"), { body: { refresh_token: t } });
    expect((await refresh(other.body.refresh_token)).status).toBe(400);
    expect((await refresh(u.refresh)).status).toBe(200);
    const signin = (password: string) => app.call("POST", a.path("/auth/signin"), { body: { identifier: u.username, password } });
    expect((await signin(u.password)).status).toBe(401);
    expect((await signin("a brand new password")).status).toBe(200);
  });

  inProcess("moves the injected clock through the 15-minute lock")("wrong current password: 4 wrong answers 400 and the right one still works; the 5th wrong locks for 15 minutes", async () => {
    const u1 = await newUser();
    for (let i = 0; i < 4; i++) {
      const r = await changePassword(u1, "not the password");
      expect(r.status).toBe(400);
      expect(r.body.error.code).toBe("INVALID_PASSWORD");
    }
    expect((await changePassword(u1, u1.password)).status).toBe(204);

    const u2 = await newUser();
    for (let i = 0; i < 4; i++) expect((await changePassword(u2, "not the password")).status).toBe(400);
    expect((await changePassword(u2, "not the password")).status).toBe(429);
    expect((await changePassword(u2, u2.password)).status).toBe(429);
    app.clock.advance(15 * MINUTE);
    const fresh = await app.call("POST", a.path("/auth/signin"), { body: { identifier: u2.username, password: u2.password } });
    expect((await changePassword({ ...u2, access: fresh.body.access_token }, u2.password)).status).toBe(204);
  });
});

describe("token checks of a token already verified", () => {
  inProcess("calls the Auth service objects directly to check they answer synchronously (app.auth)")("answer without a promise (no microtask turns on the hot path), with the same result and the same refusals", async () => {
    const u = await newUser();
    const loaded = await app.auth.apps.bySlug(a.slug);
    const bearer = `Bearer ${u.access}`;
    // The first check of a token pays for RSA (async); every later one is a cache hit.
    const first = app.auth.me.get(loaded, bearer);
    expect(first).toBeInstanceOf(Promise);
    await first; // settled before the logout below, on every engine
    expect((await getMe(u.access)).status).toBe(200);
    const me = app.auth.me.get(loaded, bearer);
    expect(me).not.toBeInstanceOf(Promise);
    expect(me).toMatchObject({ id: claimsOf(u.access).sub, username: u.username });
    const verified = app.auth.rbac.verify(loaded, u.access);
    expect(verified).not.toBeInstanceOf(Promise);
    expect(verified).toMatchObject({ valid: true, claims: { sub: claimsOf(u.access).sub } });
    expect(app.auth.rbac.introspect(loaded, u.access)).toMatchObject({ active: true, sub: claimsOf(u.access).sub });

    // Logged out: the cached token no longer stands, answered at once too.
    expect((await app.call("POST", a.path("/auth/logout"), { body: { refresh_token: u.refresh } })).status).toBe(204);
    expect(() => app.auth.me.get(loaded, bearer)).toThrow();
    expect(app.auth.rbac.introspect(loaded, u.access)).toEqual({ active: false });
    expect((await getMe(u.access)).status).toBe(401);
  });
});
