/**
 * A real Bunker listening on loopback plus a Chromium for the console's end-to-end tests.
 * The operator account is created through the setup API (the setup journey itself is
 * driven through the page in test/console/workspace.test.ts).
 */
import type { Browser } from "playwright-core";
import { startTestApp, type TestApp } from "./app";
import { ON_BINARY } from "./binary";
import { launchBrowser, openConsole, type ConsolePage } from "./browser";

export interface ConsoleFixture {
  app: TestApp;
  base: string;
  browser: Browser;
  stop(): Promise<void>;
}

export async function startConsole(env: Record<string, string> = {}): Promise<ConsoleFixture> {
  const browser = await launchBrowser(); // first: a missing Chromium fails before anything starts
  const app = await startTestApp(env);
  const server = app.listen(0, "127.0.0.1");
  // The binary serves with its scheduler running, as `bunker serve` does.
  if (!ON_BINARY) app.ctx.scheduler.start();
  return {
    app,
    base: `http://127.0.0.1:${server.port}`,
    browser,
    async stop() {
      await browser.close();
      await server.stop(true);
      await app.stop();
    },
  };
}

export const OPERATOR = { email: "ops@example.com", username: "ops", password: "operator-password-1" };

/** The one-time setup token: the link a start prints (the binary), or what that start computes. */
export async function setupToken(app: TestApp): Promise<string> {
  if (app.process) {
    const link = /#setup=([^\s"]+)/.exec(app.process.output());
    if (!link) throw new Error(`the binary printed no setup link:\n${app.process.output().slice(-2000)}`);
    return link[1];
  }
  const boot = await app.platform.setup.bootstrap();
  return boot!.setupUrl!.split("#setup=")[1];
}

/** Creates the operator through the one-time setup token; returns their API token. */
export async function createOperator(app: TestApp): Promise<string> {
  const token = await setupToken(app);
  const r = await app.call("POST", "/platform/v1/auth/setup", { body: { ...OPERATOR, setup_token: token } });
  if (r.status !== 200) throw new Error(`setup failed: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.access_token as string;
}

/** Opens /admin/ and signs in through the form. */
export async function signInPage(f: ConsoleFixture, who: { identifier: string; password: string } = { identifier: OPERATOR.username, password: OPERATOR.password }): Promise<ConsolePage> {
  const cp = await openConsole(f.browser, f.base);
  await cp.page.goto("/admin/");
  await cp.page.getByLabel("Email or username").fill(who.identifier);
  await cp.page.getByLabel("Password").fill(who.password);
  await cp.page.getByRole("button", { name: "Sign in" }).click();
  await cp.page.getByTestId("who").waitFor();
  return cp;
}

/** Follows a link of the console's navigation and waits for that screen's heading. */
export async function screen(page: import("playwright-core").Page, module: string, name: string) {
  await page.getByRole("navigation", { name: "Console" }).getByRole("link", { name, exact: true }).click();
  await page.getByRole("heading", { name: `${module} · ${name}` }).waitFor();
}

/**
 * The usual start of a journey: the operator (through the setup API) with a workspace
 * (through the API), signed in through the page with that workspace selected.
 */
export async function operatorInWorkspace(f: ConsoleFixture, slug = "acme") {
  const token = await createOperator(f.app);
  const ws = await f.app.call("POST", "/platform/v1/workspaces", { token, body: { slug, display_name: `Workspace ${slug}` } });
  if (ws.status !== 201) throw new Error(`workspace: ${ws.status} ${JSON.stringify(ws.body)}`);
  const cp = await signInPage(f);
  await cp.page.getByRole("combobox", { name: "Workspace" }).selectOption(slug);
  await cp.page.getByRole("heading", { name: "Workspace · Overview" }).waitFor();
  return { cp, page: cp.page, token, ws: ws.body as { id: string; slug: string } };
}

/** The form control labelled exactly `name` (sections and tables carry labels too). */
export const field = (page: import("playwright-core").Page, name: string) => page.getByLabel(name, { exact: true }).and(page.locator("input, textarea, select"));
