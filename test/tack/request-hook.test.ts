/**
 * The card board's rate limits run as a request hook of the HTTP kernel under /tack/api only:
 * the app's other routes carry no X-RateLimit headers and are not counted, a path that only
 * starts like the board's (/tack/apix) is not under it, and no Elysia hook of the board's
 * taxes the rest of the app (a sync route stays compiled as a sync function). Last, the
 * kernel's prefix hooks themselves (core/http.ts), on a bare kernel.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Elysia } from "elysia";
import { RequestBodies } from "../../src/core/request-body";
import { handledErrorOf, httpKernel, routeOf, type PrefixHook } from "../../src/core/http";
import { createLogger } from "../../src/core/log";
import { Metrics } from "../../src/core/metrics";
import { startTestApp, type TestApp } from "../helpers/app";
import { inProcess } from "../helpers/target";

let app: TestApp;
beforeAll(async () => {
  // A small read budget: every counted request shows in X-RateLimit-Remaining.
  app = await startTestApp({ TACK_RATE_READS: "5" });
});
afterAll(() => app.stop());

const rl = (h: Headers) => [h.get("x-ratelimit-limit"), h.get("x-ratelimit-remaining")];
const NONE = [null, null];

test("only requests under /tack/api are counted and get the headers", async () => {
  // Outside the prefix: the app's own routes, another service's, and look-alike paths.
  for (const path of ["/healthz", "/platform/v1/workspaces", "/tack/apix", "/tack/apix/v1/workspaces", "/tack/ap", "/tack", "/tack/openapi.json"]) {
    const r = await app.call("GET", path);
    expect([path, ...rl(r.headers)]).toEqual([path, ...NONE]);
  }
  // Under it (no credential: counted per client): a route, the prefix itself, the prefix with
  // a query, an unknown route below it. The requests above took nothing from the budget.
  const route = await app.call("GET", "/tack/api/v1/workspaces");
  expect(route.status).toBe(401);
  expect(rl(route.headers)).toEqual(["5", "4"]);
  const bare = await app.call("GET", "/tack/api");
  expect(bare.status).toBe(404);
  expect(rl(bare.headers)).toEqual(["5", "3"]);
  const query = await app.call("GET", "/tack/api?x=1");
  expect(rl(query.headers)).toEqual(["5", "2"]);
  const unknown = await app.call("GET", "/tack/api/v1/nope");
  expect(unknown.status).toBe(404);
  // The card-board error body, details included, on an unknown route too (Elysia's not-found
  // answer never reached the earlier global mapResponse, so it went without them).
  expect(unknown.body.error.details).toEqual([]);
  expect(rl(unknown.headers)).toEqual(["5", "1"]);
  // Another service's 404 keeps its own body: no card-board details added.
  const other = await app.call("GET", "/tack/apix");
  expect(other.status).toBe(404);
  expect(other.body.error.details).toBeUndefined();
});

inProcess("reads the in-process app object's hooks and compiled route handlers")("no hook of the board runs for the rest of the app; /healthz compiles as a sync function", async () => {
  // Elysia's onRequest hooks run for every request of the app, and a global mapResponse for
  // every route mounted after its plugin: neither may be left.
  const elysia = app.app as unknown as { event: { request?: unknown[] }; routes: { path: string; method: string; hooks?: { mapResponse?: unknown[] }; compile(): unknown }[] };
  expect(elysia.event.request ?? []).toEqual([]);
  // (The deprecated {scope}/webhooks routes map their own responses: a hook scoped to them.)
  const mapped = elysia.routes.filter((r) => (r.hooks?.mapResponse ?? []).length > 0 && !r.path.includes("/webhooks")).map((r) => `${r.method} ${r.path}`);
  expect(mapped).toEqual([]);
  // An app of its own: a route the in-process calls above compiled keeps that handler.
  const fresh = await startTestApp();
  const server = fresh.listen(0, "127.0.0.1");
  try {
    // A listening server drops the body reader from GET routes (core/http.ts) and compiles each route at its first request.
    expect((await fetch(`http://127.0.0.1:${server.port}/healthz`)).status).toBe(200);
    const healthz = (fresh.app as unknown as typeof elysia).routes.find((r) => r.path === "/healthz" && r.method === "GET")!;
    expect((healthz.compile() as object).constructor.name).toBe("Function");
  } finally {
    await server.stop(true);
    await fresh.stop();
  }
});

test("the kernel's prefix hooks: nested prefixes in list order, a Response from before() answers, after() sees the route and the error", async () => {
  const seen: string[] = [];
  const hook = (prefix: string, answer?: string): PrefixHook<string> => ({
    prefix,
    before: (request) => {
      seen.push(`before ${prefix}`);
      return request.url.endsWith(answer ?? "\0") ? new Response("answered", { status: 418 }) : prefix;
    },
    after: (request, response, state) => {
      seen.push(`after ${state} ${response.status} ${routeOf(request)} ${(handledErrorOf(request)?.code as string | undefined) ?? "-"}`);
      response.headers.set("x-hooked", `${response.headers.get("x-hooked") ?? ""}${state};`);
      return response;
    },
  });
  const kernelApp = new Elysia()
    .use(httpKernel(createLogger("silent", {}), new Metrics(), new RequestBodies(), undefined, undefined, [hook("/a"), hook("/a/b", "/stop"), hook("/c")]))
    .get("/a/b/:id", () => "ok")
    .get("/ab", () => "no hook");
  const run = async (path: string) => {
    seen.length = 0;
    const r = await kernelApp.handle(new Request(`http://localhost${path}`));
    return { status: r.status, hooked: r.headers.get("x-hooked"), seen: [...seen] };
  };
  expect(await run("/a/b/1")).toEqual({ status: 200, hooked: "/a/b;/a;", seen: ["before /a", "before /a/b", "after /a/b 200 /a/b/:id -", "after /a 200 /a/b/:id -"] });
  // No route: the hooks still see the answer, and the error the kernel answered.
  expect(await run("/a/x")).toEqual({ status: 404, hooked: "/a;", seen: ["before /a", "after /a 404 undefined NOT_FOUND"] });
  // The inner hook answers: the app does not run, the outer hook's after() still does.
  expect(await run("/a/b/stop")).toEqual({ status: 418, hooked: "/a;", seen: ["before /a", "before /a/b", "after /a 418 undefined -"] });
  // Path boundaries: /ab is not under /a, /a?x=1 is.
  expect(await run("/ab")).toEqual({ status: 200, hooked: null, seen: [] });
  expect((await run("/a?x=1")).seen).toEqual(["before /a", "after /a 404 undefined NOT_FOUND"]);
});
