/**
 * Real answers checked against the schema the served OpenAPI document gives them (ajv, with
 * the document's components for $ref), for operations that answered 200 with no schema:
 * introspection (console session, personal token, workspace API key), the workspace avatar
 * (an image), the operator's account list and status change, and an Auth App's discovery
 * document; and the request media types of the routes that take a form post as well as JSON.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import Ajv from "ajv";
import addFormats from "ajv-formats";
import { ownerWithKey, signup, startTestApp, type TestApp } from "../helpers/app";
import { createAuthApp, signupEndUser } from "../helpers/auth";
import type { BinaryProcess } from "../helpers/binary";
import { ON_BINARY } from "../helpers/target";

const P = "/platform/v1";
/** A PNG signature plus the start of an IHDR chunk (the avatar type is sniffed from content). */
const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 73, 72, 68, 82]);

let app: TestApp;
let operator: string;
const docs = new Map<string, any>();

beforeAll(async () => {
  app = await startTestApp();
  for (const d of ["/platform/openapi.json", "/auth/openapi.json"]) docs.set(d, (await app.call("GET", d)).body);
  // The setup link of the first start: printed by the binary; in-process, the bootstrap `bunker serve` runs mints it.
  const setupUrl = ON_BINARY ? /http\S*#setup=[A-Za-z0-9_-]+/.exec((app as unknown as { process: BinaryProcess }).process.output())![0] : (await app.platform.setup.bootstrap())!.setupUrl!;
  const r = await app.call("POST", `${P}/auth/setup`, { body: { email: "ops@example.com", username: "ops", password: "operator-password-1", setup_token: setupUrl.split("#setup=")[1] } });
  expect(r.status).toBe(200);
  operator = r.body.access_token;
});
afterAll(() => app.stop());

const ajv = addFormats(new Ajv({ strict: false, allErrors: true })).addFormat("binary", true);

const docOf = (template: string) => docs.get(template.startsWith("/auth/") ? "/auth/openapi.json" : "/platform/openapi.json");
const operation = (method: string, template: string) => {
  const op = docOf(template).paths[template]?.[method.toLowerCase()];
  if (!op) throw new Error(`${method} ${template} is not in the served document`);
  return op;
};

/** The documented schema of one answer; fails when the document gives none. */
function responseSchema(method: string, template: string, status: number, mediaType: string) {
  const content = operation(method, template).responses[status]?.content ?? {};
  const schema = content[mediaType]?.schema;
  expect({ operation: `${method} ${template} ${status}`, mediaType, documented: schema !== undefined && Object.keys(schema).length > 0 }).toEqual({
    operation: `${method} ${template} ${status}`,
    mediaType,
    documented: true,
  });
  return schema;
}

/** Validates a JSON answer against its documented schema ($refs resolve against the document's components). */
function expectConforms(method: string, template: string, res: { status: number; body: unknown; headers: Headers }) {
  const mediaType = res.headers.get("content-type")!.split(";")[0];
  const schema = responseSchema(method, template, res.status, mediaType);
  const validate = ajv.compile({ ...schema, components: docOf(template).components });
  const ok = validate(res.body);
  expect({ operation: `${method} ${template}`, errors: ok ? null : validate.errors }).toEqual({ operation: `${method} ${template}`, errors: null });
}

describe("answers match their documented schema", () => {
  test("GET /introspect: a console session, a personal token and a workspace API key", async () => {
    const owner = await ownerWithKey(app);
    const pat = await app.call("POST", `${P}/me/tokens`, { token: owner.session, body: { name: "script" } });
    expect(pat.status).toBe(201);
    const seen: string[] = [];
    for (const token of [owner.session, pat.body.token, owner.token]) {
      const r = await app.call("GET", `${P}/introspect`, { token });
      expect(r.status).toBe(200);
      expectConforms("GET", `${P}/introspect`, r);
      seen.push(r.body.principal.type);
    }
    expect(seen).toEqual(["user", "personal_token", "api_key"]);
    // The schema tells the arms apart: an API key's answer is not a session's.
    const validate = ajv.compile({ ...responseSchema("GET", `${P}/introspect`, 200, "application/json"), components: docOf(P).components });
    expect(validate({ is_authenticated: true, principal: { type: "user", id: owner.ws.id }, account: null, workspaces: [] })).toBe(false);
  });

  test("GET /avatars/{workspace_id}: an image of a documented media type, as a binary string", async () => {
    const owner = await ownerWithKey(app);
    const form = new FormData();
    form.append("file", new Blob([PNG], { type: "application/octet-stream" }), "logo.bin");
    const up = await app.call("POST", `${P}/workspaces/${owner.ws.slug}/avatar`, { token: owner.session, body: form });
    expect(up.status).toBe(200);
    const url = new URL(up.body.avatar_url);
    const img = await app.call("GET", url.pathname + url.search);
    expect(img.status).toBe(200);
    const type = img.headers.get("content-type")!;
    expect(type).toBe("image/png");
    expect(responseSchema("GET", `${P}/avatars/{workspace_id}`, 200, type)).toEqual({ type: "string", format: "binary" });
    expect(Object.keys(operation("GET", `${P}/avatars/{workspace_id}`).responses[200].content).sort()).toEqual(["image/jpeg", "image/png", "image/webp"]);
  });

  test("GET /admin/accounts and POST /admin/accounts/{account_id}/{verb} (operator)", async () => {
    const u = await signup(app);
    const list = await app.call("GET", `${P}/admin/accounts?limit=200`, { token: operator });
    expect(list.status).toBe(200);
    expectConforms("GET", `${P}/admin/accounts`, list);
    const account = list.body.data.find((a: { username: string }) => a.username === u.username);
    for (const verb of ["suspend", "reactivate"]) {
      const r = await app.call("POST", `${P}/admin/accounts/${account.id}/${verb}`, { token: operator });
      expect(r.status).toBe(200);
      expectConforms("POST", `${P}/admin/accounts/{account_id}/{verb}`, r);
      expect(r.body.status).toBe(verb === "suspend" ? "suspended" : "active");
    }
  });

  test("GET /auth/{app_slug}/v1/.well-known/openid-configuration", async () => {
    const a = await createAuthApp(app);
    const r = await app.call("GET", a.path("/.well-known/openid-configuration"));
    expect(r.status).toBe(200);
    expectConforms("GET", "/auth/{app_slug}/v1/.well-known/openid-configuration", r);
    expect(r.body.issuer).toBe(a.issuer);
  });
});

describe("routes that take a form post document it beside JSON", () => {
  const FORM = "application/x-www-form-urlencoded";
  const bothTypes = (method: string, template: string) => Object.keys(operation(method, template).requestBody.content).sort();

  test("token introspection (RFC 7662) and the provider callbacks (form_post)", () => {
    for (const [method, template] of [
      ["POST", "/auth/{app_slug}/v1/oauth/introspect"],
      ["POST", "/auth/{app_slug}/v1/auth/oauth/{provider}/callback"],
      ["POST", `${P}/auth/oauth/{provider}/callback`],
    ]) expect({ template, types: bothTypes(method, template) }).toEqual({ template, types: ["application/json", FORM] });
  });

  test("a real form post of the documented fields is answered, and its fields match the documented form schema", async () => {
    const a = await createAuthApp(app);
    const u = await signupEndUser(app, a);
    const form = new URLSearchParams({ token: u.access, token_type_hint: "access_token" });
    const template = "/auth/{app_slug}/v1/oauth/introspect";
    const validate = ajv.compile(operation("POST", template).requestBody.content[FORM].schema);
    expect(validate(Object.fromEntries(form))).toBe(true);
    const r = await app.call("POST", a.path("/oauth/introspect"), { headers: { "content-type": FORM }, body: form.toString() });
    expect(r.status).toBe(200);
    expect(r.body.active).toBe(true);
    expectConforms("POST", template, r);
  });
});
