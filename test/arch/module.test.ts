/**
 * The ServiceModule contract, end to end: a service defined only by its module (the way a
 * new service plugs in) gets its actions, webhook product and scope, routes, jobs, OpenAPI
 * document, workspace cascade, the ports it provides, its outbox subscriptions and shutdown
 * from mount(), with nothing else edited. Also: platform workspace.* events are consumed and purged, and the app
 * waits for background legacy test sends before it closes the database.
 */
// source-only: builds apps from injected service modules and drives their jobs in-process; the binary has its fixed module list
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Elysia } from "elysia";
import { DAY } from "../../src/core/clock";
import { ConfigError } from "../../src/config";
import { createLogger } from "../../src/core/log";
import { DISPATCHED_EVENT_RETENTION_MS, SERVICE_MODULES } from "../../src/app";
import { defineService, type SubscribedEvent } from "../../src/kernel/module";
import type { DomainInUseCheck } from "../../src/services/mail/ports";
import { defineWebhookProduct, workspaceScope } from "../../src/kernel/webhooks";
import { Type } from "@sinclair/typebox";
import { createWorkspace, ownerWithKey, signup, startTestApp, type TestApp } from "../helpers/app";
import { startReceiver, type Receiver } from "../helpers/http-receiver";

/** What the probe service saw, per app instance (create() appends each app's). */
const created: ProbeState[] = [];
interface ProbeState {
  deletedWorkspaces: string[];
  workspaceEvents: SubscribedEvent[];
  stopped: boolean;
  jobRuns: number;
  /** The mail.domain-in-use check it provides: it holds the domains named held-*. */
  holds: DomainInUseCheck;
}

const seen = (state: ProbeState, e: SubscribedEvent) => void state.workspaceEvents.push(e);

const probeModule = defineService({
  name: "probe",
  description: "A service that exists only in this test",
  prefix: "/probe",
  openapi: { title: "Bunker probe", description: "Probe things.", version: "v0.1.0" },
  actions: [{ name: "probe.read", description: "Read probe things" }],
  webhooks: defineWebhookProduct({
    product: "probe",
    label: "Probe",
    legacyHeader: "x-probe-signature",
    events: [{ type: "thing.created", description: "A probe thing was created.", data: Type.Object({ id: Type.String() }), example: { id: "thing_1" } }],
  }),
  create: (): ProbeState => {
    const holds: DomainInUseCheck = async (_t, domain) => (domain.fqdn.startsWith("held-") ? "the probe holds it" : null);
    const state = { deletedWorkspaces: [], workspaceEvents: [], stopped: false, jobRuns: 0, holds };
    created.push(state);
    return state;
  },
  webhookScopes: (_, d) => [{ prefix: "/probe/v1/workspaces/:workspace_id", resolve: workspaceScope(d.tenancy, d.name), legacyRoutes: true }],
  routes: (state, d) =>
    new Elysia().get("/probe/v1/things", () => ({ data: [], seen: state.workspaceEvents.length, actions: d.ctx.actions.matching("probe.*") }), { detail: { tags: ["Probe"] } }),
  jobs: (state) => [{ name: "probe.tick", schedule: "0 0 * * * *", run: () => void state.jobRuns++ }],
  onWorkspaceDelete: async (state, _t, workspaceId) => void state.deletedWorkspaces.push(workspaceId),
  // Not workspace.renamed: an event type no module subscribes to is dispatched all the same.
  subscribe: { "workspace.created": seen, "workspace.deleted": seen },
  // A port of a module earlier in the list (mail consumes it when a domain is deleted).
  provides: { "mail.domain-in-use": (state) => state.holds },
  stop: async (state) => {
    await Bun.sleep(5);
    state.stopped = true;
  },
});

describe("a service added by its module alone", () => {
  let app: TestApp;
  let probe: ProbeState;
  beforeAll(async () => {
    app = await startTestApp({}, undefined, { modules: [...SERVICE_MODULES, probeModule] });
    probe = created.at(-1)!;
  });
  afterAll(async () => {
    if (!probe.stopped) await app.stop();
  });

  test("its actions, route, webhook scope, event types, job and OpenAPI document are mounted", async () => {
    const { token, ws } = await ownerWithKey(app);
    const things = await app.call("GET", "/probe/v1/things");
    expect(things.status).toBe(200);
    expect(things.body.actions).toEqual(["probe.read", "probe.webhooks.read", "probe.webhooks.write"]);

    // Enabled on new workspaces (DEFAULT_SERVICES unset: every module) and listed with its description.
    const services = await app.call("GET", `/platform/v1/workspaces/${ws.slug}/services`, { token });
    expect(services.body.data.at(-1)).toMatchObject({ service: "probe", enabled: true, description: "A service that exists only in this test" });

    const types = await app.call("GET", `/probe/v1/workspaces/${ws.id}/webhooks/event-types`, { token });
    expect(types.status).toBe(200);
    expect(types.body.data.map((t: { type: string }) => t.type)).toEqual(["thing.created"]);
    const legacy = await app.call("GET", `/probe/v1/workspaces/${ws.id}/webhooks`, { token });
    expect(legacy.status).toBe(200);
    expect(legacy.headers.get("deprecation")).toBe("true");

    await app.ctx.scheduler.runNow("probe.tick");
    expect(probe.jobRuns).toBe(1);

    const doc = await app.call("GET", "/probe/openapi.json");
    expect(doc.status).toBe(200);
    expect(doc.body.info).toMatchObject({ title: "Bunker probe", description: "Probe things.", version: "v0.1.0" });
    expect(Object.keys(doc.body.paths).sort()).toContain("/probe/v1/things");
    expect(Object.keys(doc.body.paths).every((p) => p.startsWith("/probe/"))).toBe(true);
  });

  test("a deleted workspace takes the product's endpoints along and reaches onWorkspaceDelete; workspace events reach its subscriptions", async () => {
    const user = await signup(app);
    const ws = await createWorkspace(app, user.token);
    const ep = await app.call("POST", `/probe/v1/workspaces/${ws.id}/webhooks/endpoints`, { token: user.token, body: { url: "https://example.com/hook" } });
    expect(ep.status).toBe(201);
    expect(await app.call("DELETE", `/platform/v1/workspaces/${ws.slug}`, { token: user.token })).toMatchObject({ status: 204 });
    expect(await app.webhookApi.endpoints.find(app.ctx.db, { product: "probe", scopeId: ws.id }, ep.body.id)).toBeNull();
    expect(probe.deletedWorkspaces).toEqual([ws.id]);

    await app.ctx.scheduler.runNow("platform.events");
    const mine = probe.workspaceEvents.filter((e) => (e.data as { workspace_id?: string }).workspace_id === ws.id);
    expect(mine.map((e) => e.type)).toEqual(["workspace.created", "workspace.deleted"]);
    expect(mine[0]!.scope).toBe(`platform:${ws.id}`);
    // Delivered once: a second run finds nothing new.
    await app.ctx.scheduler.runNow("platform.events");
    expect(probe.workspaceEvents.filter((e) => (e.data as { workspace_id?: string }).workspace_id === ws.id)).toHaveLength(2);
  });

  test("a subscription gets the event types it names, typed; the others are dispatched without reaching it", async () => {
    const user = await signup(app);
    const ws = await createWorkspace(app, user.token);
    expect((await app.call("PATCH", `/platform/v1/workspaces/${ws.slug}`, { token: user.token, body: { slug: `${ws.slug}-x` } })).status).toBe(200);
    await app.ctx.scheduler.runNow("platform.events");
    const mine = probe.workspaceEvents.filter((e) => e.data.workspace_id === ws.id);
    expect(mine.map((e) => [e.type, e.data])).toEqual([["workspace.created", { workspace_id: ws.id, slug: ws.slug }]]);
    const renamed = await app.ctx.db.all<{ dispatched_at: string | null }>("SELECT dispatched_at FROM core_events WHERE scope = ? AND type = 'workspace.renamed'", `platform:${ws.id}`);
    expect(renamed).toEqual([{ dispatched_at: app.clock.iso() }]);
  });

  test("a port it provides is found at call time by an earlier module that consumes it: mail asks the probe before it deletes a domain", async () => {
    const mailContext = app.contextOf("mail");
    const providers = mailContext.ports("mail.domain-in-use");
    // Every provider in list order: mail's own first, the probe (mounted last) last; port() is the first.
    expect(providers.at(-1)).toBe(probe.holds);
    expect(mailContext.port("mail.domain-in-use")).toBe(providers[0]!);
    expect(providers[0]).not.toBe(probe.holds);

    const { token, ws } = await ownerWithKey(app);
    const domains = `/mail/v1/workspaces/${ws.id}/domains`;
    const held = await app.call("POST", domains, { token, body: { fqdn: `held-${ws.slug}.example` } });
    const free = await app.call("POST", domains, { token, body: { fqdn: `free-${ws.slug}.example` } });
    expect([held.status, free.status]).toEqual([201, 201]);
    const refused = await app.call("DELETE", `${domains}/${held.body.id}`, { token });
    expect([refused.status, refused.body.error.code, refused.body.error.message]).toEqual([409, "DOMAIN_IN_USE", `The domain held-${ws.slug}.example is in use: the probe holds it`]);
    expect((await app.call("GET", `${domains}/${held.body.id}`, { token })).status).toBe(200);
    expect((await app.call("DELETE", `${domains}/${free.body.id}`, { token })).status).toBe(204);
  });

  test("stop() awaits the module's stop before the database closes", async () => {
    await app.stop();
    expect(probe.stopped).toBe(true);
  });
});

describe("DEFAULT_SERVICES names the mounted modules", () => {
  test("an unknown name is a configuration error naming it; a known subset is what new workspaces get", async () => {
    await expect(startTestApp({ DEFAULT_SERVICES: "auth,nope" })).rejects.toThrow(ConfigError);
    await expect(startTestApp({ DEFAULT_SERVICES: "auth,nope" })).rejects.toThrow('DEFAULT_SERVICES: unknown service "nope"');
    const app = await startTestApp({ DEFAULT_SERVICES: "probe" }, undefined, { modules: [...SERVICE_MODULES, probeModule] });
    try {
      const user = await signup(app);
      const ws = await createWorkspace(app, user.token);
      const r = await app.call("GET", `/platform/v1/workspaces/${ws.slug}/services`, { token: user.token });
      expect(r.body.data.filter((s: { enabled: boolean }) => s.enabled).map((s: { service: string }) => s.service)).toEqual(["platform", "probe"]);
    } finally {
      await app.stop();
    }
  });
});

describe("platform workspace.* events", () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(() => app.stop());

  const platformEvents = () => app.ctx.db.all<{ type: string; dispatched_at: string | null }>("SELECT type, dispatched_at FROM core_events WHERE scope LIKE 'platform:%' ORDER BY created_at, id");

  test("are dispatched by the platform.events job (no module needs to consume them) and purged after the retention", async () => {
    const user = await signup(app);
    const ws = await createWorkspace(app, user.token);
    expect((await app.call("PATCH", `/platform/v1/workspaces/${ws.slug}`, { token: user.token, body: { slug: `${ws.slug}-x` } })).status).toBe(200);
    expect((await platformEvents()).map((e) => [e.type, e.dispatched_at])).toEqual([
      ["workspace.created", null],
      ["workspace.renamed", null],
    ]);

    await app.ctx.scheduler.runNow("platform.events");
    expect((await platformEvents()).every((e) => e.dispatched_at === app.clock.iso())).toBe(true);
    expect(await app.ctx.events.pendingCount()).toBe(0);

    // Kept for the retention period, gone after it (the table no longer grows forever).
    app.clock.advance(DISPATCHED_EVENT_RETENTION_MS - DAY);
    await app.ctx.scheduler.runNow("retention.purge");
    expect(await platformEvents()).toHaveLength(2);
    app.clock.advance(2 * DAY);
    await app.ctx.scheduler.runNow("retention.purge");
    expect(await platformEvents()).toEqual([]);
  });
});

describe("shutdown", () => {
  let receiver: Receiver;
  afterAll(() => receiver.stop());

  test("waits for a background legacy test send and records it before the database closes", async () => {
    const warnings: string[] = [];
    const log = createLogger("warn", {}, (line) => void warnings.push(JSON.parse(line).msg));
    const app = await startTestApp({ ALLOW_PRIVATE_TARGETS: "true" }, undefined, { log });
    app.webhooks.options.autoKick = false;
    let answered = false;
    receiver = startReceiver(async () => {
      await Bun.sleep(150);
      answered = true;
      return new Response("ok");
    });
    const { token, ws } = await ownerWithKey(app);
    const hook = await app.call("POST", `/trawl/v1/workspaces/${ws.id}/webhooks`, { token, body: { url: `${receiver.url}/slow` } });
    expect(hook.status).toBe(201);
    const test = await app.call("POST", `/trawl/v1/workspaces/${ws.id}/webhooks/${hook.body.id}/test`, { token });
    expect(test.status).toBe(202);
    expect(answered).toBe(false);

    // Without waiting for LegacyWebhookService.idle(), stop() returns (and the database
    // closes) mid-send, and the outcome is dropped with a warning.
    await app.stop();
    expect(answered).toBe(true);
    expect(receiver.requests).toHaveLength(1);
    await Bun.sleep(50);
    expect(warnings).not.toContain("legacy webhook test send not recorded");
  });
});
