/**
 * Federated console sign-in meets MFA and browsers: the callback answers the MFA challenge
 * for an account with an active factor (the provider is the first factor only), and a
 * browser navigation is redirected (303) to return_to instead of ending on a JSON page.
 * Against a real OpenID provider on loopback (test/helpers/oidc-provider.ts).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { base32 } from "oslo/encoding";
import { MINUTE, SECOND } from "../../src/core/clock";
import { totpCodeAt } from "../../src/core/totp";
import { startTestApp, type TestApp } from "../helpers/app";
import { startOidcProvider, type CallbackRequest, type OidcProvider } from "../helpers/oidc-provider";
import { inProcess, ON_BINARY } from "../helpers/target";

let app: TestApp;
let idp: OidcProvider;
const RETURN_TO = "https://console.example.com/admin/";

beforeAll(async () => {
  idp = await startOidcProvider({ now: () => app.clock.nowMs() });
  app = await startTestApp({ ALLOW_PRIVATE_TARGETS: "true", OAUTH_RETURN_TO_ORIGINS: "https://console.example.com", IDP_2_ISSUER: idp.issuer, IDP_2_CLIENT_ID: idp.clientId, IDP_2_CLIENT_SECRET: idp.clientSecret });
});
afterAll(async () => {
  await app.stop();
  idp.stop();
});
// Fresh sign-in and MFA budgets per test; the binary's few starts stay within its real-time budget.
beforeEach(() => {
  if (!ON_BINARY) app.clock.advance(16 * MINUTE);
});

let n = 0;
const newPerson = () => ({ sub: `mfa-sub-${++n}-${Date.now()}`, email: `mfa-fed${n}-${Date.now()}@example.com`, email_verified: true, name: `Fed ${n}` });

async function toCallback(returnTo = RETURN_TO): Promise<CallbackRequest> {
  const s = await app.call("GET", `/platform/v1/auth/oauth/idp_2/start?return_to=${encodeURIComponent(returnTo)}`);
  expect(s.status).toBe(302);
  return idp.authorize(s.headers.get("location")!);
}
const send = (cb: CallbackRequest, headers: Record<string, string> = {}) => app.call("GET", cb.path, { headers });

async function nextCode(secret: string) {
  app.clock.advance(30 * SECOND);
  return totpCodeAt(base32.decode(secret), app.clock.nowMs());
}

/** Signs a new person in through the provider (JSON), then enrols and confirms TOTP. */
async function federatedWithMfa() {
  idp.user = newPerson();
  const first = await send(await toCallback());
  expect(first.status).toBe(200);
  const token = first.body.tokens.access_token as string;
  const e = await app.call("POST", "/platform/v1/me/mfa/totp", { token });
  const c = await app.call("POST", `/platform/v1/me/mfa/totp/${e.body.factor_id}/confirm`, { token, body: { code: await nextCode(e.body.secret) } });
  expect(c.status).toBe(200);
  return { token, secret: e.body.secret as string, recovery: c.body.recovery_codes as string[] };
}

describe("callback with MFA", () => {
  inProcess("moves the injected clock to the next TOTP step for every code (nextCode) and reads the sign-in audit row (app.ctx.db)")("JSON client: the challenge with return_to instead of tokens (no cookie); verify finishes with method oauth+totp", async () => {
    const u = await federatedWithMfa();
    const r = await send(await toCallback());
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ mfa_required: true, mfa_token: expect.any(String), factors: [{ id: expect.any(String), type: "totp", name: "Authenticator app" }], expires_at: expect.any(String), return_to: RETURN_TO });
    expect(r.headers.get("set-cookie")).toBeNull();
    const v = await app.call("POST", "/platform/v1/auth/mfa/verify", { body: { mfa_token: r.body.mfa_token, code: await nextCode(u.secret) } });
    expect(v.status).toBe(200);
    expect(v.headers.get("set-cookie")).toContain("auth_token=");
    const who = await app.call("GET", "/platform/v1/introspect", { token: v.body.access_token });
    expect(who.body.account.email).toBe(idp.user.email!);
    const audit = await app.ctx.db.get<{ metadata: string }>("SELECT metadata FROM platform_audit_log WHERE action = 'account.signin' AND actor_id = ? ORDER BY created_at DESC, id DESC LIMIT 1", who.body.account.id);
    expect(JSON.parse(audit!.metadata)).toMatchObject({ method: "oauth+totp", provider: "idp_2" });
  });

  inProcess("moves the injected clock to the next TOTP step for every code (nextCode)")("browser navigation: 303 to return_to#mfa_token=<token>, no cookie; a recovery code finishes it", async () => {
    const u = await federatedWithMfa();
    const r = await send(await toCallback(), { "sec-fetch-mode": "navigate", accept: "text/html,application/xhtml+xml,*/*;q=0.8" });
    expect(r.status).toBe(303);
    const to = new URL(r.headers.get("location")!);
    expect(to.origin + to.pathname).toBe(RETURN_TO);
    const token = new URLSearchParams(to.hash.slice(1)).get("mfa_token")!;
    expect(token).toMatch(/^[0-9a-f-]{36}$/);
    expect(r.headers.get("set-cookie")).toBeNull();
    const v = await app.call("POST", "/platform/v1/auth/mfa/recover", { body: { mfa_token: token, recovery_code: u.recovery[0] } });
    expect(v.status).toBe(200);
  });
});

describe("browser navigation without MFA", () => {
  test("Sec-Fetch-Mode: navigate gets 303 to return_to with the session cookie; the cookie signs in", async () => {
    idp.user = newPerson();
    const r = await send(await toCallback(`${RETURN_TO}?tab=1`), { "sec-fetch-mode": "navigate" });
    expect(r.status).toBe(303);
    expect(r.headers.get("location")).toBe(`${RETURN_TO}?tab=1`);
    expect(r.headers.get("cache-control")).toBe("no-store");
    const cookie = r.headers.get("set-cookie")!;
    expect(cookie).toContain("auth_token=");
    expect(cookie.toLowerCase()).toContain("httponly");
    const who = await app.call("GET", "/platform/v1/introspect", { headers: { cookie: cookie.split(";")[0]! } });
    expect(who.status).toBe(200);
    expect(who.body.account.email).toBe(idp.user.email!);
  });

  test("Accept decides without Sec-Fetch-Mode: text/html over JSON redirects, JSON (or nothing) keeps the 200 JSON contract", async () => {
    idp.user = newPerson();
    expect((await send(await toCallback(), { accept: "text/html,application/xhtml+xml;q=0.9,*/*;q=0.8" })).status).toBe(303);
    expect((await send(await toCallback(), { accept: "application/json" })).status).toBe(200);
    expect((await send(await toCallback(), { accept: "text/html;q=0.5, application/json" })).status).toBe(200);
    expect((await send(await toCallback(), { accept: "*/*" })).status).toBe(200);
    const plain = await send(await toCallback());
    expect(plain.status).toBe(200);
    expect(plain.body.tokens.access_token).toBeString();
    // Errors stay JSON even for a browser.
    const bad = await app.call("GET", "/platform/v1/auth/oauth/idp_2/callback?state=nope&code=x", { headers: { "sec-fetch-mode": "navigate" } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe("INVALID_OAUTH_STATE");
  });
});
