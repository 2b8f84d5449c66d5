/**
 * Ids in the paths of the App-scoped admin operations: a malformed one is 400
 * VALIDATION_ERROR naming the path parameter, a well-formed unknown one 404, and neither
 * check comes before the credential's (401 without one). The table is the served document's.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startTestApp, type TestApp } from "../helpers/app";
import { createAuthApp, type TestAuthApp } from "../helpers/auth";

let app: TestApp;
let a: TestAuthApp;
let ops: { method: string; path: string; ids: string[]; body: Record<string, unknown> | undefined }[];

/** Path parameters that are names, not ids (a permission is addressed by its name). */
const NAMES = new Set(["app_slug", "name"]);

beforeAll(async () => {
  app = await startTestApp();
  a = await createAuthApp(app);
  const doc = (await app.call("GET", "/auth/openapi.json")).body;
  ops = [];
  for (const [path, item] of Object.entries<any>(doc.paths)) {
    if (!path.startsWith("/auth/{app_slug}/v1/")) continue;
    const ids = [...path.matchAll(/\{([a-z_]+)\}/g)].map((m) => m[1]).filter((p) => !NAMES.has(p));
    if (!ids.length) continue;
    for (const [method, op] of Object.entries<any>(item)) {
      if (!(op.security ?? []).some((s: object) => "consoleCookie" in s)) continue;
      const schema = op.requestBody?.content?.["application/json"]?.schema;
      // Required fields only, null where allowed: the ids are what is under test.
      const body = schema ? Object.fromEntries((schema.required ?? []).map((f: string) => [f, schema.properties[f].nullable ? null : "x"])) : undefined;
      ops.push({ method: method.toUpperCase(), path, ids, body });
    }
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
    const unknown = await app.call(op.method, fill(op.path, {}), { token: a.key, body: op.body });
    expect({ name, status: unknown.status, code: unknown.body?.error?.code }).toEqual({ name, status: 404, code: "NOT_FOUND" });
  }
});

test("a tenant is also addressed by its tnt_ display id; a malformed one is 400 like a malformed UUID", async () => {
  const created = await app.call("POST", a.path("/tenants"), { token: a.key, body: { display_name: "Acme" } });
  expect(created.status).toBe(201);
  expect((await app.call("GET", a.path(`/tenants/${created.body.display_id}`), { token: a.key })).body.id).toBe(created.body.id);
  expect((await app.call("GET", a.path("/tenants/tnt_000000000000"), { token: a.key })).status).toBe(404);
  const bad = await app.call("GET", a.path("/tenants/tnt_XYZ"), { token: a.key });
  expect(bad.status).toBe(400);
  expect(bad.body.error.details).toEqual([{ field: "tenant_id", reason: "must be a tenant UUID or tnt_ display id" }]);
});
