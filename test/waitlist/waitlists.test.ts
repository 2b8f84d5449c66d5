import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ownerWithKey, startTestApp, type TestApp } from "../helpers/app";
import { createWaitlist } from "../helpers/waitlist";
import { ON_BINARY } from "../helpers/target";

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.stop());

describe("waitlists", () => {
  test("create (draft, default settings), Idempotency-Key replay, read, list, patch merges settings, delete", async () => {
    const { token, ws } = await ownerWithKey(app);
    const path = `/waitlist/v1/workspaces/${ws.id}/waitlists`;
    const headers = { "idempotency-key": "create-1" };
    const body = { slug: "beta", display_name: "Beta", settings: { max_entries: 100 } };
    const a = await app.call("POST", path, { token, body, headers });
    expect(a.status).toBe(201);
    expect(a.body.status).toBe("draft");
    expect(a.body.workspace_slug).toBe(ws.slug);
    expect(a.body.settings).toMatchObject({ max_entries: 100, approval_required: true, referral_boost: 1, allowed_origins: ["*"], custom_fields: [] });
    const again = await app.call("POST", path, { token, body, headers });
    expect(again.status).toBe(201);
    expect(again.body.id).toBe(a.body.id);
    expect(again.headers.get("idempotent-replay")).toBe("true");
    expect((await app.call("POST", path, { token, body })).status).toBe(409);

    const list = await app.call("GET", `${path}?status=draft`, { token });
    expect(list.body.data.map((w: any) => w.id)).toEqual([a.body.id]);
    const patched = await app.call("PATCH", `${path}/${a.body.id}`, { token, body: { description: "Soon", settings: { referral_boost: 3 } } });
    expect(patched.status).toBe(200);
    expect(patched.body.settings).toMatchObject({ max_entries: 100, referral_boost: 3 });
    expect(patched.body.description).toBe("Soon");
    const bad = await app.call("PATCH", `${path}/${a.body.id}`, { token, body: { settings: { nope: 1, referral_boost: -1, custom_fields: [{ name: "x", type: "color" }] } } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.map((d: any) => d.field).sort()).toEqual(["settings.custom_fields[0].type", "settings.nope", "settings.referral_boost"]);

    expect((await app.call("DELETE", `${path}/${a.body.id}`, { token })).status).toBe(204);
    expect((await app.call("GET", `${path}/${a.body.id}`, { token })).status).toBe(404);
  });

  test("status transitions: allowed moves and 409 INVALID_STATUS_TRANSITION", async () => {
    const w = await createWaitlist(app, { open: false });
    const move = (status: string) => app.call("PATCH", `${w.base}/status`, { token: w.token, body: { status } });
    expect((await move("paused")).body.error.code).toBe("INVALID_STATUS_TRANSITION");
    expect((await move("closed")).status).toBe(409);
    expect((await move("open")).status).toBe(200);
    expect((await move("draft")).status).toBe(409);
    expect((await move("paused")).body.status).toBe("paused");
    expect((await move("open")).body.status).toBe("open");
    expect((await move("closed")).body.status).toBe("closed");
    expect((await move("paused")).status).toBe(409);
    expect((await move("open")).status).toBe(200);
    expect((await move("bogus")).status).toBe(400);
  });

  test("another workspace's waitlist is 404", async () => {
    const w = await createWaitlist(app);
    const other = await ownerWithKey(app);
    expect((await app.call("GET", `/waitlist/v1/workspaces/${other.ws.id}/waitlists/${w.id}`, { token: other.token })).status).toBe(404);
    expect((await app.call("GET", w.base, { token: other.token })).status).toBe(404);
  });

  test("public GET: draft 404, CORS, Cache-Control, preflight, previous workspace slug", async () => {
    const w = await createWaitlist(app, { open: false, settings: { custom_fields: [{ name: "company", type: "text", required: true }] } });
    expect((await app.call("GET", w.pub)).status).toBe(404);
    await app.call("PATCH", `${w.base}/status`, { token: w.token, body: { status: "open" } });
    const g = await app.call("GET", w.pub, { headers: { origin: "https://landing.example" } });
    expect(g.status).toBe(200);
    expect(g.headers.get("access-control-allow-origin")).toBe("*");
    expect(g.headers.get("cache-control")).toBe("public, max-age=30");
    expect(g.body).toMatchObject({ slug: w.slug, status: "open", custom_fields: [{ name: "company", type: "text", required: true, options: null }], signup_count: null });
    expect(g.body.variant.name).toBe("default");

    await app.call("PATCH", w.base, { token: w.token, body: { settings: { allowed_origins: ["https://acme.example"] } } });
    const pre = await app.call("OPTIONS", `${w.pub}/entries`, { headers: { origin: "https://acme.example", "access-control-request-method": "POST" } });
    expect(pre.status).toBe(204);
    expect(pre.headers.get("access-control-allow-origin")).toBe("https://acme.example");
    expect(pre.headers.get("access-control-allow-methods")).toContain("POST");
    const denied = await app.call("OPTIONS", w.pub, { headers: { origin: "https://evil.example" } });
    expect(denied.headers.get("access-control-allow-origin")).toBeNull();
    expect(denied.headers.get("vary")).toBe("Origin");

    const old = w.ws.slug;
    const renamed = `${old}-new`;
    const r = await app.call("PATCH", `/platform/v1/workspaces/${old}`, { token: w.token, body: { slug: renamed } });
    expect(r.status).toBe(200);
    // The rename reaches the waitlist through the platform.events job: run in-process, every 5 s on the binary.
    if (!ON_BINARY) await app.ctx.scheduler.runNow("platform.events");
    let viewed = await app.call("GET", w.base, { token: w.token });
    for (const deadline = Date.now() + 15_000; ON_BINARY && viewed.body.workspace_slug !== renamed && Date.now() < deadline; ) {
      await Bun.sleep(100);
      viewed = await app.call("GET", w.base, { token: w.token });
    }
    expect(viewed.body).toMatchObject({ workspace_slug: renamed, previous_workspace_slug: old });
    expect((await app.call("GET", `/waitlist/v1/waitlists/${renamed}/${w.slug}`)).status).toBe(200);
    expect((await app.call("GET", `/waitlist/v1/waitlists/${old}/${w.slug}`)).status).toBe(200);
  });

  test("a workspace that switches the service off: admin routes 403 SERVICE_NOT_ENABLED, public routes 404; deleting the workspace takes its waitlists along", async () => {
    const owner = await ownerWithKey(app);
    const w = await createWaitlist(app, { owner });
    expect((await app.call("GET", w.pub)).status).toBe(200);
    const off = await app.call("DELETE", `/platform/v1/workspaces/${w.ws.slug}/services/waitlist`, { token: w.token });
    expect(off.status).toBeLessThan(300);
    expect((await app.call("GET", w.base, { token: w.token })).body.error.code).toBe("SERVICE_NOT_ENABLED");
    expect((await app.call("GET", w.pub)).status).toBe(404);
    expect((await app.call("POST", `${w.pub}/entries`, { body: { email: "off@example.com" } })).status).toBe(404);
    await app.call("PUT", `/platform/v1/workspaces/${w.ws.slug}/services/waitlist`, { token: w.token });
    expect((await app.call("POST", `${w.pub}/entries`, { body: { email: "on@example.com" } })).status).toBe(201);

    // Deleting a workspace takes a console session (not an API key).
    const del = await app.call("DELETE", `/platform/v1/workspaces/${w.ws.slug}`, { token: owner.session });
    expect(del.status, JSON.stringify(del.body)).toBeLessThan(300);
    expect((await app.call("GET", w.pub)).status).toBe(404);
  });
});
