/**
 * Roles, the permission catalogue, role membership and the token checks of an App:
 * /authorize, /verify, /oauth/introspect, plus an independent verifier (jose remote JWKS
 * over real loopback HTTP) across a signing-key rotation.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createRemoteJWKSet, jwtVerify } from "jose";
import { startTestApp, type TestApp } from "../helpers/app";
import { claimsOf, createAuthApp, signupEndUser, type TestAuthApp, type TestEndUser } from "../helpers/auth";
import { inProcess } from "../helpers/target";

let app: TestApp;
let a: TestAuthApp;
let b: TestAuthApp;

beforeAll(async () => {
  app = await startTestApp();
  a = await createAuthApp(app);
  b = await createAuthApp(app);
});
afterAll(() => app.stop());

type Res = Awaited<ReturnType<TestApp["call"]>>;

/** An App-admin call with the App's all-actions workspace key unless another token is given. */
const adm = (x: TestAuthApp, method: string, path: string, body?: unknown, token = x.key): Promise<Res> => app.call(method, x.path(path), { token, body });
const perm = (x: TestAuthApp, name: string, description?: string) => adm(x, "POST", "/permissions", { name, description });
const role = (x: TestAuthApp, name: string, permissions: string[] = [], description?: string) => adm(x, "POST", "/roles", { name, permissions, description });
const sub = (u: TestEndUser) => claimsOf(u.access).sub as string;
const refresh = (x: TestAuthApp, u: TestEndUser) => app.call("POST", x.path("/auth/refresh"), { body: { refresh_token: u.refresh } });
const signin = (x: TestAuthApp, u: TestEndUser) => app.call("POST", x.path("/auth/signin"), { body: { identifier: u.username, password: u.password } });
const authorize = (x: TestAuthApp, token: string, permission: string) => app.call("POST", x.path("/authorize"), { body: { token, permission } });
const verify = (x: TestAuthApp, token: string) => app.call("POST", x.path("/verify"), { body: { token } });
const introspect = (x: TestAuthApp, token: string) => app.call("POST", x.path("/oauth/introspect"), { body: { token } });
const introspectForm = (x: TestAuthApp, body: string) =>
  app.call("POST", x.path("/oauth/introspect"), { body, headers: { "content-type": "application/x-www-form-urlencoded" } });

// Event ids (evt_ + UUIDv7) and audit ids (UUIDv7) sort in the order of writing.
const roleEvents = async (x: TestAuthApp) =>
  (await app.ctx.db.all<{ type: string; data: string }>("SELECT type, data FROM core_events WHERE scope = ? AND type IN ('role.assigned', 'role.removed') ORDER BY id", `webhook:auth:${x.id}`)).map(
    (e) => ({ type: e.type, ...JSON.parse(e.data) }),
  );
const auditActions = (x: TestAuthApp) => app.ctx.db.all<{ action: string; target_id: string | null }>("SELECT action, target_id FROM auth_audit WHERE app_id = ? ORDER BY id", x.id);

async function newUser(x: TestAuthApp) {
  return signupEndUser(app, x, { username: `u${Math.random().toString(36).slice(2, 10)}`, email: `u${Math.random().toString(36).slice(2, 10)}@example.com` });
}

/** An M2M token of the App (client_credentials) holding the given auth.* actions. */
async function m2mToken(x: TestAuthApp, permissions: string[]) {
  const c = await app.call("POST", `/auth/v1/apps/${x.id}/m2m-clients`, { token: x.key, body: { name: "svc", permissions } });
  expect(c.status).toBe(201);
  const t = await app.call("POST", x.path("/oauth/token"), { body: { grant_type: "client_credentials", client_id: c.body.client_id, client_secret: c.body.client_secret } });
  expect(t.status).toBe(200);
  return t.body.access_token as string;
}

describe("permission catalogue", () => {
  inProcess("compares created_at with the frozen injected clock")("create, validation at the edges, duplicates, list pages", async () => {
    const x = await createAuthApp(app);
    const r = await perm(x, "doc.read", "Read documents");
    expect(r.status).toBe(201);
    expect(r.body).toEqual({ name: "doc.read", description: "Read documents", created_at: app.clock.iso() });
    expect((await perm(x, "doc.read")).body.error.code).toBe("PERMISSION_EXISTS");
    expect((await perm(x, "doc.read")).status).toBe(409);

    // Exactly two lowercase segments [a-z][a-z0-9_-]*, at most 128 characters.
    for (const ok of ["a.b", "doc_2.re-ad_x", "x9.y-", `${"r".repeat(63)}.${"a".repeat(64)}`]) expect((await perm(x, ok)).status).toBe(201);
    expect(`${"r".repeat(63)}.${"a".repeat(64)}`.length).toBe(128);
    for (const bad of [`${"r".repeat(64)}.${"a".repeat(64)}`, "Doc.read", "doc.Read", "doc", "doc.read.all", "doc.*", "*", "1doc.read", "doc.1read", "doc.", ".read", "_doc.read", "doc read.x", "doc..read", ""]) {
      const res = await perm(x, bad);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe("VALIDATION_ERROR");
      expect(res.body.error.details[0].field).toBe("name");
    }
    expect((await perm(x, "desc.max", "d".repeat(500))).status).toBe(201);
    const long = await perm(x, "desc.over", "d".repeat(501));
    expect(long.status).toBe(400);
    expect(long.body.error.details[0].field).toBe("description");

    const names: string[] = [];
    let cursor: string | null = null;
    do {
      const page: Res = await adm(x, "GET", `/permissions?limit=2${cursor ? `&cursor=${cursor}` : ""}`);
      expect(page.status).toBe(200);
      expect(page.body.data.length).toBeLessThanOrEqual(2);
      names.push(...page.body.data.map((p: { name: string }) => p.name));
      cursor = page.body.pagination.next_cursor;
      expect(page.body.pagination.has_more).toBe(cursor !== null);
    } while (cursor);
    expect(names).toEqual([...names].sort());
    expect(names).toEqual(["a.b", "desc.max", "doc.read", "doc_2.re-ad_x", `${"r".repeat(63)}.${"a".repeat(64)}`, "x9.y-"]);
    expect((await adm(x, "GET", "/permissions?cursor=%%%")).status).toBe(400);
    expect((await adm(x, "GET", "/permissions?limit=101")).status).toBe(400);
  });

  inProcess("reads audit rows from the store (app.ctx.db)")("delete: 404 unknown, 409 while a role lists it (wildcards do not count), 204 after", async () => {
    const x = await createAuthApp(app);
    await perm(x, "doc.read");
    await perm(x, "doc.write");
    const editor = await role(x, "editor", ["doc.read", "doc.write"]);
    await role(x, "all-docs", ["doc.*"]);
    expect((await adm(x, "DELETE", "/permissions/nope.none")).status).toBe(404);
    const used = await adm(x, "DELETE", "/permissions/doc.read");
    expect(used.status).toBe(409);
    expect(used.body.error.code).toBe("PERMISSION_IN_USE");
    expect(used.body.error.details).toEqual([{ field: "roles", reason: 'used by role "editor"' }]);
    expect((await adm(x, "PATCH", `/roles/${editor.body.id}`, { permissions: ["doc.write"] })).status).toBe(200);
    expect((await adm(x, "DELETE", "/permissions/doc.read")).status).toBe(204);
    expect((await adm(x, "GET", "/permissions")).body.data.map((p: { name: string }) => p.name)).toEqual(["doc.write"]);
    // A role can no longer name it.
    expect((await role(x, "reader", ["doc.read"])).status).toBe(400);
    const actions = (await auditActions(x)).map((e) => e.action);
    expect(actions.filter((s) => s === "permission.create").length).toBe(2);
    expect(actions).toContain("permission.delete");
  });
});

describe("roles", () => {
  inProcess("compares created_at/updated_at with the frozen injected clock and reads audit rows from the store")("full CRUD with validation, case-insensitive names, wildcards and audit", async () => {
    const x = await createAuthApp(app);
    await perm(x, "doc.read");
    await perm(x, "doc.write");
    const c = await role(x, "Editor", ["doc.write", "doc.read", "doc.read", "report.*"], "Edits documents");
    expect(c.status).toBe(201);
    expect(c.body).toMatchObject({ app_id: x.id, name: "Editor", description: "Edits documents", permissions: ["doc.read", "doc.write", "report.*"] });
    expect(c.body.created_at).toBe(app.clock.iso());
    const id = c.body.id as string;

    // Unique per App regardless of case.
    const dup = await role(x, "editor");
    expect(dup.status).toBe(409);
    expect(dup.body.error.code).toBe("ROLE_NAME_TAKEN");
    // ...but another App may use the name.
    expect((await role(b, "editor")).status).toBe(201);

    // Names: 1-64 of [A-Za-z0-9_.:-], first a letter or digit.
    expect((await role(x, "r".repeat(64))).status).toBe(201);
    for (const bad of ["r".repeat(65), "", "two words", "-lead", "ünicode", "a/b"]) {
      const res = await role(x, bad);
      expect(res.status).toBe(400);
      expect(res.body.error.details[0].field).toBe("name");
    }
    expect((await role(x, "9:ops.team_x-1")).status).toBe(201);

    // Permissions: registered names, resource.* or *; at most 100 entries.
    const unknown = await role(x, "bad1", ["doc.read", "doc.delete"]);
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.details).toEqual([{ field: "permissions[1]", reason: "not a registered permission of this App" }]);
    const syntax = await role(x, "bad2", ["doc.*.x", "Doc.read", "doc", "*.read", "**"]);
    expect(syntax.status).toBe(400);
    expect(syntax.body.error.details.map((d: { field: string }) => d.field)).toEqual(["permissions[0]", "permissions[1]", "permissions[2]", "permissions[3]", "permissions[4]"]);
    const hundred = Array.from({ length: 100 }, (_, i) => `res${i}.*`);
    expect((await role(x, "wide", hundred)).status).toBe(201);
    const over = await role(x, "wider", [...hundred, "res100.*"]);
    expect(over.status).toBe(400);
    expect(over.body.error.details[0].field).toBe("permissions");
    expect((await role(x, "admin", ["*"])).body.permissions).toEqual(["*"]);
    const desc = await role(x, "long-desc", [], "d".repeat(501));
    expect(desc.status).toBe(400);
    expect(desc.body.error.details[0].field).toBe("description");

    // Read
    expect((await adm(x, "GET", `/roles/${id}`)).body).toEqual(c.body);
    expect((await adm(x, "GET", "/roles/00000000-0000-7000-8000-000000000000")).status).toBe(404);
    expect((await adm(x, "GET", "/roles/not-a-uuid")).status).toBe(400); // malformed: 400 naming role_id
    expect((await adm(b, "GET", `/roles/${id}`)).status).toBe(404); // another App's role

    // List: case-insensitive name order, cursor pages
    const all: string[] = [];
    let cursor: string | null = null;
    do {
      const page: Res = await adm(x, "GET", `/roles?limit=2${cursor ? `&cursor=${cursor}` : ""}`);
      expect(page.status).toBe(200);
      all.push(...page.body.data.map((r: { name: string }) => r.name));
      cursor = page.body.pagination.next_cursor;
    } while (cursor);
    expect(all).toEqual(["9:ops.team_x-1", "admin", "Editor", "r".repeat(64), "wide"]);

    // Update
    app.clock.advance(1000);
    const up = await adm(x, "PATCH", `/roles/${id}`, { description: "  Writes  ", permissions: ["doc.read"] });
    expect(up.status).toBe(200);
    expect(up.body).toMatchObject({ name: "Editor", description: "Writes", permissions: ["doc.read"], created_at: c.body.created_at, updated_at: app.clock.iso() });
    expect((await adm(x, "PATCH", `/roles/${id}`, { name: "ADMIN" })).status).toBe(409);
    expect((await adm(x, "PATCH", `/roles/${id}`, { name: "editor" })).body.name).toBe("editor"); // own name, other case
    expect((await adm(x, "PATCH", `/roles/${id}`, { permissions: ["doc.nope"] })).status).toBe(400);
    expect((await adm(x, "PATCH", `/roles/${id}`, { name: "bad name" })).status).toBe(400);
    expect((await adm(x, "PATCH", "/roles/00000000-0000-7000-8000-000000000000", { name: "z" })).status).toBe(404);
    const same = await adm(x, "PATCH", `/roles/${id}`, {});
    expect(same.status).toBe(200);
    expect(same.body.name).toBe("editor");

    // Delete
    expect((await adm(x, "DELETE", `/roles/${id}`)).status).toBe(204);
    expect((await adm(x, "GET", `/roles/${id}`)).status).toBe(404);
    expect((await adm(x, "DELETE", `/roles/${id}`)).status).toBe(404);

    const log = (await auditActions(x)).filter((e) => e.target_id === id).map((e) => e.action);
    expect(log).toEqual(["role.create", "role.update", "role.update", "role.delete"]);
  });

  test("the App's default_role cannot be deleted or renamed", async () => {
    const x = await createAuthApp(app);
    const member = await role(x, "member");
    const set = await app.call("PATCH", `/auth/v1/apps/${x.id}`, { token: x.key, body: { settings: { default_role: "Member" } } });
    expect(set.status).toBe(200);
    const del = await adm(x, "DELETE", `/roles/${member.body.id}`);
    expect(del.status).toBe(409);
    expect(del.body.error.code).toBe("ROLE_IS_DEFAULT");
    expect((await adm(x, "PATCH", `/roles/${member.body.id}`, { name: "members" })).status).toBe(409);
    expect((await adm(x, "PATCH", `/roles/${member.body.id}`, { name: "MEMBER" })).status).toBe(200);
    // A new sign-up gets the default role in its token.
    const u = await newUser(x);
    expect(claimsOf(u.access).role).toBe("MEMBER");
    await app.call("PATCH", `/auth/v1/apps/${x.id}`, { token: x.key, body: { settings: { default_role: null } } });
    expect((await adm(x, "DELETE", `/roles/${member.body.id}`)).status).toBe(204);
  });
});

describe("role membership", () => {
  inProcess("reads role events and audit rows from the store (app.ctx.db)")("assign, change, clear: events, audit, and the next token's claims", async () => {
    const x = await createAuthApp(app);
    await perm(x, "doc.read");
    await perm(x, "doc.write");
    await role(x, "reader", ["doc.read"]);
    const editor = await role(x, "editor", ["doc.read", "doc.write"]);
    const u = await newUser(x);
    expect(claimsOf(u.access)).toMatchObject({ role: null, permissions: [] });

    const put = await adm(x, "PUT", `/users/${sub(u)}/role`, { role: "READER" });
    expect(put.status).toBe(200);
    expect(put.body).toEqual({ user_id: sub(u), role: "reader" });
    // The token already issued keeps its claims; the next one carries the role.
    expect((await authorize(x, u.access, "doc.read")).body).toEqual({ allowed: false, role: null });
    const r1 = await refresh(x, u);
    expect(r1.status).toBe(200);
    expect(claimsOf(r1.body.access_token)).toMatchObject({ role: "reader", permissions: ["doc.read"], type: "end_user", sub: sub(u) });
    expect((await authorize(x, r1.body.access_token, "doc.read")).body).toEqual({ allowed: true, role: "reader" });
    expect((await authorize(x, r1.body.access_token, "doc.write")).body).toEqual({ allowed: false, role: "reader" });

    // Same role again: no change, no event.
    expect((await adm(x, "PUT", `/users/${sub(u)}/role`, { role: "reader" })).status).toBe(200);
    expect((await adm(x, "PUT", `/users/${sub(u)}/role`, { role: "editor" })).body.role).toBe("editor");
    // A role's permission change reaches the next token too.
    await adm(x, "PATCH", `/roles/${editor.body.id}`, { permissions: ["doc.*"] });
    const s = await signin(x, u);
    expect(claimsOf(s.body.access_token)).toMatchObject({ role: "editor", permissions: ["doc.*"] });
    expect((await authorize(x, s.body.access_token, "doc.delete")).body).toEqual({ allowed: true, role: "editor" });

    expect((await adm(x, "PUT", `/users/${sub(u)}/role`, { role: null })).body).toEqual({ user_id: sub(u), role: null });
    const r2 = await refresh(x, { ...u, refresh: r1.body.refresh_token });
    expect(claimsOf(r2.body.access_token)).toMatchObject({ role: null, permissions: [] });

    const at = app.clock.iso();
    expect(await roleEvents(x)).toEqual([
      { type: "role.assigned", user_id: sub(u), role: "reader", tenant_id: null, assigned_at: at },
      { type: "role.removed", user_id: sub(u), role: "reader", tenant_id: null, removed_at: at },
      { type: "role.assigned", user_id: sub(u), role: "editor", tenant_id: null, assigned_at: at },
      { type: "role.removed", user_id: sub(u), role: "editor", tenant_id: null, removed_at: at },
    ]);
    expect((await auditActions(x)).filter((e) => e.target_id === sub(u) && e.action.startsWith("user.role")).map((e) => e.action)).toEqual([
      "user.role.assign",
      "user.role.assign",
      "user.role.remove",
    ]);
  });

  inProcess("reads role events from the outbox in the store (app.ctx.db)")("unknown role 400, unknown or foreign user 404, bad body 400", async () => {
    const x = await createAuthApp(app);
    await role(x, "reader");
    const u = await newUser(x);
    const other = await newUser(b);
    const unknown = await adm(x, "PUT", `/users/${sub(u)}/role`, { role: "nope" });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.details[0].field).toBe("role");
    expect((await adm(x, "PUT", "/users/00000000-0000-7000-8000-000000000000/role", { role: "reader" })).status).toBe(404);
    expect((await adm(x, "PUT", `/users/${sub(other)}/role`, { role: "reader" })).status).toBe(404);
    expect((await adm(x, "PUT", `/users/${sub(u)}/role`, {})).status).toBe(400);
    expect((await adm(x, "PUT", `/users/${sub(u)}/role`, { role: 5 })).status).toBe(400);
    expect(await roleEvents(x)).toEqual([]);
  });

  inProcess("reads role events from the outbox in the store (app.ctx.db)")("deleting a role in use: holders lose it, one role.removed each", async () => {
    const x = await createAuthApp(app);
    await perm(x, "doc.read");
    const reader = await role(x, "reader", ["doc.read"]);
    const u1 = await newUser(x);
    const u2 = await newUser(x);
    await adm(x, "PUT", `/users/${sub(u1)}/role`, { role: "reader" });
    await adm(x, "PUT", `/users/${sub(u2)}/role`, { role: "reader" });
    // u2 also holds it as a tenant role.
    const tenant = await adm(x, "POST", "/tenants", { display_name: "Acme" });
    expect((await adm(x, "POST", `/tenants/${tenant.body.id}/members`, { accountId: sub(u2), role: "reader" })).status).toBe(201);
    const before = await refresh(x, u1);
    expect(claimsOf(before.body.access_token).role).toBe("reader");
    expect((await adm(x, "DELETE", `/roles/${reader.body.id}`)).status).toBe(204);
    const removed = (await roleEvents(x)).filter((e) => e.type === "role.removed");
    const at = app.clock.iso();
    expect(removed.filter((e) => e.tenant_id === null).map((e) => e.user_id).sort()).toEqual([sub(u1), sub(u2)].sort());
    expect(removed.filter((e) => e.tenant_id !== null)).toEqual([{ type: "role.removed", user_id: sub(u2), role: "reader", tenant_id: tenant.body.id, removed_at: at }]);
    expect(removed.every((e) => e.role === "reader" && e.removed_at === at)).toBe(true);
    const member = await adm(x, "GET", `/tenants/${tenant.body.id}/members`);
    expect(member.body.data[0]).toMatchObject({ account_id: sub(u2), role_id: null });
    const after = await refresh(x, { ...u1, refresh: before.body.refresh_token });
    expect(claimsOf(after.body.access_token)).toMatchObject({ role: null, permissions: [] });
    // The token minted before the deletion still says what it said (stateless) until it expires.
    expect((await authorize(x, before.body.access_token, "doc.read")).body).toEqual({ allowed: true, role: "reader" });
    const audit = (await auditActions(x)).find((e) => e.action === "role.delete");
    expect(audit?.target_id).toBe(reader.body.id);
  });
});

describe("admin callers", () => {
  inProcess("reads audit rows from the store (app.ctx.db)")("restricted key 403, another workspace's key 404, no credential 401, M2M token with the action", async () => {
    const minted = await app.call("POST", `/platform/v1/workspaces/${a.workspace.slug}/api-keys`, {
      token: a.session,
      body: { name: "roles-read", policy: [{ effect: "allow", actions: ["auth.role.read"], resources: ["*"] }] },
    });
    expect(minted.status).toBe(201);
    const readOnly = minted.body.key as string;
    expect((await adm(a, "GET", "/roles", undefined, readOnly)).status).toBe(200);
    expect((await adm(a, "GET", "/permissions", undefined, readOnly)).status).toBe(200);
    const denied = await adm(a, "POST", "/roles", { name: "x" }, readOnly);
    expect(denied.status).toBe(403);
    expect((await adm(a, "POST", "/permissions", { name: "x.y" }, readOnly)).status).toBe(403);
    const u = await newUser(a);
    expect((await adm(a, "PUT", `/users/${sub(u)}/role`, { role: null }, readOnly)).status).toBe(403);

    // B's workspace key against A's App: 404 for every route.
    expect((await adm(a, "GET", "/roles", undefined, b.key)).status).toBe(404);
    expect((await adm(a, "POST", "/roles", { name: "x" }, b.key)).status).toBe(404);
    expect((await adm(a, "POST", "/permissions", { name: "x.y" }, b.key)).status).toBe(404);
    expect((await adm(a, "PUT", `/users/${sub(u)}/role`, { role: null }, b.key)).status).toBe(404);

    expect((await app.call("GET", a.path("/roles"))).status).toBe(401);
    expect((await adm(a, "GET", "/roles", undefined, "garbage")).status).toBe(401);
    // An end-user token is no admin credential.
    expect((await adm(a, "GET", "/roles", undefined, u.access)).status).toBe(401);
    expect((await app.call("GET", "/auth/no-such-app/v1/roles", { token: a.key })).status).toBe(404);

    const m2m = await m2mToken(a, ["auth.role.*"]);
    const made = await adm(a, "POST", "/permissions", { name: "m2m.made" }, m2m);
    expect(made.status).toBe(201);
    expect((await auditActions(a)).find((e) => e.action === "permission.create" && e.target_id === "m2m.made")).toBeTruthy();
    expect((await adm(a, "PUT", `/users/${sub(u)}/role`, { role: null }, m2m)).status).toBe(403);
  });
});

describe("token checks", () => {
  let u: TestEndUser;
  let token: string;
  beforeAll(async () => {
    for (const p of ["doc.read", "doc.write", "report.view"]) await perm(a, p);
    await role(a, "writer", ["doc.*", "report.view"]);
    await role(a, "root", ["*"]);
    u = await newUser(a);
    await adm(a, "PUT", `/users/${sub(u)}/role`, { role: "writer" });
    token = (await refresh(a, u)).body.access_token;
  });

  test("/authorize: exact, resource.* and * coverage", async () => {
    expect((await authorize(a, token, "report.view")).body).toEqual({ allowed: true, role: "writer" });
    expect((await authorize(a, token, "doc.read")).body).toEqual({ allowed: true, role: "writer" });
    expect((await authorize(a, token, "doc.anything-new")).body).toEqual({ allowed: true, role: "writer" });
    // resource.* is that resource only: not a longer resource with the same prefix.
    expect((await authorize(a, token, "docs.read")).body).toEqual({ allowed: false, role: "writer" });
    expect((await authorize(a, token, "report.edit")).body).toEqual({ allowed: false, role: "writer" });
    const root = await newUser(a);
    await adm(a, "PUT", `/users/${sub(root)}/role`, { role: "root" });
    const rootToken = (await refresh(a, root)).body.access_token;
    expect((await authorize(a, rootToken, "anything.at_all")).body).toEqual({ allowed: true, role: "root" });
    // Token as Authorization: Bearer instead of in the body.
    const viaHeader = await app.call("POST", a.path("/authorize"), { token, body: { permission: "doc.write" } });
    expect(viaHeader.body).toEqual({ allowed: true, role: "writer" });
    // A user without a role.
    const plain = await newUser(a);
    expect((await authorize(a, plain.access, "doc.read")).body).toEqual({ allowed: false, role: null });
  });

  test("/authorize: 400 for a non-concrete permission, 401 for garbage, another App's token, or none", async () => {
    for (const p of ["doc.*", "*", "doc", "Doc.read", "a.b.c", ""]) expect((await authorize(a, token, p)).status).toBe(400);
    for (const t of ["garbage", "a.b.c", token.slice(0, -4) + "AAAA", token + "x"]) {
      const r = await authorize(a, t, "doc.read");
      expect(r.status).toBe(401);
      expect(r.body.error.code).toBe("INVALID_TOKEN");
    }
    const fromB = await newUser(b);
    expect((await authorize(b, token, "doc.read")).status).toBe(401);
    expect((await authorize(a, fromB.access, "doc.read")).status).toBe(401);
    expect((await app.call("POST", a.path("/authorize"), { body: { permission: "doc.read" } })).status).toBe(401);
    // A refresh token is no access token.
    expect((await authorize(a, u.refresh, "doc.read")).status).toBe(401);
    // An unsigned token claiming everything.
    const none = `${Buffer.from('{"alg":"none"}').toString("base64url")}.${Buffer.from(JSON.stringify({ ...claimsOf(token), permissions: ["*"] })).toString("base64url")}.`;
    expect((await authorize(a, none, "doc.read")).status).toBe(401);
  });

  test("/verify: body or bearer, end-user and M2M tokens; 401 otherwise", async () => {
    const r = await verify(a, token);
    expect(r.status).toBe(200);
    expect(r.body.valid).toBe(true);
    expect(r.body.claims).toMatchObject({ sub: sub(u), type: "end_user", role: "writer", iss: a.issuer, permissions: ["doc.*", "report.view"] });
    expect((await app.call("POST", a.path("/verify"), { token })).body.claims.sub).toBe(sub(u));
    const m2m = await m2mToken(a, ["auth.user.read"]);
    const mv = await verify(a, m2m);
    expect(mv.status).toBe(200);
    expect(mv.body.claims).toMatchObject({ type: "m2m", permissions: ["auth.user.read"] });
    expect((await authorize(a, m2m, "doc.read")).body).toEqual({ allowed: false, role: null });

    expect((await verify(a, "garbage")).status).toBe(401);
    expect((await verify(a, u.refresh)).status).toBe(401);
    expect((await verify(b, token)).status).toBe(401);
    expect((await verify(b, m2m)).status).toBe(401);
    expect((await app.call("POST", a.path("/verify"))).status).toBe(401);
    expect((await app.call("POST", a.path("/verify"), { body: {} })).status).toBe(401);
    expect((await verify(a, "x".repeat(16_385))).status).toBe(400);
    expect((await app.call("POST", "/auth/no-such-app/v1/verify", { body: { token } })).status).toBe(404);
  });

  test("/oauth/introspect: JSON and form bodies, active:false for anything not valid here", async () => {
    const j = await introspect(a, token);
    expect(j.status).toBe(200);
    const c = claimsOf(token);
    expect(j.body).toEqual({
      active: true,
      sub: sub(u),
      scope: "doc.* report.view",
      exp: c.exp,
      iat: c.iat,
      iss: a.issuer,
      jti: c.jti,
      token_type: "Bearer",
      role: "writer",
      permissions: ["doc.*", "report.view"],
      type: "end_user",
    });
    const f = await introspectForm(a, new URLSearchParams({ token, token_type_hint: "access_token" }).toString());
    expect(f.status).toBe(200);
    expect(f.body).toEqual(j.body);
    // An Authorization header (RFC clients authenticating) does not matter.
    expect((await app.call("POST", a.path("/oauth/introspect"), { body: { token }, headers: { authorization: "Basic Y2xpZW50OnNlY3JldA==" } })).body.active).toBe(true);

    const m2m = await m2mToken(a, ["auth.user.read", "auth.user.update"]);
    const mi = await introspectForm(a, `token=${encodeURIComponent(m2m)}`);
    expect(mi.body).toMatchObject({ active: true, type: "m2m", role: null, scope: "auth.user.read auth.user.update", token_type: "Bearer" });
    expect(mi.body.client_id).toMatch(/^m2m_/);
    expect(mi.body.sub).toBe(mi.body.client_id);

    const fromB = await newUser(b);
    for (const t of ["garbage", u.refresh, fromB.access, token + "x"]) {
      expect((await introspect(a, t)).body).toEqual({ active: false });
      expect((await introspectForm(a, new URLSearchParams({ token: t, token_type_hint: "refresh_token" }).toString())).body).toEqual({ active: false });
    }
    expect((await introspect(b, token)).body).toEqual({ active: false });
    // token is required.
    expect((await introspectForm(a, "token_type_hint=access_token")).status).toBe(400);
    expect((await app.call("POST", a.path("/oauth/introspect"), { body: {} })).status).toBe(400);
    expect((await app.call("POST", a.path("/oauth/introspect"), { body: "token=x", headers: { "content-type": "text/plain" } })).status).toBe(415);
  });

  test("tenant claims (tid, trole) pass through introspection", async () => {
    await role(a, "tenant-admin", ["report.view"]);
    const t = await adm(a, "POST", "/tenants", { display_name: "Acme" });
    expect(t.status).toBe(201);
    const add = await adm(a, "POST", `/tenants/${t.body.id}/members`, { accountId: sub(u), role: "tenant-admin" });
    expect(add.status).toBe(201);
    const s = await app.call("POST", a.path("/auth/signin"), { body: { identifier: u.username, password: u.password, tenant_id: t.body.id } });
    expect(s.status).toBe(200);
    const claims = claimsOf(s.body.access_token);
    const i = await introspect(a, s.body.access_token);
    expect(i.body).toMatchObject({ active: true, tid: claims.tid, trole: "tenant-admin", role: "writer" });
    expect(i.body.permissions).toEqual(claims.permissions);
  });
});

test("an independent verifier (jose remote JWKS over loopback) across a key rotation", async () => {
  const x = await createAuthApp(app);
  const u = await newUser(x);
  const server = app.listen(0, "127.0.0.1");
  try {
    // The issuer is pinned from the App; only the JWKS location uses the real port.
    expect(x.issuer).toBe(`http://localhost:8080/auth/${x.slug}`);
    const jwksUrl = new URL(`http://127.0.0.1:${server.port}/auth/${x.slug}/v1/.well-known/jwks.json`);
    // cooldownDuration 0: jose otherwise refuses to re-fetch within 30 s of the last fetch,
    // and this test sees the unknown kid right after its first fetch.
    const jwks = createRemoteJWKSet(jwksUrl, { cooldownDuration: 0 });
    const check = (t: string) => jwtVerify(t, jwks, { issuer: x.issuer, currentDate: app.clock.now(), algorithms: ["RS256"] });

    const first = await check(u.access);
    expect(first.payload.sub).toBe(claimsOf(u.access).sub);
    expect(first.protectedHeader.alg).toBe("RS256");
    expect(jwks.jwks()?.keys.length).toBe(1);

    const rot = await app.call("POST", `/auth/v1/apps/${x.id}/signing-keys/rotate`, { token: x.key });
    expect(rot.status).toBe(200);
    expect(rot.body.jwks.keys.length).toBe(2);
    const s = await signin(x, u);
    expect(s.status).toBe(200);
    const newKid = JSON.parse(Buffer.from(s.body.access_token.split(".")[0], "base64url").toString()).kid;
    expect(newKid).toBe(rot.body.kid);
    expect(jwks.jwks()?.keys.map((k) => k.kid)).not.toContain(newKid);

    // Unknown kid -> the set re-fetches and verifies the new token.
    const second = await check(s.body.access_token);
    expect(second.protectedHeader.kid).toBe(newKid);
    expect(jwks.jwks()?.keys.map((k) => k.kid)).toContain(newKid);
    // The old token still verifies (its key stays published until its tokens expire).
    expect((await check(u.access)).payload.sub).toBe(claimsOf(u.access).sub);
    // And so does the service itself.
    expect((await verify(x, u.access)).status).toBe(200);
    expect((await verify(x, s.body.access_token)).status).toBe(200);
    // A pinned issuer of another App refuses the token.
    await expect(jwtVerify(s.body.access_token, jwks, { issuer: b.issuer, currentDate: app.clock.now() })).rejects.toThrow();
  } finally {
    await server.stop(true);
  }
});

inProcess("moves the injected clock to one second before and at the token's expiry")("expired tokens: valid one second before expires_in, then 401 / active:false", async () => {
  const own = await startTestApp();
  try {
    const prev = app;
    app = own; // helpers above talk to `app`
    try {
      const x = await createAuthApp(own);
      await perm(x, "doc.read");
      await role(x, "reader", ["doc.read"]);
      const u = await newUser(x);
      await adm(x, "PUT", `/users/${sub(u)}/role`, { role: "reader" });
      const r = await refresh(x, u);
      const t = r.body.access_token as string;
      own.clock.advance((r.body.expires_in - 1) * 1000);
      expect((await authorize(x, t, "doc.read")).body).toEqual({ allowed: true, role: "reader" });
      expect((await verify(x, t)).status).toBe(200);
      expect((await introspect(x, t)).body.active).toBe(true);
      own.clock.advance(1000);
      const denied = await authorize(x, t, "doc.read");
      expect(denied.status).toBe(401);
      expect(denied.body.error.code).toBe("INVALID_TOKEN");
      expect((await verify(x, t)).status).toBe(401);
      expect((await introspect(x, t)).body).toEqual({ active: false });
      expect((await introspectForm(x, `token=${t}`)).body).toEqual({ active: false });
    } finally {
      app = prev;
    }
  } finally {
    await own.stop();
  }
});
