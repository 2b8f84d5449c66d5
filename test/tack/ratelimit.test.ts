/**
 * Per-API-key rate limits of the card board: 200 writes, 600 reads, 30 batch operations per
 * minute, X-RateLimit-* on every response (errors too), 429 RATE_LIMITED with Retry-After in
 * the card-board error body; the window slides on the injected clock.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestApp, type TestApp } from "../helpers/app";
import { B, card, newBoard, type Board } from "./board-helpers";
import { inProcess } from "../helpers/target";

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.stop());

/** A fresh key of the board's platform workspace: its own counters. */
async function freshKey(b: Board) {
  const r = await app.call("POST", `/platform/v1/workspaces/${b.platformWs.slug}/api-keys`, { token: b.session, body: { name: "rl", policy: [{ effect: "allow", actions: ["tack.*"], resources: ["*"] }] } });
  expect(r.status).toBe(201);
  return r.body.key as string;
}

const rl = (h: Headers) => [h.get("x-ratelimit-limit"), h.get("x-ratelimit-remaining"), h.get("x-ratelimit-reset")];

describe("writes", () => {
  inProcess("moves the injected clock to slide the rate-limit window")("the 200th write in a minute is fine, the 201st is 429; the window slides", async () => {
    const b = await newBoard(app);
    const token = await freshKey(b);
    const first = await app.call("POST", `${b.p}/cards`, { token, body: { title: "0" } });
    expect(rl(first.headers)).toEqual(["200", "199", "60"]);
    app.clock.advance(10_000);
    for (let i = 1; i < 199; i++) expect((await app.call("POST", `${b.p}/cards`, { token, body: { title: String(i) } })).status).toBe(201);
    const last = await app.call("POST", `${b.p}/cards`, { token, body: { title: "199" } });
    expect(last.status).toBe(201);
    // Reset: seconds until the oldest counted write (10 s ago) leaves the window.
    expect(rl(last.headers)).toEqual(["200", "0", "50"]);
    const over = await app.call("POST", `${b.p}/cards`, { token, body: { title: "200" } });
    expect(over.status).toBe(429);
    expect(over.body).toEqual({ error: { code: "RATE_LIMITED", message: expect.stringContaining("200 writes per minute"), details: [] } });
    expect(rl(over.headers)).toEqual(["200", "0", "50"]);
    expect(over.headers.get("retry-after")).toBe("50");
    // Any write counts: a PATCH or a bad body is refused the same way, reads are not.
    expect((await app.call("PATCH", `${B}/${b.ws}`, { token, body: { display_name: "x" } })).status).toBe(429);
    expect((await app.call("GET", `${b.p}/cards?limit=1`, { token })).status).toBe(200);
    // Another key of the same workspace has its own budget.
    expect((await app.call("POST", `${b.p}/cards`, { token: b.token, body: { title: "other key" } })).status).toBe(201);

    app.clock.advance(50_000);
    const again = await app.call("POST", `${b.p}/cards`, { token, body: { title: "later" } });
    expect(again.status).toBe(201);
    expect(rl(again.headers)[1]).toBe("0");
  }, 30_000);
});

describe("reads and batch operations", () => {
  inProcess("expects Retry-After 60 on the frozen injected clock (600 real reads take over a second)")("600 reads, then 429; headers on 404s and validation errors too", async () => {
    const b = await newBoard(app);
    const token = await freshKey(b);
    const missing = await app.call("GET", `${B}/nope`, { token });
    expect(missing.status).toBe(404);
    expect(rl(missing.headers)).toEqual(["600", "599", "60"]);
    const bad = await app.call("GET", `${b.p}/cards?limit=500`, { token });
    expect(bad.status).toBe(400);
    expect(rl(bad.headers)).toEqual(["600", "598", "60"]);
    for (let i = 2; i < 600; i++) expect((await app.call("GET", b.p, { token })).status).toBe(200);
    const over = await app.call("GET", b.p, { token });
    expect(over.status).toBe(429);
    expect(over.body.error.code).toBe("RATE_LIMITED");
    expect(over.headers.get("retry-after")).toBe("60");
    // Writes have their own budget.
    expect((await app.call("POST", `${b.p}/cards`, { token, body: { title: "w" } })).status).toBe(201);
  }, 30_000);

  test("30 batch operations per minute, counted apart from writes", async () => {
    const b = await newBoard(app);
    const token = await freshKey(b);
    const c = await card(app, b, { title: "x" });
    const move = () => app.call("POST", `${b.p}/cards/batch-move`, { token, body: { moves: [{ card_id: c.id, position: 0 }] } });
    const first = await move();
    expect(first.status).toBe(200);
    expect(rl(first.headers)).toEqual(["30", "29", "60"]);
    for (let i = 1; i < 30; i++) expect((await move()).status).toBe(200);
    const over = await move();
    expect(over.status).toBe(429);
    expect(over.body.error.message).toContain("30 batch operations per minute");
    const write = await app.call("POST", `${b.p}/cards/${c.id}/move`, { token, body: { position: 0 } });
    expect(write.status).toBe(200);
    expect(rl(write.headers)).toEqual(["200", "199", "60"]);
  }, 30_000);

  test("the webhook record routes count and answer the headers too", async () => {
    const b = await newBoard(app);
    const token = await freshKey(b);
    const list = await app.call("GET", `${B}/${b.ws}/webhooks`, { token });
    expect(list.status).toBe(200);
    expect(rl(list.headers)).toEqual(["600", "599", "60"]);
    const bad = await app.call("POST", `${B}/${b.ws}/webhooks`, { token, body: { url: "not a url" } });
    expect(bad.status).toBe(400);
    expect(rl(bad.headers)).toEqual(["200", "199", "60"]);
  });

  test("without a credential: 401 in the card-board body, counted per client", async () => {
    const r = await app.call("GET", B);
    expect(r.status).toBe(401);
    expect(r.body.error.details).toEqual([]);
    expect(r.headers.get("x-ratelimit-limit")).toBe("600");
  });
});

describe("configuration", () => {
  test("TACK_RATE_* raise the limits (0 switches one off)", async () => {
    const custom = await startTestApp({ TACK_RATE_WRITES: "3", TACK_RATE_READS: "0" });
    try {
      const b = await newBoard(custom);
      // The board took 2 writes (workspace, project): one more fits.
      expect((await custom.call("POST", `${b.p}/cards`, { token: b.token, body: { title: "x" } })).status).toBe(201);
      expect((await custom.call("POST", `${b.p}/cards`, { token: b.token, body: { title: "y" } })).status).toBe(429);
      const read = await custom.call("GET", b.p, { token: b.token });
      expect(read.status).toBe(200);
      expect(read.headers.get("x-ratelimit-limit")).toBeNull();
    } finally {
      await custom.stop();
    }
  });
});
