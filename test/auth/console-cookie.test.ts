/**
 * The App-scoped admin operations (/auth/{app_slug}/v1/...) declare the console's session
 * cookie (security scheme consoleCookie) and must accept it like the same token sent as a
 * bearer, with the bearer winning when both come, as on platform routes. The table is the
 * served OpenAPI document's own list, so an operation added later is covered too.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestApp, type TestApp } from "../helpers/app";
import { appAdminOperations, createAuthApp, type TestAuthApp } from "../helpers/auth";

let app: TestApp;
let a: TestAuthApp;
let ops: { method: string; path: string; body: Record<string, unknown> | undefined }[];

beforeAll(async () => {
  app = await startTestApp();
  a = await createAuthApp(app);
  ops = (await appAdminOperations(app)).map(({ method, path, schema }) => ({ method, path, body: schema ? requiredOnly(schema) : undefined }));
});
afterAll(() => app.stop());

let seq = 0;
/** A body with only the schema's required fields, fresh strings each time (so a create never collides with the previous call's). */
function requiredOnly(schema: any): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const name of schema.required ?? []) {
    const p = schema.properties[name];
    body[name] = p.type === "string" ? `cookie-${++seq}-${Date.now().toString(36)}` : p.type === "array" ? [] : p.type === "boolean" ? false : p.type === "integer" ? (p.minimum ?? 1) : {};
  }
  return body;
}

/** Path parameters: this App's slug; ids are well-formed but unknown (a 404 after authentication). */
const concrete = (path: string) => path.replace("{app_slug}", a.slug).replace(/\{[a-z_]+\}/g, () => crypto.randomUUID());

const send = (op: (typeof ops)[number], creds: { token?: string; cookie?: string }) =>
  app.call(op.method, concrete(op.path), {
    token: creds.token,
    headers: creds.cookie ? { cookie: `theme=dark; auth_token=${creds.cookie}` } : {},
    body: op.body === undefined ? undefined : { ...op.body, ...fresh(op) },
  });
/** Required strings renewed per call: a second create with the same name would be a 409 where the first was a 201. */
const fresh = (op: (typeof ops)[number]) => Object.fromEntries(Object.entries(op.body ?? {}).filter(([, v]) => typeof v === "string").map(([k]) => [k, `cookie-${++seq}`]));

const cls = (status: number) => Math.floor(status / 100);

describe("App-scoped admin operations and the console cookie", () => {
  test("the served document lists them (tenants, roles, invites, admin users, audit, ...)", () => {
    const paths = new Set(ops.map((o) => o.path));
    for (const p of ["/auth/{app_slug}/v1/tenants", "/auth/{app_slug}/v1/roles", "/auth/{app_slug}/v1/invites", "/auth/{app_slug}/v1/admin/users", "/auth/{app_slug}/v1/audit-log"]) expect(paths.has(p)).toBe(true);
    expect(ops.length).toBeGreaterThanOrEqual(32);
  });

  test("each answers the cookie alone like the same token as a bearer, and 401 without either", async () => {
    const seen: string[] = [];
    for (const op of ops) {
      const name = `${op.method} ${op.path}`;
      const byCookie = await send(op, { cookie: a.session });
      const byBearer = await send(op, { token: a.session });
      const none = await send(op, {});
      seen.push(`${name} cookie=${byCookie.status} bearer=${byBearer.status} none=${none.status}`);
      expect({ name, cookie: byCookie.status === 401 ? 401 : cls(byCookie.status) }).toEqual({ name, cookie: cls(byBearer.status) });
      expect({ name, bearer: byBearer.status === 401 }).toEqual({ name, bearer: false });
      expect({ name, none: none.status }).toEqual({ name, none: 401 });
    }
    // Writes reached the store through the cookie: a tenant created with the cookie alone is there.
    expect(seen.some((s) => s.startsWith("POST /auth/{app_slug}/v1/tenants cookie=201"))).toBe(true);
  });

  test("a bearer wins over the cookie: a bad bearer is 401 even with a good cookie, a good bearer works beside a bad cookie", async () => {
    const tenants = a.path("/tenants");
    expect((await app.call("GET", tenants, { token: "not-a-token", headers: { cookie: `auth_token=${a.session}` } })).status).toBe(401);
    expect((await app.call("GET", tenants, { token: a.session, headers: { cookie: "auth_token=garbage" } })).status).toBe(200);
    // An invalid cookie alone is no credential.
    expect((await app.call("GET", tenants, { headers: { cookie: "auth_token=garbage" } })).status).toBe(401);
  });

  test("a cookie-authenticated write in a form or text/plain body (what a cross-site page can post without a preflight) is refused and changes nothing", async () => {
    const tenants = a.path("/tenants");
    const before = (await app.call("GET", tenants, { token: a.session })).body.data.length;
    for (const [type, body] of [
      ["application/x-www-form-urlencoded", "display_name=csrf"],
      ["text/plain", '{"display_name":"csrf"}'],
      ["multipart/form-data; boundary=x", '--x\r\nContent-Disposition: form-data; name="display_name"\r\n\r\ncsrf\r\n--x--\r\n'],
    ]) {
      const r = await app.call("POST", tenants, { headers: { cookie: `auth_token=${a.session}`, "content-type": type }, body });
      expect({ type, status: r.status }).toEqual({ type, status: 415 });
    }
    expect((await app.call("GET", tenants, { token: a.session })).body.data.length).toBe(before);
  });
});
