/**
 * The deprecated webhook surface ({scope}/webhooks, {scope}/webhooks/{id}) end to end: a
 * real app, real HTTP receivers on loopback, signatures checked with the independent
 * `standardwebhooks` package and node:crypto (legacy header).
 */
import { afterAll, afterEach, beforeAll, describe, expect, setSystemTime, test } from "bun:test";
import { createHmac } from "node:crypto";
import { Webhook } from "standardwebhooks";
import { HOUR } from "../../src/core/clock";
import { prefixedId } from "../../src/core/ids";
import { generateLegacySecret } from "../../src/kernel/webhooks/signing";
import * as endpointsStore from "../../src/kernel/webhooks/store/endpoints";
import { createWorkspace, ownerWithKey, signup, startTestApp, type TestApp } from "../helpers/app";
import type { ReceivedRequest, Receiver } from "../helpers/http-receiver";
import { startWebhookTestApp, stopWebhookTestApp } from "../helpers/webhook-app";
import { addMember } from "../helpers/members";
import { inProcess } from "../helpers/target";

let app: TestApp;
let receiver: Receiver;
beforeAll(async () => {
  ({ app, receiver } = await startWebhookTestApp());
});
afterAll(() => stopWebhookTestApp({ app, receiver }));
afterEach(() => {
  receiver.setHandler(() => new Response("ok"));
});

const SUNSET = "Fri, 15 Jan 2027 00:00:00 GMT";
const base = (wsId: string, product = "trawl") => `/${product}/v1/workspaces/${wsId}/webhooks`;

const owner = () => ownerWithKey(app);

async function createLegacy(token: string, wsId: string, body: Record<string, unknown> = {}, product = "trawl") {
  const res = await app.call("POST", base(wsId, product), { token, body: { url: `${receiver.url}/legacy`, ...body } });
  if (res.status !== 201) throw new Error(`legacy create failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as { id: string; signing_secret: string } & Record<string, any>;
}

function expectDeprecated(res: { headers: Headers }) {
  expect(res.headers.get("deprecation")).toBe("true");
  expect(res.headers.get("sunset")).toBe(SUNSET);
}

/** Verifies the Standard Webhooks headers with the independent library, at the app's clock. */
function verifyStandard(secret: string, req: ReceivedRequest) {
  setSystemTime(app.clock.now());
  try {
    return new Webhook(secret).verify(req.body, { "webhook-id": req.headers["webhook-id"], "webhook-timestamp": req.headers["webhook-timestamp"], "webhook-signature": req.headers["webhook-signature"] });
  } finally {
    setSystemTime();
  }
}
const asWhsec = (legacySecret: string) => "whsec_" + Buffer.from(legacySecret, "utf8").toString("base64");

/** Recomputes the legacy `t=<unix>,v1=<hex>` header: HMAC-SHA256 of "<t>.<body>" keyed by the secret string. */
function legacyHeaderMatches(secret: string, req: ReceivedRequest, header = "x-trawl-signature") {
  const m = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(req.headers[header] ?? "");
  if (!m) return false;
  const expected = createHmac("sha256", secret).update(`${m[1]}.${req.body}`).digest("hex");
  return m[2] === expected && m[1] === req.headers["webhook-timestamp"];
}

const requestsFor = (eventId: string) => receiver.requests.filter((q) => q.headers["webhook-id"] === eventId);

/** Waits (real time) until fn returns a truthy value. */
async function until<T>(fn: () => Promise<T> | T, timeoutMs = 5000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error("condition not met in time");
    await Bun.sleep(10);
  }
}

async function deliverNow() {
  await app.webhooks.dispatchPending();
  await app.webhooks.deliverDue();
}

describe("deprecation headers", () => {
  test("every legacy route answers with Deprecation and Sunset, errors included; the shared routes do not", async () => {
    const { token, ws } = await owner();
    const created = await app.call("POST", base(ws.id), { token, body: { url: `${receiver.url}/legacy` } });
    expect(created.status).toBe(201);
    expectDeprecated(created);
    const id = created.body.id;
    const calls: [string, string, unknown?][] = [
      ["GET", base(ws.id)],
      ["GET", `${base(ws.id)}/${id}`],
      ["PATCH", `${base(ws.id)}/${id}`, { active: true }],
      ["GET", `${base(ws.id)}/${id}/deliveries`],
      ["POST", `${base(ws.id)}/${id}/rotate-secret`],
      ["POST", `${base(ws.id)}/${id}/test`],
    ];
    for (const [method, path, body] of calls) {
      const r = await app.call(method, path, { token, body });
      expect(r.status).toBeLessThan(300);
      expectDeprecated(r);
    }
    // Errors: not found, validation (schema and domain), unauthenticated.
    for (const r of [
      await app.call("GET", `${base(ws.id)}/whk_nope`, { token }),
      await app.call("GET", `${base(ws.id)}?limit=101`, { token }),
      await app.call("POST", base(ws.id), { token, body: { url: 42 } }),
      await app.call("POST", base(ws.id), { token, body: { url: "ftp://example.com/x" } }),
      await app.call("GET", base(ws.id)),
    ]) {
      expect(r.status).toBeGreaterThanOrEqual(400);
      expect(r.body.error.code).toBeTruthy();
      expectDeprecated(r);
    }
    const del = await app.call("DELETE", `${base(ws.id)}/${id}`, { token });
    expect(del.status).toBe(204);
    expectDeprecated(del);

    const shared = await app.call("GET", `${base(ws.id)}/endpoints`, { token });
    expect(shared.status).toBe(200);
    expect(shared.headers.get("deprecation")).toBeNull();
  });
});

describe("create, read, list", () => {
  inProcess("created_at equals the frozen injected clock; reads the stored endpoint row (app.ctx.db)")("201 with exactly the spec's legacy record and signing_secret once; reads and the list omit it", async () => {
    const { token, ws } = await owner();
    const r = await app.call("POST", base(ws.id), { token, body: { url: `${receiver.url}/legacy` } });
    expect(r.status).toBe(201);
    const hook = r.body;
    expect(hook.id).toMatch(/^whk_[0-9a-f]{32}$/);
    expect(hook.signing_secret).toMatch(/^[0-9a-f]{32}$/);
    expect(hook).toEqual({
      id: hook.id,
      workspace_id: ws.id,
      url: `${receiver.url}/legacy`,
      active: true,
      failure_count: 0,
      last_status_code: null,
      last_attempt_at: null,
      auto_disabled_at: null,
      first_failure_at: null,
      created_at: app.clock.iso(),
      signing_secret: hook.signing_secret,
    });

    const one = await app.call("GET", `${base(ws.id)}/${hook.id}`, { token });
    expect(one.status).toBe(200);
    const { signing_secret: _s, ...masked } = hook;
    expect(one.body).toEqual(masked);
    const list = await app.call("GET", base(ws.id), { token });
    expect(list.status).toBe(200);
    expect(list.body).toEqual({ data: [masked], pagination: { next_cursor: null, has_more: false } });
    expect(JSON.stringify([one.body, list.body])).not.toContain(hook.signing_secret);

    // Stored encrypted as a legacy row.
    const row = (await endpointsStore.endpointInScope(app.ctx.db, "trawl", ws.id, hook.id))!;
    expect(row.legacy).toBe(1);
    expect(row.secret_enc).not.toContain(hook.signing_secret);
    expect(app.ctx.secretBox.decrypt(row.secret_enc)).toBe(hook.signing_secret);
  });

  test("defaults and validation: active true; active false creates it paused; bad input 400", async () => {
    const { token, ws } = await owner();
    const a = await createLegacy(token, ws.id);
    expect(a.active).toBe(true);
    const b = await createLegacy(token, ws.id, { active: false });
    expect(b.active).toBe(false);
    expect((await app.call("GET", `${base(ws.id)}/${b.id}`, { token })).body.active).toBe(false);

    expect((await app.call("POST", base(ws.id), { token, body: {} })).status).toBe(400);
    expect((await app.call("POST", base(ws.id), { token, body: { url: "not a url" } })).status).toBe(400);
    expect((await app.call("POST", base(ws.id), { token, body: { url: `${receiver.url}/x`, active: "yes" } })).status).toBe(400);
  });

  test("https only in production, private targets refused (same checks as the shared create)", async () => {
    const prod = await startTestApp({ BUNKER_ENV: "production", PUBLIC_URL: "https://bunker.example.com" });
    try {
      const user = await signup(prod);
      const ws = await createWorkspace(prod, user.token);
      const http = await prod.call("POST", base(ws.id), { token: user.token, body: { url: "http://example.com/hook" } });
      expect(http.status).toBe(400);
      expect(http.body.error.details[0].field).toBe("url");
      expect(http.headers.get("deprecation")).toBe("true");
      expect((await prod.call("POST", base(ws.id), { token: user.token, body: { url: "https://127.0.0.1/hook" } })).status).toBe(400);
      expect((await prod.call("POST", base(ws.id), { token: user.token, body: { url: "https://localhost/hook" } })).status).toBe(400);
    } finally {
      await prod.stop();
    }
  });

  inProcess("reads the stored idempotent response (app.ctx.db)")("Idempotency-Key: a replay answers the same webhook with signing_secret null; the secret is not in the idempotency record", async () => {
    const { token, ws } = await owner();
    const body = { url: `${receiver.url}/idem` };
    const first = await app.call("POST", base(ws.id), { token, body, headers: { "idempotency-key": "legacy-1" } });
    expect(first.status).toBe(201);
    expect(first.body.signing_secret).toMatch(/^[0-9a-f]{32}$/);
    const again = await app.call("POST", base(ws.id), { token, body, headers: { "idempotency-key": "legacy-1" } });
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotent-replay")).toBe("true");
    expectDeprecated(again);
    expect(again.body).toEqual({ ...first.body, signing_secret: null });
    expect((await app.call("GET", base(ws.id), { token })).body.data).toHaveLength(1);
    const stored = JSON.stringify(await app.ctx.db.all("SELECT * FROM core_idempotency_keys"));
    expect(stored).not.toContain(first.body.signing_secret);
    // Same key, different request.
    expect((await app.call("POST", base(ws.id), { token, body: { url: `${receiver.url}/other` }, headers: { "idempotency-key": "legacy-1" } })).status).toBe(409);
  });

  inProcess("moves the injected clock between creations and inserts 25 endpoints through the store (app.ctx.db)")("list: newest first, legacy rows only, cursor pages; limit default 20, 100 ok, 101 and 0 400, malformed cursor 400", async () => {
    const { token, ws } = await owner();
    // A shared endpoint of the same scope is not part of the legacy list.
    const shared = await app.call("POST", `${base(ws.id)}/endpoints`, { token, body: { url: `${receiver.url}/shared` } });
    expect(shared.status).toBe(201);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      ids.push((await createLegacy(token, ws.id)).id);
      app.clock.advance(1000);
    }
    const newest = [...ids].reverse();
    const all = await app.call("GET", base(ws.id), { token });
    expect(all.body.data.map((h: any) => h.id)).toEqual(newest);
    expect(all.body.pagination).toEqual({ next_cursor: null, has_more: false });

    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const qs: string = `?limit=2${cursor ? `&cursor=${cursor}` : ""}`;
      const p = await app.call("GET", `${base(ws.id)}${qs}`, { token });
      expect(p.status).toBe(200);
      seen.push(...p.body.data.map((h: any) => h.id));
      cursor = p.body.pagination.next_cursor;
      expect(p.body.pagination.has_more).toBe(cursor !== null);
      pages++;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen).toEqual(newest);

    expect((await app.call("GET", `${base(ws.id)}?limit=100`, { token })).status).toBe(200);
    for (const q of ["limit=101", "limit=0", "limit=abc", "cursor=!!!", `cursor=${Buffer.from('{"x":1}').toString("base64url")}`]) {
      const r = await app.call("GET", `${base(ws.id)}?${q}`, { token });
      expect(r.status).toBe(400);
    }

    // More rows than the create cap allows (inserted directly) to see the default of 20.
    const big = await owner();
    for (let i = 0; i < 25; i++) {
      const at = new Date(Date.parse("2026-01-01T00:00:00Z") + i * 1000).toISOString();
      await endpointsStore.insertEndpoint(app.ctx.db, {
        id: prefixedId("whk"),
        product: "trawl",
        scope_id: big.ws.id,
        url: `${receiver.url}/bulk${i}`,
        description: "",
        event_types: "[]",
        secret_enc: app.ctx.secretBox.encrypt(generateLegacySecret()),
        legacy: 1,
        created_at: at,
        updated_at: at,
      });
    }
    const p1 = await app.call("GET", base(big.ws.id), { token: big.token });
    expect(p1.body.data).toHaveLength(20);
    expect(p1.body.data[0].url).toBe(`${receiver.url}/bulk24`);
    expect(p1.body.pagination.has_more).toBe(true);
    const p2 = await app.call("GET", `${base(big.ws.id)}?cursor=${p1.body.pagination.next_cursor}`, { token: big.token });
    expect(p2.body.data.map((h: any) => h.url)).toEqual([4, 3, 2, 1, 0].map((i) => `${receiver.url}/bulk${i}`));
    expect(p2.body.pagination).toEqual({ next_cursor: null, has_more: false });
    expect((await app.call("GET", `${base(big.ws.id)}?limit=100`, { token: big.token })).body.data).toHaveLength(25);
  });

  test("the cap of 10 endpoints per scope counts both surfaces", async () => {
    const { token, ws } = await owner();
    for (let i = 0; i < 6; i++) expect((await app.call("POST", `${base(ws.id)}/endpoints`, { token, body: { url: `${receiver.url}/s${i}` } })).status).toBe(201);
    for (let i = 0; i < 4; i++) await createLegacy(token, ws.id);
    const legacy11 = await app.call("POST", base(ws.id), { token, body: { url: `${receiver.url}/x` } });
    expect(legacy11.status).toBe(409);
    expect(legacy11.body.error.code).toBe("ENDPOINT_LIMIT_REACHED");
    expectDeprecated(legacy11);
    const shared11 = await app.call("POST", `${base(ws.id)}/endpoints`, { token, body: { url: `${receiver.url}/x` } });
    expect(shared11.status).toBe(409);
    // Another product of the same workspace is another scope.
    expect((await app.call("POST", base(ws.id, "mail"), { token, body: { url: `${receiver.url}/x` } })).status).toBe(201);
  });
});

describe("routing beside the shared surface", () => {
  test("{scope}/webhooks/{id} does not shadow /endpoints, /events, /event-types; the other surface's ids are no legacy ids (400)", async () => {
    const { token, ws } = await owner();
    const legacy = await createLegacy(token, ws.id);
    const shared = await app.call("POST", `${base(ws.id)}/endpoints`, { token, body: { url: `${receiver.url}/shared` } });
    expect(shared.status).toBe(201);

    const eps = await app.call("GET", `${base(ws.id)}/endpoints`, { token });
    expect(eps.status).toBe(200);
    expect(eps.body.pagination).toBeDefined();
    // The shared list shows every endpoint of the scope, legacy ones included.
    expect(eps.body.data.map((e: any) => e.id).sort()).toEqual([legacy.id, shared.body.id].sort());
    const events = await app.call("GET", `${base(ws.id)}/events`, { token });
    expect(events.status).toBe(200);
    expect(Array.isArray(events.body.data)).toBe(true);
    const types = await app.call("GET", `${base(ws.id)}/event-types`, { token });
    expect(types.status).toBe(200);
    expect(types.body.data.map((e: any) => e.type)).toContain("job.succeeded");
    for (const r of [eps, events, types]) expect(r.headers.get("deprecation")).toBeNull();

    // The legacy surface does not serve shared endpoints (an ep_ id is not a legacy id, named
    // before any lookup); the shared one serves legacy rows.
    for (const method of ["GET", "DELETE"]) {
      const r = await app.call(method, `${base(ws.id)}/${shared.body.id}`, { token });
      expect([r.status, r.body.error.code, r.body.error.details.map((d: any) => d.field)]).toEqual([400, "VALIDATION_ERROR", ["id"]]);
    }
    const viaShared = await app.call("GET", `${base(ws.id)}/endpoints/${legacy.id}`, { token });
    expect(viaShared.status).toBe(200);
    expect(viaShared.body.id).toBe(legacy.id);
    expect((await app.call("GET", `${base(ws.id)}/${legacy.id}`, { token })).status).toBe(200);
    // Other products of the same workspace and other workspaces: 404.
    expect((await app.call("GET", `${base(ws.id, "mail")}/${legacy.id}`, { token })).status).toBe(404);
    const other = await owner();
    for (const [method, path] of [
      ["GET", `${base(other.ws.id)}/${legacy.id}`],
      ["PATCH", `${base(other.ws.id)}/${legacy.id}`],
      ["DELETE", `${base(other.ws.id)}/${legacy.id}`],
      ["GET", `${base(other.ws.id)}/${legacy.id}/deliveries`],
      ["POST", `${base(other.ws.id)}/${legacy.id}/rotate-secret`],
      ["POST", `${base(other.ws.id)}/${legacy.id}/test`],
    ]) {
      const r = await app.call(method, path, { token: other.token, body: method === "PATCH" ? { active: false } : undefined });
      expect(r.status).toBe(404);
    }
    // Someone else's key on this workspace: 404 as well.
    expect((await app.call("GET", `${base(ws.id)}/${legacy.id}`, { token: other.token })).status).toBe(404);
    expect((await app.call("GET", base(other.ws.id), { token: other.token })).body.data).toEqual([]);
    expect((await app.call("GET", `${base(ws.id)}/${legacy.id}`, { token })).body.active).toBe(true);
  });
});

describe("delivery", () => {
  inProcess("emits through the in-process webhook engine (app.webhooks.emit) and pumps it by hand")("a real delivery carries the Standard Webhooks headers (whsec_ + base64 of the secret) and X-Trawl-Signature", async () => {
    const { token, ws } = await owner();
    const hook = await createLegacy(token, ws.id);
    const { id } = await app.webhooks.emit(app.ctx.db, { product: "trawl", scopeId: ws.id }, "job.succeeded", { id: "job_1", status: "succeeded" });
    await deliverNow();
    const got = requestsFor(id);
    expect(got).toHaveLength(1);
    const req = got[0];
    expect(req.path).toBe("/legacy");
    expect(verifyStandard(asWhsec(hook.signing_secret), req)).toMatchObject({ id, type: "job.succeeded", data: { id: "job_1", status: "succeeded" } });
    expect(legacyHeaderMatches(hook.signing_secret, req)).toBe(true);
    expect(legacyHeaderMatches(generateLegacySecret(), req)).toBe(false);
    expect(() => verifyStandard(asWhsec(generateLegacySecret()), req)).toThrow();

    const after = (await app.call("GET", `${base(ws.id)}/${hook.id}`, { token })).body;
    expect(after).toMatchObject({ last_status_code: 200, last_attempt_at: app.clock.iso(), failure_count: 0 });
    const dl = await app.call("GET", `${base(ws.id)}/${hook.id}/deliveries`, { token });
    expect(dl.status).toBe(200);
    expect(dl.body.data).toEqual([
      { id: expect.stringMatching(/^att_/), event_id: id, event_type: "job.succeeded", attempt_number: 1, trigger: "scheduled", status_code: 200, latency_ms: expect.any(Number), error_class: null, response_body: "ok", created_at: app.clock.iso() },
    ]);

    // A shared endpoint of the same scope gets only the open scheme.
    const shared = (await app.call("POST", `${base(ws.id)}/endpoints`, { token, body: { url: `${receiver.url}/shared` } })).body;
    const second = await app.webhooks.emit(app.ctx.db, { product: "trawl", scopeId: ws.id }, "job.failed", { id: "job_2" });
    await deliverNow();
    const toShared = requestsFor(second.id).find((q) => q.path === "/shared")!;
    expect(verifyStandard(shared.signing_secret, toShared)).toBeTruthy();
    expect(toShared.headers["x-trawl-signature"]).toBeUndefined();
    expect(legacyHeaderMatches(hook.signing_secret, requestsFor(second.id).find((q) => q.path === "/legacy")!)).toBe(true);
  });

  inProcess("emits through the in-process webhook engine (app.webhooks.emit) and pumps it by hand")("a legacy webhook receives every type (the record has no events field); a filter set on the shared route applies", async () => {
    const { token, ws } = await owner();
    const hook = await createLegacy(token, ws.id);
    const first: { id: string }[] = [];
    for (const type of ["job.succeeded", "job.failed"]) first.push(await app.webhooks.emit(app.ctx.db, { product: "trawl", scopeId: ws.id }, type, { id: type }));
    await deliverNow();
    for (const ev of first) expect(requestsFor(ev.id)).toHaveLength(1);

    const filtered = await app.call("PATCH", `${base(ws.id)}/endpoints/${hook.id}`, { token, body: { event_types: ["job.failed"] } });
    expect(filtered.body.event_types).toEqual(["job.failed"]);
    const skipped = await app.webhooks.emit(app.ctx.db, { product: "trawl", scopeId: ws.id }, "job.succeeded", { id: "j1" });
    const sent = await app.webhooks.emit(app.ctx.db, { product: "trawl", scopeId: ws.id }, "job.failed", { id: "j2" });
    await deliverNow();
    expect(requestsFor(skipped.id)).toHaveLength(0);
    expect(requestsFor(sent.id)).toHaveLength(1);
    expect(Object.keys((await app.call("GET", `${base(ws.id)}/${hook.id}`, { token })).body)).not.toContain("events");
  });

  inProcess("emits through the in-process webhook engine (app.webhooks.emit) and pumps it by hand")("deliveries: newest first; limit default 50, 200 ok, 201 400", async () => {
    const { token, ws } = await owner();
    const hook = await createLegacy(token, ws.id);
    const ids: string[] = [];
    for (let i = 0; i < 55; i++) {
      ids.push((await app.webhooks.emit(app.ctx.db, { product: "trawl", scopeId: ws.id }, "job.queued", { id: `j${i}` })).id);
      app.clock.advance(10);
      await app.webhooks.dispatchPending();
      await app.webhooks.deliverDue();
    }
    const def = await app.call("GET", `${base(ws.id)}/${hook.id}/deliveries`, { token });
    expect(def.status).toBe(200);
    expect(def.body.data).toHaveLength(50);
    expect(def.body.data.map((a: any) => a.event_id)).toEqual([...ids].reverse().slice(0, 50));
    const max = await app.call("GET", `${base(ws.id)}/${hook.id}/deliveries?limit=200`, { token });
    expect(max.status).toBe(200);
    expect(max.body.data).toHaveLength(55);
    expect((await app.call("GET", `${base(ws.id)}/${hook.id}/deliveries?limit=3`, { token })).body.data).toHaveLength(3);
    for (const q of ["limit=201", "limit=0", "limit=x"]) {
      const r = await app.call("GET", `${base(ws.id)}/${hook.id}/deliveries?${q}`, { token });
      expect(r.status).toBe(400);
      expectDeprecated(r);
    }
  });
});

describe("state", () => {
  inProcess("emits through the in-process webhook engine (app.webhooks.emit) and pumps it by hand and moves the injected clock by 25 h")("auto-disabled after 24 h of failures; PATCH active true clears failure_count and auto_disabled_at", async () => {
    const { token, ws } = await owner();
    const hook = await createLegacy(token, ws.id);
    receiver.setHandler(() => new Response("down", { status: 500 }));
    const scope = { product: "trawl" as const, scopeId: ws.id };
    const ev = await app.webhooks.emit(app.ctx.db, scope, "job.failed", { id: "j1" });
    await deliverNow();
    const failedAt = app.clock.iso();
    let h = (await app.call("GET", `${base(ws.id)}/${hook.id}`, { token })).body;
    expect(h).toMatchObject({ active: true, failure_count: 1, last_status_code: 500, first_failure_at: failedAt, auto_disabled_at: null });
    // The retry a day later still fails: 24 h of continuous failures.
    app.clock.advance(25 * HOUR);
    await app.webhooks.deliverDue();
    h = (await app.call("GET", `${base(ws.id)}/${hook.id}`, { token })).body;
    expect(h).toMatchObject({ active: false, failure_count: 2, first_failure_at: failedAt, auto_disabled_at: app.clock.iso() });
    // While auto-disabled nothing new is delivered.
    const during = await app.webhooks.emit(app.ctx.db, scope, "job.failed", { id: "j2" });
    await deliverNow();
    expect(requestsFor(during.id)).toHaveLength(0);

    receiver.setHandler(() => new Response("ok"));
    const patched = await app.call("PATCH", `${base(ws.id)}/${hook.id}`, { token, body: { active: true } });
    expect(patched.status).toBe(200);
    expectDeprecated(patched);
    expect(patched.body).toMatchObject({ id: hook.id, active: true, failure_count: 0, first_failure_at: null, auto_disabled_at: null });
    expect(patched.body.signing_secret).toBeUndefined();
    const next = await app.webhooks.emit(app.ctx.db, scope, "job.failed", { id: "j3" });
    await deliverNow();
    expect(requestsFor(next.id)).toHaveLength(1);
    expect(requestsFor(ev.id).length).toBe(2);
  });

  inProcess("emits through the in-process webhook engine (app.webhooks.emit) and pumps it by hand and moves the injected clock past the retry")("PATCH active false pauses and drops queued retries; url changes; DELETE 204 then 404", async () => {
    const { token, ws } = await owner();
    const hook = await createLegacy(token, ws.id);
    receiver.setHandler(() => new Response("down", { status: 503 }));
    const ev = await app.webhooks.emit(app.ctx.db, { product: "trawl", scopeId: ws.id }, "job.failed", { id: "j1" });
    await deliverNow();
    const paused = await app.call("PATCH", `${base(ws.id)}/${hook.id}`, { token, body: { active: false } });
    expect(paused.status).toBe(200);
    expect(paused.body.active).toBe(false);
    app.clock.advance(2 * HOUR);
    await app.webhooks.deliverDue();
    expect(requestsFor(ev.id)).toHaveLength(1);
    const log = await app.call("GET", `${base(ws.id)}/events/${ev.id}`, { token });
    expect(log.body.deliveries[0]).toMatchObject({ endpoint_id: hook.id, status: "not_sent" });

    const moved = await app.call("PATCH", `${base(ws.id)}/${hook.id}`, { token, body: { url: `${receiver.url}/moved`, active: true } });
    expect(moved.status).toBe(200);
    expect(moved.body).toMatchObject({ url: `${receiver.url}/moved`, active: true });
    expect((await app.call("PATCH", `${base(ws.id)}/${hook.id}`, { token, body: { url: "gopher://x" } })).status).toBe(400);
    expect((await app.call("PATCH", `${base(ws.id)}/${hook.id}`, { token, body: { active: "no" } })).status).toBe(400);

    const del = await app.call("DELETE", `${base(ws.id)}/${hook.id}`, { token });
    expect(del.status).toBe(204);
    expect((await app.call("GET", `${base(ws.id)}/${hook.id}`, { token })).status).toBe(404);
    expect((await app.call("DELETE", `${base(ws.id)}/${hook.id}`, { token })).status).toBe(404);
    expect((await app.call("GET", base(ws.id), { token })).body.data).toEqual([]);
  });
});

describe("rotate-secret and test", () => {
  inProcess("emits through the in-process webhook engine (app.webhooks.emit) and pumps it by hand")("rotate answers 201 with a new secret once; it signs subsequent deliveries at once, the old one no longer", async () => {
    const { token, ws } = await owner();
    const hook = await createLegacy(token, ws.id);
    const rotated = await app.call("POST", `${base(ws.id)}/${hook.id}/rotate-secret`, { token });
    expect(rotated.status).toBe(201);
    expectDeprecated(rotated);
    const secret = rotated.body.signing_secret as string;
    expect(secret).toMatch(/^[0-9a-f]{32}$/);
    expect(secret).not.toBe(hook.signing_secret);
    expect(rotated.body).toMatchObject({ id: hook.id, workspace_id: ws.id, active: true });
    expect(JSON.stringify((await app.call("GET", `${base(ws.id)}/${hook.id}`, { token })).body)).not.toContain(secret);

    const { id } = await app.webhooks.emit(app.ctx.db, { product: "trawl", scopeId: ws.id }, "job.succeeded", { id: "j1" });
    await deliverNow();
    const req = requestsFor(id)[0];
    expect(req.headers["webhook-signature"].split(" ")).toHaveLength(1);
    expect(verifyStandard(asWhsec(secret), req)).toBeTruthy();
    expect(legacyHeaderMatches(secret, req)).toBe(true);
    expect(() => verifyStandard(asWhsec(hook.signing_secret), req)).toThrow();
    expect(legacyHeaderMatches(hook.signing_secret, req)).toBe(false);
  });

  inProcess("moves the injected clock and pumps the in-process webhook engine to show the test send is never retried")("test answers 202 at once; the signed test event arrives, shows in deliveries (trigger test) and is never retried", async () => {
    const { token, ws } = await owner();
    const hook = await createLegacy(token, ws.id);
    // The receiver holds its answer until the test releases it: the 202 cannot wait for it.
    const { promise: released, resolve: release } = Promise.withResolvers<void>();
    receiver.setHandler(async () => {
      await released;
      return new Response("nope", { status: 500 });
    });
    const n = receiver.requests.length;
    const r = await app.call("POST", `${base(ws.id)}/${hook.id}/test`, { token, body: { event_type: "job.failed" } });
    expect(r.status).toBe(202);
    expectDeprecated(r);
    expect(r.body).toEqual({ accepted: true, event_id: expect.stringMatching(/^evt_/) });
    const eventId = r.body.event_id;
    await receiver.waitForRequests(n + 1);
    release();
    const req = requestsFor(eventId)[0];
    expect(verifyStandard(asWhsec(hook.signing_secret), req)).toMatchObject({ id: eventId, type: "job.failed", test: true, data: { test: true } });
    expect(legacyHeaderMatches(hook.signing_secret, req)).toBe(true);

    const attempts = await until(async () => {
      const d = await app.call("GET", `${base(ws.id)}/${hook.id}/deliveries`, { token });
      return d.body.data.length ? d.body.data : null;
    });
    expect(attempts).toEqual([
      { id: expect.stringMatching(/^att_/), event_id: eventId, event_type: "job.failed", attempt_number: 1, trigger: "test", status_code: 500, latency_ms: expect.any(Number), error_class: "http_status", response_body: "nope", created_at: expect.any(String) },
    ]);
    await until(async () => (await app.call("GET", `${base(ws.id)}/events/${eventId}`, { token })).body.deliveries[0]?.status === "failed");
    const ev = await app.call("GET", `${base(ws.id)}/events/${eventId}`, { token });
    expect(ev.body).toMatchObject({ is_test: true, deliveries: [{ endpoint_id: hook.id, status: "failed", attempts: 1, next_attempt_at: null }] });

    // Never retried, and the webhook's failure streak is untouched.
    for (let i = 0; i < 3; i++) {
      app.clock.advance(7 * HOUR);
      await deliverNow();
    }
    expect(requestsFor(eventId)).toHaveLength(1);
    expect((await app.call("GET", `${base(ws.id)}/${hook.id}`, { token })).body).toMatchObject({ active: true, failure_count: 0 });

    // Default type: the first of the catalogue; unknown types 400.
    receiver.setHandler(() => new Response("ok"));
    const def = await app.call("POST", `${base(ws.id)}/${hook.id}/test`, { token });
    expect(def.status).toBe(202);
    await until(() => requestsFor(def.body.event_id).length === 1);
    const types = (await app.call("GET", `${base(ws.id)}/event-types`, { token })).body.data.map((e: any) => e.type);
    expect(JSON.parse(requestsFor(def.body.event_id)[0].body).type).toBe(types[0]);
    const bad = await app.call("POST", `${base(ws.id)}/${hook.id}/test`, { token, body: { event_type: "entry.created" } });
    expect(bad.status).toBe(400);
    expectDeprecated(bad);
    await until(async () => (await app.call("GET", `${base(ws.id)}/${hook.id}/deliveries`, { token })).body.data.length === 2);
  });
});

describe("authorization and OpenAPI", () => {
  inProcess("reads the queued invitation mail (app.ctx.mailer) to add a member")("a plain member reads but cannot write; a read-only key reads but cannot write", async () => {
    const { token, session, ws } = await owner();
    const hook = await createLegacy(token, ws.id);
    const member = await addMember(app, session, ws.slug);
    expect((await app.call("GET", base(ws.id), { token: member.token })).status).toBe(200);
    expect((await app.call("POST", base(ws.id), { token: member.token, body: { url: `${receiver.url}/x` } })).status).toBe(403);
    expect((await app.call("PATCH", `${base(ws.id)}/${hook.id}`, { token: member.token, body: { active: false } })).status).toBe(403);
    const minted = await app.call("POST", `/platform/v1/workspaces/${ws.slug}/api-keys`, { token: session, body: { name: "reader", policy: [{ effect: "allow", actions: ["trawl.webhooks.read"], resources: ["*"] }] } });
    const key = minted.body.key as string;
    expect((await app.call("GET", base(ws.id), { token: key })).status).toBe(200);
    expect((await app.call("GET", `${base(ws.id)}/${hook.id}/deliveries`, { token: key })).status).toBe(200);
    for (const [method, path] of [
      ["POST", base(ws.id)],
      ["PATCH", `${base(ws.id)}/${hook.id}`],
      ["DELETE", `${base(ws.id)}/${hook.id}`],
      ["POST", `${base(ws.id)}/${hook.id}/rotate-secret`],
      ["POST", `${base(ws.id)}/${hook.id}/test`],
    ]) {
      const r = await app.call(method, path, { token: key, body: method === "DELETE" ? undefined : method === "POST" && path === base(ws.id) ? { url: `${receiver.url}/x` } : {} });
      expect(r.status).toBe(403);
      expectDeprecated(r);
    }
    // trawl.webhooks.read does not cover mail's legacy routes.
    expect((await app.call("GET", base(ws.id, "mail"), { token: key })).status).toBe(403);
  });

  test("the legacy routes are documented as deprecated, with tags and summaries: in the extraction document (its contract lists them), in /docs/json only for the others", async () => {
    const full = (await app.call("GET", "/docs/json")).body;
    for (const product of ["mail", "waitlist", "trawl"]) {
      const own = await app.call("GET", `/${product}/openapi.json`);
      expect(own.status).toBe(200);
      const prefix0 = `/${product}/v1/workspaces/{workspace_id}/webhooks`;
      // The product's own document: the legacy {id} would overlap endpoints/{id} for nothing.
      expect(Object.keys(own.body.paths).includes(`${prefix0}/{id}`)).toBe(product === "trawl");
      const r = product === "trawl" ? own : { status: 200, body: full };
      expect(r.status).toBe(200);
      const prefix = `/${product}/v1/workspaces/{workspace_id}/webhooks`;
      const legacyPaths = [prefix, `${prefix}/{id}`, `${prefix}/{id}/deliveries`, `${prefix}/{id}/rotate-secret`, `${prefix}/{id}/test`];
      expect(Object.keys(r.body.paths)).toEqual(expect.arrayContaining([...legacyPaths, `${prefix}/endpoints`, `${prefix}/events`, `${prefix}/event-types`]));
      const ops = legacyPaths.flatMap((p) => Object.values(r.body.paths[p]) as any[]);
      expect(ops).toHaveLength(8);
      for (const op of ops) {
        expect(op.deprecated).toBe(true);
        expect(op.tags?.length).toBeGreaterThan(0);
        expect(op.summary).toBeTruthy();
      }
      for (const op of Object.values(r.body.paths[`${prefix}/endpoints`]) as any[]) expect(op.deprecated).toBeUndefined();
    }
  });
});
