/**
 * Console journey, Auth: an App (settings refused inline then saved, keys, JWKS), a user
 * (created, found by search, suspended), a tenant, an M2M client whose once-shown secret
 * gets a token, an invite whose code is shown once, and the App's audit log.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { journey, SIGNED_OUT, unexpected } from "../helpers/browser";
import { operatorInWorkspace, screen, startConsole, type ConsoleFixture } from "../helpers/console-app";

const T = 60_000;
let f: ConsoleFixture;
beforeAll(async () => {
  f = await startConsole();
}, T);
afterAll(async () => {
  await f?.stop();
});

test("console: Auth apps, users, tenants, M2M clients, invites, audit", async () => {
  const { cp, page, token } = await operatorInWorkspace(f);
  await journey(cp, "auth", async () => {

    // Create an App: the detail shows its publishable key and a JWKS link that answers.
    await screen(page, "Auth", "Apps");
    await page.getByLabel("Display name").fill("Shop");
    await page.getByLabel("Slug").fill("shop");
    await page.getByRole("button", { name: "Create App" }).click();
    await page.getByRole("region", { name: "Shop" }).waitFor();
    const pk = (await page.getByTestId("publishable-key").textContent())!;
    const apps = await f.app.call("GET", `/auth/v1/apps?workspace_id=${(await f.app.call("GET", "/platform/v1/workspaces/acme", { token })).body.id}`, { token });
    const app = apps.body.data[0];
    expect(app.publishable_key).toBe(pk);
    const jwks = await fetch(f.base + (await page.getByRole("link", { name: /jwks\.json$/ }).getAttribute("href"))!);
    expect(((await jwks.json()) as any).keys.length).toBeGreaterThan(0);

    // Settings: a wrong type is refused next to the field; a valid change is saved.
    const settings = page.getByRole("textbox", { name: "Settings" });
    await settings.fill('{"password_min_length": "long"}');
    await page.getByRole("button", { name: "Save settings" }).click();
    await page.locator("#app-settings-settings-err").waitFor();
    expect(await settings.getAttribute("aria-invalid")).toBe("true");
    await cp.shot("auth-app-settings-error");
    await settings.fill('{"password_min_length": 12, "signup_enabled": false}');
    await page.getByRole("button", { name: "Save settings" }).click();
    await page.locator("#app-settings-settings-err").waitFor({ state: "detached" });
    let after = await f.app.call("GET", `/auth/v1/apps/${app.id}`, { token });
    for (let i = 0; i < 50 && after.body.settings.password_min_length !== 12; i++) {
      await Bun.sleep(50);
      after = await f.app.call("GET", `/auth/v1/apps/${app.id}`, { token });
    }
    expect(after.body.settings.password_min_length).toBe(12);
    expect(after.body.settings.signup_enabled).toBe(false);
    await cp.shot("auth-app");

    // Users: create, search, suspend.
    await screen(page, "Auth", "Users");
    await page.getByLabel("Email", { exact: true }).fill("buyer@example.com");
    await page.getByLabel("Password").fill("a long enough password");
    await page.getByRole("button", { name: "Create user" }).click();
    const users = page.getByRole("table", { name: "Users" });
    await users.getByText("buyer@example.com").waitFor();
    await page.getByLabel("Search").fill("nobody-like-this");
    await users.getByText("buyer@example.com").waitFor({ state: "detached" });
    await page.getByLabel("Search").fill("buyer");
    await users.getByText("buyer@example.com").waitFor();
    // The user detail lists the live session; Revoke (confirmed) ends it.
    const signedIn = await f.app.call("POST", "/auth/shop/v1/auth/signin", { body: { identifier: "buyer", password: "a long enough password" }, headers: { "user-agent": "JourneyAgent/1" } });
    expect(signedIn.status).toBe(200);
    await users.getByText("buyer@example.com").click();
    const sessions = page.getByRole("table", { name: "Sessions" });
    await sessions.getByText("JourneyAgent/1").waitFor();
    await sessions.getByRole("button", { name: "Revoke" }).click();
    await sessions.getByRole("button", { name: "Confirm revoke" }).click();
    await sessions.getByText("No live session.").waitFor();
    await users.getByRole("button", { name: "Suspend" }).click();
    await users.getByText("suspended").waitFor();
    const listed = await f.app.call("GET", "/auth/shop/v1/admin/users?q=buyer", { token });
    expect(listed.body.data[0].status).toBe("suspended");
    await cp.shot("auth-users");

    // Tenants.
    await screen(page, "Auth", "Tenants");
    await page.getByLabel("Display name").fill("Team Blue");
    await page.getByRole("button", { name: "Create tenant" }).click();
    await page.getByRole("table", { name: "Tenants" }).getByText("Team Blue").waitFor();
    expect((await f.app.call("GET", "/auth/shop/v1/tenants", { token })).body.data.map((t: any) => t.display_name)).toEqual(["Team Blue"]);

    // M2M client: the secret is shown once and gets a client_credentials token.
    await screen(page, "Auth", "M2M clients");
    await page.getByLabel("Name", { exact: true }).fill("billing-worker");
    await page.getByRole("button", { name: "Create client" }).click();
    const region = page.getByRole("region", { name: /^Client secret of / });
    await region.waitFor();
    const clientId = (await region.locator("strong").textContent())!.replace("Client secret of ", "");
    const secret = (await region.locator("code").textContent())!;
    const tok = await f.app.call("POST", "/auth/shop/v1/oauth/token", { body: { grant_type: "client_credentials", client_id: clientId, client_secret: secret } });
    expect(tok.status).toBe(200);
    expect(typeof tok.body.access_token).toBe("string");
    await region.getByRole("button", { name: "Done" }).click();
    await page.getByRole("table", { name: "M2M clients" }).getByText("billing-worker").waitFor();
    expect(await page.getByText(secret).count()).toBe(0);

    // Invite: code shown once; the API lists it active.
    await screen(page, "Auth", "Invites");
    await page.getByLabel("Email").fill("friend@example.com");
    await page.getByRole("button", { name: "Create invite" }).click();
    await page.getByRole("region", { name: "Invite code" }).waitFor();
    const invites = await f.app.call("GET", "/auth/shop/v1/invites", { token });
    expect(invites.body.data.map((i: any) => [i.email, i.status])).toEqual([["friend@example.com", "active"]]);

    // Audit: the user creation is there.
    await screen(page, "Auth", "Audit");
    await page.getByRole("table", { name: "Auth audit log" }).getByText(/user/).first().waitFor();
    await cp.shot("auth-audit");

    // A reload keeps the cookie session but not the in-memory token App routes need: the
    // password once more, then the users are there again.
    await page.reload();
    await screen(page, "Auth", "Users");
    await page.getByRole("heading", { name: "Confirm your password" }).waitFor();
    await page.getByLabel("Password", { exact: true }).fill("operator-password-1");
    await page.getByRole("button", { name: "Continue" }).click();
    await page.getByRole("table", { name: "Users" }).getByText("buyer@example.com").waitFor();

    expect(unexpected(cp.errors, [SIGNED_OUT, /status of 400 .*\/auth\/v1\/apps\/[^/]+$/])).toEqual([]);
  });
}, T);
