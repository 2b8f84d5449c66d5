import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Elysia } from "elysia";
import { ApiError } from "../../src/core/errors";
import { httpKernel } from "../../src/core/http";
import { createLogger } from "../../src/core/log";
import { Metrics } from "../../src/core/metrics";
import { signup, startTestApp, type TestApp } from "../helpers/app";
import { inProcess } from "../helpers/target";

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.stop());

describe("error body and request ids", () => {
  test("unknown routes answer 404 in the one error body, with x-request-id", async () => {
    const r = await app.call("GET", "/nope/never");
    expect(r.status).toBe(404);
    expect(r.body).toEqual({ error: { code: "NOT_FOUND", message: "No such route" } });
    expect(r.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
  });

  test("a caller's x-request-id is echoed when well-formed, replaced when not", async () => {
    const ok = await app.call("GET", "/healthz", { headers: { "x-request-id": "abc-123" } });
    expect(ok.headers.get("x-request-id")).toBe("abc-123");
    const bad = await app.call("GET", "/healthz", { headers: { "x-request-id": "<script>" } });
    expect(bad.headers.get("x-request-id")).not.toBe("<script>");
  });

  test("malformed JSON is 400, never 500", async () => {
    const r = await app.call("POST", "/platform/v1/auth/signin", { body: "{not json", headers: { "content-type": "application/json" } });
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe("INVALID_BODY");
    expect(r.headers.get("x-request-id")).toBeTruthy();
  });

  test("schema violations are 400 VALIDATION_ERROR with field details", async () => {
    const r = await app.call("POST", "/platform/v1/auth/signup", { body: { email: 5, password: "12345678" } });
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe("VALIDATION_ERROR");
    const fields = r.body.error.details.map((d: any) => d.field);
    expect(fields).toContain("email");
    expect(fields).toContain("username");
  });

  test("unexpected errors are a 500 without a stack trace; ApiError keeps its status, code and headers", async () => {
    const lines: string[] = [];
    const kernelApp = new Elysia()
      .use(httpKernel(createLogger("error", {}, (l) => lines.push(l)), new Metrics()))
      .get("/boom", () => {
        throw new Error("secret internals");
      })
      .get("/limited", () => {
        throw new ApiError(429, "TOO_MANY_ATTEMPTS", "slow down", undefined, { "retry-after": "7" });
      });
    const boom = await kernelApp.handle(new Request("http://localhost/boom"));
    expect(boom.status).toBe(500);
    const text = await boom.text();
    expect(text).not.toContain("secret internals");
    expect(JSON.parse(text)).toEqual({ error: { code: "INTERNAL_ERROR", message: "Internal server error" } });
    expect(lines.some((l) => l.includes("secret internals"))).toBe(true); // logged for operators
    const limited = await kernelApp.handle(new Request("http://localhost/limited"));
    expect(limited.status).toBe(429);
    expect(limited.headers.get("retry-after")).toBe("7");
    expect(((await limited.json()) as any).error.code).toBe("TOO_MANY_ATTEMPTS");
  });
});

describe("request parsing", () => {
  // Elysia prepares on every route what any hook's source reads: a hook that hands its whole
  // context to a function, or reads `cookie`, makes /healthz copy headers and parse cookies.
  inProcess("reads Elysia's route table")("/healthz parses neither cookies nor headers nor the query", () => {
    const route = app.app.routes.find((r: any) => r.path === "/healthz" && r.method === "GET") as any;
    const handler = route.compile().toString();
    expect(handler).not.toContain("parseCookie");
    expect(handler).not.toContain("c.headers=");
    expect(handler).not.toContain("parseQuery");
  });
});

describe("operational endpoints", () => {
  inProcess("expects the scheduler not started (the binary serves with its scheduler running)")("healthz, readyz (scheduler must be running), metrics", async () => {
    expect((await app.call("GET", "/healthz")).body.status).toBe("ok");
    const notReady = await app.call("GET", "/readyz");
    expect(notReady.status).toBe(503);
    expect(notReady.body.checks).toEqual({ db: true, scheduler: false });
    app.ctx.scheduler.start();
    const ready = await app.call("GET", "/readyz");
    expect(ready.status).toBe(200);
    await signup(app);
    await Bun.sleep(5); // request metrics are recorded after the response is handed back
    const m = await app.handle(new Request("http://localhost/metrics"));
    const text = await m.text();
    expect(m.headers.get("content-type")).toContain("text/plain");
    expect(text).toMatch(/bunker_http_requests_total\{method="POST",route="\/platform\/v1\/auth\/signup",status="200"\} \d+/);
    expect(text).toContain("bunker_http_request_duration_seconds_bucket");
  });

  inProcess("reads Elysia's route table")("docs UI and the per-service OpenAPI document cover every platform route", async () => {
    const docs = await app.handle(new Request("http://localhost/docs"));
    expect(docs.status).toBe(200);
    expect(await docs.text()).toContain("<html");
    const spec = (await app.call("GET", "/platform/openapi.json")).body;
    expect(spec.openapi).toMatch(/^3\./);
    expect(spec.info.version).toBe("v1.0.0");
    const paths = Object.keys(spec.paths);
    expect(paths.length).toBeGreaterThan(10);
    expect(paths.every((p) => p.startsWith("/platform/v1/"))).toBe(true);
    // Every registered platform route is documented.
    const routes = app.app.routes.filter((r: any) => r.path.startsWith("/platform/v1/")).map((r: any) => r.path.replace(/:(\w+)/g, "{$1}"));
    for (const r of routes) expect(paths).toContain(r);
    expect(spec.paths["/platform/v1/auth/signin"].post.requestBody).toBeDefined();
  });

  inProcess("reads Elysia's route table")("every service's OpenAPI document covers every route of that service (dotted paths included)", async () => {
    // info.version as each contract says (v0.1.0 for mail, waitlist, extraction and community).
    const versions: Record<string, string> = { "/platform": "v1.0.0", "/auth": "v1.0.0", "/tack": "v1.0.0", "/social": "v0.1.0", "/mail": "v0.1.0", "/waitlist": "v0.1.0", "/trawl": "v0.1.0" };
    for (const prefix of ["/platform", "/auth", "/tack", "/social", "/mail", "/waitlist", "/trawl"]) {
      const spec = (await app.call("GET", `${prefix}/openapi.json`)).body;
      expect(spec.info.version).toBe(versions[prefix]!);
      const paths = Object.keys(spec.paths);
      // Unlisted routes (older clients' deprecated records) are in /docs/json only.
      const routes = app.app.routes
        .filter((r: any) => r.path.startsWith(`${prefix}/`) && !r.path.endsWith("/openapi.json") && r.hooks?.detail?.unlisted !== true)
        .map((r: any) => r.path.replace(/:(\w+)/g, "{$1}"));
      expect(routes.length).toBeGreaterThan(0);
      for (const r of routes) expect(paths).toContain(r);
    }
    const auth = (await app.call("GET", "/auth/openapi.json")).body;
    expect(auth.paths["/auth/{app_slug}/v1/.well-known/jwks.json"].get).toBeDefined();
  });

  test("/ redirects to the admin page, which is served", async () => {
    const r = await app.handle(new Request("http://localhost/"));
    expect(r.status).toBe(302);
    expect(r.headers.get("location")).toBe("/admin/");
    const page = await app.handle(new Request("http://localhost/admin/"));
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toContain("text/html");
  });
});
