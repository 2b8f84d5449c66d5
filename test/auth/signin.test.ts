/**
 * End-user sign-up, sign-in, refresh and logout of an App, with tokens checked by an
 * independent verifier (jose against the served JWKS, issuer pinned).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createRemoteJWKSet, createLocalJWKSet, jwtVerify } from "jose";
import { ownerWithKey, startTestApp, type TestApp } from "../helpers/app";
import { claimsOf, createAuthApp, signupEndUser, type TestAuthApp } from "../helpers/auth";
import { DAY, MINUTE, SECOND } from "../../src/core/clock";
import { inProcess, ON_BINARY } from "../helpers/target";

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.stop());

const signin = (a: TestAuthApp, identifier: string, password: string, extra: Record<string, unknown> = {}) =>
  app.call("POST", a.path("/auth/signin"), { body: { identifier, password, ...extra } });

async function verifyLocally(a: TestAuthApp, token: string) {
  const jwks = createLocalJWKSet((await app.call("GET", a.path("/.well-known/jwks.json"))).body);
  return jwtVerify(token, jwks, { issuer: a.issuer, currentDate: app.clock.now() });
}

describe("sign-up", () => {
  test("publishable key: consumer token response with the spec's claims", async () => {
    const a = await createAuthApp(app);
    const r = await app.call("POST", a.path("/auth/signup"), { token: a.publishable_key, body: { username: "ada", email: "Ada@Example.com", password: "xk7-p2qa", display_name: "Ada" } });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ token_type: "Bearer", expires_in: 3600 });
    expect(Object.keys(r.body).sort()).toEqual(["access_token", "expires_in", "refresh_token", "token_type"]);
    expect(r.body.refresh_token.split(".")).toHaveLength(3);
    const { payload, protectedHeader } = await verifyLocally(a, r.body.access_token);
    expect(protectedHeader.alg).toBe("RS256");
    expect(payload).toMatchObject({ iss: a.issuer, type: "end_user", role: null, permissions: [], amr: ["pwd"] });
    expect(typeof payload.sub).toBe("string");
    expect(typeof payload.jti).toBe("string");
    expect(payload.exp! - payload.iat!).toBe(3600);
    expect(payload.aud).toBeUndefined();
    expect(payload.tid).toBeUndefined();
  });

  test("aud claim when the App sets an audience", async () => {
    const a = await createAuthApp(app, { audience: "https://api.acme.test" });
    const u = await signupEndUser(app, a);
    const { payload } = await verifyLocally(a, u.access);
    expect(payload.aud).toBe("https://api.acme.test");
  });

  test("authorization: required; unknown or another App's publishable key 401", async () => {
    const a = await createAuthApp(app);
    const b = await createAuthApp(app);
    const body = { username: "bob", email: "bob@example.com", password: "xk7-p2qa" };
    expect((await app.call("POST", a.path("/auth/signup"), { body })).status).toBe(401);
    expect((await app.call("POST", a.path("/auth/signup"), { token: "pk_nope", body })).status).toBe(401);
    expect((await app.call("POST", a.path("/auth/signup"), { token: b.publishable_key, body })).status).toBe(401);
    expect((await app.call("POST", a.path("/auth/signup"), { token: a.session, body })).status).toBe(401);
  });

  test("workspace API key of the App's workspace works; another workspace's key 404; a key without auth.user.create 403", async () => {
    const a = await createAuthApp(app);
    const other = await ownerWithKey(app);
    expect((await app.call("POST", a.path("/auth/signup"), { token: a.key, body: { username: "kay", email: "kay@example.com", password: "xk7-p2qa" } })).status).toBe(200);
    expect((await app.call("POST", a.path("/auth/signup"), { token: other.token, body: { username: "kay2", email: "kay2@example.com", password: "xk7-p2qa" } })).status).toBe(404);
    const minted = await app.call("POST", `/platform/v1/workspaces/${a.workspace.slug}/api-keys`, {
      token: a.session,
      body: { name: "ro", policy: [{ effect: "allow", actions: ["auth.app.read"], resources: ["*"] }] },
    });
    expect((await app.call("POST", a.path("/auth/signup"), { token: minted.body.key, body: { username: "kay3", email: "kay3@example.com", password: "xk7-p2qa" } })).status).toBe(403);
  });

  test("signup_requires_pak: the publishable key is refused, the workspace key accepted", async () => {
    const a = await createAuthApp(app, { signup_requires_pak: true });
    const body = { username: "pak", email: "pak@example.com", password: "xk7-p2qa" };
    const refused = await app.call("POST", a.path("/auth/signup"), { token: a.publishable_key, body });
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe("PLATFORM_API_KEY_REQUIRED");
    expect((await app.call("POST", a.path("/auth/signup"), { token: a.key, body })).status).toBe(200);
  });

  test("signup_enabled false: 403 SIGNUP_DISABLED for both credentials", async () => {
    const a = await createAuthApp(app, { signup_enabled: false });
    const body = { username: "off", email: "off@example.com", password: "xk7-p2qa" };
    for (const token of [a.publishable_key, a.key]) {
      const r = await app.call("POST", a.path("/auth/signup"), { token, body });
      expect(r.status).toBe(403);
      expect(r.body.error.code).toBe("SIGNUP_DISABLED");
    }
  });

  test("validation at the edges: username 3+, App password policy, duplicates 409", async () => {
    const a = await createAuthApp(app, { password_min_length: 12 });
    const up = (body: Record<string, unknown>) => app.call("POST", a.path("/auth/signup"), { token: a.publishable_key, body });
    expect((await up({ username: "ab", email: "ab@example.com", password: "xk7-p2qa-9wz" })).status).toBe(400);
    const short = await up({ username: "abc", email: "abc@example.com", password: "xk7-p2qa-9w" });
    expect(short.status).toBe(400);
    expect(short.body.error.details[0]).toEqual({ field: "password", reason: "must be at least 12 characters" });
    expect((await up({ username: "abc", email: "abc@example.com", password: "xk7-p2qa-9wz" })).status).toBe(200);
    const dupEmail = await up({ username: "abcd", email: "ABC@example.com", password: "xk7-p2qa-9wz" });
    expect(dupEmail.status).toBe(409);
    expect(dupEmail.body.error.code).toBe("EMAIL_TAKEN");
    const dupName = await up({ username: "ABC", email: "other@example.com", password: "xk7-p2qa-9wz" });
    expect(dupName.status).toBe(409);
    expect(dupName.body.error.code).toBe("USERNAME_TAKEN");
    expect((await up({ username: "bad name", email: "bn@example.com", password: "xk7-p2qa-9wz" })).status).toBe(400);
    expect((await up({ username: "nomail", email: "not-an-email", password: "xk7-p2qa-9wz" })).status).toBe(400);
    // metadata must be an object: an array is refused, not coerced into {"0": ...}.
    const arr = await up({ username: "arr", email: "arr@example.com", password: "xk7-p2qa-9wz", metadata: [1, 2] });
    expect(arr.status).toBe(400);
    expect(arr.body.error.details[0].field).toBe("metadata");
  });

  test("the same username and email may exist in two Apps (isolation)", async () => {
    const a = await createAuthApp(app);
    const b = await createAuthApp(app);
    const same = { username: "twin", email: "twin@example.com" };
    await signupEndUser(app, a, same);
    await signupEndUser(app, b, same);
  });
});

describe("sign-in", () => {
  test("by username (any case); an unverified email does not authenticate", async () => {
    const a = await createAuthApp(app);
    const u = await signupEndUser(app, a);
    const r = await signin(a, u.username.toUpperCase(), u.password);
    expect(r.status).toBe(200);
    expect(claimsOf(r.body.access_token).sub).toBe(claimsOf(u.access).sub);
    const byEmail = await signin(a, u.email, u.password);
    expect(byEmail.status).toBe(401);
    expect(byEmail.body.error.code).toBe("INVALID_CREDENTIALS");
  });

  test("unknown identifier and wrong password answer the same 401 body", async () => {
    const a = await createAuthApp(app);
    const u = await signupEndUser(app, a);
    const wrong = await signin(a, u.username, "wrong password");
    const unknown = await signin(a, "nobody-here", "wrong password");
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(401);
    expect(wrong.body).toEqual(unknown.body);
  });

  inProcess("moves the injected clock through the 15-minute lock")("4 failures lock the identifier for 15 minutes, identically for unknown identifiers", async () => {
    const a = await createAuthApp(app);
    const u = await signupEndUser(app, a);
    for (const id of [u.username, "ghost-user"]) {
      for (let i = 0; i < 4; i++) {
        expect((await signin(a, id, "wrong password")).status).toBe(401);
        app.clock.advance(13 * SECOND);
      }
      const locked = await signin(a, id, id === u.username ? u.password : "x");
      expect(locked.status).toBe(429);
      expect(locked.body.error.code).toBe("TOO_MANY_ATTEMPTS");
    }
    app.clock.advance(15 * MINUTE);
    expect((await signin(a, u.username, u.password)).status).toBe(200);
  });

  inProcess("moves the injected clock past the one-minute burst window")("burst: the 6th attempt within a minute is 429, even when the first five succeeded", async () => {
    const a = await createAuthApp(app);
    const u = await signupEndUser(app, a);
    for (let i = 0; i < 5; i++) expect((await signin(a, u.username, u.password)).status).toBe(200);
    expect((await signin(a, u.username, u.password)).status).toBe(429);
    app.clock.advance(MINUTE);
    expect((await signin(a, u.username, u.password)).status).toBe(200);
  });

  test("counters are per App: a lock in App A leaves App B alone", async () => {
    const a = await createAuthApp(app);
    const b = await createAuthApp(app);
    const same = { username: "shared-name", email: "shared@example.com", password: "correct horse battery" };
    await signupEndUser(app, a, same);
    await signupEndUser(app, b, same);
    for (let i = 0; i < 4; i++) await signin(a, same.username, "wrong");
    expect((await signin(a, same.username, same.password)).status).toBe(429);
    expect((await signin(b, same.username, same.password)).status).toBe(200);
  });

  test("tenant_id of no tenant the user is in: 403 (before any token)", async () => {
    const a = await createAuthApp(app);
    const u = await signupEndUser(app, a);
    const r = await signin(a, u.username, u.password, { tenant_id: "tnt_000000000000" });
    expect(r.status).toBe(403);
    expect(r.body.error.code).toBe("NOT_TENANT_MEMBER");
    // The password is checked first: a wrong one is the usual 401.
    expect((await signin(a, u.username, "wrong password", { tenant_id: "tnt_000000000000" })).status).toBe(401);
  });
});

describe("refresh and logout", () => {
  test("rotation: a new refresh token each time; reuse of a rotated one revokes the session", async () => {
    const a = await createAuthApp(app);
    const u = await signupEndUser(app, a);
    const r1 = await app.call("POST", a.path("/auth/refresh"), { body: { refresh_token: u.refresh } });
    expect(r1.status).toBe(200);
    expect(r1.body.refresh_token).not.toBe(u.refresh);
    expect(claimsOf(r1.body.access_token).sid).toBe(claimsOf(u.access).sid);
    const reuse = await app.call("POST", a.path("/auth/refresh"), { body: { refresh_token: u.refresh } });
    expect(reuse.status).toBe(400);
    // The whole session is gone: the newest token fails too.
    expect((await app.call("POST", a.path("/auth/refresh"), { body: { refresh_token: r1.body.refresh_token } })).status).toBe(400);
  });

  inProcess("moves the injected clock to the access token's expiry")("logout destroys the session; the access token stays valid until it expires", async () => {
    const a = await createAuthApp(app);
    const u = await signupEndUser(app, a);
    expect((await app.call("POST", a.path("/auth/logout"), { body: { refresh_token: u.refresh } })).status).toBe(204);
    expect((await app.call("POST", a.path("/auth/refresh"), { body: { refresh_token: u.refresh } })).status).toBe(400);
    expect((await verifyLocally(a, u.access)).payload.sub).toBe(claimsOf(u.access).sub);
    app.clock.advance(3600 * SECOND);
    await expect(verifyLocally(a, u.access)).rejects.toThrow();
  });

  test("a refresh token of App A is invalid at App B", async () => {
    const a = await createAuthApp(app);
    const b = await createAuthApp(app);
    const u = await signupEndUser(app, a);
    expect((await app.call("POST", b.path("/auth/refresh"), { body: { refresh_token: u.refresh } })).status).toBe(400);
    expect((await app.call("POST", a.path("/auth/refresh"), { body: { refresh_token: u.refresh } })).status).toBe(200);
  });

  inProcess("moves the injected clock past refresh_token_ttl")("the session ends after refresh_token_ttl; access tokens never outlive it", async () => {
    const a = await createAuthApp(app, { refresh_token_ttl: 3600, access_token_ttl: 600 });
    const u = await signupEndUser(app, a);
    app.clock.advance(59 * MINUTE);
    const late = await app.call("POST", a.path("/auth/refresh"), { body: { refresh_token: u.refresh } });
    expect(late.status).toBe(200);
    expect(late.body.expires_in).toBe(60);
    app.clock.advance(MINUTE);
    expect((await app.call("POST", a.path("/auth/refresh"), { body: { refresh_token: late.body.refresh_token } })).status).toBe(400);
  });

  test("garbage refresh tokens are 400 in the error body", async () => {
    const a = await createAuthApp(app);
    const r = await app.call("POST", a.path("/auth/refresh"), { body: { refresh_token: "nope" } });
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe("INVALID_TOKEN");
    expect((await app.call("POST", a.path("/auth/refresh"), { body: {} })).status).toBe(400);
  });
});

describe("independent verification over HTTP", () => {
  test("jose's remote JWKS verifies tokens with the issuer pinned; another App's token fails", async () => {
    const server = app.listen(0, "127.0.0.1");
    const a = await createAuthApp(app);
    const b = await createAuthApp(app);
    const u = await signupEndUser(app, a);
    const jwksA = createRemoteJWKSet(new URL(`http://127.0.0.1:${server.port}${a.path("/.well-known/jwks.json")}`));
    const { payload } = await jwtVerify(u.access, jwksA, { issuer: a.issuer, currentDate: app.clock.now() });
    expect(payload.type).toBe("end_user");
    const jwksB = createRemoteJWKSet(new URL(`http://127.0.0.1:${server.port}${b.path("/.well-known/jwks.json")}`));
    await expect(jwtVerify(u.access, jwksB, { issuer: b.issuer, currentDate: app.clock.now() })).rejects.toThrow();
    await expect(jwtVerify(u.access, jwksA, { issuer: b.issuer, currentDate: app.clock.now() })).rejects.toThrow();
    if (!ON_BINARY) app.clock.advance(DAY);
  });
});
