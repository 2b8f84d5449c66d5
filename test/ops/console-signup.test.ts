/**
 * First run and CONSOLE_SIGNUP: setup stays open until an operator exists, whatever
 * sign-ups happen first, and the sign-up mode decides who else may create an account
 * (the form, and a first federated sign-in).
 */
import { afterAll, describe, expect, test } from "bun:test";
import { ConfigError, loadConfig } from "../../src/config";
import { DAY } from "../../src/core/clock";
import { createWorkspace, signup, startTestApp, type TestApp } from "../helpers/app";
import { startOidcProvider } from "../helpers/oidc-provider";
import { inProcess } from "../helpers/target";

const apps: TestApp[] = [];
afterAll(async () => {
  for (const a of apps) await a.stop();
});
async function app(env: Record<string, string> = {}) {
  const a = await startTestApp(env);
  apps.push(a);
  return a;
}

const setupToken = async (a: TestApp) => (await a.platform.setup.bootstrap())!.setupUrl!.split("#setup=")[1];
const operator = { email: "ops@example.com", username: "ops", password: "operator-password" };
const trySignup = (a: TestApp, email: string, username = email.split("@")[0]) =>
  a.call("POST", "/platform/v1/auth/signup", { body: { email, username, password: "correct horse battery" } });

describe("setup", () => {
  inProcess("calls the start-up bootstrap in-process after a sign-up")("a sign-up before setup does not close it: the setup token still creates the operator, once", async () => {
    const a = await app({ CONSOLE_SIGNUP: "open" });
    const token = await setupToken(a);
    await signup(a); // the bug: this used to end setup with no operator
    expect((await a.call("GET", "/platform/v1/auth/setup")).body).toEqual({ needs_setup: true });
    // A restart while no operator exists mints a fresh link (the old one is replaced).
    const fresh = await setupToken(a);
    expect(fresh).not.toBe(token);
    const stale = await a.call("POST", "/platform/v1/auth/setup", { body: { ...operator, setup_token: token } });
    expect(stale.status).toBe(400);

    const ok = await a.call("POST", "/platform/v1/auth/setup", { body: { ...operator, setup_token: fresh } });
    expect(ok.status).toBe(200);
    expect((await a.call("GET", "/platform/v1/introspect", { token: ok.body.access_token })).body.account.is_operator).toBe(true);
    expect((await a.call("GET", "/platform/v1/auth/setup")).body).toEqual({ needs_setup: false });
    const again = await a.call("POST", "/platform/v1/auth/setup", { body: { ...operator, email: "x@example.com", username: "x", setup_token: fresh } });
    expect(again.status).toBe(400);
    expect(again.body.error.code).toBe("INVALID_SETUP_TOKEN");
    expect(await a.platform.setup.bootstrap()).toBeNull(); // an operator exists: no link on the next start
  });

  inProcess("calls the start-up bootstrap in-process after a sign-up")("BUNKER_ADMIN_EMAIL already taken by a sign-up: that account is not promoted, a setup link is issued instead", async () => {
    const a = await app({ CONSOLE_SIGNUP: "open", BUNKER_ADMIN_EMAIL: "root@example.com", BUNKER_ADMIN_PASSWORD: "root-password-1" });
    const squatter = await signup(a, { email: "root@example.com", username: "squatter" });
    const boot = await a.platform.setup.bootstrap();
    expect(boot?.created).toBeUndefined();
    expect(boot?.warning).toContain("BUNKER_ADMIN_EMAIL was not used");
    expect(boot?.setupUrl).toContain("#setup=");
    expect((await a.call("GET", "/platform/v1/introspect", { token: squatter.token })).body.account.is_operator).toBe(false);
    expect((await a.call("GET", "/platform/v1/auth/setup")).body).toEqual({ needs_setup: true });
  });
});

describe("CONSOLE_SIGNUP", () => {
  test("configuration: invite_only by default; open, invite_only, closed; anything else is refused", () => {
    expect(loadConfig({}).consoleSignup).toBe("invite_only");
    for (const m of ["open", "invite_only", "closed"]) expect(loadConfig({ CONSOLE_SIGNUP: m }).consoleSignup).toBe(m as any);
    expect(() => loadConfig({ CONSOLE_SIGNUP: "yes" })).toThrow(ConfigError);
    expect(() => loadConfig({ CONSOLE_SIGNUP: "yes" })).toThrow('CONSOLE_SIGNUP must be open, invite_only or closed (got "yes")');
  });

  inProcess("calls the start-up bootstrap in-process after a sign-up")("closed: sign-up is 403 SIGNUP_DISABLED, and the operator is still created through setup", async () => {
    const a = await app({ CONSOLE_SIGNUP: "closed" });
    const token = await setupToken(a);
    const r = await trySignup(a, "eve@example.com");
    expect(r.status).toBe(403);
    expect(r.body.error.code).toBe("SIGNUP_DISABLED");
    expect(r.headers.get("x-request-id")).toBeString();
    // Validation still comes first: a malformed request is a 400 whatever the mode.
    expect((await trySignup(a, "not-an-email", "eve")).status).toBe(400);
    const ok = await a.call("POST", "/platform/v1/auth/setup", { body: { ...operator, setup_token: token } });
    expect(ok.status).toBe(200);
    expect(await a.ctx.db.get("SELECT COUNT(*) AS n FROM platform_accounts")).toEqual({ n: 1 });
  });

  inProcess("calls the start-up bootstrap in-process after a sign-up")("invite_only: only an address with a live workspace invitation signs up (not revoked, not expired)", async () => {
    const a = await app({ CONSOLE_SIGNUP: "invite_only", BUNKER_ADMIN_EMAIL: "root@example.com", BUNKER_ADMIN_PASSWORD: "root-password-1" });
    await a.platform.setup.bootstrap();
    const op = (await a.call("POST", "/platform/v1/auth/signin", { body: { identifier: "root", password: "root-password-1" } })).body.access_token;
    const ws = await createWorkspace(a, op);
    const invite = (email: string) => a.call("POST", `/platform/v1/workspaces/${ws.slug}/invitations`, { token: op, body: { email } });

    const stranger = await trySignup(a, "stranger@example.com");
    expect(stranger.status).toBe(403);
    expect(stranger.body.error.code).toBe("SIGNUP_DISABLED");

    expect((await invite("Grace@Example.com")).status).toBe(201);
    expect((await trySignup(a, "grace@example.com")).status).toBe(200);

    const revoked = (await invite("rev@example.com")).body.id;
    expect((await a.call("DELETE", `/platform/v1/workspaces/${ws.slug}/invitations/${revoked}`, { token: op })).status).toBe(204);
    expect((await trySignup(a, "rev@example.com")).status).toBe(403);

    expect((await invite("late1@example.com")).status).toBe(201);
    expect((await invite("late2@example.com")).status).toBe(201);
    a.clock.advance(7 * DAY - 1); // invitations live 7 days: one millisecond before the end...
    expect((await trySignup(a, "late1@example.com")).status).toBe(200);
    a.clock.advance(1); // ...and at the end
    expect((await trySignup(a, "late2@example.com")).status).toBe(403);
  });

  inProcess("reads the store in-process")("a first federated sign-in is a sign-up too: closed refuses to create the account", async () => {
    let a: TestApp;
    const idp = await startOidcProvider({ now: () => a.clock.nowMs() });
    try {
      a = await app({
        CONSOLE_SIGNUP: "closed",
        ALLOW_PRIVATE_TARGETS: "true",
        OAUTH_RETURN_TO_ORIGINS: "https://console.example.com",
        IDP_2_ISSUER: idp.issuer,
        IDP_2_CLIENT_ID: idp.clientId,
        IDP_2_CLIENT_SECRET: idp.clientSecret,
      });
      idp.user = { sub: "fed-1", email: "fed@example.com", email_verified: true, name: "Fed" };
      const s = await a.call("GET", `/platform/v1/auth/oauth/idp_2/start?return_to=${encodeURIComponent("https://console.example.com/x")}`);
      expect(s.status).toBe(302);
      const cb = await idp.authorize(s.headers.get("location")!);
      const r = await a.call("GET", cb.path);
      expect(r.status).toBe(403);
      expect(r.body.error.code).toBe("SIGNUP_DISABLED");
      expect(await a.ctx.db.get("SELECT COUNT(*) AS n FROM platform_accounts")).toEqual({ n: 0 });
    } finally {
      idp.stop();
    }
  });
});
