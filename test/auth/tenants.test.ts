import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { setSystemTime } from "bun:test";
import { Webhook } from "standardwebhooks";
import { MINUTE, SECOND } from "../../src/core/clock";
import { uuid } from "../../src/core/ids";
import { startTestApp, type TestApp } from "../helpers/app";
import { claimsOf, createAuthApp, signupEndUser, type TestAuthApp } from "../helpers/auth";
import type { Receiver } from "../helpers/http-receiver";
import { startWebhookTestApp, stopWebhookTestApp } from "../helpers/webhook-app";
import { inProcess } from "../helpers/target";

let app: TestApp;
let receiver: Receiver;
beforeAll(async () => {
  ({ app, receiver } = await startWebhookTestApp());
});
afterAll(() => stopWebhookTestApp({ app, receiver }));

/** token null: no Authorization header. */
const call = (a: TestAuthApp, method: string, path: string, body?: unknown, token: string | null = a.key) => app.call(method, a.path(path), { token: token ?? undefined, body });

async function createTenant(a: TestAuthApp, body: Record<string, unknown>) {
  const r = await call(a, "POST", "/tenants", body);
  if (r.status !== 201) throw new Error(`tenant create failed: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

const sub = (u: { access: string }) => claimsOf(u.access).sub as string;

const signin = (a: TestAuthApp, u: { username: string; password: string }, tenant_id?: string) =>
  call(a, "POST", "/auth/signin", { identifier: u.username, password: u.password, ...(tenant_id ? { tenant_id } : {}) }, null);

/** A role of the App, through the roles admin API. */
async function makeRole(a: TestAuthApp, name: string) {
  const r = await call(a, "POST", "/roles", { name, permissions: [] });
  if (r.status !== 201) throw new Error(`role create failed: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.id as string;
}

// Audit ids are UUIDv7: their order is the order of writing.
const auditActions = (appId: string) => app.ctx.db.all<{ action: string; target_id: string | null }>("SELECT action, target_id FROM auth_audit WHERE app_id = ? ORDER BY id", appId);

describe("tenant CRUD", () => {
  inProcess("compares created_at/updated_at with the frozen injected clock and moves it between writes")("create, read by UUID and display id, update, delete with the workspace key", async () => {
    const a = await createAuthApp(app);
    const c = await call(a, "POST", "/tenants", { display_name: "Acme Inc", metadata: { plan: "pro" } });
    expect(c.status).toBe(201);
    expect(c.body).toMatchObject({ app_id: a.id, slug: "acme-inc", display_name: "Acme Inc", status: "active", metadata: { plan: "pro" }, created_at: app.clock.iso(), updated_at: app.clock.iso() });
    expect(c.body.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(c.body.display_id).toMatch(/^tnt_[0-9a-f]{12}$/);

    for (const ref of [c.body.id, c.body.display_id]) {
      const g = await call(a, "GET", `/tenants/${ref}`);
      expect(g.status).toBe(200);
      expect(g.body).toEqual(c.body);
    }
    expect((await call(a, "GET", "/tenants/tnt_000000000000")).status).toBe(404);

    app.clock.advance(5 * SECOND);
    const p = await call(a, "PATCH", `/tenants/${c.body.display_id}`, { display_name: "Acme Corp", status: "suspended", metadata: { plan: "team" } });
    expect(p.status).toBe(200);
    expect(p.body).toMatchObject({ id: c.body.id, slug: "acme-inc", display_name: "Acme Corp", status: "suspended", metadata: { plan: "team" }, created_at: c.body.created_at, updated_at: app.clock.iso() });
    // Reactivation is allowed; a PATCH that changes nothing returns the tenant as it is.
    expect((await call(a, "PATCH", `/tenants/${c.body.id}`, { status: "active" })).body.status).toBe("active");
    const same = await call(a, "PATCH", `/tenants/${c.body.id}`, { status: "active", display_name: "Acme Corp" });
    expect(same.status).toBe(200);
    expect(same.body.display_name).toBe("Acme Corp");

    const d = await call(a, "DELETE", `/tenants/${c.body.id}`);
    expect(d.status).toBe(204);
    expect((await call(a, "GET", `/tenants/${c.body.id}`)).status).toBe(404);
    expect((await call(a, "DELETE", `/tenants/${c.body.id}`)).status).toBe(404);
    expect((await call(a, "PATCH", `/tenants/${c.body.display_id}`, { status: "active" })).status).toBe(404);

    expect((await auditActions(a.id)).filter((e) => e.action.startsWith("tenant.")).map((e) => e.action)).toEqual(["tenant.create", "tenant.update", "tenant.update", "tenant.delete"]);
  });

  test("slug: derived from display_name, random suffix on collision, explicit slugs lower-cased and unique regardless of case", async () => {
    const a = await createAuthApp(app);
    expect((await createTenant(a, { display_name: "Café Society, Inc." })).slug).toBe("cafe-society-inc");
    expect((await createTenant(a, { display_name: "  --Hello   World!!  " })).slug).toBe("hello-world");
    expect((await createTenant(a, { display_name: "東京" })).slug).toBe("tenant");
    const again = await createTenant(a, { display_name: "Café society inc" });
    expect(again.slug).toMatch(/^cafe-society-inc-[0-9a-f]{6}$/);
    const third = await createTenant(a, { display_name: "CAFE SOCIETY INC" });
    expect(third.slug).toMatch(/^cafe-society-inc-[0-9a-f]{6}$/);
    expect(third.slug).not.toBe(again.slug);
    // A long name is cut so that name + suffix still fits in 63 characters.
    const long = "x".repeat(200);
    const l1 = await createTenant(a, { display_name: long });
    const l2 = await createTenant(a, { display_name: long });
    expect(l1.slug.length).toBeLessThanOrEqual(63);
    expect(l2.slug).toMatch(/^x+-[0-9a-f]{6}$/);
    expect(l2.slug.length).toBe(63);

    const explicit = await call(a, "POST", "/tenants", { display_name: "Globex", slug: "Globex" });
    expect(explicit.status).toBe(201);
    expect(explicit.body.slug).toBe("globex");
    const dup = await call(a, "POST", "/tenants", { display_name: "Other", slug: "GLOBEX" });
    expect(dup.status).toBe(409);
    expect(dup.body.error.code).toBe("SLUG_TAKEN");
    // A derived slug never 409s: it takes the suffix instead.
    expect((await createTenant(a, { display_name: "GloBex" })).slug).toMatch(/^globex-[0-9a-f]{6}$/);

    const initech = await createTenant(a, { display_name: "Initech" });
    const clash = await call(a, "PATCH", `/tenants/${initech.id}`, { slug: "GlObEx" });
    expect(clash.status).toBe(409);
    expect(clash.body.error.code).toBe("SLUG_TAKEN");
    // Its own slug in another case is no clash.
    expect((await call(a, "PATCH", `/tenants/${initech.id}`, { slug: "INITECH" })).body.slug).toBe("initech");
    expect((await call(a, "PATCH", `/tenants/${initech.id}`, { slug: "initech-2" })).body.slug).toBe("initech-2");

    // The same slug is fine in another App.
    const b = await createAuthApp(app);
    expect((await call(b, "POST", "/tenants", { display_name: "Globex", slug: "globex" })).status).toBe(201);
  });

  test("validation edges: slug 63 vs 64 and charset, display_name 200 vs 201 and blank, metadata 16 KiB vs one byte more, status", async () => {
    const a = await createAuthApp(app);
    expect((await call(a, "POST", "/tenants", { display_name: "A", slug: "a".repeat(63) })).status).toBe(201);
    const long = await call(a, "POST", "/tenants", { display_name: "A", slug: "b".repeat(64) });
    expect(long.status).toBe(400);
    expect(long.body.error.code).toBe("VALIDATION_ERROR");
    for (const slug of ["", "with space", "under_score", "dot.ted", "ümlaut"]) {
      const r = await call(a, "POST", "/tenants", { display_name: "A", slug });
      expect(r.status).toBe(400);
      expect(r.body.error.details[0].field).toBe("slug");
    }
    expect((await call(a, "POST", "/tenants", { display_name: "n".repeat(200) })).status).toBe(201);
    expect((await call(a, "POST", "/tenants", { display_name: "n".repeat(201) })).status).toBe(400);
    const blank = await call(a, "POST", "/tenants", { display_name: "   " });
    expect(blank.status).toBe(400);
    expect(blank.body.error.details[0].field).toBe("display_name");
    expect((await call(a, "POST", "/tenants", {})).status).toBe(400);

    // {"k":"..."} is 8 bytes of JSON around the value.
    const fits = { k: "m".repeat(16 * 1024 - 8) };
    expect(JSON.stringify(fits).length).toBe(16 * 1024);
    expect((await call(a, "POST", "/tenants", { display_name: "Meta", metadata: fits })).status).toBe(201);
    const over = await call(a, "POST", "/tenants", { display_name: "Meta", metadata: { k: "m".repeat(16 * 1024 - 7) } });
    expect(over.status).toBe(400);
    expect(over.body.error.details[0].field).toBe("metadata");
    expect((await call(a, "POST", "/tenants", { display_name: "Meta", metadata: [1, 2] })).status).toBe(400);
    expect((await call(a, "POST", "/tenants", { display_name: "Meta", metadata: "x" })).status).toBe(400);

    const t = await createTenant(a, { display_name: "Patch me" });
    for (const body of [{ status: "deleted" }, { slug: "bad slug" }, { display_name: "" }, { metadata: [1] }, { metadata: { k: "m".repeat(16 * 1024 - 7) } }]) {
      const r = await call(a, "PATCH", `/tenants/${t.id}`, body);
      expect(r.status).toBe(400);
      expect(r.body.error.code).toBe("VALIDATION_ERROR");
    }
    expect((await call(a, "GET", `/tenants/${t.id}`)).body).toEqual(t);
  });
});

describe("listing", () => {
  inProcess("moves the injected clock between creations to order them")("newest first, cursor pages, status filter, 400 for another status, bad limit or cursor", async () => {
    const a = await createAuthApp(app);
    const made: any[] = [];
    for (let i = 1; i <= 5; i++) {
      made.push(await createTenant(a, { display_name: `T${i}` }));
      app.clock.advance(SECOND);
    }
    await call(a, "PATCH", `/tenants/${made[1].id}`, { status: "suspended" });
    await call(a, "PATCH", `/tenants/${made[3].id}`, { status: "archived" });

    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const q: string = cursor ? `?limit=2&cursor=${cursor}` : "?limit=2";
      const r = await call(a, "GET", `/tenants${q}`);
      expect(r.status).toBe(200);
      expect(r.body.data.length).toBeLessThanOrEqual(2);
      seen.push(...r.body.data.map((t: any) => t.display_name));
      cursor = r.body.pagination.next_cursor;
      expect(r.body.pagination.has_more).toBe(cursor !== null);
      pages++;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen).toEqual(["T5", "T4", "T3", "T2", "T1"]);

    const all = await call(a, "GET", "/tenants");
    expect(all.body.data.map((t: any) => t.display_name)).toEqual(["T5", "T4", "T3", "T2", "T1"]);
    expect(all.body.pagination).toEqual({ next_cursor: null, has_more: false });

    expect((await call(a, "GET", "/tenants?status=active")).body.data.map((t: any) => t.display_name)).toEqual(["T5", "T3", "T1"]);
    expect((await call(a, "GET", "/tenants?status=suspended")).body.data.map((t: any) => t.display_name)).toEqual(["T2"]);
    expect((await call(a, "GET", "/tenants?status=archived")).body.data.map((t: any) => t.display_name)).toEqual(["T4"]);
    const p1 = await call(a, "GET", "/tenants?status=active&limit=1");
    expect(p1.body.pagination.has_more).toBe(true);
    const p2 = await call(a, "GET", `/tenants?status=active&limit=1&cursor=${p1.body.pagination.next_cursor}`);
    expect(p2.body.data.map((t: any) => t.display_name)).toEqual(["T3"]);

    const bad = await call(a, "GET", "/tenants?status=deleted");
    expect(bad.status).toBe(400);
    expect(bad.body.error.details[0].field).toBe("status");
    expect((await call(a, "GET", "/tenants?status=ACTIVE")).status).toBe(400);
    expect((await call(a, "GET", "/tenants?limit=0")).status).toBe(400);
    expect((await call(a, "GET", "/tenants?limit=101")).status).toBe(400);
    expect((await call(a, "GET", "/tenants?limit=100")).status).toBe(200);
    const cur = await call(a, "GET", "/tenants?cursor=not*a*cursor");
    expect(cur.status).toBe(400);
    expect(cur.body.error.code).toBe("INVALID_CURSOR");
    const wrongShape = Buffer.from(JSON.stringify({ c: 1 })).toString("base64url");
    expect((await call(a, "GET", `/tenants?cursor=${wrongShape}`)).status).toBe(400);

    // Same created_at: the id breaks the tie, so no tenant is skipped or repeated.
    const b = await createAuthApp(app);
    for (let i = 1; i <= 3; i++) await createTenant(b, { display_name: `S${i}` });
    const q1 = await call(b, "GET", "/tenants?limit=2");
    const q2 = await call(b, "GET", `/tenants?limit=2&cursor=${q1.body.pagination.next_cursor}`);
    expect([...q1.body.data, ...q2.body.data].map((t: any) => t.display_name)).toEqual(["S3", "S2", "S1"]);
  });
});

describe("members", () => {
  inProcess("compares joined_at with the frozen injected clock and moves it between joins")("add by accountId, inline by email (new or existing user), duplicates 409, list newest first with pages", async () => {
    const a = await createAuthApp(app);
    const t = await createTenant(a, { display_name: "Members Inc" });
    const u1 = await signupEndUser(app, a);
    const add1 = await call(a, "POST", `/tenants/${t.display_id}/members`, { accountId: sub(u1) });
    expect(add1.status).toBe(201);
    expect(add1.body).toEqual({ id: expect.any(String), tenant_id: t.id, account_id: sub(u1), role_id: null, role_name: null, joined_at: app.clock.iso(), invited_by: expect.any(String) });
    expect(add1.body.invited_by.length).toBeGreaterThan(0);

    const dup = await call(a, "POST", `/tenants/${t.id}/members`, { accountId: sub(u1) });
    expect(dup.status).toBe(409);
    expect(dup.body.error.code).toBe("ALREADY_MEMBER");

    app.clock.advance(SECOND);
    const inline = await call(a, "POST", `/tenants/${t.id}/members`, { email: "New.Person@Example.com", display_name: "New Person", username: "newperson" });
    expect(inline.status).toBe(201);
    const loaded = (await app.auth.apps.byId(a.id))!;
    const created = (await app.auth.users.get(loaded, inline.body.account_id))!;
    expect(created).toMatchObject({ username: "newperson", display_name: "New Person", email: "new.person@example.com", password_hash: null });
    // The same email again is the same user, already a member.
    const again = await call(a, "POST", `/tenants/${t.id}/members`, { email: "new.person@example.com" });
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe("ALREADY_MEMBER");

    // An email that belongs to a user of the App adds that user (no second account).
    app.clock.advance(SECOND);
    const u2 = await signupEndUser(app, a);
    const byEmail = await call(a, "POST", `/tenants/${t.id}/members`, { email: u2.email.toUpperCase(), username: "ignored-name" });
    expect(byEmail.status).toBe(201);
    expect(byEmail.body.account_id).toBe(sub(u2));
    expect((await app.auth.users.get(loaded, sub(u2)))!.username).toBe(u2.username);

    // Inline with a derived username.
    app.clock.advance(SECOND);
    const derived = await call(a, "POST", `/tenants/${t.id}/members`, { email: "derive.me@example.com" });
    expect(derived.status).toBe(201);
    expect((await app.auth.users.get(loaded, derived.body.account_id))!.username).toBe("derive.me");

    const list = await call(a, "GET", `/tenants/${t.id}/members`);
    expect(list.status).toBe(200);
    expect(list.body.data.map((m: any) => m.account_id)).toEqual([derived.body.account_id, sub(u2), inline.body.account_id, sub(u1)]);
    const page1 = await call(a, "GET", `/tenants/${t.display_id}/members?limit=3`);
    expect(page1.body.data).toHaveLength(3);
    expect(page1.body.pagination.has_more).toBe(true);
    const page2 = await call(a, "GET", `/tenants/${t.display_id}/members?limit=3&cursor=${page1.body.pagination.next_cursor}`);
    expect(page2.body.data.map((m: any) => m.account_id)).toEqual([sub(u1)]);
    expect(page2.body.pagination).toEqual({ next_cursor: null, has_more: false });
    expect((await call(a, "GET", `/tenants/${t.id}/members?cursor=%%%`)).status).toBe(400);
    expect((await call(a, "GET", `/tenants/${t.id}/members?limit=101`)).status).toBe(400);
  });

  inProcess("reads contacts from the store (app.ctx.db) to show nothing was created")("bad member input: both or neither of accountId/email, unknown account, another App's account, bad email, unknown role, archived tenant", async () => {
    const a = await createAuthApp(app);
    const b = await createAuthApp(app);
    const t = await createTenant(a, { display_name: "Strict" });
    const u = await signupEndUser(app, a);
    const other = await signupEndUser(app, b);
    const both = await call(a, "POST", `/tenants/${t.id}/members`, { accountId: sub(u), email: u.email });
    expect(both.status).toBe(400);
    expect((await call(a, "POST", `/tenants/${t.id}/members`, {})).status).toBe(400);
    expect((await call(a, "POST", `/tenants/${t.id}/members`, { accountId: uuid() })).status).toBe(404);
    expect((await call(a, "POST", `/tenants/${t.id}/members`, { accountId: sub(other) })).status).toBe(404);
    const badEmail = await call(a, "POST", `/tenants/${t.id}/members`, { email: "not-an-email" });
    expect(badEmail.status).toBe(400);
    expect(badEmail.body.error.details[0].field).toBe("email");
    const badRole = await call(a, "POST", `/tenants/${t.id}/members`, { accountId: sub(u), role: "nope" });
    expect(badRole.status).toBe(400);
    expect(badRole.body.error.details[0].field).toBe("role");
    // A refused inline add leaves no account behind.
    expect((await call(a, "POST", `/tenants/${t.id}/members`, { email: "ghost@example.com", role: "nope" })).status).toBe(400);
    expect(await app.ctx.db.get("SELECT 1 FROM auth_contacts WHERE app_id = ? AND value = 'ghost@example.com'", a.id)).toBeNull();
    // account_id is accepted as an alias.
    expect((await call(a, "POST", `/tenants/${t.id}/members`, { account_id: sub(u) })).status).toBe(201);

    await call(a, "PATCH", `/tenants/${t.id}`, { status: "archived" });
    const archived = await call(a, "POST", `/tenants/${t.id}/members`, { email: "late@example.com" });
    expect(archived.status).toBe(409);
    expect(archived.body.error.code).toBe("TENANT_ARCHIVED");
    expect((await call(a, "POST", "/tenants/tnt_ffffffffffff/members", { accountId: sub(u) })).status).toBe(404);
  });

  inProcess("reads role events from the outbox in the store (app.ctx.db)")("change a member's role and remove a member", async () => {
    const a = await createAuthApp(app);
    const t = await createTenant(a, { display_name: "Roles" });
    const adminRoleId = await makeRole(a, "admin");
    await makeRole(a, "viewer");
    const u = await signupEndUser(app, a);
    const add = await call(a, "POST", `/tenants/${t.id}/members`, { accountId: sub(u), role: "admin" });
    expect(add.body).toMatchObject({ role_id: adminRoleId, role_name: "admin" });
    const p = await call(a, "PATCH", `/tenants/${t.id}/members/${sub(u)}`, { role: "viewer" });
    expect(p.status).toBe(200);
    expect(p.body.role_name).toBe("viewer");
    expect((await call(a, "PATCH", `/tenants/${t.id}/members/${sub(u)}`, { role: "nope" })).status).toBe(400);
    expect((await call(a, "PATCH", `/tenants/${t.id}/members/${sub(u)}`, { role: null })).body).toMatchObject({ role_id: null, role_name: null });
    expect((await call(a, "PATCH", `/tenants/${t.id}/members/${uuid()}`, { role: "viewer" })).status).toBe(404);
    // Event ids are evt_ + UUIDv7: their order is the order of recording.
    const roleEvents = (
      await app.ctx.db.all<{ type: string; data: string }>("SELECT type, data FROM core_events WHERE scope = ? AND type IN ('role.assigned', 'role.removed') ORDER BY id", `webhook:auth:${a.id}`)
    )
      .map((e) => ({ type: e.type, ...JSON.parse(e.data) }))
      .filter((e) => e.tenant_id === t.id);
    expect(roleEvents.map((e) => [e.type, e.role, e.user_id])).toEqual([
      ["role.removed", "admin", sub(u)],
      ["role.assigned", "viewer", sub(u)],
      ["role.removed", "viewer", sub(u)],
    ]);

    const d = await call(a, "DELETE", `/tenants/${t.display_id}/members/${sub(u)}`);
    expect(d.status).toBe(204);
    expect((await call(a, "DELETE", `/tenants/${t.id}/members/${sub(u)}`)).status).toBe(404);
    expect((await call(a, "GET", `/tenants/${t.id}/members`)).body.data).toEqual([]);
    // The account stays.
    expect((await signin(a, u)).status).toBe(200);
    expect((await auditActions(a.id)).filter((e) => e.action.startsWith("tenant.member")).map((e) => e.action)).toEqual(["tenant.member.add", "tenant.member.update", "tenant.member.update", "tenant.member.remove"]);
  });
});

describe("sign-in with a tenant", () => {
  inProcess("moves the injected clock past the per-identifier sign-in burst limit")("members get tid and trole; non-members 403; display id accepted; suspended and archived tenants 403", async () => {
    const a = await createAuthApp(app);
    await makeRole(a, "owner");
    const t = await createTenant(a, { display_name: "Signin Co" });
    const member = await signupEndUser(app, a);
    const outsider = await signupEndUser(app, a);
    await call(a, "POST", `/tenants/${t.id}/members`, { accountId: sub(member), role: "owner" });

    for (const ref of [t.id, t.display_id]) {
      const s = await signin(a, member, ref);
      expect(s.status).toBe(200);
      const claims = claimsOf(s.body.access_token);
      expect(claims.tid).toBe(t.id);
      expect(claims.trole).toBe("owner");
    }
    const plain = await signin(a, member);
    expect(claimsOf(plain.body.access_token).tid).toBeUndefined();

    const no = await signin(a, outsider, t.id);
    expect(no.status).toBe(403);
    expect(no.body.error.code).toBe("NOT_TENANT_MEMBER");
    expect((await signin(a, member, "tnt_000000000000")).status).toBe(403);

    // A member without a tenant role: tid, trole null.
    const plainMember = await signupEndUser(app, a);
    await call(a, "POST", `/tenants/${t.id}/members`, { accountId: sub(plainMember) });
    const pm = claimsOf((await signin(a, plainMember, t.display_id)).body.access_token);
    expect(pm.tid).toBe(t.id);
    expect(pm.trole).toBeNull();

    // A tenant of another App is not found from this one.
    const b = await createAuthApp(app);
    const tb = await createTenant(b, { display_name: "Other App Co" });
    expect((await signin(a, member, tb.id)).status).toBe(403);

    for (const status of ["suspended", "archived"]) {
      app.clock.advance(MINUTE); // sign-in bursts are limited per identifier and minute
      await call(a, "PATCH", `/tenants/${t.id}`, { status });
      const s = await signin(a, member, t.id);
      expect(s.status).toBe(403);
      expect(s.body.error.code).toBe("TENANT_NOT_ACTIVE");
    }
    await call(a, "PATCH", `/tenants/${t.id}`, { status: "active" });
    app.clock.advance(MINUTE);
    expect((await signin(a, member, t.id)).status).toBe(200);
  });

  test("suspending the tenant or removing the member revokes tenant sessions only", async () => {
    const a = await createAuthApp(app);
    const t = await createTenant(a, { display_name: "Revoke Co" });
    const u = await signupEndUser(app, a);
    await call(a, "POST", `/tenants/${t.id}/members`, { accountId: sub(u) });
    const inTenant = (await signin(a, u, t.id)).body.refresh_token;
    const outside = (await signin(a, u)).body.refresh_token;
    const refreshed = await call(a, "POST", "/auth/refresh", { refresh_token: inTenant }, null);
    expect(refreshed.status).toBe(200);
    expect(claimsOf(refreshed.body.access_token).tid).toBe(t.id);

    await call(a, "DELETE", `/tenants/${t.id}/members/${sub(u)}`);
    expect((await call(a, "POST", "/auth/refresh", { refresh_token: refreshed.body.refresh_token }, null)).status).toBe(400);
    const kept = await call(a, "POST", "/auth/refresh", { refresh_token: outside }, null);
    expect(kept.status).toBe(200);

    await call(a, "POST", `/tenants/${t.id}/members`, { accountId: sub(u) });
    const again = (await signin(a, u, t.id)).body.refresh_token;
    await call(a, "PATCH", `/tenants/${t.id}`, { status: "suspended" });
    expect((await call(a, "POST", "/auth/refresh", { refresh_token: again }, null)).status).toBe(400);
    expect((await call(a, "POST", "/auth/refresh", { refresh_token: kept.body.refresh_token }, null)).status).toBe(200);
  });

  inProcess("counts membership rows in the store (app.ctx.db)")("deleting a tenant removes its memberships only: the user still signs in", async () => {
    const a = await createAuthApp(app);
    const t = await createTenant(a, { display_name: "Doomed" });
    const keep = await createTenant(a, { display_name: "Kept" });
    const u = await signupEndUser(app, a);
    await call(a, "POST", `/tenants/${t.id}/members`, { accountId: sub(u) });
    await call(a, "POST", `/tenants/${keep.id}/members`, { accountId: sub(u) });
    const inTenant = (await signin(a, u, t.id)).body.refresh_token;
    const memberRows = async () => (await app.ctx.db.get<{ n: number }>("SELECT COUNT(*) AS n FROM auth_tenant_members WHERE tenant_id = ?", t.id))!.n;
    expect(await memberRows()).toBe(1);

    expect((await call(a, "DELETE", `/tenants/${t.display_id}`)).status).toBe(204);
    expect(await memberRows()).toBe(0);
    expect((await call(a, "GET", `/tenants/${t.id}/members`)).status).toBe(404);
    expect((await call(a, "POST", "/auth/refresh", { refresh_token: inTenant }, null)).status).toBe(400);
    const s = await signin(a, u);
    expect(s.status).toBe(200);
    expect(claimsOf(s.body.access_token).sub).toBe(sub(u));
    expect((await signin(a, u, t.id)).status).toBe(403);
    expect((await signin(a, u, keep.id)).status).toBe(200);
    expect((await call(a, "GET", `/tenants/${keep.id}/members`)).body.data.map((m: any) => m.account_id)).toEqual([sub(u)]);
  });
});

describe("authorization", () => {
  test("another workspace's key 404, App B cannot reach App A's tenant, missing action 403, no credential 401", async () => {
    const a = await createAuthApp(app);
    const b = await createAuthApp(app);
    const t = await createTenant(a, { display_name: "Private" });
    const u = await signupEndUser(app, a);

    const routes: [string, string, unknown?][] = [
      ["GET", "/tenants"],
      ["POST", "/tenants", { display_name: "X" }],
      ["GET", `/tenants/${t.id}`],
      ["PATCH", `/tenants/${t.id}`, { status: "suspended" }],
      ["DELETE", `/tenants/${t.id}`],
      ["GET", `/tenants/${t.id}/members`],
      ["POST", `/tenants/${t.id}/members`, { accountId: sub(u) }],
      ["PATCH", `/tenants/${t.id}/members/${sub(u)}`, { role: null }],
      ["DELETE", `/tenants/${t.id}/members/${sub(u)}`],
    ];
    for (const [m, p, body] of routes) {
      const r = await call(a, m, p, body, b.key);
      expect(r.status).toBe(404);
      expect(r.body.error.code).toBe("NOT_FOUND");
      expect((await call(a, m, p, body, null)).status).toBe(401);
    }
    // B's own key on B's routes does not find A's tenant by UUID or display id.
    for (const ref of [t.id, t.display_id]) {
      expect((await call(b, "GET", `/tenants/${ref}`)).status).toBe(404);
      expect((await call(b, "PATCH", `/tenants/${ref}`, { status: "archived" })).status).toBe(404);
      expect((await call(b, "DELETE", `/tenants/${ref}`)).status).toBe(404);
      expect((await call(b, "GET", `/tenants/${ref}/members`)).status).toBe(404);
    }
    expect((await call(b, "GET", "/tenants")).body.data).toEqual([]);
    expect((await call(a, "GET", `/tenants/${t.id}`)).body).toEqual(t);

    const minted = await app.call("POST", `/platform/v1/workspaces/${a.workspace.slug}/api-keys`, {
      token: a.session,
      body: { name: "tenant-reader", policy: [{ effect: "allow", actions: ["auth.tenant.read"], resources: ["*"] }] },
    });
    expect(minted.status).toBe(201);
    const reader = minted.body.key as string;
    expect((await call(a, "GET", "/tenants", undefined, reader)).status).toBe(200);
    expect((await call(a, "GET", `/tenants/${t.display_id}`, undefined, reader)).status).toBe(200);
    const denied = await call(a, "POST", "/tenants", { display_name: "Nope" }, reader);
    expect(denied.status).toBe(403);
    expect(denied.body.error.code).toBe("FORBIDDEN");
    for (const [m, p, body] of routes.filter(([m]) => m !== "GET")) expect((await call(a, m, p, body, reader)).status).toBe(403);
    expect((await call(a, "GET", "/tenants")).body.data.map((x: any) => x.id)).toEqual([t.id]);
  });
});

describe("webhook events", () => {
  inProcess("drives the webhook engine by hand (app.webhooks) and counts outbox rows in the store")("tenant and member changes reach an App endpoint, signed, with changed_fields", async () => {
    const a = await createAuthApp(app);
    const ep = await app.call("POST", `/auth/v1/apps/${a.id}/webhooks/endpoints`, { token: a.key, body: { url: `${receiver.url}/auth-hook` } });
    expect(ep.status).toBe(201);
    const start = receiver.requests.length;

    const t = await createTenant(a, { display_name: "Hooked" });
    await call(a, "PATCH", `/tenants/${t.id}`, { display_name: "Hooked Inc", metadata: { a: 1 } });
    await call(a, "PATCH", `/tenants/${t.id}`, { display_name: "Hooked Inc" }); // no change: no event
    const u = await signupEndUser(app, a);
    await call(a, "POST", `/tenants/${t.id}/members`, { accountId: sub(u) });
    await call(a, "DELETE", `/tenants/${t.id}/members/${sub(u)}`);
    await call(a, "POST", `/tenants/${t.id}/members`, { accountId: sub(u) });
    await call(a, "DELETE", `/tenants/${t.id}`);

    // Earlier tests left their events in the outbox too: drain it all, then deliver.
    while ((await app.webhooks.dispatchPending()) > 0);
    await app.webhooks.deliverDue();
    const got = receiver.requests.slice(start).filter((r) => r.path === "/auth-hook");
    setSystemTime(app.clock.now());
    let events: any[];
    try {
      events = got.map((r) => new Webhook(ep.body.signing_secret).verify(r.body, { "webhook-id": r.headers["webhook-id"], "webhook-timestamp": r.headers["webhook-timestamp"], "webhook-signature": r.headers["webhook-signature"] }));
    } finally {
      setSystemTime();
    }
    const tenantEvents = events.filter((e) => e.type.startsWith("tenant."));
    expect(tenantEvents.map((e) => e.type).sort()).toEqual(["tenant.created", "tenant.deleted", "tenant.member.added", "tenant.member.added", "tenant.member.removed", "tenant.updated"].sort());
    const byType = (type: string) => tenantEvents.find((e) => e.type === type)!.data;
    expect(byType("tenant.created")).toMatchObject({ id: t.id, display_id: t.display_id, app_id: a.id, slug: "hooked", status: "active" });
    expect(byType("tenant.updated")).toMatchObject({ id: t.id, display_name: "Hooked Inc", metadata: { a: 1 }, changed_fields: ["display_name", "metadata"] });
    expect(byType("tenant.member.added")).toMatchObject({ tenant_id: t.id, account_id: sub(u), user_id: sub(u), roles: [] });
    expect(byType("tenant.member.removed")).toMatchObject({ tenant_id: t.id, account_id: sub(u) });
    expect(byType("tenant.deleted")).toMatchObject({ id: t.id, display_id: t.display_id, slug: "hooked" });

    // Inline accounts also announce themselves as users.
    const userEvents = async () => (await app.ctx.db.get<{ n: number }>("SELECT COUNT(*) AS n FROM core_events WHERE scope = ? AND type = 'user.created'", `webhook:auth:${a.id}`))!.n;
    const before = await userEvents();
    const t2 = await createTenant(a, { display_name: "Inline" });
    await call(a, "POST", `/tenants/${t2.id}/members`, { email: "inline-hook@example.com" });
    const after = await userEvents();
    expect(after).toBe(before + 1);
  });
});
