import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createLocalJWKSet, jwtVerify } from "jose";
import { openDatabase } from "../../src/core/db";
import { MIGRATIONS } from "../../src/app";
import { startTestApp, type TestApp } from "../helpers/app";
import { createAuthApp, type TestAuthApp } from "../helpers/auth";
import { inProcess, ON_BINARY } from "../helpers/target";

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.stop());

const clientsPath = (a: TestAuthApp) => `/auth/v1/apps/${a.id}/m2m-clients`;

async function createClient(a: TestAuthApp, permissions: string[], name = "backend", token = a.key) {
  const r = await app.call("POST", clientsPath(a), { token, body: { name, permissions } });
  if (r.status !== 201) throw new Error(`client create failed: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body as { id: string; client_id: string; client_secret: string; permissions: string[]; secret_hint: string };
}

/** POST to the token endpoint as JSON (default) or form-urlencoded. */
function tokenCall(a: TestAuthApp, fields: Record<string, string>, as: "json" | "form" = "json", headers: Record<string, string> = {}) {
  if (as === "form") {
    return app.call("POST", a.path("/oauth/token"), { body: new URLSearchParams(fields).toString(), headers: { "content-type": "application/x-www-form-urlencoded", ...headers } });
  }
  return app.call("POST", a.path("/oauth/token"), { body: fields, headers });
}

const grant = (c: { client_id: string; client_secret: string }, extra: Record<string, string> = {}) => ({ grant_type: "client_credentials", client_id: c.client_id, client_secret: c.client_secret, ...extra });

async function m2mToken(a: TestAuthApp, c: { client_id: string; client_secret: string }, scope?: string) {
  const r = await tokenCall(a, grant(c, scope === undefined ? {} : { scope }));
  if (r.status !== 200) throw new Error(`token failed: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.access_token as string;
}

// Token exchanges are written behind (batched): reading the table directly means flushing first.
async function auditRows(appId: string, action: string) {
  await app.auth.m2m.tokenLog.flush();
  return app.ctx.db.all<{ outcome: string; actor_type: string; target_id: string }>(
    "SELECT outcome, actor_type, target_id FROM auth_audit WHERE app_id = ? AND action = ? ORDER BY id",
    appId,
    action,
  );
}

describe("M2M client management", () => {
  inProcess("reads the stored secret hash and audit rows (app.ctx.db, app.auth)")("create shows the secret once; list and get never show it", async () => {
    const a = await createAuthApp(app);
    const r = await app.call("POST", clientsPath(a), { token: a.key, body: { name: " reporting ", permissions: ["auth.user.read", "auth.user.*", "auth.user.read"] } });
    expect(r.status).toBe(201);
    expect(r.body.client_id).toMatch(/^m2m_[A-Za-z0-9]{24}$/);
    expect(r.body.client_secret.length).toBeGreaterThanOrEqual(40);
    expect(r.body.name).toBe("reporting");
    expect(r.body.permissions).toEqual(["auth.user.*", "auth.user.read"]);
    expect(r.body.secret_hint).toBe(r.body.client_secret.slice(-4));
    expect(typeof r.body.created_at).toBe("string");

    const list = await app.call("GET", clientsPath(a), { token: a.key });
    expect(list.status).toBe(200);
    expect(list.body.data.length).toBe(1);
    expect(list.body.data[0].client_secret).toBeUndefined();
    expect(JSON.stringify(list.body)).not.toContain(r.body.client_secret);
    expect(list.body.data[0].secret_hint).toBe(r.body.secret_hint);

    for (const ref of [r.body.id, r.body.client_id]) {
      const g = await app.call("GET", `${clientsPath(a)}/${ref}`, { token: a.key });
      expect(g.status).toBe(200);
      expect(g.body.client_id).toBe(r.body.client_id);
      expect(g.body.client_secret).toBeUndefined();
    }
    // Only the hash is stored.
    const row = (await app.ctx.db.get<{ secret_hash: string }>("SELECT secret_hash FROM auth_m2m_clients WHERE id = ?", r.body.id))!;
    expect(row.secret_hash).not.toContain(r.body.client_secret);
    expect(await auditRows(a.id, "m2m.create")).toEqual([{ outcome: "success", actor_type: "api_key", target_id: r.body.client_id }]);
  });

  test("list pages by cursor in creation order", async () => {
    const a = await createAuthApp(app);
    const made = [];
    for (const n of ["one", "two", "three"]) made.push(await createClient(a, ["auth.user.read"], n));
    const p1 = await app.call("GET", `${clientsPath(a)}?limit=2`, { token: a.key });
    expect(p1.body.data.map((c: any) => c.name)).toEqual(["one", "two"]);
    expect(p1.body.pagination.has_more).toBe(true);
    const p2 = await app.call("GET", `${clientsPath(a)}?limit=2&cursor=${p1.body.pagination.next_cursor}`, { token: a.key });
    expect(p2.body.data.map((c: any) => c.name)).toEqual(["three"]);
    expect(p2.body.pagination).toEqual({ next_cursor: null, has_more: false });
    expect((await app.call("GET", `${clientsPath(a)}?cursor=!!`, { token: a.key })).status).toBe(400);
  });

  test("permissions: auth.* actions only, never auth.m2m.* or auth.app.*", async () => {
    const a = await createAuthApp(app);
    for (const bad of [["auth.m2m.create"], ["auth.m2m.*"], ["auth.app.read"], ["auth.*"], ["*"], ["auth.nothing.read"], ["platform.member.list"], ["auth.user.read", "Auth.User"]]) {
      const r = await app.call("POST", clientsPath(a), { token: a.key, body: { name: "x", permissions: bad } });
      expect(r.status).toBe(400);
      expect(r.body.error.code).toBe("VALIDATION_ERROR");
      expect(r.body.error.details[0].field).toStartWith("permissions.");
    }
    expect((await app.call("POST", clientsPath(a), { token: a.key, body: { name: "x", permissions: "auth.user.read" } })).status).toBe(400);
    expect((await app.call("POST", clientsPath(a), { token: a.key, body: { name: "   ", permissions: [] } })).status).toBe(400);
    const c = await createClient(a, ["auth.tenant.*"]);
    const p = await app.call("PATCH", `${clientsPath(a)}/${c.id}`, { token: a.key, body: { permissions: ["auth.m2m.update"] } });
    expect(p.status).toBe(400);
    expect((await app.call("GET", `${clientsPath(a)}/${c.id}`, { token: a.key })).body.permissions).toEqual(["auth.tenant.*"]);
  });

  test("a caller cannot grant actions it does not hold itself", async () => {
    const a = await createAuthApp(app);
    const minted = await app.call("POST", `/platform/v1/workspaces/${a.workspace.slug}/api-keys`, {
      token: a.session,
      body: { name: "m2m admin", policy: [{ effect: "allow", actions: ["auth.m2m.*", "auth.user.read"], resources: ["*"] }] },
    });
    expect(minted.status).toBe(201);
    const limited = minted.body.key as string;
    const denied = await app.call("POST", clientsPath(a), { token: limited, body: { name: "x", permissions: ["auth.user.*"] } });
    expect(denied.status).toBe(403);
    expect(denied.body.error.message).toContain("auth.user.delete");
    const ok = await app.call("POST", clientsPath(a), { token: limited, body: { name: "x", permissions: ["auth.user.read"] } });
    expect(ok.status).toBe(201);
    const patch = await app.call("PATCH", `${clientsPath(a)}/${ok.body.id}`, { token: limited, body: { permissions: ["auth.user.update"] } });
    expect(patch.status).toBe(403);
  });

  inProcess("reads audit rows from the store after flushing the in-process token log (auditRows: app.auth, app.ctx.db)")("update, 404 for another workspace or unknown client, 401 without a credential", async () => {
    const a = await createAuthApp(app);
    const other = await createAuthApp(app);
    const c = await createClient(a, ["auth.user.read"]);
    const p = await app.call("PATCH", `${clientsPath(a)}/${c.id}`, { token: a.key, body: { name: "renamed", permissions: ["auth.user.list", "auth.user.read"] } });
    expect(p.status).toBe(200);
    expect(p.body).toMatchObject({ name: "renamed", permissions: ["auth.user.list", "auth.user.read"], client_id: c.client_id });
    expect(p.body.client_secret).toBeUndefined();
    expect((await auditRows(a.id, "m2m.update")).length).toBe(1);

    expect((await app.call("GET", `${clientsPath(a)}/${c.id}`, { token: other.key })).status).toBe(404);
    expect((await app.call("GET", clientsPath(a), { token: other.key })).status).toBe(404);
    expect((await app.call("DELETE", `${clientsPath(a)}/${c.id}`, { token: other.key })).status).toBe(404);
    // A client of App A addressed through App B (same caller would need B's workspace) is unknown there.
    expect((await app.call("GET", `${clientsPath(other)}/${c.id}`, { token: other.key })).status).toBe(404);
    expect((await app.call("GET", `${clientsPath(a)}/00000000-0000-7000-8000-000000000000`, { token: a.key })).status).toBe(404);
    expect((await app.call("GET", clientsPath(a))).status).toBe(401);
  });
});

describe("token endpoint (client_credentials, client_secret_post)", () => {
  inProcess("reads audit rows from the store after flushing the in-process token log (auditRows: app.auth, app.ctx.db)")("JSON and form-urlencoded both work; the token verifies against the JWKS", async () => {
    const a = await createAuthApp(app, { access_token_ttl: 7200, audience: "https://api.example.com" });
    const c = await createClient(a, ["auth.user.read", "auth.tenant.read"]);
    for (const as of ["json", "form"] as const) {
      const r = await tokenCall(a, grant(c), as);
      expect(r.status).toBe(200);
      expect(r.headers.get("cache-control")).toBe("no-store");
      expect(r.body).toMatchObject({ token_type: "Bearer", expires_in: 3600, scope: "auth.tenant.read auth.user.read" });
      const jwks = createLocalJWKSet((await app.call("GET", a.path("/.well-known/jwks.json"))).body);
      const { payload } = await jwtVerify(r.body.access_token, jwks, { issuer: a.issuer, audience: "https://api.example.com", currentDate: new Date(app.clock.nowMs()) });
      expect(payload).toMatchObject({ sub: c.client_id, client_id: c.client_id, type: "m2m", permissions: ["auth.tenant.read", "auth.user.read"], scope: "auth.tenant.read auth.user.read" });
      expect(payload.exp! - payload.iat!).toBe(3600);
    }
    const short = await createAuthApp(app, { access_token_ttl: 300 });
    const sc = await createClient(short, ["auth.user.read"]);
    expect((await tokenCall(short, grant(sc), "form")).body.expires_in).toBe(300);
    expect((await auditRows(a.id, "m2m.token")).length).toBe(2);
    const row = (await app.ctx.db.get<{ last_used_at: string | null }>("SELECT last_used_at FROM auth_m2m_clients WHERE client_id = ?", c.client_id))!;
    expect(row.last_used_at).toBe(app.clock.iso());
  });

  inProcess("holds and inspects the in-process write-behind token log and the store (app.auth, app.ctx)")("token exchanges are audited behind the answer: the audit-log API shows them at once, with the time and client of the exchange", async () => {
    const a = await createAuthApp(app);
    const c = await createClient(a, ["auth.user.read"]);
    const issuedAt = app.clock.iso();
    expect((await tokenCall(a, grant(c), "json", { "user-agent": "m2m-test/1.0" })).status).toBe(200);
    const raw = async () => (await app.ctx.db.get<{ n: number }>("SELECT COUNT(*) AS n FROM auth_audit WHERE app_id = ? AND action = 'm2m.token'", a.id))!.n;
    // Not written yet: it waits for its batch.
    expect(await raw()).toBe(0);
    expect(app.auth.m2m.tokenLog.pending).toBe(1);
    app.clock.advance(5000);
    const log = await app.call("GET", a.path("/audit-log?action=m2m.token"), { token: a.key });
    expect(log.status).toBe(200);
    expect(log.body.data).toHaveLength(1);
    expect(log.body.data[0]).toMatchObject({ action: "m2m.token", outcome: "success", actor: { type: "m2m_client", id: c.client_id }, user_agent: "m2m-test/1.0", created_at: issuedAt, metadata: { scope: "auth.user.read" } });
    // The client's last use is the exchange's time, and reading the client shows it.
    expect((await app.call("GET", `${clientsPath(a)}/${c.id}`, { token: a.key })).body.last_used_at).toBe(issuedAt);
  });

  inProcess("inspects the in-process write-behind token log (app.auth.m2m.tokenLog)")("the token log commits on its own within a second", async () => {
    const a = await createAuthApp(app);
    const c = await createClient(a, ["auth.user.read"]);
    expect((await tokenCall(a, grant(c))).status).toBe(200);
    expect(app.auth.m2m.tokenLog.pending).toBe(1);
    await Bun.sleep(1200);
    expect(app.auth.m2m.tokenLog.pending).toBe(0);
    expect((await app.ctx.db.get<{ n: number }>("SELECT COUNT(*) AS n FROM auth_audit WHERE app_id = ? AND action = 'm2m.token'", a.id))!.n).toBe(1);
  });

  inProcess("inspects the in-process write-behind token log across app.stop (app.auth)")("shutdown writes the token log before the database closes", async () => {
    const own = await startTestApp();
    const a = await createAuthApp(own);
    const r = await own.call("POST", `/auth/v1/apps/${a.id}/m2m-clients`, { token: a.key, body: { name: "backend", permissions: ["auth.user.read"] } });
    const c = r.body as { client_id: string; client_secret: string };
    for (let i = 0; i < 3; i++) expect((await own.call("POST", a.path("/oauth/token"), { body: grant(c) })).status).toBe(200);
    expect(own.auth.m2m.tokenLog.pending).toBe(3);
    await own.stop();
    // Reopened from outside the stopped app (its SQLite file, or its PostgreSQL database).
    const db = await openDatabase(own.ctx.config, MIGRATIONS);
    try {
      expect((await db.get<{ n: number }>("SELECT COUNT(*) AS n FROM auth_audit WHERE app_id = ? AND action = 'm2m.token'", a.id))!.n).toBe(3);
    } finally {
      await db.close();
    }
  });

  inProcess("reads rows from the store (app.ctx.db)")("M2M bearer on /admin/users: granted permission allowed, missing one 403, another App's token 401", async () => {
    const a = await createAuthApp(app);
    const b = await createAuthApp(app);
    const c = await createClient(a, ["auth.user.list", "auth.user.read"]);
    const token = await m2mToken(a, c);
    const list = await app.call("GET", a.path("/admin/users"), { token });
    expect(list.status).toBe(200);
    expect(list.body.data).toEqual([]);
    const create = await app.call("POST", a.path("/admin/users"), { token, body: { email: "m2m@example.com" } });
    expect(create.status).toBe(403);

    const writer = await createClient(a, ["auth.user.*"]);
    const wt = await m2mToken(a, writer);
    const made = await app.call("POST", a.path("/admin/users"), { token: wt, body: { email: "made-by-m2m@example.com" } });
    expect(made.status).toBe(201);
    const created = (await app.ctx.db.get<{ actor_type: string; actor_id: string }>("SELECT actor_type, actor_id FROM auth_audit WHERE app_id = ? AND action = 'user.create'", a.id))!;
    expect(created).toEqual({ actor_type: "m2m_client", actor_id: writer.client_id });
    expect((await app.call("GET", a.path(`/admin/users/${made.body.id}`), { token })).status).toBe(200);

    const bc = await createClient(b, ["auth.user.*"]);
    const foreign = await m2mToken(b, bc);
    expect((await app.call("GET", a.path("/admin/users"), { token: foreign })).status).toBe(401);
    // A client of App A cannot get a token from App B's endpoint either.
    expect((await tokenCall(b, grant(c))).status).toBe(401);
  });

  inProcess("reads audit rows from the store after flushing the in-process token log (auditRows: app.auth, app.ctx.db)")("client authentication and grant errors use the OAuth shape", async () => {
    const a = await createAuthApp(app);
    const c = await createClient(a, ["auth.user.read"]);
    const wrong = await tokenCall(a, grant({ ...c, client_secret: c.client_secret + "x" }));
    expect(wrong.status).toBe(401);
    expect(wrong.body.error).toBe("invalid_client");
    expect(wrong.headers.get("cache-control")).toBe("no-store");
    expect((await tokenCall(a, grant({ client_id: "m2m_unknown", client_secret: c.client_secret }))).body.error).toBe("invalid_client");
    const missing = await tokenCall(a, { grant_type: "client_credentials", client_id: c.client_id });
    expect([missing.status, missing.body.error]).toEqual([401, "invalid_client"]);
    const basic = await tokenCall(a, { grant_type: "client_credentials" }, "form", { authorization: `Basic ${btoa(`${c.client_id}:${c.client_secret}`)}` });
    expect([basic.status, basic.body.error]).toEqual([401, "invalid_client"]);
    expect(basic.headers.get("www-authenticate")).toStartWith("Basic");

    const pw = await tokenCall(a, grant(c, { grant_type: "password" }), "form");
    expect([pw.status, pw.body.error]).toEqual([400, "unsupported_grant_type"]);
    const noGrant = await tokenCall(a, { client_id: c.client_id, client_secret: c.client_secret });
    expect([noGrant.status, noGrant.body.error]).toEqual([400, "invalid_request"]);
    const badJson = await app.call("POST", a.path("/oauth/token"), { body: "{not json", headers: { "content-type": "application/json" } });
    expect([badJson.status, badJson.body.error]).toEqual([400, "invalid_request"]);
    const nonString = await tokenCall(a, { ...grant(c), scope: 5 as unknown as string });
    expect([nonString.status, nonString.body.error]).toEqual([400, "invalid_request"]);
    const text = await app.call("POST", a.path("/oauth/token"), { body: "grant_type=client_credentials", headers: { "content-type": "text/plain" } });
    expect([text.status, text.body.error]).toEqual([400, "invalid_request"]);
    const repeated = await app.call("POST", a.path("/oauth/token"), {
      body: `grant_type=client_credentials&client_id=${c.client_id}&client_secret=${c.client_secret}&client_secret=x`,
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    expect([repeated.status, repeated.body.error]).toEqual([400, "invalid_request"]);
    const noApp = await app.call("POST", "/auth/no-such-app/v1/oauth/token", { body: grant(c) });
    expect([noApp.status, noApp.body.error]).toEqual([401, "invalid_client"]);

    const failures = (await auditRows(a.id, "m2m.token")).filter((r) => r.outcome === "failure");
    expect(failures.length).toBe(1); // the wrong secret of a known client; unknown ids leave no row
  });

  test("scope narrows the token; a scope outside the client's permissions is invalid_scope", async () => {
    const a = await createAuthApp(app);
    const c = await createClient(a, ["auth.user.*", "auth.tenant.read"]);
    const r = await tokenCall(a, grant(c, { scope: "auth.user.read  auth.user.read" }), "form");
    expect(r.status).toBe(200);
    expect(r.body.scope).toBe("auth.user.read");
    const narrow = r.body.access_token;
    const u = await app.call("POST", a.path("/admin/users"), { token: a.key, body: { email: "scoped@example.com" } });
    expect((await app.call("GET", a.path(`/admin/users/${u.body.id}`), { token: narrow })).status).toBe(200);
    expect((await app.call("GET", a.path("/admin/users"), { token: narrow })).status).toBe(403);
    expect((await tokenCall(a, grant(c, { scope: "auth.user.*" }))).body.scope).toBe("auth.user.*");
    expect((await tokenCall(a, grant(c, { scope: "" }))).body.scope).toBe("auth.tenant.read auth.user.*");

    for (const scope of ["auth.tenant.update", "auth.*", "auth.user.read openid", "auth.m2m.list"]) {
      const bad = await tokenCall(a, grant(c, { scope }));
      expect([bad.status, bad.body.error]).toEqual([400, "invalid_scope"]);
    }
  });

  inProcess("compares rotated_at with the frozen injected clock")("rotate-secret: the old secret stops working at once, the new one works", async () => {
    const a = await createAuthApp(app);
    const c = await createClient(a, ["auth.user.read"]);
    const r = await app.call("POST", `${clientsPath(a)}/${c.id}/rotate-secret`, { token: a.key });
    expect(r.status).toBe(200);
    expect(r.body.client_id).toBe(c.client_id);
    expect(r.body.client_secret).not.toBe(c.client_secret);
    expect(r.body.secret_hint).toBe(r.body.client_secret.slice(-4));
    expect(r.body.rotated_at).toBe(app.clock.iso());
    expect((await tokenCall(a, grant(c))).status).toBe(401);
    expect((await tokenCall(a, grant({ client_id: c.client_id, client_secret: r.body.client_secret }))).status).toBe(200);
    expect((await app.call("GET", clientsPath(a), { token: a.key })).body.data[0].secret_hint).toBe(r.body.secret_hint);
    expect((await auditRows(a.id, "m2m.secret.rotate")).length).toBe(1);
  });

  test("every error answer has the OAuth shape {error, error_description}, never the house error body", async () => {
    const a = await createAuthApp(app);
    const c = await createClient(a, ["auth.user.read"]);
    const form = { "content-type": "application/x-www-form-urlencoded" };
    const raw = (path: string, method: string, body?: string, headers: Record<string, string> = {}) => app.call(method, path, { body, headers });
    const tok = a.path("/oauth/token");
    const cases: [string, () => Promise<{ status: number; body: any; headers: Headers }>, number, string][] = [
      ["unknown App slug", () => raw("/auth/no-such-app/v1/oauth/token", "POST", new URLSearchParams(grant(c)).toString(), form), 401, "invalid_client"],
      ["unknown App slug, unusable body", () => raw("/auth/no-such-app/v1/oauth/token", "POST", "{", { "content-type": "application/json" }), 401, "invalid_client"],
      ["unknown App slug, GET", () => raw("/auth/no-such-app/v1/oauth/token", "GET"), 405, "invalid_request"],
      ["GET on the token endpoint", () => raw(tok, "GET"), 405, "invalid_request"],
      ["PUT on the token endpoint", () => raw(tok, "PUT", new URLSearchParams(grant(c)).toString(), form), 405, "invalid_request"],
      ["no content type", () => raw(tok, "POST", "grant_type=client_credentials"), 400, "invalid_request"],
      ["a JSON array", () => raw(tok, "POST", "[1,2]", { "content-type": "application/json" }), 400, "invalid_request"],
      ["deeply nested JSON", () => raw(tok, "POST", "[".repeat(100_000) + "]".repeat(100_000), { "content-type": "application/json" }), 400, "invalid_request"],
      ["a body over 8 KiB", () => raw(tok, "POST", `grant_type=client_credentials&x=${"a".repeat(9000)}`, form), 400, "invalid_request"],
      ["an over-long client_id", () => tokenCall(a, grant({ client_id: "m".repeat(200), client_secret: "x" })), 401, "invalid_client"],
      ["an empty body", () => raw(tok, "POST", "", form), 400, "invalid_request"],
      ["a scope the client lacks", () => tokenCall(a, grant(c, { scope: "auth.user.delete" })), 400, "invalid_scope"],
    ];
    for (const [what, call, status, error] of cases) {
      const r = await call();
      expect([what, r.status, r.body]).toEqual([what, status, { error, error_description: expect.any(String) }]);
      expect([what, r.headers.get("cache-control")]).toEqual([what, "no-store"]);
    }
    expect((await raw(tok, "GET")).headers.get("allow")).toBe("POST");
  });

  inProcess("moves the injected clock through the one-minute window")("10 failed secrets a minute per client_id, then 429 even for the right secret", async () => {
    const a = await createAuthApp(app);
    const c = await createClient(a, ["auth.user.read"]);
    const other = await createClient(a, ["auth.user.read"]);
    for (let i = 0; i < 10; i++) {
      const r = await tokenCall(a, grant({ client_id: c.client_id, client_secret: `wrong-${i}` }));
      expect(r.status).toBe(401);
    }
    const locked = await tokenCall(a, grant(c));
    expect(locked.status).toBe(429);
    expect(locked.body.error).toBe("temporarily_unavailable");
    expect(Number(locked.headers.get("retry-after"))).toBe(60);
    expect((await tokenCall(a, grant(other))).status).toBe(200); // per client_id
    app.clock.advance(59_000);
    expect((await tokenCall(a, grant(c))).status).toBe(429);
    app.clock.advance(1_000);
    expect((await tokenCall(a, grant(c))).status).toBe(200);
    // Unknown client ids are limited the same way (no existence oracle).
    for (let i = 0; i < 10; i++) expect((await tokenCall(a, grant({ client_id: "m2m_nobody", client_secret: "x" }))).status).toBe(401);
    expect((await tokenCall(a, grant({ client_id: "m2m_nobody", client_secret: "x" }))).status).toBe(429);
  });

  inProcess("reads audit rows from the store after flushing the in-process token log (auditRows: app.auth, app.ctx.db)")("delete: 204, the secret and the tokens already issued stop working", async () => {
    const a = await createAuthApp(app);
    const c = await createClient(a, ["auth.user.list"]);
    const token = await m2mToken(a, c);
    const d = await app.call("DELETE", `${clientsPath(a)}/${c.id}`, { token: a.key });
    expect(d.status).toBe(204);
    expect((await app.call("GET", `${clientsPath(a)}/${c.id}`, { token: a.key })).status).toBe(404);
    expect((await tokenCall(a, grant(c))).status).toBe(401);
    expect((await app.call("GET", a.path("/admin/users"), { token })).status).toBe(401);
    expect((await auditRows(a.id, "m2m.delete")).length).toBe(1);
  });
});

/** Rotation is compared at second precision (iat): on to the next second, of the injected clock or the binary's real one. */
async function nextSecond() {
  if (ON_BINARY) await Bun.sleep(1000 - (Date.now() % 1000) + 20);
  else app.clock.advance(1000);
}

describe("issued M2M tokens follow their client on admin routes", () => {
  test("narrowed permissions 403, rotation kills older tokens, deletion kills all (401)", async () => {
    const a = await createAuthApp(app);
    const c = await createClient(a, ["auth.user.read", "auth.user.list"]);
    const before = await m2mToken(a, c);
    expect((await app.call("GET", a.path("/admin/users"), { token: before })).status).toBe(200);

    expect((await app.call("PATCH", `${clientsPath(a)}/${c.id}`, { token: a.key, body: { permissions: ["auth.user.read"] } })).status).toBe(200);
    expect((await app.call("GET", a.path("/admin/users"), { token: before })).status).toBe(403);

    await nextSecond();
    const rotated = await app.call("POST", `${clientsPath(a)}/${c.id}/rotate-secret`, { token: a.key });
    expect(rotated.status).toBe(200);
    const u = await app.call("POST", a.path("/admin/users"), { token: a.key, body: { email: "m2m-target@example.com" } });
    expect((await app.call("GET", a.path(`/admin/users/${u.body.id}`), { token: before })).status).toBe(401);
    await nextSecond();
    const after = await m2mToken(a, { client_id: c.client_id, client_secret: rotated.body.client_secret });
    expect((await app.call("GET", a.path(`/admin/users/${u.body.id}`), { token: after })).status).toBe(200);

    expect((await app.call("DELETE", `${clientsPath(a)}/${c.id}`, { token: a.key })).status).toBe(204);
    expect((await app.call("GET", a.path(`/admin/users/${u.body.id}`), { token: after })).status).toBe(401);
  });
});
