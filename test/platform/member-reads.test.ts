/**
 * The built-in member role (migration 0033) reads the services it can see, Auth, the card
 * board's webhooks and communities, and writes none of them. Real members (invited and
 * accepted), real routes, console sessions.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startTestApp, type TestApp } from "../helpers/app";
import { createAuthApp } from "../helpers/auth";
import { addMember, BUILTIN } from "../helpers/members";
import { inProcess } from "../helpers/target";

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ ALLOW_PRIVATE_TARGETS: "true" });
});
afterAll(() => app.stop());

const memberPolicy = async () =>
  JSON.parse((await app.ctx.db.get<{ policy: string }>("SELECT policy FROM platform_roles WHERE id = ?", BUILTIN.member))!.policy)[0].actions as string[];

inProcess("reads the member role's policy from the store and the action registry (app.ctx)")("the member role holds every read action of auth (but its audit log), tack, social, mail (but bodies), waitlist and trawl, and no write", async () => {
  const actions = await memberPolicy();
  const reads = app.ctx.actions
    .list()
    .map((a) => a.name)
    .filter((n) => /^(auth|tack|social|mail|waitlist|trawl)\./.test(n) && /\.(list|read)$/.test(n));
  expect(reads.length).toBeGreaterThan(10);
  for (const name of reads) expect({ name, held: actions.includes(name) }).toEqual({ name, held: name !== "auth.audit.list" && name !== "mail.message.body.read" });
  for (const name of actions) expect(name).toMatch(/\.(list|read)$/);
});

test("a member reads Auth Apps, users, tenants, roles, invites, M2M clients and webhooks, and cannot change them", async () => {
  const a = await createAuthApp(app);
  const member = await addMember(app, a.session, a.workspace.slug);
  const as = (method: string, path: string, body?: unknown) => app.call(method, path, { token: member.token, body });

  for (const path of [
    `/auth/v1/apps?workspace_id=${a.workspace.id}`,
    `/auth/v1/apps/${a.id}`,
    a.path("/admin/users"),
    a.path("/tenants"),
    a.path("/roles"),
    a.path("/permissions"),
    a.path("/invites"),
    `/auth/v1/apps/${a.id}/m2m-clients`,
    `/auth/v1/apps/${a.id}/webhooks/endpoints`,
  ]) {
    expect({ path, status: (await as("GET", path)).status }).toEqual({ path, status: 200 });
  }
  expect((await as("GET", a.path("/audit-log"))).status).toBe(403);

  for (const [method, path, body] of [
    ["PATCH", `/auth/v1/apps/${a.id}`, { display_name: "x" }],
    ["POST", a.path("/admin/users"), { username: "mallory", email: "m@example.com", password: "correct horse battery" }],
    ["POST", a.path("/tenants"), { slug: "acme", display_name: "Acme" }],
    ["POST", a.path("/roles"), { name: "r" }],
    ["POST", a.path("/invites"), { email: "x@example.com" }],
    ["POST", `/auth/v1/apps/${a.id}/m2m-clients`, { name: "c", permissions: [] }],
    ["POST", `/auth/v1/apps/${a.id}/webhooks/endpoints`, { url: "http://127.0.0.1:9/x" }],
  ] as [string, string, unknown][]) {
    const r = await as(method, path, body);
    expect({ method, path, status: r.status }).toEqual({ method, path, status: 403 });
  }
});

test("a member reads communities and card-board webhooks, and cannot change them", async () => {
  const a = await createAuthApp(app);
  const { session, workspace: ws, key } = a;
  const member = await addMember(app, session, ws.slug);
  const as = (method: string, path: string, body?: unknown) => app.call(method, path, { token: member.token, body });

  const communities = `/social/v1/workspaces/${ws.id}/communities`;
  const c = await app.call("POST", communities, { token: key, body: { slug: "club", display_name: "Club" } });
  expect(c.status).toBe(201);
  // Card-board webhooks belong to a board workspace (by its ws_ id for console sessions).
  const board = await app.call("POST", "/tack/api/v1/workspaces", { token: key, body: { name: "board" } });
  expect(board.status).toBe(201);
  const tack = `/tack/api/v1/workspaces/${board.body.id}/webhooks`;
  const hook = await app.call("POST", tack, { token: key, body: { url: "http://127.0.0.1:9/hook" } });
  expect(hook.status).toBe(201);

  for (const path of [communities, `${communities}/${c.body.id}`, `/social/v1/communities/${c.body.id}/webhooks`, tack, `${tack}/${hook.body.id}`, `${tack}/endpoints`]) {
    expect({ path, status: (await as("GET", path)).status }).toEqual({ path, status: 200 });
  }
  for (const [method, path, body] of [
    ["POST", communities, { slug: "other", display_name: "Other" }],
    ["PATCH", `${communities}/${c.body.id}`, { display_name: "x" }],
    ["DELETE", `${communities}/${c.body.id}`],
    ["POST", `/social/v1/communities/${c.body.id}/webhooks`, { url: "http://127.0.0.1:9/x" }],
    ["POST", tack, { url: "http://127.0.0.1:9/x" }],
    ["PATCH", `${tack}/${hook.body.id}`, { active: false }],
  ] as [string, string, unknown?][]) {
    const r = await as(method, path, body);
    expect({ method, path, status: r.status }).toEqual({ method, path, status: 403 });
  }
});
