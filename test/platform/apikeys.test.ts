import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { HOUR, MINUTE } from "../../src/core/clock";
import { hashToken } from "../../src/core/secrets";
import { platformChanged } from "../../src/kernel/tenancy";
import { BUILTIN_ROLE_IDS, insertMember } from "../../src/services/platform/workspaces/store/workspaces";
import { createWorkspace, signup, startTestApp, type TestApp } from "../helpers/app";
import { inProcess } from "../helpers/target";

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.stop());

const allow = (...actions: string[]) => ({ effect: "allow", actions, resources: ["*"] });
const keysPath = (slug: string) => `/platform/v1/workspaces/${slug}/api-keys`;

async function accountId(token: string): Promise<string> {
  const r = await app.call("GET", "/platform/v1/introspect", { token });
  return r.body.account.id;
}

async function mint(token: string, slug: string, body: Record<string, unknown>, headers: Record<string, string> = {}) {
  return app.call("POST", keysPath(slug), { token, body: { name: "ci", ...body }, headers });
}

async function mintOk(token: string, slug: string, policy: unknown[], extra: Record<string, unknown> = {}) {
  const r = await mint(token, slug, { policy, ...extra });
  if (r.status !== 201) throw new Error(`mint failed: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body as { id: string; key: string; prefix: string; last_four: string };
}

/** Adds an existing account to a workspace with a built-in role (no members route is needed for these tests). */
async function addMember(token: string, workspaceId: string, role: keyof typeof BUILTIN_ROLE_IDS) {
  const id = await accountId(token);
  await insertMember(app.platform.ctx.db, { id: crypto.randomUUID(), workspace_id: workspaceId, account_id: id, role_id: BUILTIN_ROLE_IDS[role], created_at: app.clock.iso() });
  await platformChanged(app.platform.ctx.db, app.platform.ctx);
  return id;
}

// Direct SQL skips the audit entry that tells the platform's read caches something changed.
const setRole = async (workspaceId: string, accountId: string, role: keyof typeof BUILTIN_ROLE_IDS) => {
  await app.platform.ctx.db.run("UPDATE platform_members SET role_id = ? WHERE workspace_id = ? AND account_id = ?", BUILTIN_ROLE_IDS[role], workspaceId, accountId);
  await platformChanged(app.platform.ctx.db, app.platform.ctx);
};

/** Every text cell of every table, so a test can prove a secret is stored nowhere. */
async function wholeDatabaseText(): Promise<string> {
  const db = app.platform.ctx.db;
  const tables = await db.all<{ name: string }>(
    db.engine === "postgres"
      ? "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'"
      : "SELECT name FROM sqlite_master WHERE type = 'table'",
  );
  const dumps = await Promise.all(tables.map(async (t) => JSON.stringify(await db.all(`SELECT * FROM "${t.name}"`))));
  return dumps.join("\n");
}

describe("minting", () => {
  inProcess("compares created_at with the frozen injected clock and reads the stored hash (app.platform.ctx.db)")("201 with the key once; list and read never show it; only its hash is stored anywhere", async () => {
    const owner = await signup(app);
    const ws = await createWorkspace(app, owner.token);
    const ownerId = await accountId(owner.token);
    const r = await mint(owner.token, ws.slug, { name: "deploy bot", policy: [allow("workspace.read")] });
    expect(r.status).toBe(201);
    const k = r.body;
    expect(k.key).toMatch(/^svc_live_[0-9A-Za-z]{40}$/);
    expect(k).toMatchObject({
      name: "deploy bot",
      prefix: k.key.slice(0, 12),
      last_four: k.key.slice(-4),
      policy: [allow("workspace.read")],
      created_by: ownerId,
      created_at: app.clock.iso(),
      expires_at: null,
      last_used_at: null,
      revoked_at: null,
    });
    expect(Object.keys(k).sort()).toEqual(["created_at", "created_by", "expires_at", "id", "key", "last_four", "last_used_at", "name", "policy", "prefix", "revoked_at"]);

    const one = await app.call("GET", `${keysPath(ws.slug)}/${k.id}`, { token: owner.token });
    expect(one.status).toBe(200);
    expect(one.body.key).toBeUndefined();
    expect(one.body.prefix).toBe(k.prefix);
    const list = await app.call("GET", keysPath(ws.slug), { token: owner.token });
    expect(list.body.data.map((x: any) => x.id)).toEqual([k.id]);
    expect(JSON.stringify([one.body, list.body])).not.toContain(k.key);

    const dump = await wholeDatabaseText();
    expect(dump).not.toContain(k.key);
    expect(dump).not.toContain(k.key.slice(9)); // not even the random part
    const row = (await app.platform.ctx.db.get<{ key_hash: string }>("SELECT key_hash FROM platform_api_keys WHERE id = ?", k.id))!;
    expect(row.key_hash).toBe(hashToken(k.key));
  });

  test("name: 100 characters ok, 101 or blank rejected", async () => {
    const owner = await signup(app);
    const ws = await createWorkspace(app, owner.token);
    expect((await mint(owner.token, ws.slug, { name: "n".repeat(100), policy: [allow("workspace.read")] })).status).toBe(201);
    for (const name of ["n".repeat(101), "", "   "]) {
      const r = await mint(owner.token, ws.slug, { name, policy: [allow("workspace.read")] });
      expect(r.status).toBe(400);
      expect(r.body.error.details.map((d: any) => d.field)).toContain("name");
    }
  });

  test.each([
    ["not an array", "workspace.read"],
    ["empty", []],
    ["unknown action", [allow("workspace.fly")]],
    ["bad effect", [{ effect: "deny", actions: ["workspace.read"], resources: ["*"] }]],
    ["unknown statement field (never silently dropped)", [{ ...allow("workspace.read"), condition: { ip: "10.0.0.0/8" } }]],
    ["pattern matching nothing", [allow("nothing.*")]],
  ])("policy rejected: %s", async (_why, policy) => {
    const owner = await signup(app);
    const ws = await createWorkspace(app, owner.token);
    const r = await mint(owner.token, ws.slug, { policy });
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe("VALIDATION_ERROR");
    expect(r.body.error.details[0].field).toMatch(/^policy/);
  });

  inProcess("moves the injected clock to the key's expiry instant")("expires_at must be a future ISO date; the key stops working at that instant", async () => {
    const owner = await signup(app);
    const ws = await createWorkspace(app, owner.token);
    for (const expires_at of ["yesterday", "2026-11-21 12:00", app.clock.iso(), new Date(app.clock.nowMs() - 1).toISOString()]) {
      const r = await mint(owner.token, ws.slug, { policy: [allow("workspace.read")], expires_at });
      expect(r.status).toBe(400);
      expect(r.body.error.details[0].field).toBe("expires_at");
    }
    const at = new Date(app.clock.nowMs() + HOUR).toISOString();
    const k = await mintOk(owner.token, ws.slug, [allow("workspace.read")], { expires_at: at });
    expect((await app.call("GET", keysPath(ws.slug) + "/" + k.id, { token: owner.token })).body.expires_at).toBe(at);
    // Offsets and plain dates are accepted and normalised to UTC.
    const d = await mint(owner.token, ws.slug, { policy: [allow("workspace.read")], expires_at: "2027-01-01" });
    expect(d.body.expires_at).toBe("2027-01-01T00:00:00.000Z");
    const o = await mint(owner.token, ws.slug, { policy: [allow("workspace.read")], expires_at: "2027-01-01T02:00:00+02:00" });
    expect(o.body.expires_at).toBe("2027-01-01T00:00:00.000Z");

    app.clock.advance(HOUR - 1);
    expect((await app.call("GET", `/platform/v1/workspaces/${ws.slug}`, { token: k.key })).status).toBe(200);
    app.clock.advance(1);
    expect((await app.call("GET", `/platform/v1/workspaces/${ws.slug}`, { token: k.key })).status).toBe(401);
    expect((await app.call("POST", "/platform/v1/introspect/api-key", { token: k.key })).status).toBe(401);
  });

  test("only a console session mints: an API key and a personal access token get 403", async () => {
    const owner = await signup(app);
    const ws = await createWorkspace(app, owner.token);
    const k = await mintOk(owner.token, ws.slug, [allow("*")]);
    const byKey = await mint(k.key, ws.slug, { policy: [allow("workspace.read")] });
    expect(byKey.status).toBe(403);
    expect(byKey.body.error.code).toBe("SESSION_REQUIRED");
    const pat = await app.call("POST", "/platform/v1/me/tokens", { token: owner.token, body: { name: "script" } });
    const byPat = await mint(pat.body.token, ws.slug, { policy: [allow("workspace.read")] });
    expect(byPat.status).toBe(403);
    expect(byPat.body.error.code).toBe("SESSION_REQUIRED");
    expect((await mint("", ws.slug, { policy: [allow("workspace.read")] })).status).toBe(401);
  });

  inProcess("searches every table of the store for the key (app.platform.ctx.db)")("Idempotency-Key: the replay returns the same key id with key null, and no second key exists", async () => {
    const owner = await signup(app);
    const ws = await createWorkspace(app, owner.token);
    const headers = { "idempotency-key": "mint-1" };
    const first = await mint(owner.token, ws.slug, { policy: [allow("workspace.read")] }, headers);
    expect(first.status).toBe(201);
    expect(first.body.key).toMatch(/^svc_live_/);
    expect(first.headers.get("idempotent-replay")).toBeNull();
    const again = await mint(owner.token, ws.slug, { policy: [allow("workspace.read")] }, headers);
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotent-replay")).toBe("true");
    expect(again.body).toEqual({ ...first.body, key: null });
    const list = await app.call("GET", keysPath(ws.slug), { token: owner.token });
    expect(list.body.data).toHaveLength(1);
    expect(await wholeDatabaseText()).not.toContain(first.body.key);
    const other = await mint(owner.token, ws.slug, { policy: [allow("workspace.update")] }, headers);
    expect(other.status).toBe(409);
    expect(other.body.error.code).toBe("IDEMPOTENCY_KEY_REUSE");
  });
});

describe("the minter's policy is the ceiling", () => {
  inProcess("puts the minter into the workspace and changes their role by writing the members table (app.platform.ctx.db)")("at mint time: 403 POLICY_EXCEEDS_MINTER for anything the minter's role does not cover", async () => {
    const owner = await signup(app);
    const ws = await createWorkspace(app, owner.token);
    const admin = await signup(app);
    await addMember(admin.token, ws.id, "admin");
    for (const policy of [[allow("workspace.delete")], [allow("*")], [allow("workspace.*")], [allow("workspace.read"), allow("workspace.delete")]]) {
      const r = await mint(admin.token, ws.slug, { policy });
      expect(r.status).toBe(403);
      expect(r.body.error.code).toBe("POLICY_EXCEEDS_MINTER");
    }
    expect((await mint(admin.token, ws.slug, { policy: [allow("apikey.*", "workspace.read")] })).status).toBe(201);
    // The owner's "*" covers everything, including resource-scoped statements.
    expect((await mint(owner.token, ws.slug, { policy: [{ effect: "allow", actions: ["workspace.delete"], resources: [`workspace/${ws.id}`] }] })).status).toBe(201);
    // A member has no apikey.create at all: plain 403.
    const member = await signup(app);
    await addMember(member.token, ws.id, "member");
    const m = await mint(member.token, ws.slug, { policy: [allow("workspace.read")] });
    expect(m.status).toBe(403);
    expect(m.body.error.code).toBe("FORBIDDEN");
  });

  inProcess("puts the minter into the workspace and changes their role by writing the members table (app.platform.ctx.db)")("at use time: demoting the minter shrinks the key, removing them voids it, restoring restores it", async () => {
    const owner = await signup(app);
    const ws = await createWorkspace(app, owner.token);
    const admin = await signup(app);
    const adminId = await addMember(admin.token, ws.id, "admin");
    const k = await mintOk(admin.token, ws.slug, [allow("workspace.read"), allow("apikey.list")]);
    const read = () => app.call("GET", `/platform/v1/workspaces/${ws.slug}`, { token: k.key });
    const listKeys = () => app.call("GET", keysPath(ws.slug), { token: k.key });
    const introspect = () => app.call("POST", "/platform/v1/introspect/api-key", { token: k.key });
    expect((await read()).status).toBe(200);
    expect((await listKeys()).status).toBe(200);
    expect((await introspect()).body.policy).toEqual([allow("workspace.read"), allow("apikey.list")]);

    await setRole(ws.id, adminId, "member"); // members may read the workspace but not list keys
    expect((await read()).status).toBe(200);
    expect((await listKeys()).status).toBe(403);
    expect((await introspect()).body.policy).toEqual([allow("workspace.read")]);

    await app.platform.ctx.db.run("DELETE FROM platform_members WHERE workspace_id = ? AND account_id = ?", ws.id, adminId);
    await platformChanged(app.platform.ctx.db, app.platform.ctx);
    expect((await read()).status).toBe(403);
    expect((await listKeys()).status).toBe(403);
    expect((await introspect()).body.policy).toEqual([]);

    await addMember(admin.token, ws.id, "admin");
    expect((await listKeys()).status).toBe(200);
  });

  inProcess("puts the minter into the workspace and changes their role by writing the members table (app.platform.ctx.db)")("the same through the members routes: PATCH demotes, DELETE removes", async () => {
    const owner = await signup(app);
    const ws = await createWorkspace(app, owner.token);
    const admin = await signup(app);
    const adminId = await addMember(admin.token, ws.id, "admin");
    const k = await mintOk(admin.token, ws.slug, [allow("workspace.read"), allow("apikey.list")]);
    const members = await app.call("GET", `/platform/v1/workspaces/${ws.slug}/members`, { token: owner.token });
    const memberId = members.body.data.find((m: any) => m.account_id === adminId).id;

    const demote = await app.call("PATCH", `/platform/v1/workspaces/${ws.slug}/members/${memberId}`, { token: owner.token, body: { role_id: BUILTIN_ROLE_IDS.member } });
    expect(demote.status).toBe(200);
    expect((await app.call("GET", keysPath(ws.slug), { token: k.key })).status).toBe(403);
    expect((await app.call("GET", `/platform/v1/workspaces/${ws.slug}`, { token: k.key })).status).toBe(200);

    expect((await app.call("DELETE", `/platform/v1/workspaces/${ws.slug}/members/${memberId}`, { token: owner.token })).status).toBe(204);
    expect((await app.call("GET", `/platform/v1/workspaces/${ws.slug}`, { token: k.key })).status).toBe(403);
    expect((await app.call("POST", "/platform/v1/introspect/api-key", { token: k.key })).body.policy).toEqual([]);
  });

  inProcess("suspends the account through the service object (app.platform.accounts)")("a suspended minter's keys allow nothing", async () => {
    const owner = await signup(app);
    const ws = await createWorkspace(app, owner.token);
    const k = await mintOk(owner.token, ws.slug, [allow("workspace.read")]);
    expect((await app.call("GET", `/platform/v1/workspaces/${ws.slug}`, { token: k.key })).status).toBe(200);
    await app.platform.accounts.setStatus("system", await accountId(owner.token), "suspended", { ip: null, userAgent: null });
    expect((await app.call("GET", `/platform/v1/workspaces/${ws.slug}`, { token: k.key })).status).toBe(403);
  });
});

describe("using a key", () => {
  test("reads its own workspace with workspace.read, 403 without; another workspace is 404; create/delete workspaces 403", async () => {
    const owner = await signup(app);
    const ws = await createWorkspace(app, owner.token);
    const other = await createWorkspace(app, owner.token);
    const reader = await mintOk(owner.token, ws.slug, [allow("workspace.read")]);
    const lister = await mintOk(owner.token, ws.slug, [allow("apikey.list")]);
    const all = await mintOk(owner.token, ws.slug, [allow("*")]);

    expect((await app.call("GET", `/platform/v1/workspaces/${ws.slug}`, { token: reader.key })).body.id).toBe(ws.id);
    expect((await app.call("GET", `/platform/v1/workspaces/${ws.slug}`, { token: lister.key })).status).toBe(403);
    // The owner is a member of `other`, but the key is bound to `ws`: 404, not 403.
    for (const key of [reader.key, all.key]) expect((await app.call("GET", `/platform/v1/workspaces/${other.slug}`, { token: key })).status).toBe(404);
    expect((await app.call("GET", keysPath(other.slug), { token: all.key })).status).toBe(404);

    const create = await app.call("POST", "/platform/v1/workspaces", { token: all.key, body: { slug: `key-made-${Date.now()}`, display_name: "No" } });
    expect(create.status).toBe(403);
    const del = await app.call("DELETE", `/platform/v1/workspaces/${ws.slug}`, { token: all.key });
    expect(del.status).toBe(403);
    expect((await app.call("GET", `/platform/v1/workspaces/${ws.slug}`, { token: owner.token })).status).toBe(200);
  });

  inProcess("moves the injected clock across the once-a-minute write")("last_used_at is recorded, at most once a minute", async () => {
    const owner = await signup(app);
    const ws = await createWorkspace(app, owner.token);
    const k = await mintOk(owner.token, ws.slug, [allow("workspace.read")]);
    const first = app.clock.iso();
    await app.call("GET", `/platform/v1/workspaces/${ws.slug}`, { token: k.key });
    app.clock.advance(30_000);
    await app.call("GET", `/platform/v1/workspaces/${ws.slug}`, { token: k.key });
    const read = async () => (await app.call("GET", `${keysPath(ws.slug)}/${k.id}`, { token: owner.token })).body.last_used_at;
    expect(await read()).toBe(first);
    app.clock.advance(MINUTE);
    await app.call("GET", `/platform/v1/workspaces/${ws.slug}`, { token: k.key });
    expect(await read()).toBe(app.clock.iso());
  });
});

describe("list, read, revoke", () => {
  test("cursor pages, limits and tenant isolation", async () => {
    const owner = await signup(app);
    const ws = await createWorkspace(app, owner.token);
    const ws2 = await createWorkspace(app, owner.token);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await mintOk(owner.token, ws.slug, [allow("workspace.read")], { name: `k${i}` })).id);
    const foreign = await mintOk(owner.token, ws2.slug, [allow("workspace.read")]);

    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const q: string = `?limit=2${cursor ? `&cursor=${cursor}` : ""}`;
      const r = await app.call("GET", keysPath(ws.slug) + q, { token: owner.token });
      expect(r.status).toBe(200);
      seen.push(...r.body.data.map((k: any) => k.id));
      expect(r.body.pagination.has_more).toBe(r.body.pagination.next_cursor !== null);
      cursor = r.body.pagination.next_cursor;
      pages++;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen).toEqual(ids);
    expect(seen).not.toContain(foreign.id);

    expect((await app.call("GET", keysPath(ws.slug) + "?limit=100", { token: owner.token })).status).toBe(200);
    expect((await app.call("GET", keysPath(ws.slug) + "?limit=101", { token: owner.token })).status).toBe(400);
    const bad = await app.call("GET", keysPath(ws.slug) + "?cursor=not*a*cursor", { token: owner.token });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe("INVALID_CURSOR");

    // Another workspace's key id through this workspace, and a non-member: 404.
    expect((await app.call("GET", `${keysPath(ws.slug)}/${foreign.id}`, { token: owner.token })).status).toBe(404);
    expect((await app.call("DELETE", `${keysPath(ws.slug)}/${foreign.id}`, { token: owner.token })).status).toBe(404);
    expect((await app.call("GET", `/platform/v1/workspaces/${ws2.slug}`, { token: foreign.key })).status).toBe(200);
    const stranger = await signup(app);
    expect((await app.call("GET", keysPath(ws.slug), { token: stranger.token })).status).toBe(404);
    expect((await app.call("GET", `${keysPath(ws.slug)}/${ids[0]}`, { token: stranger.token })).status).toBe(404);
    expect((await app.call("DELETE", `${keysPath(ws.slug)}/${ids[0]}`, { token: stranger.token })).status).toBe(404);
    expect((await app.call("GET", keysPath("no-such-workspace"), { token: owner.token })).status).toBe(404);
  });

  inProcess("moves the injected clock and compares revoked_at with it")("revoke: 204, then the key is 401 everywhere; revoking again is 204; needs a session; audited", async () => {
    const owner = await signup(app);
    const ws = await createWorkspace(app, owner.token);
    const k = await mintOk(owner.token, ws.slug, [allow("workspace.read")]);
    const powerful = await mintOk(owner.token, ws.slug, [allow("*")]);

    const byKey = await app.call("DELETE", `${keysPath(ws.slug)}/${k.id}`, { token: powerful.key });
    expect(byKey.status).toBe(403);
    expect(byKey.body.error.code).toBe("SESSION_REQUIRED");
    const pat = await app.call("POST", "/platform/v1/me/tokens", { token: owner.token, body: { name: "script" } });
    expect((await app.call("DELETE", `${keysPath(ws.slug)}/${k.id}`, { token: pat.body.token })).status).toBe(403);
    expect((await app.call("GET", `/platform/v1/workspaces/${ws.slug}`, { token: k.key })).status).toBe(200);

    app.clock.advance(10 * MINUTE); // within the access token's hour
    const del = await app.call("DELETE", `${keysPath(ws.slug)}/${k.id}`, { token: owner.token, headers: { "user-agent": "revoker/1.0" } });
    expect(del.status).toBe(204);
    expect((await app.call("GET", `/platform/v1/workspaces/${ws.slug}`, { token: k.key })).status).toBe(401);
    expect((await app.call("POST", "/platform/v1/introspect/api-key", { token: k.key })).status).toBe(401);
    const after = await app.call("GET", `${keysPath(ws.slug)}/${k.id}`, { token: owner.token });
    expect(after.body.revoked_at).toBe(app.clock.iso());
    expect((await app.call("DELETE", `${keysPath(ws.slug)}/${k.id}`, { token: owner.token })).status).toBe(204);
    expect((await app.call("DELETE", `${keysPath(ws.slug)}/00000000-0000-7000-8000-00000000dead`, { token: owner.token })).status).toBe(404);

    const log = await app.call("GET", `/platform/v1/workspaces/${ws.slug}/audit-log?action=apikey.*`, { token: owner.token });
    expect(log.body.data.map((e: any) => [e.action, e.target.id])).toEqual([
      ["apikey.delete", k.id],
      ["apikey.create", powerful.id],
      ["apikey.create", k.id],
    ]);
    expect(log.body.data[0].user_agent).toBe("revoker/1.0");
    expect(log.body.data[0].actor).toEqual({ type: "account", id: await accountId(owner.token) });
    expect(log.body.data[2].metadata).toMatchObject({ name: "ci", prefix: k.prefix, policy: [allow("workspace.read")] });
    expect(JSON.stringify(log.body)).not.toContain(k.key);
  });
});

describe("introspection with real keys", () => {
  test("POST /introspect/api-key: 201 with the effective policy; invalid, revoked or non-key credentials 401", async () => {
    const owner = await signup(app);
    const ws = await createWorkspace(app, owner.token);
    const k = await mintOk(owner.token, ws.slug, [allow("workspace.read", "apikey.list")]);
    const r = await app.call("POST", "/platform/v1/introspect/api-key", { token: k.key });
    expect(r.status).toBe(201);
    expect(r.body).toEqual({ is_valid: true, workspace_id: ws.id, policy: [allow("workspace.read", "apikey.list")], created_by: await accountId(owner.token), api_key_id: k.id });

    const tampered = k.key.slice(0, -1) + (k.key.endsWith("a") ? "b" : "a");
    for (const token of [tampered, "svc_live_nope", owner.token, undefined]) {
      const bad = await app.call("POST", "/platform/v1/introspect/api-key", { token });
      expect(bad.status).toBe(401);
    }
    await app.call("DELETE", `${keysPath(ws.slug)}/${k.id}`, { token: owner.token });
    expect((await app.call("POST", "/platform/v1/introspect/api-key", { token: k.key })).status).toBe(401);
  });

  test("GET /introspect/workspaces/{id}: a key is a member of its own workspace only", async () => {
    const owner = await signup(app);
    const ws = await createWorkspace(app, owner.token);
    const other = await createWorkspace(app, owner.token);
    const k = await mintOk(owner.token, ws.slug, [allow("workspace.read")]);
    const own = await app.call("GET", `/platform/v1/introspect/workspaces/${ws.id}`, { token: k.key });
    expect(own.status).toBe(200);
    expect(own.body).toMatchObject({ is_member: true, role: { name: "api_key" }, policy: [allow("workspace.read")] });
    expect(own.body.services).toBeArray();
    const foreign = await app.call("GET", `/platform/v1/introspect/workspaces/${other.id}`, { token: k.key });
    expect(foreign.status).toBe(200);
    expect(foreign.body).toEqual({ is_member: false, role: {}, policy: [], services: [] });
    const missing = await app.call("GET", `/platform/v1/introspect/workspaces/00000000-0000-7000-8000-00000000beef`, { token: k.key });
    expect(missing.body).toEqual(foreign.body);
    const me = await app.call("GET", "/platform/v1/introspect", { token: k.key });
    expect(me.body.principal).toMatchObject({ type: "api_key", id: k.id, workspace_id: ws.id });
    expect(me.body.workspaces.map((w: any) => w.id)).toEqual([ws.id]);
  });
});
