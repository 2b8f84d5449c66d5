/**
 * Ids in the paths of the App-scoped admin operations: a malformed one is 400
 * VALIDATION_ERROR naming the path parameter, a well-formed unknown one 404, and neither
 * check comes before the credential's (401 without one). The table is the served document's.
 * Then the other ids of the Auth API: app_slug, the App management routes' app_id and M2M
 * client id, the signed-in user's own ids, and the ids taken in bodies and query strings;
 * and the order of input and existence checks where both apply.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startTestApp, type TestApp } from "../helpers/app";
import { appAdminOperations, createAuthApp, signupEndUser, type TestAuthApp } from "../helpers/auth";

let app: TestApp;
let a: TestAuthApp;
let ops: { method: string; path: string; ids: string[]; body: Record<string, unknown> | undefined }[];

/** Bodies that need more than their required fields to be valid. */
const VALID_BODIES: Record<string, Record<string, unknown>> = { "POST /auth/{app_slug}/v1/tenants/{tenant_id}/members": { email: "someone@example.com" } };

/** Path parameters that are names, not ids (a permission is addressed by its name). */
const NAMES = new Set(["app_slug", "name"]);

beforeAll(async () => {
  app = await startTestApp();
  a = await createAuthApp(app);
  ops = [];
  for (const { method, path, schema } of await appAdminOperations(app)) {
    const ids = [...path.matchAll(/\{([a-z_]+)\}/g)].map((m) => m[1]).filter((p) => !NAMES.has(p));
    if (!ids.length) continue;
    // Required fields only, null where allowed: the ids are what is under test.
    const body = schema ? Object.fromEntries((schema.required ?? []).map((f: string) => [f, schema.properties[f].nullable ? null : "x"])) : undefined;
    ops.push({ method, path, ids, body });
  }
});
afterAll(() => app.stop());

const fill = (path: string, values: Record<string, string>) => path.replace(/\{([a-z_]+)\}/g, (_, p: string) => (p === "app_slug" ? a.slug : values[p] ?? crypto.randomUUID()));

test("the table covers tenants, members, roles, invites, users and their sessions", () => {
  expect([...new Set(ops.flatMap((o) => o.ids))].sort()).toEqual(["account_id", "invite_id", "role_id", "session_id", "tenant_id", "user_id"]);
});

test("each id parameter: malformed is 400 naming it, well-formed and unknown is 404, and without a credential 401", async () => {
  for (const op of ops) {
    for (const id of op.ids) {
      const name = `${op.method} ${op.path} (${id})`;
      const malformed = await app.call(op.method, fill(op.path, { [id]: "not-an-id" }), { token: a.key, body: op.body });
      expect({ name, status: malformed.status, code: malformed.body?.error?.code, fields: malformed.body?.error?.details?.map((d: { field: string }) => d.field) }).toEqual({
        name,
        status: 400,
        code: "VALIDATION_ERROR",
        fields: [id],
      });
      const anonymous = await app.call(op.method, fill(op.path, { [id]: "not-an-id" }), { body: op.body });
      expect({ name, status: anonymous.status }).toEqual({ name, status: 401 });
    }
    const name = `${op.method} ${op.path}`;
    // The body is judged before the lookup: the unknown id is reached with a valid one.
    const unknown = await app.call(op.method, fill(op.path, {}), { token: a.key, body: VALID_BODIES[name] ?? op.body });
    expect({ name, status: unknown.status, code: unknown.body?.error?.code }).toEqual({ name, status: 404, code: "NOT_FOUND" });
  }
});

test("a tenant is also addressed by its tnt_ display id; a malformed one is 400 like a malformed UUID", async () => {
  const created = await app.call("POST", a.path("/tenants"), { token: a.key, body: { display_name: "Acme" } });
  expect(created.status).toBe(201);
  expect((await app.call("GET", a.path(`/tenants/${created.body.display_id}`), { token: a.key })).body.id).toBe(created.body.id);
  expect((await app.call("GET", a.path("/tenants/tnt_000000000000"), { token: a.key })).status).toBe(404);
  for (const ref of ["tnt_XYZ", "tnt_0000000000000", `urn:uuid:${crypto.randomUUID()}`]) {
    const bad = await app.call("GET", a.path(`/tenants/${ref}`), { token: a.key });
    expect({ ref, status: bad.status, fields: bad.body.error?.details?.map((d: { field: string }) => d.field) }).toEqual({ ref, status: 400, fields: ["tenant_id"] });
  }
});

const fields = (r: { body: any }) => r.body?.error?.details?.map((d: { field: string }) => d.field);
const shape = (r: { status: number; body: any }) => ({ status: r.status, code: r.body?.error?.code, fields: fields(r) });
const invalid = (...names: string[]) => ({ status: 400, code: "VALIDATION_ERROR", fields: names });

test("the document declares each id's shape: UUIDs with format and a strict pattern, app_slug, tenant and M2M client references", async () => {
  const doc = (await app.call("GET", "/auth/openapi.json")).body;
  const param = (path: string, method: string, name: string) => doc.paths[path][method].parameters.find((p: { name: string }) => p.name === name).schema;
  expect(param("/auth/{app_slug}/v1/roles/{role_id}", "get", "role_id")).toMatchObject({ type: "string", format: "uuid", pattern: expect.stringMatching(/^\^/) });
  expect(param("/auth/{app_slug}/v1/roles", "get", "app_slug").pattern).toBeString();
  expect(param("/auth/{app_slug}/v1/tenants/{tenant_id}", "get", "tenant_id").pattern).toContain("tnt_");
  expect(param("/auth/v1/apps/{app_id}", "get", "app_id")).toMatchObject({ format: "uuid" });
  expect(param("/auth/v1/apps/{app_id}/m2m-clients/{id}", "get", "id").pattern).toContain("m2m_");
  // The token endpoint keeps a plain app_slug: its errors are OAuth's, an unknown slug is 401 invalid_client.
  expect(param("/auth/{app_slug}/v1/oauth/token", "post", "app_slug").pattern).toBeUndefined();
});

test("app_slug: malformed is 400 naming it (after the credential), unknown is 404, and any case finds the App", async () => {
  expect(shape(await app.call("GET", "/auth/a_b/v1/.well-known/jwks.json"))).toEqual(invalid("app_slug"));
  expect(shape(await app.call("POST", "/auth/9lives/v1/auth/signin", { body: { identifier: "x", password: "y" } }))).toEqual(invalid("app_slug"));
  expect(shape(await app.call("GET", "/auth/a_b/v1/roles", { token: a.key }))).toEqual(invalid("app_slug"));
  expect((await app.call("GET", "/auth/a_b/v1/roles")).status).toBe(401);
  expect((await app.call("GET", "/auth/no-such-app/v1/.well-known/jwks.json")).status).toBe(404);
  expect((await app.call("GET", `/auth/${a.slug.toUpperCase()}/v1/.well-known/jwks.json`)).status).toBe(200);
  const token = await app.call("POST", "/auth/a_b/v1/oauth/token", { body: { grant_type: "client_credentials", client_id: "m2m_x", client_secret: "x" } });
  expect({ status: token.status, error: token.body.error }).toEqual({ status: 401, error: "invalid_client" });
});

test("App management, its M2M clients and webhooks: app_id malformed is 400, unknown 404; an M2M client by UUID or client_id", async () => {
  const doc = (await app.call("GET", "/auth/openapi.json")).body;
  const appOps = Object.entries<any>(doc.paths)
    .filter(([path]) => path.startsWith("/auth/v1/apps/{app_id}"))
    .flatMap(([path, item]) => Object.entries<any>(item).map(([method, op]) => ({ method: method.toUpperCase(), path, body: op.requestBody })));
  expect(appOps.length).toBeGreaterThan(20);
  for (const op of appOps) {
    const url = op.path.replace("{app_id}", "not-an-app").replace(/\{[a-z_]+\}/g, crypto.randomUUID());
    const body = op.body ? {} : undefined;
    const r = await app.call(op.method, url, { token: a.key, body });
    expect({ op: `${op.method} ${op.path}`, status: r.status, code: r.body.error?.code, names: fields(r)?.includes("app_id") }).toEqual({ op: `${op.method} ${op.path}`, status: 400, code: "VALIDATION_ERROR", names: true });
    expect({ op: `${op.method} ${op.path}`, status: (await app.call(op.method, url, { body })).status }).toEqual({ op: `${op.method} ${op.path}`, status: 401 });
    if (!op.body && op.path.split("{").length === 2) {
      const unknown = await app.call(op.method, op.path.replace("{app_id}", crypto.randomUUID()), { token: a.key });
      expect({ op: `${op.method} ${op.path}`, status: unknown.status }).toEqual({ op: `${op.method} ${op.path}`, status: 404 });
    }
  }

  const clients = `/auth/v1/apps/${a.id}/m2m-clients`;
  const created = await app.call("POST", clients, { token: a.key, body: { name: "worker", permissions: ["auth.user.read"] } });
  expect(created.status).toBe(201);
  expect((await app.call("GET", `${clients}/${created.body.id}`, { token: a.key })).body.client_id).toBe(created.body.client_id);
  expect((await app.call("GET", `${clients}/${created.body.client_id}`, { token: a.key })).body.id).toBe(created.body.id);
  expect((await app.call("GET", `${clients}/m2m_${"0".repeat(24)}`, { token: a.key })).status).toBe(404);
  expect((await app.call("GET", `${clients}/${crypto.randomUUID()}`, { token: a.key })).status).toBe(404);
  for (const bad of ["m2m_short", `m2m_${"0".repeat(25)}`, "client"]) expect(shape(await app.call("GET", `${clients}/${bad}`, { token: a.key }))).toEqual(invalid("id"));
});

test("the signed-in user's factor and identity ids: malformed 400, unknown 404", async () => {
  const user = await signupEndUser(app, a);
  for (const [method, path, body] of [["POST", "/me/mfa/factors/{id}/confirm", { code: "123456" }], ["DELETE", "/me/mfa/factors/{id}", undefined], ["DELETE", "/me/identities/{id}", undefined]] as const) {
    const name = path.includes("identities") ? "identity_id" : "id";
    expect(shape(await app.call(method, a.path(path.replace("{id}", "nope")), { token: user.access, body }))).toEqual(invalid(name));
    expect((await app.call(method, a.path(path.replace("{id}", crypto.randomUUID())), { token: user.access, body })).status).toBe(404);
  }
});

test("ids in bodies and query strings: malformed is 400 naming the field", async () => {
  const user = await signupEndUser(app, a);
  const tenant = (await app.call("POST", a.path("/tenants"), { token: a.key, body: { display_name: "Body ids" } })).body;
  const cases: [string, string, Record<string, unknown>, string, string | undefined][] = [
    ["POST", a.path("/auth/signin"), { identifier: user.username, password: user.password, tenant_id: "tnt_nope" }, "tenant_id", undefined],
    ["POST", a.path("/invites"), { tenant_id: "acme" }, "tenant_id", a.key],
    ["POST", a.path(`/tenants/${tenant.id}/members`), { accountId: "someone" }, "accountId", a.key],
    ["POST", a.path(`/tenants/${tenant.id}/members`), { account_id: "someone" }, "account_id", a.key],
    ["POST", a.path("/auth/request-verification"), { email: user.email, user_id: "someone" }, "user_id", a.key],
    ["POST", a.path("/auth/send-verification-email"), { user_id: "someone" }, "user_id", a.key],
    ["POST", a.path("/auth/mfa/send-code"), { mfa_token: crypto.randomUUID(), factor_id: "f1" }, "factor_id", undefined],
    ["POST", "/auth/v1/apps", { workspace_id: "my-workspace", slug: "body-ids" }, "workspace_id", a.session],
  ];
  for (const [method, url, body, field, token] of cases) {
    expect({ url, field, ...shape(await app.call(method, url, { token, body })) }).toEqual({ url, field, ...invalid(field) });
  }
  expect(shape(await app.call("GET", "/auth/v1/apps?workspace_id=my-workspace", { token: a.session }))).toEqual(invalid("workspace_id"));
  // Well formed: the lookups answer as before (not a member of an unknown tenant; an unknown workspace).
  const signin = await app.call("POST", a.path("/auth/signin"), { body: { identifier: user.username, password: user.password, tenant_id: "tnt_000000000000" } });
  expect({ status: signin.status, code: signin.body.error?.code }).toEqual({ status: 403, code: "NOT_TENANT_MEMBER" });
  expect((await app.call("GET", `/auth/v1/apps?workspace_id=${crypto.randomUUID()}`, { token: a.session })).status).toBe(404);
});

test("input before existence: an invalid body is 400 also where the addressed tenant, member, user or factor does not exist", async () => {
  const unknownTenant = a.path(`/tenants/${crypto.randomUUID()}`);
  expect(shape(await app.call("POST", `${unknownTenant}/members`, { token: a.key, body: {} }))).toMatchObject({ status: 400, fields: ["accountId"] });
  expect(shape(await app.call("POST", `${unknownTenant}/members`, { token: a.key, body: { email: "not an email" } }))).toMatchObject({ status: 400, fields: ["email"] });
  expect(shape(await app.call("POST", `${unknownTenant}/members`, { token: a.key, body: { email: "x@example.com", role: "no-such-role" } }))).toMatchObject({ status: 400, fields: ["role"] });
  expect(shape(await app.call("PATCH", unknownTenant, { token: a.key, body: { status: "sleeping" } }))).toMatchObject({ status: 400, fields: ["status"] });
  expect(shape(await app.call("PATCH", `${unknownTenant}/members/${crypto.randomUUID()}`, { token: a.key, body: { role: "no-such-role" } }))).toMatchObject({ status: 400, fields: ["role"] });
  expect(shape(await app.call("PATCH", a.path(`/admin/users/${crypto.randomUUID()}`), { token: a.key, body: { email: "not an email" } }))).toMatchObject({ status: 400, fields: ["email"] });
  expect(shape(await app.call("PATCH", a.path(`/roles/${crypto.randomUUID()}`), { token: a.key, body: { name: "no spaces allowed" } }))).toMatchObject({ status: 400, fields: ["name"] });
  const client = `/auth/v1/apps/${a.id}/m2m-clients/${crypto.randomUUID()}`;
  expect(shape(await app.call("PATCH", client, { token: a.key, body: { permissions: ["auth.*"] } }))).toMatchObject({ status: 400, code: "VALIDATION_ERROR" });
  expect((await app.call("PATCH", client, { token: a.key, body: { permissions: ["auth.user.read"] } })).status).toBe(404);
  const user = await signupEndUser(app, a);
  expect(shape(await app.call("POST", a.path(`/me/mfa/factors/${crypto.randomUUID()}/confirm`), { token: user.access, body: { code: "12" } }))).toMatchObject({ status: 400, fields: ["code"] });
  // The same bodies, valid, reach the lookup: 404.
  expect((await app.call("POST", `${unknownTenant}/members`, { token: a.key, body: { email: "x@example.com" } })).status).toBe(404);
  expect((await app.call("PATCH", unknownTenant, { token: a.key, body: { status: "active" } })).status).toBe(404);
});
