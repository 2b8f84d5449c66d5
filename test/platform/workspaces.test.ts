import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createWorkspace, signup, startTestApp, type TestApp } from "../helpers/app";
import { inProcess } from "../helpers/target";

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.stop());

const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 73, 72, 68, 82]);
const JPEG = new Uint8Array([0xff, 0xd8, 0xff, 0xe0, 0, 16, 74, 70, 73, 70]);
const WEBP = new Uint8Array([...Buffer.from("RIFF"), 0x24, 0, 0, 0, ...Buffer.from("WEBPVP8 ")]);

describe("workspaces", () => {
  test("create returns 201 with the workspace; creator is owner; list shows member_role", async () => {
    const u = await signup(app);
    const r = await app.call("POST", "/platform/v1/workspaces", { token: u.token, body: { slug: "acme-corp", display_name: "Acme Corp" } });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ slug: "acme-corp", display_name: "Acme Corp", status: "active", settings: {} });
    expect(r.body.id).toMatch(/^[0-9a-f-]{36}$/);
    const list = await app.call("GET", "/platform/v1/workspaces", { token: u.token });
    expect(list.status).toBe(200);
    expect(list.body.data).toHaveLength(1);
    expect(list.body.data[0]).toMatchObject({ slug: "acme-corp", member_role: "owner" });
    expect(list.body.pagination).toEqual({ next_cursor: null, has_more: false });
    const got = await app.call("GET", "/platform/v1/workspaces/acme-corp", { token: u.token });
    expect(got.body.member_role).toBeUndefined(); // only in list responses
  });

  test.each(["Upper", "-lead", "trail-", "double--hyphen", "under_score", "", "a".repeat(64), "sp ace"])("invalid slug %p is 400", async (slug) => {
    const u = await signup(app);
    const r = await app.call("POST", "/platform/v1/workspaces", { token: u.token, body: { slug, display_name: "X" } });
    expect(r.status).toBe(400);
  });

  test("63-character slug is accepted; taken slug is 409", async () => {
    const u = await signup(app);
    const slug = "b".repeat(63);
    expect((await app.call("POST", "/platform/v1/workspaces", { token: u.token, body: { slug, display_name: "Long" } })).status).toBe(201);
    const again = await app.call("POST", "/platform/v1/workspaces", { token: u.token, body: { slug, display_name: "Again" } });
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe("SLUG_TAKEN");
  });

  test("unauthenticated is 401; non-members get 404 exactly like a missing workspace", async () => {
    const owner = await signup(app);
    const stranger = await signup(app);
    const ws = await createWorkspace(app, owner.token);
    expect((await app.call("GET", `/platform/v1/workspaces/${ws.slug}`)).status).toBe(401);
    const a = await app.call("GET", `/platform/v1/workspaces/${ws.slug}`, { token: stranger.token });
    const b = await app.call("GET", `/platform/v1/workspaces/no-such-workspace`, { token: stranger.token });
    expect(a.status).toBe(404);
    expect(a.body).toEqual(b.body);
    expect((await app.call("PATCH", `/platform/v1/workspaces/${ws.slug}`, { token: stranger.token, body: { display_name: "pwn" } })).status).toBe(404);
    expect((await app.call("DELETE", `/platform/v1/workspaces/${ws.slug}`, { token: stranger.token })).status).toBe(404);
  });

  inProcess("reads the workspace.renamed event from the outbox in the store (app.ctx.events)")("patch renames, changes settings, records workspace.renamed in the outbox; 409 on a taken slug", async () => {
    const u = await signup(app);
    const ws = await createWorkspace(app, u.token);
    const other = await createWorkspace(app, u.token);
    const taken = await app.call("PATCH", `/platform/v1/workspaces/${ws.slug}`, { token: u.token, body: { slug: other.slug } });
    expect(taken.status).toBe(409);
    const bad = await app.call("PATCH", `/platform/v1/workspaces/${ws.slug}`, { token: u.token, body: { display_name: "   " } });
    expect(bad.status).toBe(400);
    const newSlug = `${ws.slug}-renamed`;
    const r = await app.call("PATCH", `/platform/v1/workspaces/${ws.slug}`, { token: u.token, body: { slug: newSlug, display_name: "Renamed", settings: { theme: "dark" } } });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ slug: newSlug, display_name: "Renamed", settings: { theme: "dark" } });
    const events = (await app.ctx.events.pending(1000)).filter((e) => e.type === "workspace.renamed" && e.scope === `platform:${ws.id}`);
    expect(events).toHaveLength(1);
    expect(JSON.parse(typeof events[0].data === "string" ? events[0].data : JSON.stringify(events[0].data))).toEqual({ workspace_id: ws.id, old_slug: ws.slug, new_slug: newSlug });
    expect((await app.call("GET", `/platform/v1/workspaces/${ws.slug}`, { token: u.token })).status).toBe(404);
    // display-name-only patch: no rename event
    await app.call("PATCH", `/platform/v1/workspaces/${newSlug}`, { token: u.token, body: { display_name: "Again" } });
    expect((await app.ctx.events.pending(1000)).filter((e) => e.type === "workspace.renamed" && e.scope === `platform:${ws.id}`)).toHaveLength(1);
  });

  test("delete is 204 and the workspace is gone", async () => {
    const u = await signup(app);
    const ws = await createWorkspace(app, u.token);
    expect((await app.call("DELETE", `/platform/v1/workspaces/${ws.slug}`, { token: u.token })).status).toBe(204);
    expect((await app.call("GET", `/platform/v1/workspaces/${ws.slug}`, { token: u.token })).status).toBe(404);
  });

  test("list pages with opaque cursors; malformed cursor is 400; limit bounds", async () => {
    const u = await signup(app);
    for (let i = 0; i < 5; i++) await createWorkspace(app, u.token);
    const p1 = await app.call("GET", "/platform/v1/workspaces?limit=2", { token: u.token });
    expect(p1.body.data).toHaveLength(2);
    expect(p1.body.pagination.has_more).toBe(true);
    const p2 = await app.call("GET", `/platform/v1/workspaces?limit=2&cursor=${p1.body.pagination.next_cursor}`, { token: u.token });
    const p3 = await app.call("GET", `/platform/v1/workspaces?limit=2&cursor=${p2.body.pagination.next_cursor}`, { token: u.token });
    expect(p3.body.data).toHaveLength(1);
    expect(p3.body.pagination).toEqual({ next_cursor: null, has_more: false });
    const ids = [...p1.body.data, ...p2.body.data, ...p3.body.data].map((w: any) => w.id);
    expect(new Set(ids).size).toBe(5);
    expect((await app.call("GET", "/platform/v1/workspaces?cursor=%%%", { token: u.token })).status).toBe(400);
    expect((await app.call("GET", "/platform/v1/workspaces?cursor=bm90LWpzb24", { token: u.token })).status).toBe(400);
    expect((await app.call("GET", "/platform/v1/workspaces?limit=100", { token: u.token })).status).toBe(200);
    expect((await app.call("GET", "/platform/v1/workspaces?limit=101", { token: u.token })).status).toBe(400);
    expect((await app.call("GET", "/platform/v1/workspaces?limit=0", { token: u.token })).status).toBe(400);
  });

  test("Idempotency-Key: replay returns the same workspace with Idempotent-Replay; other body is 409", async () => {
    const u = await signup(app);
    const headers = { "idempotency-key": "create-ws-1" };
    const a = await app.call("POST", "/platform/v1/workspaces", { token: u.token, headers, body: { slug: "idem-ws", display_name: "Idem" } });
    const b = await app.call("POST", "/platform/v1/workspaces", { token: u.token, headers, body: { slug: "idem-ws", display_name: "Idem" } });
    expect(a.status).toBe(201);
    expect(b.status).toBe(201);
    expect(b.body).toEqual(a.body);
    expect(b.headers.get("idempotent-replay")).toBe("true");
    const c = await app.call("POST", "/platform/v1/workspaces", { token: u.token, headers, body: { slug: "idem-ws-2", display_name: "Idem" } });
    expect(c.status).toBe(409);
    expect(c.body.error.code).toBe("IDEMPOTENCY_KEY_REUSE");
  });
});

describe("avatar", () => {
  const upload = (token: string, slug: string, bytes: Uint8Array, type = "image/png", name = "a.png") => {
    const form = new FormData();
    form.append("file", new Blob([bytes as Uint8Array<ArrayBuffer>], { type }), name);
    return app.call("POST", `/platform/v1/workspaces/${slug}/avatar`, { token, body: form });
  };

  test.each([
    ["png", PNG, "image/png"],
    ["jpeg", JPEG, "image/jpeg"],
    ["webp", WEBP, "image/webp"],
  ])("%s detected by magic bytes and served back", async (_n, bytes, type) => {
    const u = await signup(app);
    const ws = await createWorkspace(app, u.token);
    // declared type is deliberately wrong: detection is by content
    const r = await upload(u.token, ws.slug, bytes, "application/octet-stream", "x.bin");
    expect(r.status).toBe(200);
    expect(r.body.content_type).toBe(type);
    const url = new URL(r.body.avatar_url);
    const img = await app.handle(new Request(`http://localhost${url.pathname}${url.search}`));
    expect(img.status).toBe(200);
    expect(img.headers.get("content-type")).toBe(type);
    expect(new Uint8Array(await img.arrayBuffer())).toEqual(bytes);
    const got = await app.call("GET", `/platform/v1/workspaces/${ws.slug}`, { token: u.token });
    expect(got.body.avatar_url).toBe(r.body.avatar_url);
  });

  test("a GIF or text declared as PNG is refused (415); exactly 2 MB is fine, one byte more is 413", async () => {
    const u = await signup(app);
    const ws = await createWorkspace(app, u.token);
    expect((await upload(u.token, ws.slug, new TextEncoder().encode("GIF89a....."), "image/png")).status).toBe(415);
    expect((await upload(u.token, ws.slug, new TextEncoder().encode("<svg></svg>"), "image/png")).status).toBe(415);
    const max = new Uint8Array(2 * 1024 * 1024);
    max.set(PNG);
    expect((await upload(u.token, ws.slug, max)).status).toBe(200);
    const over = new Uint8Array(2 * 1024 * 1024 + 1);
    over.set(PNG);
    const r = await upload(u.token, ws.slug, over);
    expect(r.status).toBe(413);
    expect(r.body.error.code).toBe("FILE_TOO_LARGE");
  });

  test("missing file is 400", async () => {
    const u = await signup(app);
    const ws = await createWorkspace(app, u.token);
    const form = new FormData();
    form.append("other", "x");
    expect((await app.call("POST", `/platform/v1/workspaces/${ws.slug}/avatar`, { token: u.token, body: form })).status).toBe(400);
  });
});

describe("introspection", () => {
  test("current user lists workspaces with role and services", async () => {
    const u = await signup(app);
    const ws = await createWorkspace(app, u.token);
    const r = await app.call("GET", "/platform/v1/introspect", { token: u.token });
    expect(r.status).toBe(200);
    expect(r.body.is_authenticated).toBe(true);
    expect(r.body.account.username).toBe(u.username);
    expect(r.body.workspaces).toEqual([
      { id: ws.id, slug: ws.slug, display_name: `Workspace ${ws.slug}`, role: "owner", services: expect.arrayContaining(["auth", "mail", "platform"]), avatar_url: null },
    ]);
    expect((await app.call("GET", "/platform/v1/introspect")).status).toBe(401);
  });

  test("introspection is never stale: renames, service changes and role changes show on the next call", async () => {
    const owner = await signup(app);
    const ws = await createWorkspace(app, owner.token);
    const current = async () => (await app.call("GET", "/platform/v1/introspect", { token: owner.token })).body.workspaces[0];
    expect((await current()).slug).toBe(ws.slug); // now cached
    await app.call("PATCH", `/platform/v1/workspaces/${ws.slug}`, { token: owner.token, body: { slug: `${ws.slug}-x`, display_name: "Changed" } });
    expect(await current()).toMatchObject({ slug: `${ws.slug}-x`, display_name: "Changed" });
    expect((await current()).services).toContain("social");
    await app.call("DELETE", `/platform/v1/workspaces/${ws.slug}-x/services/social`, { token: owner.token });
    expect((await current()).services).not.toContain("social");
    await app.call("DELETE", `/platform/v1/workspaces/${ws.slug}-x`, { token: owner.token });
    expect((await app.call("GET", "/platform/v1/introspect", { token: owner.token })).body.workspaces).toEqual([]);
  });

  test("workspace membership: members get role and policy; non-members the same answer for real and made-up ids, malformed ids 400", async () => {
    const u = await signup(app);
    const stranger = await signup(app);
    const ws = await createWorkspace(app, u.token);
    const r = await app.call("GET", `/platform/v1/introspect/workspaces/${ws.id}`, { token: u.token });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ is_member: true, role: { name: "owner" } });
    expect(r.body.id).toBeString();
    expect(r.body.policy).toEqual([{ effect: "allow", actions: ["*"], resources: ["*"] }]);
    expect(r.body.services.length).toBeGreaterThan(0);
    const real = await app.call("GET", `/platform/v1/introspect/workspaces/${ws.id}`, { token: stranger.token });
    const fake = await app.call("GET", `/platform/v1/introspect/workspaces/0190f0f0-0000-7000-8000-000000000000`, { token: stranger.token });
    // A malformed id is 400 for everyone: it tells nothing about which workspaces exist.
    const junk = await app.call("GET", `/platform/v1/introspect/workspaces/not-a-uuid`, { token: stranger.token });
    expect(real.status).toBe(200);
    expect(real.body).toEqual(fake.body);
    expect(junk.status).toBe(400);
    expect(real.body.is_member).toBe(false);
    expect(real.body.id).toBeUndefined();
  });
});
