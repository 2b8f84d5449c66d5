/**
 * The served API descriptions: every document passes a real OpenAPI validator (offline: no
 * remote $ref is ever fetched), every operation declares its credentials, its real success
 * status and its errors with the shared error body, versions follow the contracts, the
 * documents are built once, and /docs works with no internet (Swagger UI from the binary).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import SwaggerParser from "@apidevtools/swagger-parser";
import { t } from "elysia";
import { SECURITY_SCHEMES } from "../../src/access/openapi";
import { apiDocs } from "../../src/core/docs";
import { toOpenApi30Schema, type RouteInfo } from "../../src/core/openapi";
import { createWorkspace, signup, startTestApp, type TestApp } from "../helpers/app";

/** The contracts' "Versioning" sections; the card board's names none (v1.0.0, see app.ts). */
const SERVICE_VERSIONS: Record<string, string> = {
  "/platform": "v1.0.0",
  "/auth": "v1.0.0",
  "/mail": "v0.1.0",
  "/waitlist": "v0.1.0",
  "/trawl": "v0.1.0",
  "/tack": "v1.0.0",
  "/social": "v0.1.0",
};
const METHODS = ["get", "put", "post", "delete", "patch"];

let app: TestApp;
const docs = new Map<string, any>();

beforeAll(async () => {
  app = await startTestApp();
  for (const url of ["/docs/json", ...Object.keys(SERVICE_VERSIONS).map((p) => `${p}/openapi.json`)]) {
    const r = await app.call("GET", url);
    expect(r.status).toBe(200);
    docs.set(url, r.body);
  }
});
afterAll(() => app.stop());

const operations = (doc: any) =>
  Object.entries(doc.paths).flatMap(([path, ops]: [string, any]) => METHODS.filter((m) => ops[m]).map((method) => ({ path, method, op: ops[method] })));

/** Validates like a client would, but never resolves anything outside the document. */
async function validate(doc: unknown) {
  try {
    await SwaggerParser.validate(structuredClone(doc) as any, { resolve: { external: false, http: false, file: false } } as any);
    return [];
  } catch (e: any) {
    return (e.details as unknown[] | undefined) ?? [e.message];
  }
}

describe("every served document", () => {
  test("passes @apidevtools/swagger-parser with zero errors", async () => {
    for (const [url, doc] of docs) {
      expect({ url, errors: await validate(doc) }).toEqual({ url, errors: [] });
      expect(doc.openapi).toBe("3.0.0");
    }
  });

  test("the validator is a real one: a JSON Schema 2020 construct in a 3.0 document fails", async () => {
    const broken = structuredClone(docs.get("/platform/openapi.json"));
    broken.components.schemas.Broken = { type: "null" };
    expect((await validate(broken)).length).toBeGreaterThan(0);
    const noDescription = structuredClone(docs.get("/platform/openapi.json"));
    delete noDescription.paths["/platform/v1/auth/signin"].post.responses["200"].description;
    expect((await validate(noDescription)).length).toBeGreaterThan(0);
  });

  test("refers only to itself: no remote $ref", () => {
    for (const doc of docs.values()) {
      const refs = [...JSON.stringify(doc).matchAll(/"\$ref":"([^"]*)"/g)].map((m) => m[1]);
      expect(refs.length).toBeGreaterThan(0);
      for (const ref of refs) expect(ref).toStartWith("#/components/");
    }
  });

  test("info.version per the contracts, one document per service with only its paths", () => {
    expect(docs.get("/docs/json").info.version).toBe("0.1.0");
    for (const [prefix, version] of Object.entries(SERVICE_VERSIONS)) {
      const doc = docs.get(`${prefix}/openapi.json`);
      expect({ prefix, version: doc.info.version }).toEqual({ prefix, version });
      expect(doc.servers).toEqual([{ url: "http://localhost:8080" }]);
      for (const p of Object.keys(doc.paths)) expect(p).toStartWith(`${prefix}/`);
    }
    // Together the service documents describe every operation of the whole one but the
    // instance's own (/healthz, /readyz, /metrics), which belong to no service.
    const instance = operations(docs.get("/docs/json")).filter(({ op }) => op.tags?.includes("Operations"));
    expect(instance.map(({ method, path }) => `${method} ${path}`).sort()).toEqual(["get /healthz", "get /metrics", "get /readyz"]);
    // The rest is in exactly one service document, except the deprecated legacy webhook records
    // of the products whose contract never listed them (unlisted: /docs/json only).
    const inServices = new Set(Object.keys(SERVICE_VERSIONS).flatMap((p) => operations(docs.get(`${p}/openapi.json`)).map(({ method, path }) => `${method} ${path}`)));
    const split = Object.keys(SERVICE_VERSIONS).reduce((n, p) => n + operations(docs.get(`${p}/openapi.json`)).length, 0);
    expect(split).toBe(inServices.size);
    const elsewhere = operations(docs.get("/docs/json")).filter(({ method, path, op }) => !inServices.has(`${method} ${path}`) && !op.tags?.includes("Operations"));
    expect(elsewhere.filter(({ op }) => op.deprecated !== true)).toEqual([]);
    expect(new Set(elsewhere.map(({ path }) => path.split("/")[1]))).toEqual(new Set(["mail", "waitlist", "auth"]));
  });
});

describe("operations", () => {
  const all = () => operations(docs.get("/docs/json"));

  test("every operation made a deliberate security choice, naming declared schemes only", () => {
    const doc = docs.get("/docs/json");
    const undecided = all().filter(({ op }) => !Array.isArray(op.security)).map(({ method, path }) => `${method} ${path}`);
    expect(undecided).toEqual([]);
    for (const { op } of all()) for (const req of op.security) for (const name of Object.keys(req)) expect(doc.components.securitySchemes[name]).toBeDefined();
    for (const [name, scheme] of Object.entries(doc.components.securitySchemes)) expect(scheme).toEqual((SECURITY_SCHEMES as any)[name]);
  });

  test("public routes need no credential; guarded ones name theirs", () => {
    const paths = docs.get("/docs/json").paths;
    const security = (method: string, path: string) => paths[path][method].security.map((r: object) => Object.keys(r).join("+"));
    for (const [m, p] of [
      ["post", "/platform/v1/auth/signup"],
      ["post", "/platform/v1/auth/signin"],
      ["get", "/platform/v1/auth/oauth/{provider}/start"],
      ["get", "/auth/{app_slug}/v1/.well-known/jwks.json"],
      ["get", "/auth/{app_slug}/v1/.well-known/openid-configuration"],
      ["post", "/auth/{app_slug}/v1/auth/signin"],
      ["post", "/auth/{app_slug}/v1/oauth/token"],
      ["get", "/social/v1/webhook-event-types"],
    ]) expect({ m, p, s: security(m, p) }).toEqual({ m, p, s: [] });
    expect(security("get", "/platform/v1/workspaces")).toEqual(["consoleToken", "apiKey", "consoleCookie"]);
    // Humans only: a workspace API key is refused (requireHuman / requireSession).
    expect(security("post", "/platform/v1/workspaces")).toEqual(["consoleToken", "consoleCookie"]);
    expect(security("post", "/platform/v1/workspaces/{workspace_slug}/api-keys")).toEqual(["consoleToken", "consoleCookie"]);
    expect(security("get", "/auth/{app_slug}/v1/me")).toEqual(["appUserToken"]);
    expect(security("get", "/auth/{app_slug}/v1/tenants")).toEqual(["consoleToken", "apiKey", "consoleCookie", "m2mToken"]);
    expect(security("post", "/auth/{app_slug}/v1/auth/signup")).toEqual(["publishableKey", "apiKey"]);
  });

  test("every response has a description; every error answers the shared ErrorBody", () => {
    const doc = docs.get("/docs/json");
    expect(doc.components.schemas.ErrorBody.properties.error.required).toEqual(["code", "message"]);
    for (const { path, method, op } of all()) {
      for (const [status, res] of Object.entries(op.responses) as [string, any][]) {
        expect(typeof res.description === "string" && res.description.length > 0).toBe(true);
        if (status !== "default" && Number(status) < 400) continue;
        const schema = res.content?.["application/json"]?.schema;
        // The token endpoint answers OAuth's {error, error_description} (RFC 6749), on purpose.
        if (path.endsWith("/oauth/token") && !schema.$ref) expect(schema.properties.error.type).toBe("string");
        // Not ready is a 503 with the same checks body as ready: what a probe reads.
        else if (path === "/readyz" && status === "503") expect(Object.keys(schema.properties)).toEqual(["status", "checks"]);
        else expect({ path, method, status, schema }).toEqual({ path, method, status, schema: { $ref: "#/components/schemas/ErrorBody" } });
      }
      expect(op.responses.default).toBeDefined();
      if (op.security.some((r: object) => Object.keys(r).length)) expect(Object.keys(op.responses)).toContain("401");
      if (op.parameters?.length || op.requestBody) expect(Object.keys(op.responses)).toContain("400");
    }
  });

  test("success statuses are the real ones: 201, 204 without a body, 302/303 with Location", () => {
    const paths = docs.get("/docs/json").paths;
    const successes = (m: string, p: string) => Object.keys(paths[p][m].responses).filter((s) => /^[23]/.test(s));
    expect(successes("post", "/platform/v1/workspaces")).toEqual(["201"]);
    expect(successes("post", "/auth/{app_slug}/v1/tenants")).toEqual(["201"]);
    for (const [m, p] of [
      ["delete", "/platform/v1/workspaces/{workspace_slug}"],
      ["post", "/platform/v1/auth/logout"],
      ["post", "/platform/v1/auth/password/request-reset"],
      ["delete", "/auth/{app_slug}/v1/tenants/{tenant_id}"],
      ["post", "/auth/{app_slug}/v1/me/password"],
      ["delete", "/mail/v1/workspaces/{workspace_id}/webhooks/endpoints/{id}"],
      ["delete", "/tack/api/v1/workspaces/{workspace_id}/webhooks/{webhook_id}"],
    ]) {
      expect({ m, p, s: successes(m, p) }).toEqual({ m, p, s: ["204"] });
      expect(paths[p][m].responses["204"].content).toBeUndefined();
    }
    expect(successes("get", "/platform/v1/auth/oauth/{provider}/start")).toEqual(["302"]);
    expect(successes("get", "/auth/{app_slug}/v1/auth/oauth/{provider}/authorize")).toEqual(["302"]);
    expect(successes("get", "/auth/{app_slug}/v1/auth/oauth/{provider}/callback")).toEqual(["303"]);
    expect(paths["/auth/{app_slug}/v1/auth/oauth/{provider}/authorize"].get.responses["302"].headers.Location).toBeDefined();
    // No operation claims two kinds of success for one answer.
    for (const { path, method, op } of all()) expect({ path, method, both: "200" in op.responses && "204" in op.responses }).toEqual({ path, method, both: false });
  });

  test("what the routes answer is what the document says", async () => {
    const paths = docs.get("/docs/json").paths;
    const user = await signup(app);
    const ws = await createWorkspace(app, user.token);
    const created = await app.call("POST", "/platform/v1/workspaces", { token: user.token, body: { slug: `doc-${Date.now()}`, display_name: "Doc" } });
    const removed = await app.call("DELETE", `/platform/v1/workspaces/${created.body.slug}`, { token: user.token });
    const anonymous = await app.call("GET", `/platform/v1/workspaces/${ws.slug}`);
    const badBody = await app.call("POST", "/platform/v1/workspaces", { token: user.token, body: { slug: 12 } });
    for (const [r, m, p] of [
      [created, "post", "/platform/v1/workspaces"],
      [removed, "delete", "/platform/v1/workspaces/{workspace_slug}"],
      [anonymous, "get", "/platform/v1/workspaces/{workspace_slug}"],
      [badBody, "post", "/platform/v1/workspaces"],
    ] as const) expect({ p, documented: String(r.status) in paths[p][m].responses }).toEqual({ p, documented: true });
    expect(removed.body).toBeNull();
    expect(anonymous.body.error.code).toBeString();
  });
});

describe("toOpenApi30Schema", () => {
  const convert = (s: unknown) => toOpenApi30Schema(JSON.parse(JSON.stringify(s)));

  test("null unions become nullable, literals and unions of literals enums", () => {
    expect(convert(t.Nullable(t.String({ maxLength: 3 })))).toEqual({ type: "string", maxLength: 3, nullable: true });
    expect(convert(t.Literal("Bearer"))).toEqual({ type: "string", enum: ["Bearer"] });
    expect(convert(t.Union([t.Literal("a"), t.Literal("b")]))).toEqual({ type: "string", enum: ["a", "b"] });
    expect(convert(t.Nullable(t.Union([t.Literal(1), t.Literal(2)])))).toEqual({ type: "number", enum: [1, 2], nullable: true });
    expect(convert({ type: ["string", "null"] })).toEqual({ type: "string", nullable: true });
  });

  test("records become additionalProperties; 2020-only keywords are dropped or mapped", () => {
    expect(convert(t.Record(t.String(), t.Number()))).toEqual({ type: "object", additionalProperties: { type: "number" } });
    expect(convert({ $id: "X", $schema: "https://json-schema.org/draft/2020-12/schema", type: "number", exclusiveMinimum: 0, examples: [5] })).toEqual({ type: "number", minimum: 0, exclusiveMinimum: true, example: 5 });
    expect(convert(t.Tuple([t.String(), t.String()]))).toMatchObject({ type: "array", items: { anyOf: [{ type: "string" }, { type: "string" }] } });
    expect(convert(t.Object({}))).toEqual({ type: "object", properties: {} });
  });
});

describe("/docs works offline", () => {
  test("the page references no external URL, and every asset it loads is served with its type", async () => {
    const page = await app.handle(new Request("http://localhost/docs"));
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
    const html = await page.text();
    expect(html).not.toMatch(/https?:\/\//);
    const refs = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]);
    const expected: Record<string, string> = {
      "/docs/swagger-ui.css": "text/css",
      "/docs/swagger-ui-bundle.js": "text/javascript",
      "/docs/swagger-ui-standalone-preset.js": "text/javascript",
      "/docs/swagger-initializer.js": "text/javascript",
      "/docs/favicon.png": "image/png",
      // the bar above the UI: the guides and the console
      "/docs/guides.css": "text/css",
      "/docs/guides": "text/html",
      "/docs/guides/start": "text/html",
      "/admin/": "text/html",
    };
    expect(refs.toSorted()).toEqual(Object.keys(expected).toSorted());
    for (const ref of refs) {
      const r = await app.handle(new Request(`http://localhost${ref}`));
      expect({ ref, status: r.status, type: r.headers.get("content-type")?.split(";")[0] }).toEqual({ ref, status: 200, type: expected[ref] });
      expect((await r.arrayBuffer()).byteLength).toBeGreaterThan(0);
    }
  });

  test("the UI lists every document, each served as JSON; it calls no online validator", async () => {
    const init = await (await app.handle(new Request("http://localhost/docs/swagger-initializer.js"))).text();
    expect(init).toContain("validatorUrl: null");
    expect(init).not.toMatch(/https?:\/\//);
    const urls = JSON.parse(/urls: (\[.*\]),/.exec(init)![1]).map((u: { url: string }) => u.url);
    expect(urls.toSorted()).toEqual([...docs.keys()].toSorted());
  });

  test("an unknown asset is a 404 with the error body", async () => {
    for (const name of ["nope.js", "constructor", "__proto__"]) {
      const r = await app.call("GET", `/docs/${name}`);
      expect(r.status).toBe(404);
      expect(r.body.error.code).toBe("NOT_FOUND");
    }
  });
});

test("documents are built once, on the first request, not per request", async () => {
  let reads = 0;
  const routes: RouteInfo[] = [{ method: "GET", path: "/x/v1/things/:id", hooks: { detail: { summary: "A thing", security: [] } } }];
  const docsApp = apiDocs(() => (reads++, routes), { info: { title: "T", version: "1" }, services: [{ prefix: "/x", title: "X", version: "v9" }], securitySchemes: {}, serverUrl: "http://h" });
  expect(reads).toBe(0);
  for (const url of ["/docs/json", "/x/openapi.json", "/docs/json", "/x/openapi.json"]) {
    const r = await docsApp.handle(new Request(`http://localhost${url}`));
    expect(r.status).toBe(200);
  }
  expect(reads).toBe(1);
  const x = (await (await docsApp.handle(new Request("http://localhost/x/openapi.json"))).json()) as any;
  expect(x.info).toEqual({ title: "X", version: "v9" });
  expect(Object.keys(x.paths)).toEqual(["/x/v1/things/{id}"]);
  expect(await validate(x)).toEqual([]);
});
