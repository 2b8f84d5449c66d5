import { describe, expect, test } from "bun:test";
import { signup, startTestApp } from "../helpers/app";
import { inProcess, ON_BINARY } from "../helpers/target";

describe("first start", () => {
  inProcess("calls the setup service's bootstrap and reads core_settings (app.platform, app.ctx.db); the binary's setup link is used in platform/every-route")("an empty database mints a one-time setup link; its token creates the operator exactly once", async () => {
    const app = await startTestApp();
    const boot = await app.platform.setup.bootstrap();
    expect(boot?.setupUrl).toMatch(/^http:\/\/localhost:8080\/admin\/#setup=[A-Za-z0-9_-]{40,}$/);
    const token = boot!.setupUrl!.split("#setup=")[1];
    expect((await app.call("GET", "/platform/v1/auth/setup")).body).toEqual({ needs_setup: true });

    const body = { email: "ops@example.com", username: "ops", password: "operator-password" };
    const wrong = await app.call("POST", "/platform/v1/auth/setup", { body: { ...body, setup_token: token + "x" } });
    expect(wrong.status).toBe(400);
    expect(wrong.body.error.code).toBe("INVALID_SETUP_TOKEN");
    const ok = await app.call("POST", "/platform/v1/auth/setup", { body: { ...body, setup_token: token } });
    expect(ok.status).toBe(200);
    const me = await app.call("GET", "/platform/v1/introspect", { token: ok.body.access_token });
    expect(me.body.account.is_operator).toBe(true);
    const again = await app.call("POST", "/platform/v1/auth/setup", { body: { ...body, email: "b@example.com", username: "b", setup_token: token } });
    expect(again.status).toBe(400);
    expect((await app.call("GET", "/platform/v1/auth/setup")).body).toEqual({ needs_setup: false });
    // Only the hash of the setup token was ever stored.
    const rows = await app.ctx.db.all<{ value: string }>("SELECT value FROM core_settings");
    expect(rows.some((r) => r.value.includes(token))).toBe(false);
    await app.stop();
  });

  inProcess("checks what the setup service's bootstrap returns on a first and a second call (app.platform)")("BUNKER_ADMIN_EMAIL + BUNKER_ADMIN_PASSWORD create the operator non-interactively", async () => {
    const app = await startTestApp({ BUNKER_ADMIN_EMAIL: "root@example.com", BUNKER_ADMIN_PASSWORD: "root-password-1" });
    const boot = await app.platform.setup.bootstrap();
    expect(boot?.created).toBeString();
    expect(boot?.setupUrl).toBeUndefined();
    const r = await app.call("POST", "/platform/v1/auth/signin", { body: { identifier: "root@example.com", password: "root-password-1" } });
    expect(r.status).toBe(200);
    expect(await app.platform.setup.bootstrap()).toBeNull(); // second start: nothing to do
    await app.stop();
  });
});

describe("operator account status", () => {
  test("operators suspend, deactivate, block and reactivate; others get 403", async () => {
    const app = await startTestApp({ BUNKER_ADMIN_EMAIL: "root@example.com", BUNKER_ADMIN_PASSWORD: "root-password-1" });
    // The binary created the operator at start; in-process, the bootstrap `bunker serve` runs does.
    if (!ON_BINARY) await app.platform.setup.bootstrap();
    const op = (await app.call("POST", "/platform/v1/auth/signin", { body: { identifier: "root", password: "root-password-1" } })).body.access_token;
    const u = await signup(app);
    const id = (await app.call("GET", "/platform/v1/introspect", { token: u.token })).body.account.id;

    expect((await app.call("GET", "/platform/v1/admin/accounts", { token: u.token })).status).toBe(403);
    expect((await app.call("POST", `/platform/v1/admin/accounts/${id}/suspend`, { token: u.token })).status).toBe(403);

    const list = await app.call("GET", "/platform/v1/admin/accounts", { token: op });
    expect(list.body.data.map((a: any) => a.id)).toContain(id);

    const signin = () => app.call("POST", "/platform/v1/auth/signin", { body: { identifier: u.email, password: u.password } });
    for (const [verb, status, expected] of [
      ["suspend", "suspended", 403],
      ["deactivate", "deactivated", 403],
      ["block", "blocked", 401],
      ["reactivate", "active", 200],
    ] as const) {
      const r = await app.call("POST", `/platform/v1/admin/accounts/${id}/${verb}`, { token: op });
      expect(r.status).toBe(200);
      expect(r.body.status).toBe(status);
      expect((await signin()).status).toBe(expected);
      // Stay under the sign-in burst limit (5 a minute): four sign-ins stay under it on the binary's real clock too.
      if (!ON_BINARY) app.clock.advance(61_000);
    }
    expect((await app.call("POST", `/platform/v1/admin/accounts/${id}/explode`, { token: op })).status).toBe(400);
    expect((await app.call("POST", `/platform/v1/admin/accounts/0190f0f0-0000-7000-8000-000000000000/suspend`, { token: op })).status).toBe(404);
    await app.stop();
  });
});
