/**
 * App management (/auth/v1/apps), per-App keys, JWKS and discovery.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createWorkspace, ownerWithKey, signup, startTestApp, type TestApp } from "../helpers/app";
import { createAuthApp, signupEndUser, claimsOf } from "../helpers/auth";
import { HOUR, MINUTE } from "../../src/core/clock";
import { inProcess } from "../helpers/target";

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.stop());

describe("create", () => {
  test("201 with issuer, jwks_uri, publishable key and default settings", async () => {
    const owner = await ownerWithKey(app);
    const r = await app.call("POST", "/auth/v1/apps", { token: owner.token, body: { slug: "acme-shop", displayName: "Acme Shop" } });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({
      slug: "acme-shop",
      display_name: "Acme Shop",
      workspace_id: owner.ws.id,
      issuer: "http://localhost:8080/auth/acme-shop",
      jwks_uri: "http://localhost:8080/auth/acme-shop/v1/.well-known/jwks.json",
      settings: { signup_enabled: true, signup_requires_pak: false, password_min_length: 8, default_role: null, access_token_ttl: 3600 },
    });
    expect(r.body.publishable_key).toMatch(/^pk_[A-Za-z0-9]{32}$/);
  });

  test("slugs that collide with route words are refused; bad slugs 400; taken 409", async () => {
    const owner = await ownerWithKey(app);
    for (const slug of ["v1", "v2", "apps", "well-known", "me", "oauth"]) {
      const r = await app.call("POST", "/auth/v1/apps", { token: owner.token, body: { slug, display_name: "x" } });
      expect(r.status).toBe(400);
      expect(r.body.error.details[0].field).toBe("slug");
    }
    for (const slug of ["ab", "Acme", "-acme", "acme-", "acme_shop", "a".repeat(64)]) {
      expect((await app.call("POST", "/auth/v1/apps", { token: owner.token, body: { slug, display_name: "x" } })).status).toBe(400);
    }
    expect((await app.call("POST", "/auth/v1/apps", { token: owner.token, body: { slug: "abc", display_name: "x" } })).status).toBe(201);
    expect((await app.call("POST", "/auth/v1/apps", { token: owner.token, body: { slug: "a".repeat(63), display_name: "x" } })).status).toBe(201);
    const dup = await app.call("POST", "/auth/v1/apps", { token: owner.token, body: { slug: "abc", display_name: "y" } });
    expect(dup.status).toBe(409);
    expect(dup.body.error.code).toBe("SLUG_TAKEN");
  });

  test("a console session must name the workspace; a key defaults to its own", async () => {
    const user = await signup(app);
    const ws = await createWorkspace(app, user.token);
    const missing = await app.call("POST", "/auth/v1/apps", { token: user.token, body: { slug: "needs-ws", display_name: "x" } });
    expect(missing.status).toBe(400);
    const ok = await app.call("POST", "/auth/v1/apps", { token: user.token, body: { workspace_id: ws.id, slug: "has-ws", display_name: "x" } });
    expect(ok.status).toBe(201);
    const list = await app.call("GET", `/auth/v1/apps?workspace_id=${ws.id}`, { token: user.token });
    expect(list.body.data.map((a: any) => a.slug)).toEqual(["has-ws"]);
  });

  test("settings are validated: unknown key, bad values, every error named", async () => {
    const owner = await ownerWithKey(app);
    const r = await app.call("POST", "/auth/v1/apps", {
      token: owner.token,
      body: { slug: "bad-settings", display_name: "x", settings: { nope: 1, password_min_length: 7, access_token_ttl: 59, allowed_redirect_origins: ["https://ok.example.com", "https://x.example.com/path"] } },
    });
    expect(r.status).toBe(400);
    expect(r.body.error.details.map((d: any) => d.field).sort()).toEqual(
      ["settings.access_token_ttl", "settings.allowed_redirect_origins[1]", "settings.nope", "settings.password_min_length"].sort(),
    );
  });

  test("Idempotency-Key replays the creation", async () => {
    const owner = await ownerWithKey(app);
    const body = { slug: "idem-app", display_name: "x" };
    const a = await app.call("POST", "/auth/v1/apps", { token: owner.token, body, headers: { "idempotency-key": "k1" } });
    const b = await app.call("POST", "/auth/v1/apps", { token: owner.token, body, headers: { "idempotency-key": "k1" } });
    expect(a.status).toBe(201);
    expect(b.status).toBe(201);
    expect(b.headers.get("idempotent-replay")).toBe("true");
    expect(b.body.id).toBe(a.body.id);
  });
});

describe("access", () => {
  test("another workspace's key and a non-member get 404; a key without the action 403", async () => {
    const a = await createAuthApp(app);
    const other = await ownerWithKey(app);
    for (const [m, p] of [["GET", `/auth/v1/apps/${a.id}`], ["PATCH", `/auth/v1/apps/${a.id}`], ["DELETE", `/auth/v1/apps/${a.id}`], ["GET", `/auth/v1/apps/${a.id}/webhooks/endpoints`]] as const) {
      const r = await app.call(m, p, { token: other.token, body: m === "PATCH" ? { display_name: "x" } : undefined });
      expect(r.status).toBe(404);
    }
    const stranger = await signup(app);
    expect((await app.call("GET", `/auth/v1/apps/${a.id}`, { token: stranger.token })).status).toBe(404);
    const minted = await app.call("POST", `/platform/v1/workspaces/${a.workspace.slug}/api-keys`, {
      token: a.session,
      body: { name: "read-only", policy: [{ effect: "allow", actions: ["auth.app.read"], resources: ["*"] }] },
    });
    expect((await app.call("GET", `/auth/v1/apps/${a.id}`, { token: minted.body.key })).status).toBe(200);
    expect((await app.call("PATCH", `/auth/v1/apps/${a.id}`, { token: minted.body.key, body: { display_name: "x" } })).status).toBe(403);
    expect((await app.call("GET", `/auth/v1/apps/${a.id}`)).status).toBe(401);
  });

  test("the Auth service switched off for the workspace: 403 SERVICE_NOT_ENABLED", async () => {
    const a = await createAuthApp(app);
    const off = await app.call("DELETE", `/platform/v1/workspaces/${a.workspace.slug}/services/auth`, { token: a.session });
    expect([200, 204]).toContain(off.status);
    const r = await app.call("GET", `/auth/v1/apps/${a.id}`, { token: a.key });
    expect(r.status).toBe(403);
    expect(r.body.error.code).toBe("SERVICE_NOT_ENABLED");
  });
});

describe("update and delete", () => {
  test("patch settings and slug; the issuer follows the slug", async () => {
    const a = await createAuthApp(app);
    const r = await app.call("PATCH", `/auth/v1/apps/${a.id}`, { token: a.key, body: { slug: `${a.slug}-new`, settings: { password_min_length: 12, allowed_redirect_origins: ["https://app.example.com/"] } } });
    expect(r.status).toBe(200);
    expect(r.body.issuer).toBe(`http://localhost:8080/auth/${a.slug}-new`);
    expect(r.body.settings.password_min_length).toBe(12);
    expect(r.body.settings.allowed_redirect_origins).toEqual(["https://app.example.com"]);
    expect((await app.call("GET", `/auth/${a.slug}/v1/.well-known/openid-configuration`)).status).toBe(404);
    expect((await app.call("GET", `/auth/${a.slug}-new/v1/.well-known/openid-configuration`)).body.issuer).toBe(r.body.issuer);
  });

  test("default_role must name an existing role", async () => {
    const a = await createAuthApp(app);
    const r = await app.call("PATCH", `/auth/v1/apps/${a.id}`, { token: a.key, body: { settings: { default_role: "ghost" } } });
    expect(r.status).toBe(400);
  });

  inProcess("counts the App's rows in every table of the store (app.ctx.db)")("delete removes the App and everything in it", async () => {
    const a = await createAuthApp(app);
    await signupEndUser(app, a);
    expect((await app.call("DELETE", `/auth/v1/apps/${a.id}`, { token: a.key })).status).toBe(204);
    expect((await app.call("GET", `/auth/v1/apps/${a.id}`, { token: a.key })).status).toBe(404);
    expect((await app.call("GET", a.path("/.well-known/jwks.json"))).status).toBe(404);
    const left = (await app.ctx.db.get<{ n: number }>("SELECT COUNT(*) AS n FROM auth_users WHERE app_id = ?", a.id))!;
    expect(left.n).toBe(0);
  });

  test("deleting its workspace removes the App: its JWKS and discovery answer 404, even after they were served", async () => {
    const a = await createAuthApp(app);
    const u = await signupEndUser(app, a);
    expect((await app.call("GET", a.path("/.well-known/jwks.json"))).status).toBe(200);
    expect((await app.call("GET", a.path("/.well-known/openid-configuration"))).status).toBe(200);
    expect((await app.call("DELETE", `/platform/v1/workspaces/${a.workspace.slug}`, { token: a.session })).status).toBe(204);
    expect((await app.call("GET", a.path("/.well-known/jwks.json"))).status).toBe(404);
    expect((await app.call("GET", a.path("/.well-known/openid-configuration"))).status).toBe(404);
    expect((await app.call("GET", a.path("/me"), { token: u.access })).status).toBe(404);
  });

  inProcess("reads the webhook endpoint rows in the store (app.ctx.db)")("deleting an App, or its workspace, drops its webhook endpoints (they have no foreign key)", async () => {
    const count = async (scope: string) => (await app.ctx.db.get<{ n: number }>("SELECT COUNT(*) AS n FROM webhook_endpoints WHERE scope_id = ?", scope))!.n;
    const hook = (path: string, token: string) => app.call("POST", `${path}/webhooks/endpoints`, { token, body: { url: "https://hooks.example.com/x" } });
    const a = await createAuthApp(app);
    expect((await hook(`/auth/v1/apps/${a.id}`, a.key)).status).toBe(201);
    expect(await count(a.id)).toBe(1);
    expect((await app.call("DELETE", `/auth/v1/apps/${a.id}`, { token: a.key })).status).toBe(204);
    expect(await count(a.id)).toBe(0);

    const b = await createAuthApp(app);
    expect((await hook(`/auth/v1/apps/${b.id}`, b.key)).status).toBe(201);
    expect((await hook(`/mail/v1/workspaces/${b.workspace.id}`, b.key)).status).toBe(201);
    expect((await count(b.id)) + (await count(b.workspace.id))).toBe(2);
    expect((await app.call("DELETE", `/platform/v1/workspaces/${b.workspace.slug}`, { token: b.session })).status).toBe(204);
    expect((await count(b.id)) + (await count(b.workspace.id))).toBe(0);
  });

  test("list pages through a workspace's Apps", async () => {
    const owner = await ownerWithKey(app);
    for (let i = 0; i < 5; i++) await app.call("POST", "/auth/v1/apps", { token: owner.token, body: { slug: `paged-${i}-${owner.ws.id.slice(-6)}`, display_name: `P${i}` } });
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const r: any = await app.call("GET", `/auth/v1/apps?limit=2${cursor ? `&cursor=${cursor}` : ""}`, { token: owner.token });
      expect(r.status).toBe(200);
      seen.push(...r.body.data.map((a: any) => a.display_name));
      cursor = r.body.pagination.next_cursor;
    } while (cursor);
    expect(seen).toEqual(["P0", "P1", "P2", "P3", "P4"]);
    expect((await app.call("GET", "/auth/v1/apps?cursor=%%%", { token: owner.token })).status).toBe(400);
  });
});

describe("JWKS and discovery", () => {
  test("JWKS: RSA keys with kid, Cache-Control one hour", async () => {
    const a = await createAuthApp(app);
    const r = await app.call("GET", a.path("/.well-known/jwks.json"));
    expect(r.status).toBe(200);
    expect(r.headers.get("cache-control")).toBe("public, max-age=3600");
    expect(r.body.keys).toHaveLength(1);
    expect(Object.keys(r.body.keys[0]).sort()).toEqual(["alg", "e", "kid", "kty", "n", "use"]);
    expect(r.body.keys[0]).toMatchObject({ kty: "RSA", alg: "RS256", use: "sig", e: "AQAB" });
  });

  test("discovery document has exactly the spec's fields", async () => {
    const a = await createAuthApp(app);
    const r = await app.call("GET", a.path("/.well-known/openid-configuration"));
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      issuer: a.issuer,
      jwks_uri: `${a.issuer}/v1/.well-known/jwks.json`,
      token_endpoint: `${a.issuer}/v1/oauth/token`,
      introspection_endpoint: `${a.issuer}/v1/oauth/introspect`,
      userinfo_endpoint: `${a.issuer}/v1/me`,
      auth_verify_endpoint: `${a.issuer}/v1/verify`,
      auth_authorize_endpoint: `${a.issuer}/v1/authorize`,
      auth_admin_users_endpoint: `${a.issuer}/v1/admin/users`,
      grant_types_supported: ["client_credentials"],
      response_types_supported: ["token"],
      token_endpoint_auth_methods_supported: ["client_secret_post"],
      id_token_signing_alg_values_supported: ["RS256"],
      subject_types_supported: ["public"],
    });
  });

  inProcess("moves the injected clock past the old key's token lifetime")("rotation: the new key signs, the old one stays published until its tokens expired", async () => {
    const a = await createAuthApp(app);
    const before = await signupEndUser(app, a);
    const oldKid = (await app.call("GET", a.path("/.well-known/jwks.json"))).body.keys[0].kid;
    const rot = await app.call("POST", `/auth/v1/apps/${a.id}/signing-keys/rotate`, { token: a.key });
    expect(rot.status).toBe(200);
    expect(rot.body.kid).not.toBe(oldKid);
    const jwks = (await app.call("GET", a.path("/.well-known/jwks.json"))).body.keys.map((k: any) => k.kid);
    expect(jwks).toEqual([rot.body.kid, oldKid]);
    const after = await signupEndUser(app, a);
    const header = (t: string) => JSON.parse(Buffer.from(t.split(".")[0], "base64url").toString());
    expect(header(before.access).kid).toBe(oldKid);
    expect(header(after.access).kid).toBe(rot.body.kid);
    // Old tokens live an hour (access_token_ttl); the old key leaves after that plus 5 minutes' skew.
    app.clock.advance(HOUR + 4 * MINUTE);
    expect((await app.call("GET", a.path("/.well-known/jwks.json"))).body.keys).toHaveLength(2);
    app.clock.advance(2 * MINUTE);
    expect((await app.call("GET", a.path("/.well-known/jwks.json"))).body.keys.map((k: any) => k.kid)).toEqual([rot.body.kid]);
    expect(claimsOf(after.access).iss).toBe(a.issuer);
  });

  inProcess("reads the stored key rows (app.ctx.db)")("private keys are encrypted at rest", async () => {
    const a = await createAuthApp(app);
    const row = (await app.ctx.db.get<{ private_enc: string }>("SELECT private_enc FROM auth_signing_keys WHERE app_id = ?", a.id))!;
    expect(row.private_enc.startsWith("v1.")).toBe(true);
    expect(row.private_enc).not.toContain("PRIVATE KEY");
  });

  test("unknown App: 404 in the error body", async () => {
    const r = await app.call("GET", "/auth/no-such-app/v1/.well-known/jwks.json");
    expect(r.status).toBe(404);
    expect(r.body.error.code).toBe("NOT_FOUND");
  });
});
