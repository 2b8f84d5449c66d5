/**
 * The card board's contract on errors raised before a handler runs: X-RateLimit-* on every
 * /tack/api response (a missing or bad credential, an unreadable, non-JSON or too large body,
 * a bad field, an unknown id or route), and JSON objects taken only as objects, kept whole.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestApp, type TestApp } from "../helpers/app";
import { B, card, newBoard, type Board } from "./board-helpers";

let app: TestApp;
let b: Board;
beforeAll(async () => {
  app = await startTestApp();
  b = await newBoard(app);
});
afterAll(() => app.stop());

const limitOf = (h: Headers) => ({ limit: h.get("x-ratelimit-limit"), remaining: h.get("x-ratelimit-remaining"), reset: h.get("x-ratelimit-reset") });

describe("X-RateLimit-* on every response", () => {
  test("401 without a credential and with a bad one, 400, 404, 409, 413 and 415 all carry them", async () => {
    const cases: [string, number, () => ReturnType<TestApp["call"]>][] = [
      ["no credential", 401, () => app.call("POST", B, { body: { name: "nope" } })],
      ["bad credential", 401, () => app.call("POST", B, { token: "svc_live_not_a_key", body: { name: "nope" } })],
      ["unparseable body", 400, () => app.call("POST", B, { token: b.token, body: "{not json" })],
      ["bad field", 400, () => app.call("POST", B, { token: b.token, body: { name: 5 } })],
      ["unknown workspace", 404, () => app.call("GET", `${B}/no-such-board`, { token: b.token })],
      ["unknown route", 404, () => app.call("GET", "/tack/api/v1/no-such-thing", { token: b.token })],
      ["duplicate name", 409, () => app.call("POST", B, { token: b.token, body: { name: b.ws } })],
      ["too large", 413, () => app.call("POST", B, { token: b.token, body: { name: "big", metadata: { x: "x".repeat(2 * 1024 * 1024) } } })],
      ["not JSON", 415, () => app.call("POST", B, { token: b.token, body: "name=x", headers: { "content-type": "application/x-www-form-urlencoded" } })],
    ];
    for (const [what, status, send] of cases) {
      const r = await send();
      expect({ what, status: r.status }).toEqual({ what, status });
      const h = limitOf(r.headers);
      expect({ what, ...h }).toEqual({ what, limit: expect.stringMatching(/^\d+$/), remaining: expect.stringMatching(/^\d+$/), reset: expect.stringMatching(/^\d+$/) });
      expect(r.body.error.code).toEqual(expect.any(String));
    }
  });

  test("a request refused before its body is read still counts", async () => {
    const first = await app.call("POST", B, { token: b.token, body: "{not json" });
    const second = await app.call("POST", B, { token: b.token, body: "name=x", headers: { "content-type": "text/plain" } });
    expect(first.status).toBe(400);
    expect(second.status).toBe(415);
    expect(Number(second.headers.get("x-ratelimit-remaining"))).toBeLessThan(Number(first.headers.get("x-ratelimit-remaining")));
  });
});

describe("JSON objects are objects", () => {
  test("workspace metadata that is not an object is 400 naming metadata; an object comes back whole", async () => {
    for (const metadata of ["not an object", [1, 2], null, 5, true]) {
      const r = await app.call("POST", B, { token: b.token, body: { name: "meta-bad", metadata } });
      expect(r.status).toBe(400);
      expect(r.body.error.code).toBe("VALIDATION_ERROR");
      expect(r.body.error.details.map((d: { field: string }) => d.field)).toEqual(["metadata"]);
    }
    expect((await app.call("GET", `${B}/meta-bad`, { token: b.token })).status).toBe(404);
    const metadata = { plan: "pro", nested: { seats: 3, tags: ["a"] } };
    const ok = await app.call("POST", B, { token: b.token, body: { name: "meta-ok", metadata } });
    expect(ok.status).toBe(201);
    expect(ok.body.metadata).toEqual(metadata);
    const patched = await app.call("PATCH", `${B}/meta-ok`, { token: b.token, body: { metadata: "x" } });
    expect(patched.status).toBe(400);
    expect(patched.body.error.details.map((d: { field: string }) => d.field)).toEqual(["metadata"]);
  });

  test("card metadata: the same on create and update", async () => {
    const bad = await app.call("POST", `${b.p}/cards`, { token: b.token, body: { title: "x", metadata: "abc" } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.map((d: { field: string }) => d.field)).toEqual(["metadata"]);
    const c = await card(app, b, { title: "meta", metadata: { a: { b: 1 } } });
    expect(c.metadata).toEqual({ a: { b: 1 } });
    const patched = await app.call("PATCH", `${b.p}/cards/${c.id}`, { token: b.token, body: { metadata: ["a"] } });
    expect(patched.status).toBe(400);
    expect((await app.call("GET", `${b.p}/cards/${c.id}`, { token: b.token })).body.metadata).toEqual({ a: { b: 1 } });
  });
});
