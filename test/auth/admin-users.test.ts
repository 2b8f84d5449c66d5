import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestApp, type TestApp } from "../helpers/app";
import { createAuthApp, signupEndUser, type TestAuthApp } from "../helpers/auth";
import { inProcess } from "../helpers/target";

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.stop());

const users = (a: TestAuthApp, id = "") => a.path(`/admin/users${id ? `/${id}` : ""}`);

async function adminCreate(a: TestAuthApp, body: Record<string, unknown>) {
  const r = await app.call("POST", users(a), { token: a.key, body });
  if (r.status !== 201) throw new Error(`admin create failed: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

/** Webhook payloads (`data`) of one event type in the App's scope, oldest first. */
async function eventsOf(a: TestAuthApp, type: string): Promise<any[]> {
  // Until the outbox of the App's scope is empty: a background fan-out may hold some rows
  // (PostgreSQL: locked and skipped by this call) until it commits.
  const pending = () => app.ctx.db.get("SELECT 1 AS x FROM core_events WHERE scope = ? AND dispatched_at IS NULL", `webhook:auth:${a.id}`);
  for (let i = 0; i < 500 && (await pending()); i++) if (!(await app.webhooks.dispatchPending())) await Bun.sleep(2);
  const list = await app.call("GET", `/auth/v1/apps/${a.id}/webhooks/events?type=${type}&limit=100`, { token: a.key });
  expect(list.status).toBe(200);
  const out = [];
  for (const e of list.body.data.reverse()) out.push((await app.call("GET", `/auth/v1/apps/${a.id}/webhooks/events/${e.id}`, { token: a.key })).body.payload.data);
  return out;
}

/**
 * App roles. The RBAC routes are another module; the rows are written directly so these
 * tests only depend on the admin user routes.
 */
async function addRole(a: TestAuthApp, name: string) {
  const now = app.clock.iso();
  await app.ctx.db.run("INSERT INTO auth_roles (id, app_id, name, description, permissions, created_at, updated_at) VALUES (?, ?, ?, '', '[]', ?, ?)", crypto.randomUUID(), a.id, name, now, now);
}

const signin = (a: TestAuthApp, identifier: string, password: string) => app.call("POST", a.path("/auth/signin"), { body: { identifier, password } });

describe("admin users: create, read, list", () => {
  inProcess("writes App roles straight into the store (addRole: app.ctx.db)")("create returns a PublicUser; duplicates are 409; bad input 400", async () => {
    const a = await createAuthApp(app);
    await addRole(a, "editor");
    const u = await adminCreate(a, { email: "Ada@Example.com", username: "ada", password: "correct horse battery", display_name: "Ada", metadata: { plan: "pro" }, role: "editor", email_verified: true });
    expect(u).toMatchObject({ app_id: a.id, username: "ada", email: "ada@example.com", email_verified: true, display_name: "Ada", role: "editor", status: "active", metadata: { plan: "pro" } });
    expect(u.password).toBeUndefined();
    expect((await signin(a, "ada@example.com", "correct horse battery")).status).toBe(200);
    const created = await eventsOf(a, "user.created");
    expect(created.map((e) => [e.id, e.signup_method])).toEqual([[u.id, "admin"]]);

    const minimal = await adminCreate(a, { email: "bob@example.com" });
    expect(minimal).toMatchObject({ username: "bob", email_verified: false, role: null, display_name: null, metadata: {} });

    const dupEmail = await app.call("POST", users(a), { token: a.key, body: { email: "ADA@example.com" } });
    expect([dupEmail.status, dupEmail.body.error.code]).toEqual([409, "EMAIL_TAKEN"]);
    const dupName = await app.call("POST", users(a), { token: a.key, body: { email: "other@example.com", username: "ADA" } });
    expect([dupName.status, dupName.body.error.code]).toEqual([409, "USERNAME_TAKEN"]);
    for (const body of [{ email: "not-an-email" }, { email: "c@example.com", role: "nope" }, { email: "c@example.com", password: "short" }, { email: "c@example.com", username: "a b" }, { username: "x" }]) {
      const r = await app.call("POST", users(a), { token: a.key, body });
      expect(r.status).toBe(400);
      expect(r.body.error.code).toBe("VALIDATION_ERROR");
    }
  });

  test("get: 404 for an unknown id and for another App's user", async () => {
    const a = await createAuthApp(app);
    const b = await createAuthApp(app);
    const u = await adminCreate(a, { email: "carol@example.com" });
    const g = await app.call("GET", users(a, u.id), { token: a.key });
    expect([g.status, g.body.id]).toEqual([200, u.id]);
    expect((await app.call("GET", users(b, u.id), { token: b.key })).status).toBe(404);
    expect((await app.call("GET", users(a, "not-a-uuid"), { token: a.key })).status).toBe(400); // malformed: 400 naming user_id
    // App B's key on App A's route: another workspace, so the App itself is 404.
    expect((await app.call("GET", users(a, u.id), { token: b.key })).status).toBe(404);
    expect((await app.call("GET", users(a, u.id))).status).toBe(401);
    expect((await app.call("PATCH", users(b, u.id), { token: b.key, body: { display_name: "x" } })).status).toBe(404);
    expect((await app.call("DELETE", users(b, u.id), { token: b.key })).status).toBe(404);
    expect((await app.call("GET", users(a, u.id), { token: a.key })).status).toBe(200);
  });

  test("list: id order, cursor pages, q search on username and email", async () => {
    const a = await createAuthApp(app);
    const made = [];
    for (const n of ["dora", "eve", "frank"]) made.push(await adminCreate(a, { email: `${n}@${n === "frank" ? "corp.test" : "example.com"}`, username: n }));
    const p1 = await app.call("GET", `${users(a)}?limit=2`, { token: a.key });
    expect(p1.body.data.map((u: any) => u.username)).toEqual(["dora", "eve"]);
    expect(p1.body.pagination.has_more).toBe(true);
    const p2 = await app.call("GET", `${users(a)}?limit=2&cursor=${p1.body.pagination.next_cursor}`, { token: a.key });
    expect(p2.body.data.map((u: any) => u.username)).toEqual(["frank"]);
    expect(p2.body.pagination).toEqual({ next_cursor: null, has_more: false });
    expect((await app.call("GET", `${users(a)}?q=CORP`, { token: a.key })).body.data.map((u: any) => u.username)).toEqual(["frank"]);
    expect((await app.call("GET", `${users(a)}?q=ev`, { token: a.key })).body.data.map((u: any) => u.username)).toEqual(["eve"]);
    expect((await app.call("GET", `${users(a)}?q=%25`, { token: a.key })).body.data).toEqual([]);
    expect((await app.call("GET", `${users(a)}?limit=0`, { token: a.key })).status).toBe(400);
    expect((await app.call("GET", `${users(a)}?cursor=***`, { token: a.key })).status).toBe(400);
  });
});

describe("admin users: update and delete", () => {
  inProcess("reads webhook events after draining the outbox by hand (eventsOf: app.webhooks, app.ctx.db) and audit rows from the store")("profile fields, metadata replaced, user.updated with changed_fields, audit with the caller", async () => {
    const a = await createAuthApp(app);
    const u = await adminCreate(a, { email: "gina@example.com", username: "gina", metadata: { a: 1, b: 2 } });
    const p = await app.call("PATCH", users(a, u.id), { token: a.key, body: { display_name: "Gina", username: "gina2", metadata: { c: 3 } } });
    expect(p.status).toBe(200);
    expect(p.body).toMatchObject({ display_name: "Gina", username: "gina2", metadata: { c: 3 } });
    const none = await app.call("PATCH", users(a, u.id), { token: a.key, body: { display_name: "Gina" } });
    expect(none.status).toBe(200);
    const updated = await eventsOf(a, "user.updated");
    expect(updated.length).toBe(1);
    expect(updated[0].changed_fields.sort()).toEqual(["display_name", "metadata", "username"]);
    expect(updated[0].id).toBe(u.id);
    const audit = await app.ctx.db.all<{ actor_type: string; metadata: string }>("SELECT actor_type, metadata FROM auth_audit WHERE app_id = ? AND action = 'user.update'", a.id);
    expect(audit.length).toBe(1);
    expect(audit[0].actor_type).toBe("api_key");
    expect(JSON.parse(audit[0].metadata).changed_fields.sort()).toEqual(["display_name", "metadata", "username"]);
    // A case-only change of one's own username is not a conflict.
    expect((await app.call("PATCH", users(a, u.id), { token: a.key, body: { username: "GINA2" } })).body.username).toBe("GINA2");
    for (const body of [{ status: "frozen" }, { email: "nope" }, { username: "x" }, { password: "short" }, { role: "ghost" }, { display_name: "x".repeat(201) }]) {
      const r = await app.call("PATCH", users(a, u.id), { token: a.key, body });
      expect(r.status).toBe(400);
    }
  });

  test("duplicate email or username on PATCH is 409", async () => {
    const a = await createAuthApp(app);
    const h = await adminCreate(a, { email: "hank@example.com", username: "hank" });
    await adminCreate(a, { email: "ivy@example.com", username: "ivy" });
    const e = await app.call("PATCH", users(a, h.id), { token: a.key, body: { email: "IVY@example.com" } });
    expect([e.status, e.body.error.code]).toEqual([409, "EMAIL_TAKEN"]);
    const n = await app.call("PATCH", users(a, h.id), { token: a.key, body: { username: "Ivy" } });
    expect([n.status, n.body.error.code]).toEqual([409, "USERNAME_TAKEN"]);
    // Nothing of a refused request is applied.
    const both = await app.call("PATCH", users(a, h.id), { token: a.key, body: { display_name: "Hank", username: "ivy" } });
    expect(both.status).toBe(409);
    expect((await app.call("GET", users(a, h.id), { token: a.key })).body.display_name).toBeNull();
  });

  inProcess("reads webhook events after draining the outbox by hand (eventsOf: app.webhooks, app.ctx.db)")("email change unverifies; email_verified flips emit user.email_verified", async () => {
    const a = await createAuthApp(app);
    const u = await adminCreate(a, { email: "jane@example.com", password: "correct horse battery", email_verified: true });
    expect((await signin(a, "jane@example.com", "correct horse battery")).status).toBe(200);
    const changed = await app.call("PATCH", users(a, u.id), { token: a.key, body: { email: "Jane.New@example.com" } });
    expect(changed.body).toMatchObject({ email: "jane.new@example.com", email_verified: false });
    // Only a verified primary email signs in.
    expect((await signin(a, "jane.new@example.com", "correct horse battery")).status).toBe(401);
    expect((await signin(a, "jane@example.com", "correct horse battery")).status).toBe(401);
    const verified = await app.call("PATCH", users(a, u.id), { token: a.key, body: { email_verified: true } });
    expect(verified.body.email_verified).toBe(true);
    expect((await signin(a, "jane.new@example.com", "correct horse battery")).status).toBe(200);
    // The old address is free again.
    expect((await adminCreate(a, { email: "jane@example.com" })).email).toBe("jane@example.com");
    const both = await app.call("PATCH", users(a, u.id), { token: a.key, body: { email: "jane3@example.com", email_verified: true } });
    expect(both.body).toMatchObject({ email: "jane3@example.com", email_verified: true });
    const un = await app.call("PATCH", users(a, u.id), { token: a.key, body: { email_verified: false } });
    expect(un.body.email_verified).toBe(false);

    const ev = await eventsOf(a, "user.email_verified");
    expect(ev.map((e) => e.email)).toEqual(["jane.new@example.com", "jane3@example.com"]);
    const upd = await eventsOf(a, "user.updated");
    expect(upd.map((e) => [...e.changed_fields].sort())).toEqual([["email", "email_verified"], ["email_verified"], ["email"], ["email_verified"]]);
  });

  inProcess("writes App roles straight into the store (addRole) and reads webhook events after draining the outbox by hand (eventsOf: app.webhooks, app.ctx.db)")("role changes emit role.removed / role.assigned", async () => {
    const a = await createAuthApp(app);
    await addRole(a, "viewer");
    await addRole(a, "admin");
    const u = await adminCreate(a, { email: "kim@example.com", role: "viewer" });
    const r = await app.call("PATCH", users(a, u.id), { token: a.key, body: { role: "admin" } });
    expect(r.body.role).toBe("admin");
    const cleared = await app.call("PATCH", users(a, u.id), { token: a.key, body: { role: null } });
    expect(cleared.body.role).toBeNull();
    expect((await eventsOf(a, "role.removed")).map((e) => [e.user_id, e.role, e.tenant_id])).toEqual([[u.id, "viewer", null], [u.id, "admin", null]]);
    expect((await eventsOf(a, "role.assigned")).map((e) => [e.user_id, e.role])).toEqual([[u.id, "admin"]]);
    // The next sign-in's token carries the role.
    await app.call("PATCH", users(a, u.id), { token: a.key, body: { role: "viewer", password: "correct horse battery", email_verified: true } });
    const s = await signin(a, "kim@example.com", "correct horse battery");
    expect(JSON.parse(Buffer.from(s.body.access_token.split(".")[1], "base64url").toString()).role).toBe("viewer");
  });

  inProcess("counts live sessions in the store (app.ctx.db), reads webhook events after draining the outbox by hand (eventsOf: app.webhooks, app.ctx.db) and audit rows from the store")("suspension revokes sessions: refresh fails 400; sign-in 403 ACCOUNT_SUSPENDED only after the right password", async () => {
    const a = await createAuthApp(app);
    const end = await signupEndUser(app, a);
    const s = await signin(a, end.username, end.password);
    expect(s.status).toBe(200);
    const sus = await app.call("PATCH", users(a, claimsSub(end.access)), { token: a.key, body: { status: "suspended" } });
    expect([sus.status, sus.body.status]).toEqual([200, "suspended"]);
    for (const rt of [end.refresh, s.body.refresh_token]) {
      const r = await app.call("POST", a.path("/auth/refresh"), { body: { refresh_token: rt } });
      expect([r.status, r.body.error.code]).toEqual([400, "INVALID_TOKEN"]);
    }
    const wrong = await signin(a, end.username, "not the password");
    expect(wrong.status).toBe(401);
    const right = await signin(a, end.username, end.password);
    expect([right.status, right.body.error.code]).toEqual([403, "ACCOUNT_SUSPENDED"]);
    const revoked = (await app.ctx.db.get<{ n: number }>("SELECT COUNT(*) AS n FROM auth_sessions WHERE user_id = ? AND revoked_at IS NULL", claimsSub(end.access)))!;
    expect(revoked.n).toBe(0);

    await app.call("PATCH", users(a, claimsSub(end.access)), { token: a.key, body: { status: "active" } });
    const back = await signin(a, end.username, end.password);
    expect(back.status).toBe(200);
    // A new password also ends every session.
    await app.call("PATCH", users(a, claimsSub(end.access)), { token: a.key, body: { password: "a brand new secret" } });
    expect((await app.call("POST", a.path("/auth/refresh"), { body: { refresh_token: back.body.refresh_token } })).status).toBe(400);
    expect((await signin(a, end.username, "a brand new secret")).status).toBe(200);
    const upd = await eventsOf(a, "user.updated");
    expect(upd.map((e) => e.changed_fields)).toEqual([["status"], ["status"], ["password"]]);
    const audit = (await app.ctx.db.get<{ metadata: string }>("SELECT metadata FROM auth_audit WHERE app_id = ? AND action = 'user.update' ORDER BY id LIMIT 1", a.id))!;
    expect(JSON.parse(audit.metadata).status).toEqual({ from: "active", to: "suspended" });
  });

  inProcess("reads webhook events after draining the outbox by hand (eventsOf: app.webhooks, app.ctx.db) and audit rows from the store")("delete: 204, then 404; user.deleted; sessions go with the user", async () => {
    const a = await createAuthApp(app);
    const end = await signupEndUser(app, a);
    const id = claimsSub(end.access);
    const d = await app.call("DELETE", users(a, id), { token: a.key });
    expect(d.status).toBe(204);
    expect((await app.call("GET", users(a, id), { token: a.key })).status).toBe(404);
    expect((await app.call("DELETE", users(a, id), { token: a.key })).status).toBe(404);
    expect((await app.call("POST", a.path("/auth/refresh"), { body: { refresh_token: end.refresh } })).status).toBe(400);
    const del = await eventsOf(a, "user.deleted");
    expect(del.map((e) => [e.id, e.email, e.app_id])).toEqual([[id, end.email, a.id]]);
    expect((await app.ctx.db.get<{ n: number }>("SELECT COUNT(*) AS n FROM auth_audit WHERE app_id = ? AND action = 'user.delete'", a.id))!.n).toBe(1);
    // The email can be used again.
    expect((await adminCreate(a, { email: end.email })).email).toBe(end.email);
  });

  test("a workspace key without the action gets 403", async () => {
    const a = await createAuthApp(app);
    const minted = await app.call("POST", `/platform/v1/workspaces/${a.workspace.slug}/api-keys`, {
      token: a.session,
      body: { name: "reader", policy: [{ effect: "allow", actions: ["auth.user.read", "auth.user.list"], resources: ["*"] }] },
    });
    const reader = minted.body.key as string;
    const u = await adminCreate(a, { email: "lee@example.com" });
    expect((await app.call("GET", users(a), { token: reader })).status).toBe(200);
    expect((await app.call("PATCH", users(a, u.id), { token: reader, body: { status: "blocked" } })).status).toBe(403);
    expect((await app.call("DELETE", users(a, u.id), { token: reader })).status).toBe(403);
    expect((await app.call("GET", users(a, u.id), { token: a.key })).body.status).toBe("active");
  });
});

function claimsSub(jwt: string): string {
  return JSON.parse(Buffer.from(jwt.split(".")[1], "base64url").toString("utf8")).sub;
}
