/**
 * The plain Elysia baseline of the benches (scripts/bench/lib.ts startPlainElysia): the ratios
 * the request-path targets are set against are only honest if it serves the same routes and
 * really reads the bodies it is sent, as a Bunker route does.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startPlainElysia, type ServerProc } from "../../scripts/bench/lib";

describe("plain Elysia baseline", () => {
  let server: ServerProc;
  beforeAll(async () => {
    server = await startPlainElysia([
      { method: "GET", route: "/healthz", body: false },
      { method: "POST", route: "/auth/:app_slug/v1/verify", body: true },
      // The same route twice (two targets of one bench): registered once, reading its body.
      { method: "POST", route: "/auth/:app_slug/v1/oauth/introspect", body: false },
      { method: "POST", route: "/auth/:app_slug/v1/oauth/introspect", body: true },
    ]);
  }, 30_000);
  afterAll(() => server?.stop());

  test("serves the routes it was given, path parameters matched", async () => {
    const r = await fetch(`${server.url}/healthz`);
    expect(r.status).toBe(200);
    expect(await r.json()).toEqual({ ok: true });
    expect((await fetch(`${server.url}/no/such/route`)).status).toBe(404);
  });

  test("parses a JSON body and a form body (a malformed one is refused, so it was read)", async () => {
    const json = { "content-type": "application/json" };
    const ok = await fetch(`${server.url}/auth/any-app/v1/verify`, { method: "POST", headers: json, body: JSON.stringify({ token: "x".repeat(880) }) });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ ok: true });
    const bad = await fetch(`${server.url}/auth/any-app/v1/verify`, { method: "POST", headers: json, body: "{not json" });
    expect(bad.status).toBe(400);
    const form = await fetch(`${server.url}/auth/any-app/v1/oauth/introspect`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "token=abc",
    });
    expect(form.status).toBe(200);
    expect(await form.json()).toEqual({ ok: true });
    // The route was also given without a body: it still reads one.
    const badOnMerged = await fetch(`${server.url}/auth/any-app/v1/oauth/introspect`, { method: "POST", headers: json, body: "{not json" });
    expect(badOnMerged.status).toBe(400);
  });
});
