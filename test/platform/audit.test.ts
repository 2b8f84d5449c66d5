import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { MINUTE } from "../../src/core/clock";
import { encodeCursor } from "../../src/core/pagination";
import { BUILTIN_ROLE_IDS, insertMember } from "../../src/services/platform/workspaces/store/workspaces";
import { createWorkspace, signup, startTestApp, type TestApp } from "../helpers/app";
import { inProcess } from "../helpers/target";

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.stop());

const allow = (...actions: string[]) => ({ effect: "allow", actions, resources: ["*"] });
const accountId = async (token: string) => (await app.call("GET", "/platform/v1/introspect", { token })).body.account.id as string;
const logPath = (slug: string, q = "") => `/platform/v1/workspaces/${slug}/audit-log${q}`;

async function addMember(token: string, workspaceId: string, role: keyof typeof BUILTIN_ROLE_IDS) {
  const id = await accountId(token);
  await insertMember(app.platform.ctx.db, { id: crypto.randomUUID(), workspace_id: workspaceId, account_id: id, role_id: BUILTIN_ROLE_IDS[role], created_at: app.clock.iso() });
  return id;
}

/**
 * One workspace with a known history, 10 minutes apart (access tokens live an hour):
 *   t0      owner  workspace.create
 *   t0+10m  owner  workspace.update
 *   t0+20m  owner  apikey.create
 *   t0+30m  admin  workspace.update
 *   t0+40m  key    workspace.update
 *   t0+50m  owner  apikey.delete
 */
async function history() {
  const owner = await signup(app);
  const admin = await signup(app);
  const t0 = app.clock.nowMs();
  const at = (m: number) => new Date(t0 + m * MINUTE).toISOString();
  const ws = await createWorkspace(app, owner.token);
  const adminId = await addMember(admin.token, ws.id, "admin");
  const patch = (token: string, display_name: string) =>
    app.call("PATCH", `/platform/v1/workspaces/${ws.slug}`, { token, body: { display_name }, headers: { "user-agent": "audit-test/1.0" } });
  app.clock.advance(10 * MINUTE);
  await patch(owner.token, "Second name");
  app.clock.advance(10 * MINUTE);
  const key = (await app.call("POST", `/platform/v1/workspaces/${ws.slug}/api-keys`, { token: owner.token, body: { name: "writer", policy: [allow("workspace.update", "audit.list")] } })).body;
  app.clock.advance(10 * MINUTE);
  await patch(admin.token, "Admin's name");
  app.clock.advance(10 * MINUTE);
  expect((await patch(key.key, "Key's name")).status).toBe(200);
  app.clock.advance(10 * MINUTE);
  await app.call("DELETE", `/platform/v1/workspaces/${ws.slug}/api-keys/${key.id}`, { token: owner.token });
  return { owner, ownerId: await accountId(owner.token), admin, adminId, ws, key, at };
}

const actions = (r: { body: any }) => r.body.data.map((e: any) => e.action);

describe("audit log", () => {
  inProcess("builds a timed history by inserting members through the store and moving the injected clock (app.platform.ctx.db, app.clock.advance)")("newest first, with actor, target, request metadata; mutations by sessions, keys and admins all recorded", async () => {
    const h = await history();
    const r = await app.call("GET", logPath(h.ws.slug), { token: h.owner.token });
    expect(r.status).toBe(200);
    expect(actions(r)).toEqual(["apikey.delete", "workspace.update", "workspace.update", "apikey.create", "workspace.update", "workspace.create"]);
    expect(r.body.data.map((e: any) => e.created_at)).toEqual([50, 40, 30, 20, 10, 0].map(h.at));
    expect(r.body.data.map((e: any) => e.actor)).toEqual([
      { type: "account", id: h.ownerId },
      { type: "api_key", id: h.key.id },
      { type: "account", id: h.adminId },
      { type: "account", id: h.ownerId },
      { type: "account", id: h.ownerId },
      { type: "account", id: h.ownerId },
    ]);
    const update = r.body.data[4];
    expect(Object.keys(update).sort()).toEqual(["action", "actor", "created_at", "id", "ip", "metadata", "target", "user_agent"]);
    expect(update).toMatchObject({ target: { type: "workspace", id: h.ws.id }, user_agent: "audit-test/1.0", metadata: {} });
    expect(r.body.data[0].target).toEqual({ type: "api_key", id: h.key.id });
    expect(r.body.pagination).toEqual({ next_cursor: null, has_more: false });
  });

  inProcess("builds a timed history by inserting members through the store and moving the injected clock (app.platform.ctx.db, app.clock.advance)")("filters: actor, exact action, prefix pattern, since (inclusive), until (exclusive), combined", async () => {
    const h = await history();
    const q = async (query: string) => {
      const r = await app.call("GET", logPath(h.ws.slug, query), { token: h.owner.token });
      expect(r.status).toBe(200);
      return r;
    };
    expect(actions(await q(`?actor_id=${h.adminId}`))).toEqual(["workspace.update"]);
    expect(actions(await q(`?actor_id=${h.key.id}`))).toEqual(["workspace.update"]);
    expect(actions(await q(`?actor_id=${crypto.randomUUID()}`))).toEqual([]);
    expect(actions(await q("?action=workspace.update"))).toEqual(["workspace.update", "workspace.update", "workspace.update"]);
    expect(actions(await q("?action=workspace.*"))).toEqual(["workspace.update", "workspace.update", "workspace.update", "workspace.create"]);
    expect(actions(await q("?action=apikey.*"))).toEqual(["apikey.delete", "apikey.create"]);
    expect(actions(await q("?action=apikey.create"))).toEqual(["apikey.create"]);
    expect(actions(await q("?action=workspace.upd"))).toEqual([]); // exact names match exactly, never as a prefix
    expect(actions(await q("?action=*"))).toHaveLength(6);
    expect((await q(`?since=${h.at(20)}`)).body.data.map((e: any) => e.created_at)).toEqual([50, 40, 30, 20].map(h.at));
    expect((await q(`?until=${h.at(20)}`)).body.data.map((e: any) => e.created_at)).toEqual([10, 0].map(h.at));
    expect((await q(`?since=${h.at(10)}&until=${h.at(40)}`)).body.data.map((e: any) => e.created_at)).toEqual([30, 20, 10].map(h.at));
    // An offset is the same instant: 12:20+01:00 is 11:20Z, before everything here.
    const shifted = new Date(Date.parse(h.at(20)) + 60 * MINUTE).toISOString().replace(".000Z", "+01:00");
    expect((await q(`?since=${encodeURIComponent(shifted)}`)).body.data).toHaveLength(4);
    expect(actions(await q(`?actor_id=${h.ownerId}&action=workspace.*&since=${h.at(5)}`))).toEqual(["workspace.update"]);
  });

  test.each([
    ["since=yesterday", "since"],
    ["since=2026-11-21T25:00:00Z", "since"],
    ["since=2026-02-31", "since"],
    ["until=2026-11-21T12:00:00", "until"],
    ["until=12345", "until"],
    ["action=apikey*", "action"],
    ["action=APIKEY.create", "action"],
    ["action=.*", "action"],
    ["action=workspace", "action"],
    ["limit=0", "limit"],
    ["limit=201", "limit"],
    ["limit=ten", "limit"],
    ["cursor=***", "cursor"],
  ])("400 for %s", async (query, field) => {
    const owner = await signup(app);
    const ws = await createWorkspace(app, owner.token);
    const r = await app.call("GET", logPath(ws.slug, `?${query}`), { token: owner.token });
    expect(r.status).toBe(400);
    expect(r.body.error.details.map((d: any) => d.field)).toContain(field);
  });

  test("a cursor whose position is not an id is 400 INVALID_CURSOR", async () => {
    const owner = await signup(app);
    const ws = await createWorkspace(app, owner.token);
    const r = await app.call("GET", logPath(ws.slug, `?cursor=${encodeCursor({ id: 5 })}`), { token: owner.token });
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe("INVALID_CURSOR");
  });

  test("pagination: default 50, max 200, pages walk every entry once, newest first, with filters kept", async () => {
    const owner = await signup(app);
    const ws = await createWorkspace(app, owner.token);
    for (let i = 0; i < 60; i++) {
      const r = await app.call("PATCH", `/platform/v1/workspaces/${ws.slug}`, { token: owner.token, body: { display_name: `Name ${i}` } });
      expect(r.status).toBe(200);
    }
    const all = await app.call("GET", logPath(ws.slug), { token: owner.token });
    expect(all.body.data).toHaveLength(50);
    expect(all.body.pagination.has_more).toBe(true);
    expect(typeof all.body.pagination.next_cursor).toBe("string");
    const max = await app.call("GET", logPath(ws.slug, "?limit=200"), { token: owner.token });
    expect(max.body.data).toHaveLength(61);
    expect(max.body.pagination).toEqual({ next_cursor: null, has_more: false });

    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const r: any = await app.call("GET", logPath(ws.slug, `?action=workspace.update&limit=7${cursor ? `&cursor=${cursor}` : ""}`), { token: owner.token });
      expect(r.status).toBe(200);
      expect(r.body.pagination.has_more).toBe(r.body.pagination.next_cursor !== null);
      seen.push(...r.body.data.map((e: any) => e.id));
      cursor = r.body.pagination.next_cursor;
      pages++;
    } while (cursor);
    expect(pages).toBe(9); // 60 updates / 7
    expect(new Set(seen).size).toBe(60);
    expect(seen).toEqual(max.body.data.filter((e: any) => e.action === "workspace.update").map((e: any) => e.id));
    expect([...seen].sort().reverse()).toEqual(seen);
  });

  inProcess("builds a timed history by inserting members through the store and moving the injected clock (app.platform.ctx.db, app.clock.advance)")("access: action audit.list; members without it 403; non-members and other workspaces' keys 404; no cross-workspace entries", async () => {
    const h = await history();
    const other = await createWorkspace(app, h.owner.token);
    const member = await signup(app);
    await addMember(member.token, h.ws.id, "member");
    const stranger = await signup(app);

    expect((await app.call("GET", logPath(h.ws.slug), { token: h.admin.token })).status).toBe(200);
    const m = await app.call("GET", logPath(h.ws.slug), { token: member.token });
    expect(m.status).toBe(403);
    expect((await app.call("GET", logPath(h.ws.slug), { token: stranger.token })).status).toBe(404);
    expect((await app.call("GET", logPath("no-such-ws"), { token: h.owner.token })).status).toBe(404);
    expect((await app.call("GET", logPath(h.ws.slug))).status).toBe(401);

    const mint = (slug: string, policy: unknown[]) =>
      app.call("POST", `/platform/v1/workspaces/${slug}/api-keys`, { token: h.owner.token, body: { name: "reader", policy } });
    const reader = (await mint(h.ws.slug, [allow("audit.list")])).body.key;
    const noAudit = (await mint(h.ws.slug, [allow("workspace.read")])).body.key;
    const otherKey = (await mint(other.slug, [allow("audit.*")])).body.key;
    expect((await app.call("GET", logPath(h.ws.slug), { token: reader })).status).toBe(200);
    expect((await app.call("GET", logPath(h.ws.slug), { token: noAudit })).status).toBe(403);
    expect((await app.call("GET", logPath(h.ws.slug), { token: otherKey })).status).toBe(404);

    const theirs = await app.call("GET", logPath(other.slug), { token: h.owner.token });
    expect(theirs.body.data.every((e: any) => e.target === null || e.target.id !== h.ws.id)).toBe(true);
    expect(actions(theirs)).toEqual(["apikey.create", "workspace.create"]);
  });
});
