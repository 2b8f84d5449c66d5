import { afterAll, beforeAll, expect, test } from "bun:test";
import { startTestApp, type TestApp } from "../helpers/app";
import { createAuthApp, signupEndUser, claimsOf } from "../helpers/auth";

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.stop());

test("skeleton: create app, sign up, sign in, refresh", async () => {
  const a = await createAuthApp(app);
  const u = await signupEndUser(app, a);
  expect(claimsOf(u.access).iss).toBe(a.issuer);
  const s = await app.call("POST", a.path("/auth/signin"), { body: { identifier: u.username, password: u.password } });
  expect(s.status).toBe(200);
  const r = await app.call("POST", a.path("/auth/refresh"), { body: { refresh_token: s.body.refresh_token } });
  expect(r.status).toBe(200);
  const j = await app.call("GET", a.path("/.well-known/jwks.json"));
  expect(j.body.keys.length).toBe(1);
});
