/**
 * Access tokens of ended sessions: routes that read the user (/me, MFA, identities) and
 * introspection refuse them at once, while the stateless checks (/verify, /authorize and
 * offline JWKS verification) keep accepting them until they expire, as documented.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestApp, type TestApp } from "../helpers/app";
import { createAuthApp, signupEndUser, type TestAuthApp } from "../helpers/auth";
import { ON_BINARY } from "../helpers/target";

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.stop());

const refresh = (a: TestAuthApp, refresh_token: string) => app.call("POST", a.path("/auth/refresh"), { body: { refresh_token } });
const signin = (a: TestAuthApp, identifier: string, password: string) => app.call("POST", a.path("/auth/signin"), { body: { identifier, password } });
const introspect = (a: TestAuthApp, token: string) => app.call("POST", a.path("/oauth/introspect"), { body: { token } });

/** Every end-user route that reads the user, as [what, status] for one token. */
async function userRoutes(a: TestAuthApp, token: string) {
  const calls: [string, Promise<{ status: number; body: any }>][] = [
    ["GET /me", app.call("GET", a.path("/me"), { token })],
    ["PATCH /me", app.call("PATCH", a.path("/me"), { token, body: { display_name: "Changed" } })],
    ["POST /me/password", app.call("POST", a.path("/me/password"), { token, body: { current_password: "correct horse battery", new_password: "another horse battery" } })],
    ["GET /me/mfa/factors", app.call("GET", a.path("/me/mfa/factors"), { token })],
    ["POST /me/mfa/factors", app.call("POST", a.path("/me/mfa/factors"), { token, body: { type: "totp" } })],
    ["POST /me/mfa/recovery-codes/regenerate", app.call("POST", a.path("/me/mfa/recovery-codes/regenerate"), { token })],
    ["POST /me/mfa/step-up", app.call("POST", a.path("/me/mfa/step-up"), { token, body: { code: "123456" } })],
    ["GET /me/identities", app.call("GET", a.path("/me/identities"), { token })],
  ];
  const out: [string, number, string | null][] = [];
  for (const [what, p] of calls) {
    const r = await p;
    out.push([what, r.status, r.status === 401 ? r.body.error.code : null]);
  }
  return out;
}

describe("revoked sessions", () => {
  test("refresh-token reuse: both access tokens of the session are refused where the user is read; other sessions go on", async () => {
    const a = await createAuthApp(app);
    const u = await signupEndUser(app, a);
    const other = (await signin(a, u.username, u.password)).body;
    expect((await app.call("GET", a.path("/me"), { token: u.access })).status).toBe(200);
    const rotated = await refresh(a, u.refresh);
    expect(rotated.status).toBe(200);
    expect((await refresh(a, u.refresh)).status).toBe(400); // reuse: the session is revoked

    for (const token of [u.access, rotated.body.access_token]) {
      for (const [what, status, code] of await userRoutes(a, token)) expect([what, status, code]).toEqual([what, 401, "UNAUTHORIZED"]);
      expect((await introspect(a, token)).body).toEqual({ active: false });
      // Stateless checks keep their documented behaviour: valid until the token expires.
      expect((await app.call("POST", a.path("/verify"), { body: { token } })).status).toBe(200);
      expect((await app.call("POST", a.path("/authorize"), { body: { token, permission: "invoice.read" } })).status).toBe(200);
    }
    expect((await app.call("GET", a.path("/me"), { token: other.access_token })).status).toBe(200);
    expect((await introspect(a, other.access_token)).body.active).toBe(true);
  });

  test("logout and a password change elsewhere end sessions the same way", async () => {
    const a = await createAuthApp(app);
    const u = await signupEndUser(app, a);
    expect((await app.call("POST", a.path("/auth/logout"), { body: { refresh_token: u.refresh } })).status).toBe(204);
    expect((await app.call("GET", a.path("/me"), { token: u.access })).status).toBe(401);
    expect((await introspect(a, u.access)).body).toEqual({ active: false });

    const s1 = (await signin(a, u.username, u.password)).body;
    const s2 = (await signin(a, u.username, u.password)).body;
    const changed = await app.call("POST", a.path("/me/password"), { token: s1.access_token, body: { current_password: u.password, new_password: "a different password" } });
    expect(changed.status).toBe(204);
    expect((await app.call("GET", a.path("/me"), { token: s1.access_token })).status).toBe(200); // the caller's own session stays
    expect((await app.call("GET", a.path("/me"), { token: s2.access_token })).status).toBe(401);
  });

  test("introspection of M2M tokens follows their client: deleted or rotated means inactive", async () => {
    const a = await createAuthApp(app);
    const mk = async () => (await app.call("POST", `/auth/v1/apps/${a.id}/m2m-clients`, { token: a.key, body: { name: "c", permissions: ["auth.user.read"] } })).body;
    const token = async (c: { client_id: string; client_secret: string }) =>
      (await app.call("POST", a.path("/oauth/token"), { body: { grant_type: "client_credentials", client_id: c.client_id, client_secret: c.client_secret } })).body.access_token as string;
    const rotating = await mk();
    const before = await token(rotating);
    expect((await introspect(a, before)).body.active).toBe(true);
    // Rotation is compared at second precision (iat): the next second, on the injected clock or the binary's real one.
    if (ON_BINARY) await Bun.sleep(1000 - (Date.now() % 1000) + 20);
    else app.clock.advance(1000);
    const rotated = await app.call("POST", `/auth/v1/apps/${a.id}/m2m-clients/${rotating.id}/rotate-secret`, { token: a.key });
    expect((await introspect(a, before)).body).toEqual({ active: false });
    expect((await introspect(a, await token(rotated.body))).body.active).toBe(true);

    const deleted = await mk();
    const t = await token(deleted);
    await app.call("DELETE", `/auth/v1/apps/${a.id}/m2m-clients/${deleted.id}`, { token: a.key });
    expect((await introspect(a, t)).body).toEqual({ active: false });
  });
});
