/**
 * Console journey, instance: version, health and readiness, the metrics charts drawn from
 * /metrics samples, and an operator suspending and reactivating an account; two-step
 * verification (enrol, sign in with a code or a recovery code, operator reset) and a
 * federated sign-in through a real OpenID provider that ends on the console.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Page } from "playwright-core";
import { base32 } from "oslo/encoding";
import { SECOND } from "../../src/core/clock";
import { totpCodeAt } from "../../src/core/totp";
import { journey, launchBrowser, openConsole, SIGNED_OUT, unexpected } from "../helpers/browser";
import { startOidcProvider } from "../helpers/oidc-provider";
import { TEST_ENGINE } from "../helpers/engine";
import { createOperator, OPERATOR, screen, signInPage, startConsole, type ConsoleFixture } from "../helpers/console-app";
import { signup, startTestApp, type TestApp } from "../helpers/app";
import { VERSION } from "../../src/app";
import { inProcess } from "../helpers/target";

const T = 60_000;
let f: ConsoleFixture;
beforeAll(async () => {
  f = await startConsole();
}, T);
afterAll(async () => {
  await f?.stop();
});

test("console: health, readiness, version, metrics charts, accounts", async () => {
  const token = await createOperator(f.app);
  const other = await signup(f.app, { email: "member@example.com", username: "member" });
  const cp = await signInPage(f);
  const { page } = cp;
  await journey(cp, "instance", async () => {

    await screen(page, "Instance", "Health & metrics");
    await page.getByTestId("version").getByText(VERSION).waitFor();
    await page.getByTestId("readiness").getByText("ready", { exact: true }).waitFor();
    expect(await page.getByTestId("readiness").textContent()).toContain("database up, scheduler running");
    // Two samples a second apart: the four charts are drawn.
    await page.getByRole("img", { name: "Requests / 5 s chart" }).locator("canvas").waitFor();
    expect(await page.locator(".chart canvas").count()).toBe(4);
    await cp.shot("instance-metrics");
    // The operator downloads a backup of the database (SQLite; PostgreSQL answers 409).
    if (TEST_ENGINE === "sqlite") {
      const [download] = await Promise.all([page.waitForEvent("download"), page.getByRole("link", { name: "Download backup" }).click()]);
      expect(download.suggestedFilename()).toMatch(/^bunker-\d{8}T\d{6}Z\.db$/);
    } else expect(await page.getByRole("link", { name: "Download backup" }).getAttribute("href")).toBe("/platform/v1/admin/backup");

    // Accounts: suspend the member (their session stops working), then reactivate.
    await screen(page, "Instance", "Accounts");
    const row = page.getByRole("table", { name: "Accounts" }).locator("tr", { hasText: "member@example.com" });
    await row.getByRole("button", { name: "Suspend" }).click();
    await row.getByText("suspended").waitFor();
    const list = await f.app.call("GET", "/platform/v1/admin/accounts", { token });
    expect(list.body.data.find((a: any) => a.email === "member@example.com").status).toBe("suspended");
    expect((await f.app.call("GET", "/platform/v1/introspect", { token: other.token })).status).toBe(401);
    await row.getByRole("button", { name: "Reactivate" }).click();
    await row.getByText("active", { exact: true }).waitFor();
    await cp.shot("instance-accounts");

    expect(unexpected(cp.errors, [SIGNED_OUT])).toEqual([]);
  });
}, T);

test("console: with METRICS_TOKEN set, the page asks for it and then draws the charts; a configured identity provider gets a sign-in button", async () => {
  const idp = await startOidcProvider({ now: () => Date.now() });
  const g = await startConsole({ METRICS_TOKEN: "metrics-token-0123456789", ALLOW_PRIVATE_TARGETS: "true", IDP_2_ISSUER: idp.issuer, IDP_2_CLIENT_ID: idp.clientId, IDP_2_CLIENT_SECRET: idp.clientSecret });
  try {
    await createOperator(g.app);
    const anon = await openConsole(g.browser, g.base);
    await anon.page.goto("/admin/");
    const button = anon.page.getByRole("link", { name: `Sign in with ${new URL(idp.issuer).host}` });
    expect(await button.getAttribute("href")).toBe(`/platform/v1/auth/oauth/idp_2/start?return_to=${encodeURIComponent(`${g.base}/admin/`)}`);
    const cp = await signInPage(g);
    const { page } = cp;
    await journey(cp, "metrics-token", async () => {
      await screen(page, "Instance", "Health & metrics");
      await page.getByLabel("METRICS_TOKEN").fill("metrics-token-0123456789");
      await page.getByRole("button", { name: "Read metrics" }).click();
      await page.getByRole("img", { name: "Webhook backlog chart" }).locator("canvas").waitFor();
      await page.getByLabel("METRICS_TOKEN").waitFor({ state: "detached" });
      // The refusals before the token was given are the only errors.
      expect(unexpected(cp.errors, [SIGNED_OUT, /status of 401 .*\/metrics$/])).toEqual([]);
    });
  } finally {
    await g.stop();
    idp.stop();
  }
}, T);

/** The TOTP code of the next 30 s step on the app's clock (each use moves the clock, so no code is a replay). */
async function nextCode(app: TestApp, secret: string) {
  app.clock.advance(30 * SECOND);
  return totpCodeAt(base32.decode(secret), app.clock.nowMs());
}

async function waitFor(what: string, check: () => Promise<boolean>) {
  for (let i = 0; i < 100; i++) {
    if (await check()) return;
    await Bun.sleep(50);
  }
  throw new Error(`timed out waiting for ${what}`);
}

async function signOutAndIn(page: Page, who: { identifier: string; password: string }) {
  await page.getByRole("button", { name: "Sign out" }).click();
  await page.getByLabel("Email or username").fill(who.identifier);
  await page.getByLabel("Password").fill(who.password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("heading", { name: "Two-step verification" }).waitFor();
}

inProcess("moves the injected clock to the next TOTP step (a code may be used once per 30 s)")("console: two-step verification: enrol in Account · Security, sign out, sign in with password + code, then with a recovery code; an operator resets another account's MFA", async () => {
  const g = await startConsole();
  try {
    const token = await createOperator(g.app);
    const cp = await signInPage(g);
    const { page } = cp;
    const who = { identifier: OPERATOR.username, password: OPERATOR.password };
    await journey(cp, "mfa", async () => {
      await screen(page, "Account", "Security");
      await page.getByRole("button", { name: "Set up an authenticator app" }).click();
      const secret = (await page.getByTestId("totp-secret").textContent())!.trim();
      expect(secret).toMatch(/^[A-Z2-7]{32}$/);
      expect(await page.getByTestId("totp-uri").textContent()).toStartWith("otpauth://totp/");
      await cp.shot("account-mfa-enrol");
      await page.getByLabel("Code from the app").fill(await nextCode(g.app, secret));
      await page.getByRole("button", { name: "Confirm", exact: true }).click();
      // allTextContents does not wait: the codes appear once the confirm request has answered.
      await page.getByTestId("recovery-codes").locator("code").nth(9).waitFor();
      const codes = await page.getByTestId("recovery-codes").locator("code").allTextContents();
      expect(codes).toHaveLength(10);
      await cp.shot("account-mfa-recovery-codes");
      await page.getByRole("region", { name: "Recovery codes" }).getByRole("button", { name: "Done" }).click();
      await page.getByText("10 recovery codes left").waitFor();
      expect((await g.app.call("GET", "/platform/v1/me/mfa", { token })).body.enabled).toBe(true);

      // Password, then the code step.
      await signOutAndIn(page, who);
      await page.getByLabel("Authentication code").fill(await nextCode(g.app, secret));
      await cp.shot("signin-mfa-code");
      await page.getByRole("button", { name: "Verify" }).click();
      await page.getByTestId("who").waitFor();

      // Password, then a recovery code instead.
      await signOutAndIn(page, who);
      await page.getByRole("button", { name: "Use a recovery code" }).click();
      await page.getByLabel("Recovery code").fill(codes[0]!);
      await page.getByRole("button", { name: "Verify" }).click();
      await page.getByTestId("who").waitFor();
      await screen(page, "Account", "Security");
      await page.getByText("9 recovery codes left").waitFor();

      // The operator resets a member's MFA from the accounts list.
      const member = await signup(g.app, { email: "mfa-member@example.com", username: "mfamember" });
      const e = await g.app.call("POST", "/platform/v1/me/mfa/totp", { token: member.token });
      await g.app.call("POST", `/platform/v1/me/mfa/totp/${e.body.factor_id}/confirm`, { token: member.token, body: { code: await nextCode(g.app, e.body.secret) } });
      expect((await g.app.call("GET", "/platform/v1/me/mfa", { token: member.token })).body.enabled).toBe(true);
      await screen(page, "Instance", "Accounts");
      const row = page.getByRole("table", { name: "Accounts" }).locator("tr", { hasText: "mfa-member@example.com" });
      await row.getByRole("button", { name: "Reset MFA" }).click();
      await row.getByRole("button", { name: "Confirm reset mfa" }).click();
      await waitFor("the MFA reset", async () => !(await g.app.call("GET", "/platform/v1/me/mfa", { token: member.token })).body.enabled);
      const signin = await g.app.call("POST", "/platform/v1/auth/signin", { body: { identifier: "mfamember", password: member.password } });
      expect(signin.body.access_token).toBeString();
      await cp.shot("instance-accounts-mfa-reset");
      expect(unexpected(cp.errors, [SIGNED_OUT])).toEqual([]);
    });
  } finally {
    await g.stop();
  }
}, T);

inProcess("moves the injected clock to the next TOTP step (a code may be used once per 30 s)")("console: 'Sign in with <issuer>' through a real OpenID provider ends on the console signed in (not a JSON page); with MFA on, the console asks for the code", async () => {
  // The provider sends the browser back to PUBLIC_URL, so the app must listen where PUBLIC_URL says.
  const probe = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("") });
  const port = probe.port!;
  void probe.stop(true);
  const base = `http://127.0.0.1:${port}`;
  let app: TestApp | undefined;
  const idp = await startOidcProvider({ now: () => app!.clock.nowMs() });
  const browser = await launchBrowser();
  app = await startTestApp({ PUBLIC_URL: base, OAUTH_RETURN_TO_ORIGINS: base, ALLOW_PRIVATE_TARGETS: "true", IDP_2_ISSUER: idp.issuer, IDP_2_CLIENT_ID: idp.clientId, IDP_2_CLIENT_SECRET: idp.clientSecret });
  const a = app;
  const server = a.listen(port, "127.0.0.1");
  try {
    idp.user = { sub: "console-sub-1", email: "fed-person@example.com", email_verified: true, name: "Fed Person" };
    const cp = await openConsole(browser, base);
    const { page } = cp;
    const providerLink = () => page.getByRole("link", { name: `Sign in with ${new URL(idp.issuer).host}` });
    await journey(cp, "oidc", async () => {
      await page.goto("/admin/");
      await providerLink().click();
      await page.getByTestId("who").waitFor();
      expect(page.url()).toBe(`${base}/admin/`);
      expect(await page.getByTestId("who").textContent()).toContain("fed-person");
      await cp.shot("signin-oidc");

      // The same person, as an API client: the JSON contract still holds; enrol MFA with its tokens.
      const s = await a.call("GET", `/platform/v1/auth/oauth/idp_2/start?return_to=${encodeURIComponent(`${base}/admin/`)}`);
      const cb = await idp.authorize(s.headers.get("location")!);
      const json = await a.call("GET", cb.path);
      expect(json.status).toBe(200);
      const token = json.body.tokens.access_token as string;
      const e = await a.call("POST", "/platform/v1/me/mfa/totp", { token });
      await a.call("POST", `/platform/v1/me/mfa/totp/${e.body.factor_id}/confirm`, { token, body: { code: await nextCode(a, e.body.secret) } });

      // Signed out, the provider's answer now leads to the console's code step (#mfa_token=...).
      await page.getByRole("button", { name: "Sign out" }).click();
      await providerLink().click();
      await page.getByRole("heading", { name: "Two-step verification" }).waitFor();
      expect(new URL(page.url()).hash).toMatch(/^#mfa_token=[0-9a-f-]{36}$/);
      await cp.shot("signin-oidc-mfa");
      await page.getByLabel("Authentication code").fill(await nextCode(a, e.body.secret));
      await page.getByRole("button", { name: "Verify" }).click();
      await page.getByTestId("who").waitFor();
      expect(new URL(page.url()).hash).toBe("#/"); // the one-time token left the address bar
      expect(unexpected(cp.errors, [SIGNED_OUT])).toEqual([]);
    });
  } finally {
    await browser.close();
    await server.stop(true);
    await a.stop();
    idp.stop();
  }
}, T);
