/**
 * Console journey, instance and workspace: first-run setup through the setup link, sign-in,
 * a workspace, an API key (secret shown once, copied, then working against the API,
 * then revoked), a role whose bad policy is refused next to the field, an invitation, a
 * personal token, services and the audit log; sign-out and sign-in again; a phone width
 * in dark mode. Asserts what the page shows and what the API then holds.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { journey, openConsole, overflow, SIGNED_OUT, unexpected } from "../helpers/browser";
import { OPERATOR, screen, setupToken, startConsole, type ConsoleFixture } from "../helpers/console-app";
import { ON_BINARY } from "../helpers/target";
import { signup } from "../helpers/app";
import { startSmtpSink, type SmtpSink } from "../helpers/smtp-sink";

const T = 60_000;

let f: ConsoleFixture;
let sink: SmtpSink;
beforeAll(async () => {
  sink = await startSmtpSink();
  f = await startConsole({ SMTP_RELAY_URL: sink.url });
}, T);
afterAll(async () => {
  await f?.stop();
  await sink?.stop();
});

describe("console: setup, sign-in, workspaces, API keys, roles, members", () => {
  test("headers: strict CSP, no framing, assets embedded and compressed", async () => {
    const page = await fetch(`${f.base}/admin/`);
    expect(page.status).toBe(200);
    const csp = page.headers.get("content-security-policy")!;
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toMatch(/script-src[^;]*unsafe-inline/);
    expect(csp).toContain("frame-ancestors 'none'");
    expect(page.headers.get("x-frame-options")).toBe("DENY");
    const html = await page.text();
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/); // no inline script
    const js = await fetch(`${f.base}/admin/assets/app.js`, { headers: { "accept-encoding": "gzip" } });
    expect(js.status).toBe(200);
    expect(js.headers.get("content-type")).toContain("javascript");
    expect((await fetch(`${f.base}/admin/assets/nope.js`)).status).toBe(404);
    const again = await fetch(`${f.base}/admin/assets/app.js`, { headers: { "if-none-match": js.headers.get("etag")! } });
    expect(again.status).toBe(304);
  }, T);

  test("the whole workspace journey", async () => {
    const token = await setupToken(f.app);
    const cp = await openConsole(f.browser, f.base);
    const { page } = cp;
    await journey(cp, "workspace", async () => {
      const started = performance.now();
      await page.goto(`/admin/#setup=${token}`);
      await page.getByRole("heading", { name: "Create the operator account" }).waitFor();
      console.log(`console: first load to the setup form in ${(performance.now() - started).toFixed(0)} ms`);
      await cp.shot("setup");

      // Setup: a weak password is refused, said once and for what it is (at phone width, which
      // the form fits), then the real one works.
      await page.setViewportSize({ width: 390, height: 800 });
      await page.getByLabel("Email").fill(OPERATOR.email);
      await page.getByLabel("Username").fill(OPERATOR.username);
      await page.getByLabel("Password").fill("short");
      await page.getByRole("button", { name: "Create operator" }).click();
      await page.getByRole("alert").getByText("Choose a stronger password").waitFor();
      expect(await page.getByText("must be at least 8 characters").count()).toBe(1);
      expect(await page.locator("#setup-password").getAttribute("aria-invalid")).toBe("true");
      expect(await page.getByText("Sign-up validation failed").count()).toBe(0);
      expect(await overflow(page)).toEqual([]);
      await cp.shot("setup-weak-password-390");
      await page.setViewportSize({ width: 1280, height: 860 });
      await page.getByLabel("Password").fill(OPERATOR.password);
      await page.getByRole("button", { name: "Create operator" }).click();
      await page.getByRole("heading", { name: "Your workspaces" }).waitFor();
      expect(await page.getByTestId("who").textContent()).toContain("ops");
      expect(await page.getByTestId("who").textContent()).toContain("operator");
      expect((await f.app.call("GET", "/platform/v1/auth/setup")).body).toEqual({ needs_setup: false });

      // Create a workspace: the page moves to its overview; the API has it.
      await page.getByLabel("Display name").fill("Acme Corp");
      await page.getByLabel("Slug").fill("acme");
      await page.getByRole("button", { name: "Create workspace" }).click();
      await page.getByRole("heading", { name: "Workspace · Overview" }).waitFor();
      await page.getByRole("region", { name: "Workspace" }).getByText("Acme Corp").waitFor();
      await cp.shot("workspace-overview");
      const signin = await f.app.call("POST", "/platform/v1/auth/signin", { body: { identifier: OPERATOR.username, password: OPERATOR.password } });
      const session = signin.body.access_token as string;
      const wsRead = await f.app.call("GET", "/platform/v1/workspaces/acme", { token: session });
      expect(wsRead.status).toBe(200);
      expect(wsRead.body.display_name).toBe("Acme Corp");

      // API key: the secret is shown once with a copy button, works, and is gone after Done.
      await screen(page, "Workspace", "API keys");
      await page.getByLabel("Name", { exact: true }).fill("ci deploys");
      await page.getByRole("button", { name: "Create key" }).click();
      const secret = page.getByRole("region", { name: "New API key" });
      await secret.waitFor();
      const key = (await secret.locator("code").textContent())!;
      expect(key).toMatch(/^svc_live_/);
      await secret.getByRole("button", { name: /^Copy/ }).click();
      await secret.getByRole("button", { name: "Copied" }).waitFor();
      expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(key);
      await cp.shot("api-key-created");
      const viaKey = await f.app.call("GET", "/platform/v1/workspaces/acme", { token: key });
      expect(viaKey.status).toBe(200);
      await secret.getByRole("button", { name: "Done" }).click();
      expect(await page.getByText(key).count()).toBe(0);
      const keysTable = page.getByRole("table", { name: "API keys" });
      await keysTable.getByText("ci deploys").waitFor();
      await keysTable.getByRole("button", { name: "Revoke" }).click();
      await keysTable.getByRole("button", { name: "Confirm revoke" }).click();
      await keysTable.getByText("revoked").waitFor();
      expect((await f.app.call("GET", "/platform/v1/workspaces/acme", { token: key })).status).toBe(401);
      await cp.shot("api-keys");

      // Roles: an unknown action is refused and the reason sits next to the Policy field.
      await screen(page, "Workspace", "Roles & policies");
      await page.getByRole("table", { name: "Roles" }).getByText("owner").waitFor();
      await page.getByLabel("Name", { exact: true }).fill("deployer");
      await page.getByLabel("Policy").fill('[{"effect": "allow", "actions": ["nosuch.thing"], "resources": ["*"]}]');
      await page.getByRole("button", { name: "Create role" }).click();
      const policyError = page.locator("#create-role-policy-err");
      await policyError.waitFor();
      expect(await policyError.textContent()).toBe("policy[0].actions[0]: unknown action");
      expect(await page.getByLabel("Policy").getAttribute("aria-invalid")).toBe("true");
      await cp.shot("role-policy-error");
      // Broken JSON is caught before any request.
      await page.getByLabel("Policy").fill("[{");
      await page.getByRole("button", { name: "Create role" }).click();
      expect(await policyError.textContent()).toContain("Not valid JSON");
      await page.getByLabel("Policy").fill('[{"effect": "allow", "actions": ["apikey.list", "workspace.read"], "resources": ["*"]}]');
      await page.getByRole("button", { name: "Create role" }).click();
      await page.getByRole("table", { name: "Roles" }).getByRole("button", { name: "deployer" }).waitFor();
      const roles = await f.app.call("GET", "/platform/v1/workspaces/acme/roles", { token: session });
      const deployer = roles.body.data.find((r: any) => r.name === "deployer");
      expect(deployer.policy[0].actions).toEqual(["apikey.list", "workspace.read"]);

      // Invitations: invite with the custom role; the API lists it pending.
      await screen(page, "Workspace", "Invitations");
      await page.getByLabel("Email").fill("new.hire@example.com");
      await page.getByLabel("Role").selectOption({ label: "deployer" });
      await page.getByRole("button", { name: "Send invitation" }).click();
      await page.getByRole("table", { name: "Invitations" }).getByText("new.hire@example.com").waitFor();
      const invites = await f.app.call("GET", "/platform/v1/workspaces/acme/invitations", { token: session });
      expect(invites.body.data.map((i: any) => [i.email, i.role])).toEqual([["new.hire@example.com", "deployer"]]);

      // Members: the operator is the owner.
      await screen(page, "Workspace", "Members");
      await page.getByRole("table", { name: "Members" }).getByText(OPERATOR.email).waitFor();

      // Personal token: shown once; it authenticates as the operator.
      await screen(page, "Workspace", "Personal tokens");
      await page.getByLabel("Name", { exact: true }).fill("laptop");
      await page.getByRole("button", { name: "Create token" }).click();
      const pat = (await page.getByRole("region", { name: "New personal token" }).locator("code").textContent())!;
      const me = await f.app.call("GET", "/platform/v1/introspect", { token: pat });
      expect(me.body.account.username).toBe(OPERATOR.username);

      // Services: disable mail; the workspace's services change in the API.
      await screen(page, "Workspace", "Services");
      await page.getByRole("button", { name: "Disable mail" }).click();
      await page.getByRole("button", { name: "Enable mail" }).waitFor();
      const services = await f.app.call("GET", "/platform/v1/workspaces/acme/services", { token: session });
      expect(services.body.data.find((s: any) => s.service === "mail").enabled).toBe(false);
      await page.getByRole("button", { name: "Enable mail" }).click();
      await page.getByRole("button", { name: "Disable mail" }).waitFor();

      // Audit log, filtered by action.
      await screen(page, "Workspace", "Audit log");
      await page.getByLabel("Action").fill("apikey.create");
      await page.getByRole("button", { name: "Apply" }).click();
      const audit = page.getByRole("table", { name: "Audit log" });
      await audit.getByText("apikey.create").first().waitFor();
      await audit.getByText("role.create").first().waitFor({ state: "detached" }); // the filter applied
      expect(await audit.getByText("service.update").count()).toBe(0);
      await cp.shot("audit-log");

      // Sign out, sign in again through the form.
      await page.getByRole("button", { name: "Sign out" }).click();
      await page.getByRole("heading", { name: "Sign in" }).waitFor();
      await page.getByLabel("Email or username").fill(OPERATOR.username);
      await page.getByLabel("Password").fill("wrong password");
      await page.getByRole("button", { name: "Sign in" }).click();
      await page.getByRole("alert").waitFor();
      await page.getByLabel("Password").fill(OPERATOR.password);
      await page.getByRole("button", { name: "Sign in" }).click();
      await page.getByTestId("who").waitFor();

      expect(
        unexpected(cp.errors, [
          SIGNED_OUT,
          /status of 400 .*\/platform\/v1\/auth\/setup$/, // the weak password, on purpose
          /status of 400 .*\/workspaces\/acme\/roles$/, // the refused policy, on purpose
          /status of 401 .*\/platform\/v1\/auth\/signin$/, // the wrong password, on purpose
        ]),
      ).toEqual([]);
    });
    await cp.context.close();
  }, T);

  test("the invitation mail's link: the invitee signs in on it, accepts and is a member", async () => {
    // The binary's scheduler sends system mail by itself; in-process nothing runs unless asked.
    if (!ON_BINARY) await f.app.ctx.mailer.deliverPending();
    const mail = await sink.waitFor((m) => m.to.includes("new.hire@example.com"));
    const token = /#invite=([A-Za-z0-9_-]+)/.exec(mail.text)![1]!;
    await signup(f.app, { email: "new.hire@example.com", username: "newhire", password: "new hire password" });
    const cp = await openConsole(f.browser, f.base);
    const { page } = cp;
    await journey(cp, "invitation", async () => {
      await page.goto(`/admin/#invite=${token}`);
      await page.getByText("Sign in with the invited email address").waitFor();
      await page.getByLabel("Email or username").fill("newhire");
      await page.getByLabel("Password").fill("new hire password");
      await page.getByRole("button", { name: "Sign in" }).click();
      await page.getByRole("button", { name: "Accept invitation" }).click();
      await page.getByRole("heading", { name: "Workspace · Overview" }).waitFor();
      await page.getByRole("region", { name: "Workspace" }).getByText("deployer").waitFor(); // their role
      await cp.shot("invitation-accepted");
      const owner = await f.app.call("POST", "/platform/v1/auth/signin", { body: { identifier: OPERATOR.username, password: OPERATOR.password } });
      const members = await f.app.call("GET", "/platform/v1/workspaces/acme/members", { token: owner.body.access_token });
      expect(members.body.data.find((m: any) => m.email === "new.hire@example.com")?.role).toBe("deployer");
      expect(unexpected(cp.errors, [SIGNED_OUT])).toEqual([]);
    });
    await cp.context.close();
  }, T);

  test("phone width, dark: the menu opens the navigation", async () => {
    const cp = await openConsole(f.browser, f.base, { width: 390, height: 800, colorScheme: "dark" });
    const { page } = cp;
    await page.goto("/admin/");
    await page.getByLabel("Email or username").fill(OPERATOR.username);
    await page.getByLabel("Password").fill(OPERATOR.password);
    await page.getByLabel("Password").press("Enter"); // forms submit from the keyboard
    await page.getByRole("link", { name: "Acme Corp" }).click();
    await page.getByRole("button", { name: "Menu" }).click();
    await screen(page, "Workspace", "API keys");
    await page.getByRole("heading", { name: "Workspace · API keys" }).waitFor();
    const bg = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    expect(bg).not.toBe("rgb(245, 246, 248)"); // the dark palette, not the light one
    await cp.shot("phone-dark-api-keys");
    await page.getByRole("button", { name: "Menu" }).click();
    await page.getByRole("link", { name: "Health & metrics" }).click();
    await page.locator(".chart canvas").first().waitFor();
    await cp.shot("phone-dark-metrics");
    expect(unexpected(cp.errors, [SIGNED_OUT])).toEqual([]);
    await cp.context.close();
  }, T);
});
