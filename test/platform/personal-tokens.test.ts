import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { DAY, MINUTE } from "../../src/core/clock";
import { hashToken } from "../../src/core/secrets";
import { createWorkspace, signup, startTestApp, type TestApp } from "../helpers/app";
import { inProcess } from "../helpers/target";

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.stop());

const TOKENS = "/platform/v1/me/tokens";
const create = (token: string, body: Record<string, unknown> = {}) => app.call("POST", TOKENS, { token, body: { name: "script", ...body } });

async function createOk(token: string, body: Record<string, unknown> = {}) {
  const r = await create(token, body);
  if (r.status !== 201) throw new Error(`token create failed: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body as { id: string; token: string; prefix: string; last_four: string; expires_at: string };
}

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

describe("creating", () => {
  inProcess("compares created_at/expires_at with the frozen injected clock and reads the stored hash and audit (app.platform.ctx.db)")("201 with the token once (default 30 days); stored only as a hash; audited at account level", async () => {
    const u = await signup(app);
    const r = await create(u.token, { name: "laptop" });
    expect(r.status).toBe(201);
    const t = r.body;
    expect(t.token).toMatch(/^pat_[0-9A-Za-z]{40}$/);
    expect(t).toEqual({
      id: t.id,
      name: "laptop",
      token: t.token,
      prefix: t.token.slice(0, 12),
      last_four: t.token.slice(-4),
      created_at: app.clock.iso(),
      expires_at: new Date(app.clock.nowMs() + 30 * DAY).toISOString(),
    });
    const list = await app.call("GET", TOKENS, { token: u.token });
    expect(list.body.data).toEqual([{ id: t.id, name: "laptop", prefix: t.prefix, last_four: t.last_four, created_at: t.created_at, expires_at: t.expires_at, last_used_at: null, revoked_at: null }]);

    const dump = await wholeDatabaseText();
    expect(dump).not.toContain(t.token);
    expect(dump).not.toContain(t.token.slice(4));
    const row = (await app.platform.ctx.db.get<{ token_hash: string }>("SELECT token_hash FROM platform_personal_tokens WHERE id = ?", t.id))!;
    expect(row.token_hash).toBe(hashToken(t.token));
    const entry = await app.platform.ctx.db.get<any>("SELECT * FROM platform_audit_log WHERE target_id = ?", t.id);
    expect(entry).toMatchObject({ action: "personal_token.create", actor_type: "account", workspace_id: null, target_type: "personal_token" });
  });

  inProcess("compares expires_at with the frozen injected clock (app.clock.nowMs)")("expires_in_days 1 and 365 ok; 0, 366, 1.5 and null rejected; name 100 ok, 101 rejected", async () => {
    const u = await signup(app);
    expect((await createOk(u.token, { expires_in_days: 1 })).expires_at).toBe(new Date(app.clock.nowMs() + DAY).toISOString());
    expect((await createOk(u.token, { expires_in_days: 365 })).expires_at).toBe(new Date(app.clock.nowMs() + 365 * DAY).toISOString());
    for (const expires_in_days of [0, 366, 1.5, -1, "abc", null]) {
      const r = await create(u.token, { expires_in_days });
      expect(r.status).toBe(400);
      expect(r.body.error.details.map((d: any) => d.field)).toContain("expires_in_days");
    }
    expect((await create(u.token, { name: "n".repeat(100) })).status).toBe(201);
    for (const name of ["n".repeat(101), "", "  "]) {
      const r = await create(u.token, { name });
      expect(r.status).toBe(400);
      expect(r.body.error.details.map((d: any) => d.field)).toContain("name");
    }
  });

  test("only a console session mints: a PAT and an API key get 403; no credential 401", async () => {
    const u = await signup(app);
    const pat = await createOk(u.token);
    const byPat = await create(pat.token);
    expect(byPat.status).toBe(403);
    expect(byPat.body.error.code).toBe("SESSION_REQUIRED");
    const ws = await createWorkspace(app, u.token);
    const key = await app.call("POST", `/platform/v1/workspaces/${ws.slug}/api-keys`, { token: u.token, body: { name: "k", policy: [{ effect: "allow", actions: ["*"], resources: ["*"] }] } });
    expect((await create(key.body.key)).status).toBe(403);
    expect((await app.call("GET", TOKENS, { token: key.body.key })).status).toBe(403);
    expect((await app.call("POST", TOKENS, { body: { name: "x" } })).status).toBe(401);
  });
});

describe("using a token", () => {
  test("acts as its user: same workspaces and roles; can create and delete workspaces; cannot mint keys", async () => {
    const u = await signup(app);
    const ws = await createWorkspace(app, u.token);
    const stranger = await signup(app);
    const theirs = await createWorkspace(app, stranger.token);
    const pat = await createOk(u.token);

    const me = await app.call("GET", "/platform/v1/introspect", { token: pat.token });
    expect(me.status).toBe(200);
    expect(me.body.principal).toMatchObject({ type: "personal_token", token_id: pat.id });
    expect(me.body.account.username).toBe(u.username);
    expect((await app.call("GET", `/platform/v1/workspaces/${ws.slug}`, { token: pat.token })).status).toBe(200);
    expect((await app.call("GET", `/platform/v1/workspaces/${theirs.slug}`, { token: pat.token })).status).toBe(404);
    const intro = await app.call("GET", `/platform/v1/introspect/workspaces/${ws.id}`, { token: pat.token });
    expect(intro.body).toMatchObject({ is_member: true, role: { name: "owner" } });

    // Decision: a PAT keeps requireHuman powers (workspace create/delete), like a GitHub token with full scope.
    const made = await app.call("POST", "/platform/v1/workspaces", { token: pat.token, body: { slug: `pat-made-${Date.now()}`, display_name: "By PAT" } });
    expect(made.status).toBe(201);
    expect((await app.call("DELETE", `/platform/v1/workspaces/${made.body.slug}`, { token: pat.token })).status).toBe(204);
    // ...but it can never mint or revoke credentials.
    const mint = await app.call("POST", `/platform/v1/workspaces/${ws.slug}/api-keys`, { token: pat.token, body: { name: "k", policy: [{ effect: "allow", actions: ["workspace.read"], resources: ["*"] }] } });
    expect(mint.status).toBe(403);
    expect(mint.body.error.code).toBe("SESSION_REQUIRED");
    // Mutations through a PAT are attributed to it in the audit log.
    await app.call("PATCH", `/platform/v1/workspaces/${ws.slug}`, { token: pat.token, body: { display_name: "Renamed by script" } });
    const log = await app.call("GET", `/platform/v1/workspaces/${ws.slug}/audit-log?action=workspace.update`, { token: u.token });
    expect(log.body.data[0].actor.type).toBe("personal_token");
  });

  inProcess("moves the injected clock to 1 ms before and at the expiry instant")("expires at expires_at: valid 1 ms before, 401 at the instant", async () => {
    const u = await signup(app);
    const pat = await createOk(u.token, { expires_in_days: 1 });
    app.clock.advance(DAY - 1);
    expect((await app.call("GET", "/platform/v1/introspect", { token: pat.token })).status).toBe(200);
    app.clock.advance(1);
    expect((await app.call("GET", "/platform/v1/introspect", { token: pat.token })).status).toBe(401);
  });

  inProcess("moves the injected clock across the once-a-minute write and compares with it")("last_used_at is recorded on use, at most once a minute", async () => {
    const u = await signup(app);
    const pat = await createOk(u.token);
    const lastUsed = async () => (await app.call("GET", TOKENS, { token: u.token })).body.data.find((t: any) => t.id === pat.id).last_used_at;
    expect(await lastUsed()).toBeNull();
    await app.call("GET", "/platform/v1/introspect", { token: pat.token });
    const first = await lastUsed();
    expect(first).toBe(app.clock.iso());
    app.clock.advance(30_000);
    await app.call("GET", "/platform/v1/introspect", { token: pat.token });
    expect(await lastUsed()).toBe(first);
    app.clock.advance(MINUTE);
    await app.call("GET", "/platform/v1/introspect", { token: pat.token });
    expect(await lastUsed()).toBe(app.clock.iso());
  });

  inProcess("suspends the account through the service object (app.platform.accounts)")("a suspended account's tokens stop working", async () => {
    const u = await signup(app);
    const pat = await createOk(u.token);
    const id = (await app.call("GET", "/platform/v1/introspect", { token: u.token })).body.account.id;
    await app.platform.accounts.setStatus("system", id, "suspended", { ip: null, userAgent: null });
    const r = await app.call("GET", "/platform/v1/introspect", { token: pat.token });
    expect(r.status).toBe(403);
    expect(r.body.error.code).toBe("ACCOUNT_SUSPENDED");
  });
});

describe("listing and revoking", () => {
  test("cursor pages of the caller's own tokens; a PAT may list; malformed cursor 400", async () => {
    const u = await signup(app);
    const other = await signup(app);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await createOk(u.token, { name: `t${i}` })).id);
    const foreign = await createOk(other.token);
    const p1 = await app.call("GET", `${TOKENS}?limit=2`, { token: u.token });
    expect(p1.body.data.map((t: any) => t.id)).toEqual(ids.slice(0, 2));
    expect(p1.body.pagination.has_more).toBe(true);
    const p2 = await app.call("GET", `${TOKENS}?limit=2&cursor=${p1.body.pagination.next_cursor}`, { token: u.token });
    expect(p2.body.data.map((t: any) => t.id)).toEqual([ids[2]]);
    expect(p2.body.pagination).toEqual({ has_more: false, next_cursor: null });
    const viaPat = await app.call("GET", TOKENS, { token: (await app.call("POST", TOKENS, { token: u.token, body: { name: "lister" } })).body.token });
    expect(viaPat.status).toBe(200);
    expect(viaPat.body.data.map((t: any) => t.id)).not.toContain(foreign.id);
    for (const t of viaPat.body.data) expect(t.token).toBeUndefined();
    expect((await app.call("GET", `${TOKENS}?cursor=%%%`, { token: u.token })).status).toBe(400);
    expect((await app.call("GET", `${TOKENS}?limit=101`, { token: u.token })).status).toBe(400);
  });

  inProcess("compares revoked_at with the moved injected clock and reads the audit table (app.platform.ctx.db)")("revoke: 204 then 401; again 204; someone else's or an unknown token 404, a malformed id 400; a PAT cannot revoke; audited", async () => {
    const u = await signup(app);
    const other = await signup(app);
    const pat = await createOk(u.token);
    const spare = await createOk(u.token);
    const theirs = await createOk(other.token);

    const byPat = await app.call("DELETE", `${TOKENS}/${pat.id}`, { token: spare.token });
    expect(byPat.status).toBe(403);
    expect(byPat.body.error.code).toBe("SESSION_REQUIRED");
    expect((await app.call("DELETE", `${TOKENS}/${theirs.id}`, { token: u.token })).status).toBe(404);
    expect((await app.call("GET", "/platform/v1/introspect", { token: theirs.token })).status).toBe(200);

    app.clock.advance(5 * MINUTE);
    expect((await app.call("DELETE", `${TOKENS}/${pat.id}`, { token: u.token })).status).toBe(204);
    expect((await app.call("GET", "/platform/v1/introspect", { token: pat.token })).status).toBe(401);
    expect((await app.call("GET", "/platform/v1/introspect", { token: spare.token })).status).toBe(200);
    expect((await app.call("DELETE", `${TOKENS}/${pat.id}`, { token: u.token })).status).toBe(204);
    expect((await app.call("DELETE", `${TOKENS}/${crypto.randomUUID()}`, { token: u.token })).status).toBe(404);
    expect((await app.call("DELETE", `${TOKENS}/not-a-token`, { token: u.token })).status).toBe(400);
    const list = await app.call("GET", TOKENS, { token: u.token });
    expect(list.body.data.find((t: any) => t.id === pat.id).revoked_at).toBe(app.clock.iso());

    const entries = (await app.platform.ctx.db.all<{ action: string }>("SELECT action FROM platform_audit_log WHERE target_id = ? ORDER BY id", pat.id)).map((e) => e.action);
    expect(entries).toEqual(["personal_token.create", "personal_token.delete"]);
  });
});
