/**
 * Console journey, instance: version, health and readiness, the metrics charts drawn from
 * /metrics samples, and an operator suspending and reactivating an account.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { journey, openConsole, SIGNED_OUT, unexpected } from "../helpers/browser";
import { startOidcProvider } from "../helpers/oidc-provider";
import { TEST_ENGINE } from "../helpers/engine";
import { createOperator, screen, signInPage, startConsole, type ConsoleFixture } from "../helpers/console-app";
import { signup } from "../helpers/app";
import { VERSION } from "../../src/app";

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
