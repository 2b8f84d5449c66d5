/**
 * The platform's hot-path read cache (API keys by hash, workspaces by slug/id) must never
 * serve a stale answer: every test warms it first, then changes something through the API
 * and expects the very next request to see the change.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { MINUTE } from "../../src/core/clock";
import { tx, type Sql } from "../../src/core/db";
import { platformChanged, PlatformReadCache } from "../../src/kernel/tenancy";
import { createWorkspace, signup, startTestApp, type TestApp } from "../helpers/app";
import { BUILTIN, addMember } from "../helpers/members";
import { inProcess } from "../helpers/target";

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => {
  await app.stop();
});

const allow = (...actions: string[]) => ({ effect: "allow", actions, resources: ["*"] });

async function keyFor(token: string, slug: string, policy: unknown[], extra: Record<string, unknown> = {}) {
  const r = await app.call("POST", `/platform/v1/workspaces/${slug}/api-keys`, { token, body: { name: "ci", policy, ...extra } });
  if (r.status !== 201) throw new Error(`mint failed: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body as { id: string; key: string };
}

/** Reads the workspace twice with the key, so both its principal and the workspace row are cached. */
async function warm(slug: string, key: string) {
  for (let i = 0; i < 2; i++) expect((await app.call("GET", `/platform/v1/workspaces/${slug}`, { token: key })).status).toBe(200);
}

describe("API-key principals and workspaces are cached, and every change is seen at once", () => {
  test("a revoked key stops working on the next request", async () => {
    const owner = await signup(app);
    const ws = await createWorkspace(app, owner.token);
    const k = await keyFor(owner.token, ws.slug, [allow("workspace.read")]);
    await warm(ws.slug, k.key);
    expect((await app.call("DELETE", `/platform/v1/workspaces/${ws.slug}/api-keys/${k.id}`, { token: owner.token })).status).toBe(204);
    expect((await app.call("GET", `/platform/v1/workspaces/${ws.slug}`, { token: k.key })).status).toBe(401);
  });

  test("an edited role policy shrinks the keys its members minted on the next request", async () => {
    const owner = await signup(app);
    const ws = await createWorkspace(app, owner.token);
    const role = await app.call("POST", `/platform/v1/workspaces/${ws.slug}/roles`, { token: owner.token, body: { name: "readers", policy: [allow("workspace.read", "apikey.create", "apikey.list")] } });
    expect(role.status).toBe(201);
    const reader = await addMember(app, owner.token, ws.slug, role.body.id);
    const k = await keyFor(reader.token, ws.slug, [allow("workspace.read")]);
    await warm(ws.slug, k.key);
    const patch = await app.call("PATCH", `/platform/v1/workspaces/${ws.slug}/roles/${role.body.id}`, { token: owner.token, body: { policy: [allow("apikey.list")] } });
    expect(patch.status).toBe(200);
    expect((await app.call("GET", `/platform/v1/workspaces/${ws.slug}`, { token: k.key })).status).toBe(403);
  });

  test("removing the minter from the workspace voids their key on the next request", async () => {
    const owner = await signup(app);
    const ws = await createWorkspace(app, owner.token);
    const admin = await addMember(app, owner.token, ws.slug, BUILTIN.admin);
    const k = await keyFor(admin.token, ws.slug, [allow("workspace.read")]);
    await warm(ws.slug, k.key);
    expect((await app.call("DELETE", `/platform/v1/workspaces/${ws.slug}/members/${admin.memberId}`, { token: owner.token })).status).toBe(204);
    expect((await app.call("GET", `/platform/v1/workspaces/${ws.slug}`, { token: k.key })).status).toBe(403);
  });

  test("a renamed workspace answers 404 under its old slug and 200 under the new one", async () => {
    const owner = await signup(app);
    const ws = await createWorkspace(app, owner.token);
    const k = await keyFor(owner.token, ws.slug, [allow("workspace.read")]);
    await warm(ws.slug, k.key);
    const renamed = `${ws.slug}-new`;
    expect((await app.call("PATCH", `/platform/v1/workspaces/${ws.slug}`, { token: owner.token, body: { slug: renamed } })).status).toBe(200);
    expect((await app.call("GET", `/platform/v1/workspaces/${ws.slug}`, { token: k.key })).status).toBe(404);
    expect((await app.call("GET", `/platform/v1/workspaces/${renamed}`, { token: k.key })).body.slug).toBe(renamed);
  });

  test("a deleted workspace takes its keys with it", async () => {
    const owner = await signup(app);
    const ws = await createWorkspace(app, owner.token);
    const k = await keyFor(owner.token, ws.slug, [allow("workspace.read")]);
    await warm(ws.slug, k.key);
    expect((await app.call("DELETE", `/platform/v1/workspaces/${ws.slug}`, { token: owner.token })).status).toBe(204);
    expect((await app.call("GET", `/platform/v1/workspaces/${ws.slug}`, { token: k.key })).status).toBe(401);
  });

  inProcess("moves the injected clock to the key's expiry instant")("a cached key still expires at its instant", async () => {
    const owner = await signup(app);
    const ws = await createWorkspace(app, owner.token);
    const k = await keyFor(owner.token, ws.slug, [allow("workspace.read")], { expires_at: new Date(app.clock.nowMs() + 10 * MINUTE).toISOString() });
    await warm(ws.slug, k.key);
    app.clock.advance(10 * MINUTE);
    expect((await app.call("GET", `/platform/v1/workspaces/${ws.slug}`, { token: k.key })).status).toBe(401);
  });

  inProcess("reads last_used_at from the store (app.ctx.db) while moving the injected clock")("last_used_at is still written at most once a minute", async () => {
    const owner = await signup(app);
    const ws = await createWorkspace(app, owner.token);
    const k = await keyFor(owner.token, ws.slug, [allow("workspace.read")]);
    const lastUsed = async () => (await app.ctx.db.get<{ last_used_at: string | null }>("SELECT last_used_at FROM platform_api_keys WHERE id = ?", k.id))!.last_used_at;
    await warm(ws.slug, k.key);
    const first = await lastUsed();
    expect(first).toBe(app.clock.iso());
    app.clock.advance(30_000);
    await warm(ws.slug, k.key);
    expect(await lastUsed()).toBe(first);
    app.clock.advance(31_000);
    await warm(ws.slug, k.key);
    expect(await lastUsed()).toBe(app.clock.iso());
  });
});

describe("PlatformReadCache", () => {
  inProcess("a unit test of the PlatformReadCache class on the in-process context (app.ctx)")("loads once per generation, never caches misses, stays bounded, and is bypassed inside a transaction", async () => {
    const db = app.ctx.db;
    const cache = new PlatformReadCache<{ v: number }>(app.ctx, 2);
    let loads = 0;
    const load = async (_db: Sql, key: string) => (loads++, key === "missing" ? null : { v: loads });
    expect(await cache.get(db, "a", load)).toEqual({ v: 1 });
    // A hit answers at once: no promise, no database read.
    expect(cache.get(db, "a", load)).toEqual({ v: 1 });
    expect(loads).toBe(1);
    await cache.get(db, "missing", load);
    await cache.get(db, "missing", load);
    expect(loads).toBe(3);

    await platformChanged(db, app.ctx);
    expect(await cache.get(db, "a", load)).toEqual({ v: 4 });

    // At the bound it starts over rather than growing: "a" has to be loaded again.
    await cache.get(db, "b", load);
    await cache.get(db, "c", load);
    const before = loads;
    await cache.get(db, "a", load);
    expect(loads).toBe(before + 1);

    // In a transaction (which may roll back) nothing is read from or written to the cache.
    await tx(db, async (t) => {
      const n = loads;
      await cache.get(t, "a", load);
      await cache.get(t, "z", load);
      expect(loads).toBe(n + 2);
    });
    const n = loads;
    await cache.get(db, "z", load);
    expect(loads).toBe(n + 1);
  });

  inProcess("a unit test of the PlatformReadCache class on the in-process context (app.ctx)")("a load the generation moved under is answered but not kept", async () => {
    const db = app.ctx.db;
    const cache = new PlatformReadCache<{ v: number }>(app.ctx);
    let loads = 0;
    const load = async () => {
      loads++;
      // A mutation commits while the read is under way: what it read may predate it.
      await platformChanged(db, app.ctx);
      return { v: loads };
    };
    expect(await cache.get(db, "a", load)).toEqual({ v: 1 });
    expect(await cache.get(db, "a", load)).toEqual({ v: 2 });
    expect(loads).toBe(2);
  });
});
