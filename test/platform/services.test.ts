import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SERVICE_MODULES } from "../../src/app";
import { ApiError } from "../../src/core/errors";
import { createWorkspace, signup, startTestApp, type TestApp } from "../helpers/app";
import { addMember, auditActions, BUILTIN, P } from "../helpers/members";
import { inProcess } from "../helpers/target";

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.stop());

const services = (token: string, slug: string) => app.call("GET", `${P}/workspaces/${slug}/services`, { token });
const enable = (token: string, slug: string, s: string) => app.call("PUT", `${P}/workspaces/${slug}/services/${s}`, { token });
const disable = (token: string, slug: string, s: string) => app.call("DELETE", `${P}/workspaces/${slug}/services/${s}`, { token });

/** The guard other services call, as an outcome: "ok" or the error code. */
async function guard(workspaceId: string, service: string) {
  try {
    await app.platform.authz.requireService(app.platform.ctx.db, workspaceId, service);
    return "ok";
  } catch (e) {
    if (!(e instanceof ApiError)) throw e;
    return `${e.status} ${e.code}`;
  }
}

describe("service activation", () => {
  inProcess("compares enabled_at with the frozen injected clock (app.clock.iso)")("the catalogue lists every service module (the 8 of the spec first); new workspaces get the default set", async () => {
    const u = await signup(app);
    const ws = await createWorkspace(app, u.token);
    const r = await services(u.token, ws.slug);
    expect(r.status).toBe(200);
    expect(r.body.data.map((s: any) => s.service)).toEqual(SERVICE_MODULES.map((m) => m.name));
    expect(r.body.data.slice(0, 8).map((s: any) => s.service)).toEqual(["platform", "auth", "webhooks", "mail", "tack", "waitlist", "trawl", "social"]);
    for (const s of r.body.data) {
      expect(s).toMatchObject({ enabled: true, enabled_at: app.clock.iso() });
      expect(s.description.length).toBeGreaterThan(5);
    }
  });

  inProcess("reads audit rows from the store (auditActions)")("platform cannot be disabled (400); enabling it is a no-op; unknown service 404", async () => {
    const u = await signup(app);
    const ws = await createWorkspace(app, u.token);
    const r = await disable(u.token, ws.slug, "platform");
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe("SERVICE_REQUIRED");
    expect((await enable(u.token, ws.slug, "platform")).body).toMatchObject({ service: "platform", enabled: true });
    for (const call of [enable, disable]) {
      const nf = await call(u.token, ws.slug, "teleport");
      expect(nf.status).toBe(404);
    }
    expect((await auditActions(app, ws.id)).filter((a) => a.action.startsWith("service."))).toEqual([]);
  });

  inProcess("calls the platform's requireService guard in-process (app.platform.authz) and compares enabled_at with the frozen injected clock")("disable/enable shows in the list, both introspections and the requireService guard", async () => {
    const u = await signup(app);
    const ws = await createWorkspace(app, u.token);
    expect(await guard(ws.id, "tack")).toBe("ok");

    app.clock.advance(5000);
    const off = await disable(u.token, ws.slug, "tack");
    expect(off.status).toBe(200);
    expect(off.body).toMatchObject({ service: "tack", enabled: false, enabled_at: null });
    expect(await guard(ws.id, "tack")).toBe("403 SERVICE_NOT_ENABLED");
    expect(await guard(ws.id, "mail")).toBe("ok");
    expect(await guard(ws.id, "platform")).toBe("ok");
    const me = await app.call("GET", `${P}/introspect`, { token: u.token });
    const mine = me.body.workspaces.find((w: any) => w.id === ws.id);
    expect(mine.services).not.toContain("tack");
    expect(mine.services).toContain("mail");
    const one = await app.call("GET", `${P}/introspect/workspaces/${ws.id}`, { token: u.token });
    expect(one.body.services).not.toContain("tack");
    expect((await services(u.token, ws.slug)).body.data.find((s: any) => s.service === "tack")).toMatchObject({ enabled: false, enabled_at: null });

    // Repeating a disable changes nothing and leaves no audit entry.
    expect((await disable(u.token, ws.slug, "tack")).status).toBe(200);

    app.clock.advance(5000);
    const on = await enable(u.token, ws.slug, "tack");
    expect(on.status).toBe(200);
    expect(on.body).toMatchObject({ service: "tack", enabled: true, enabled_at: app.clock.iso() });
    expect(await guard(ws.id, "tack")).toBe("ok");
    expect((await app.call("GET", `${P}/introspect/workspaces/${ws.id}`, { token: u.token })).body.services).toContain("tack");
    expect((await enable(u.token, ws.slug, "tack")).body.enabled_at).toBe(on.body.enabled_at);

    const audit = (await auditActions(app, ws.id)).filter((a) => a.action.startsWith("service."));
    expect(audit.map((a) => [a.action, a.target_id])).toEqual([["service.disable", "tack"], ["service.enable", "tack"]]);
  });

  inProcess("calls the platform's requireService guard in-process (app.platform.authz)")("members may look (service.list) but not switch (service.update); non-members get 404", async () => {
    const owner = await signup(app);
    const ws = await createWorkspace(app, owner.token);
    const m = await addMember(app, owner.token, ws.slug, BUILTIN.member);
    expect((await services(m.token, ws.slug)).status).toBe(200);
    expect((await disable(m.token, ws.slug, "mail")).status).toBe(403);
    expect((await enable(m.token, ws.slug, "mail")).status).toBe(403);
    const admin = await addMember(app, owner.token, ws.slug, BUILTIN.admin);
    expect((await disable(admin.token, ws.slug, "mail")).status).toBe(200);
    const stranger = await signup(app);
    expect((await services(stranger.token, ws.slug)).status).toBe(404);
    expect((await disable(stranger.token, ws.slug, "auth")).status).toBe(404);
    expect(await guard(ws.id, "auth")).toBe("ok");
  });

  inProcess("compares enabled_at with the frozen injected clock (app.clock.iso)")("DEFAULT_SERVICES decides what a new workspace starts with; platform is listed as enabled regardless", async () => {
    const small = await startTestApp({ DEFAULT_SERVICES: "auth,mail" });
    try {
      const u = await signup(small);
      const ws = await createWorkspace(small, u.token);
      const r = await small.call("GET", `${P}/workspaces/${ws.slug}/services`, { token: u.token });
      const enabled = r.body.data.filter((s: any) => s.enabled).map((s: any) => s.service);
      expect(enabled).toEqual(["platform", "auth", "mail"]);
      expect(r.body.data.find((s: any) => s.service === "platform").enabled_at).toBe(small.clock.iso());
    } finally {
      await small.stop();
    }
  });
});
