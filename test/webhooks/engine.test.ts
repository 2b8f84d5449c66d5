/**
 * The webhook engine end to end: real apps on temp databases, real HTTP receivers on
 * loopback, the injected clock advanced instead of sleeping. Signatures are checked with the
 * independent `standardwebhooks` package (and node:crypto for the legacy header).
 */
// source-only: drives the in-process webhook engine by hand (emit, dispatchPending, deliverDue, sendOnce, purge), inserts endpoints through the store and moves the injected clock through the retry schedule
import { afterEach, describe, expect, test } from "bun:test";
import { createHmac } from "node:crypto";
import { Webhook } from "standardwebhooks";
import { tx } from "../../src/core/db";
import { DAY, HOUR, MINUTE, SECOND } from "../../src/core/clock";
import { prefixedId } from "../../src/core/ids";
import { generateLegacySecret, generateSecret } from "../../src/kernel/webhooks/signing";
import * as endpointsStore from "../../src/kernel/webhooks/store/endpoints";
import type { Product } from "../../src/kernel/webhooks/types";
import { startTestApp, type TestApp } from "../helpers/app";
import { startReceiver, type Receiver } from "../helpers/http-receiver";

// ---------------------------------------------------------------- fixtures

const cleanups: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

async function app(env: Record<string, string> = { ALLOW_PRIVATE_TARGETS: "true" }): Promise<TestApp> {
  const a = await startTestApp(env);
  // Deterministic tests drive the pump by hand (emit would otherwise schedule one).
  a.webhooks.options.autoKick = false;
  cleanups.push(() => a.stop());
  return a;
}

function receiver(handler?: Parameters<typeof startReceiver>[0]): Receiver {
  const r = startReceiver(handler);
  cleanups.push(() => r.stop());
  return r;
}

interface EndpointOpts {
  product?: Product;
  scopeId?: string;
  eventTypes?: string[];
  legacy?: boolean;
  secret?: string;
}

/** Inserts an endpoint row directly (the endpoints service is tested on its own). */
async function addEndpoint(a: TestApp, url: string, o: EndpointOpts = {}) {
  const id = prefixedId("ep");
  const secret = o.secret ?? (o.legacy ? generateLegacySecret() : generateSecret());
  const now = a.clock.iso();
  await endpointsStore.insertEndpoint(a.ctx.db, {
    id,
    product: o.product ?? "tack",
    scope_id: o.scopeId ?? "ws_1",
    url,
    description: "",
    event_types: JSON.stringify(o.eventTypes ?? []),
    secret_enc: a.ctx.secretBox.encrypt(secret),
    legacy: o.legacy ? 1 : 0,
    created_at: now,
    updated_at: now,
  });
  return { id, secret };
}

async function emit(a: TestApp, type: string, data: unknown = { n: 1 }, scope: { product: Product; scopeId: string } = { product: "tack", scopeId: "ws_1" }) {
  return (await tx(a.ctx.db, (t) => a.webhooks.emit(t, scope, type, data))).id;
}

/** One pump step driven by the test: fan out, then deliver what is due. */
async function pump(a: TestApp) {
  await a.webhooks.dispatchPending();
  return a.webhooks.deliverDue();
}

// Reading state: plain queries, the tests' own business.
const delivery = (a: TestApp, eventId: string, endpointId: string) =>
  a.ctx.db.get<{ id: string; status: string; attempts: number; next_attempt_ms: number | null; lease_until_ms: number | null; last_status_code: number | null }>(
    "SELECT id, status, attempts, next_attempt_ms, lease_until_ms, last_status_code FROM webhook_deliveries WHERE event_id = ? AND endpoint_id = ?",
    eventId,
    endpointId,
  );
const deliveriesOf = async (a: TestApp, endpointId: string) =>
  (await a.ctx.db.all<{ status: string }>("SELECT status FROM webhook_deliveries WHERE endpoint_id = ?", endpointId)).map((r) => r.status);
const endpoint = async (a: TestApp, id: string) => (await a.ctx.db.get<endpointsStore.EndpointRow>("SELECT * FROM webhook_endpoints WHERE id = ?", id))!;
const attempts = (a: TestApp, eventId: string) =>
  a.ctx.db.all<{ attempt_number: number; trigger: string; status_code: number | null; error_class: string | null; response_body: string | null; latency_ms: number; created_ms: number; delivery_id: string | null }>(
    "SELECT attempt_number, trigger, status_code, error_class, response_body, latency_ms, created_ms, delivery_id FROM webhook_attempts WHERE event_id = ? ORDER BY created_ms, attempt_number",
    eventId,
  );
const count = async (a: TestApp, table: string) => (await a.ctx.db.get<{ n: number }>(`SELECT COUNT(*) AS n FROM ${table}`))!.n;

const svHeaders = (h: Record<string, string>) => ({ "webhook-id": h["webhook-id"], "webhook-timestamp": h["webhook-timestamp"], "webhook-signature": h["webhook-signature"] });

// ---------------------------------------------------------------- emit and fan-out

describe("emit and dispatch", () => {
  test("an emit whose transaction rolls back is never delivered; a committed one is delivered once, signed", async () => {
    const a = await app();
    a.clock.set(Date.now()); // standardwebhooks checks the timestamp against the real clock
    const rx = receiver();
    const ep = await addEndpoint(a, `${rx.url}/hook`);

    await expect(
      tx(a.ctx.db, async (t) => {
        await a.webhooks.emit(t, { product: "tack", scopeId: "ws_1" }, "card.created", { card: "c1" });
        throw new Error("product write failed");
      }),
    ).rejects.toThrow("product write failed");
    expect(await pump(a)).toEqual({ attempted: 0, delivered: 0, failed: 0 });
    expect(await count(a, "webhook_events")).toBe(0);

    const id = await emit(a, "card.created", { card: "c2", title: "Ådá ✓" });
    expect(id).toMatch(/^evt_/);
    expect(await pump(a)).toEqual({ attempted: 1, delivered: 1, failed: 0 });
    expect(await pump(a)).toEqual({ attempted: 0, delivered: 0, failed: 0 });
    expect(rx.requests.length).toBe(1);

    const req = rx.requests[0];
    expect(req.method).toBe("POST");
    expect(req.path).toBe("/hook");
    const env = JSON.parse(req.body);
    expect(Object.keys(env)).toEqual(["id", "type", "created_at", "data"]);
    expect(env).toEqual({ id, type: "card.created", created_at: a.clock.iso(), data: { card: "c2", title: "Ådá ✓" } });
    expect(req.headers["content-type"]).toBe("application/json");
    expect(req.headers["webhook-id"]).toBe(id);
    expect(req.headers["webhook-timestamp"]).toBe(String(Math.floor(a.clock.nowMs() / 1000)));
    expect(req.headers["webhook-signature"]).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    expect(req.headers["x-tack-signature"]).toBeUndefined(); // new endpoints: open scheme only
    expect(new Webhook(ep.secret).verify(req.body, svHeaders(req.headers))).toEqual(env);
    expect(() => new Webhook(generateSecret()).verify(req.body, svHeaders(req.headers))).toThrow();

    expect(await delivery(a, id, ep.id)).toMatchObject({ status: "delivered", attempts: 1, next_attempt_ms: null, lease_until_ms: null, last_status_code: 200 });
    expect(await attempts(a, id)).toMatchObject([{ attempt_number: 1, trigger: "scheduled", status_code: 200, error_class: null, response_body: "ok" }]);
    expect(await endpoint(a, ep.id)).toMatchObject({ consecutive_failures: 0, last_status_code: 200, last_attempt_at: a.clock.iso() });
  });

  test("event_types filter: empty gets every type (including new ones), a list only those; other scopes nothing", async () => {
    const a = await app();
    const rxAll = receiver();
    const rxSome = receiver();
    const rxOther = receiver();
    const all = await addEndpoint(a, rxAll.url);
    const some = await addEndpoint(a, rxSome.url, { eventTypes: ["card.created", "list.created"] });
    await addEndpoint(a, rxOther.url, { scopeId: "ws_2" });
    await addEndpoint(a, rxOther.url, { product: "mail", scopeId: "ws_1" }); // same id, other product

    const e1 = await emit(a, "card.created");
    const e2 = await emit(a, "card.deleted");
    const e3 = await emit(a, "brand.new_type");
    await pump(a);
    expect(rxAll.requests.map((r) => r.headers["webhook-id"]).sort()).toEqual([e1, e2, e3].sort());
    expect(rxSome.requests.map((r) => r.headers["webhook-id"])).toEqual([e1]);
    expect(rxOther.requests.length).toBe(0);
    expect(await delivery(a, e2, some.id)).toBeNull();
    expect((await delivery(a, e3, all.id))?.status).toBe("delivered");
  });

  test("an event without endpoints is still stored; other scopes' outbox rows are left alone", async () => {
    const a = await app();
    const lonely = await emit(a, "card.created", { x: 1 }, { product: "waitlist", scopeId: "ws_9" });
    const platform = (await tx(a.ctx.db, (t) => a.ctx.events.record(t, { type: "member.added", scope: "platform:ws_1", data: {} }))).id;
    expect(await a.webhooks.dispatchPending()).toBe(1);
    expect(await a.webhooks.dispatchPending()).toBe(0);
    const stored = (await a.ctx.db.get<{ body: string; product: string; scope_id: string }>("SELECT body, product, scope_id FROM webhook_events WHERE id = ?", lonely))!;
    expect(stored).toMatchObject({ product: "waitlist", scope_id: "ws_9" });
    expect(JSON.parse(stored.body).data).toEqual({ x: 1 });
    expect(await count(a, "webhook_deliveries")).toBe(0);
    expect((await a.ctx.events.get(lonely))?.dispatched_at).not.toBeNull();
    expect((await a.ctx.events.get(platform))?.dispatched_at).toBeNull();
  });

  test("community events carry community_id; a disabled or auto-disabled endpoint gets no new deliveries", async () => {
    const a = await app();
    const rx = receiver();
    await addEndpoint(a, rx.url, { product: "social", scopeId: "com_42" });
    const off = await addEndpoint(a, rx.url, { product: "social", scopeId: "com_42" });
    await endpointsStore.updateEndpoint(a.ctx.db, off.id, { enabled: 0 }, a.clock.iso());
    const id = await emit(a, "post.created", { post: "p1" }, { product: "social", scopeId: "com_42" });
    await pump(a);
    expect(rx.requests.length).toBe(1);
    const env = JSON.parse(rx.requests[0].body);
    expect(Object.keys(env)).toEqual(["id", "type", "created_at", "community_id", "data"]);
    expect(env.community_id).toBe("com_42");
    expect(await delivery(a, id, off.id)).toBeNull();
  });

  test("a delivery whose endpoint stops receiving before its turn is not_sent", async () => {
    const a = await app();
    const rx = receiver();
    const ep = await addEndpoint(a, rx.url);
    const id = await emit(a, "card.created");
    await a.webhooks.dispatchPending();
    await endpointsStore.updateEndpoint(a.ctx.db, ep.id, { enabled: 0 }, a.clock.iso());
    expect(await a.webhooks.deliverDue()).toEqual({ attempted: 0, delivered: 0, failed: 0 });
    expect(rx.requests.length).toBe(0);
    expect(await delivery(a, id, ep.id)).toMatchObject({ status: "not_sent", next_attempt_ms: null });
  });

  test("with autoKick, an emit is delivered without waiting for the scheduler tick", async () => {
    const a = await app();
    a.webhooks.options.autoKick = true;
    const rx = receiver();
    await addEndpoint(a, rx.url);
    const id = await emit(a, "card.created");
    const [req] = await rx.waitForRequests(1, 3000);
    expect(req.headers["webhook-id"]).toBe(id);
  });
});

// ---------------------------------------------------------------- failures and retries

describe("retries", () => {
  test("500s are retried at +1 min, +5, +30, +2 h, +6 h, +24 h, then the delivery fails; same id and body, fresh signature", async () => {
    const a = await app();
    const rx = receiver(() => new Response("nope", { status: 500 }));
    const ep = await addEndpoint(a, rx.url);
    const id = await emit(a, "card.created");
    const t0 = a.clock.nowMs();

    expect(await pump(a)).toEqual({ attempted: 1, delivered: 0, failed: 1 });
    const delays = [1 * MINUTE, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 6 * HOUR, 24 * HOUR];
    let at = t0;
    for (const [i, d] of delays.entries()) {
      expect(await delivery(a, id, ep.id)).toMatchObject({ status: "pending", attempts: i + 1, next_attempt_ms: at + d });
      a.clock.set(at + d - SECOND);
      expect((await pump(a)).attempted).toBe(0); // nothing before the boundary
      a.clock.set(at + d);
      expect(await pump(a)).toEqual({ attempted: 1, delivered: 0, failed: 1 });
      at += d;
      expect(rx.requests.length).toBe(i + 2);
    }
    expect(at - t0).toBe(32 * HOUR + 36 * MINUTE); // "7 attempts over about 32 hours"
    expect(await delivery(a, id, ep.id)).toMatchObject({ status: "failed", attempts: 7, next_attempt_ms: null, last_status_code: 500 });
    a.clock.advance(3 * DAY);
    expect((await pump(a)).attempted).toBe(0);
    expect(rx.requests.length).toBe(7);

    expect(new Set(rx.requests.map((r) => r.body)).size).toBe(1);
    expect(new Set(rx.requests.map((r) => r.headers["webhook-id"]))).toEqual(new Set([id]));
    expect(new Set(rx.requests.map((r) => r.headers["webhook-timestamp"])).size).toBe(7);
    expect(new Set(rx.requests.map((r) => r.headers["webhook-signature"])).size).toBe(7);
    const log = await attempts(a, id);
    expect(log.map((l) => l.attempt_number)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(log.map((l) => l.trigger)).toEqual(["scheduled", "retry", "retry", "retry", "retry", "retry", "retry"]);
    expect(log.every((l) => l.status_code === 500 && l.error_class === "http_status" && l.response_body === "nope")).toBe(true);
    // The last failure came more than 24 h after the first: the endpoint is auto-disabled too.
    expect(await endpoint(a, ep.id)).toMatchObject({ status: "auto_disabled", consecutive_failures: 7 });
  });

  test("a 3xx is a failure and is not followed", async () => {
    const a = await app();
    const target = receiver();
    const rx = receiver(() => new Response(null, { status: 302, headers: { location: `${target.url}/elsewhere` } }));
    const ep = await addEndpoint(a, rx.url);
    const id = await emit(a, "card.created");
    expect(await pump(a)).toEqual({ attempted: 1, delivered: 0, failed: 1 });
    expect(target.requests.length).toBe(0);
    expect((await attempts(a, id))[0]).toMatchObject({ status_code: 302, error_class: "redirect" });
    expect(await delivery(a, id, ep.id)).toMatchObject({ status: "pending", attempts: 1, next_attempt_ms: a.clock.nowMs() + MINUTE });
    expect(await endpoint(a, ep.id)).toMatchObject({ consecutive_failures: 1, first_failure_at: a.clock.iso(), last_status_code: 302 });
  });

  test("no answer within the deadline is a timeout; a closed port a connection error; a private target blocked", async () => {
    const a = await app();
    a.webhooks.options.replyDeadlineMs = 300;
    const hang = Promise.withResolvers<void>();
    cleanups.push(() => hang.resolve());
    const rx = receiver(async () => {
      await hang.promise;
      return new Response("late");
    });
    const closed = startReceiver();
    const closedUrl = closed.url;
    await closed.stop();
    const slow = await addEndpoint(a, rx.url);
    const dead = await addEndpoint(a, closedUrl);
    const id = await emit(a, "card.created");
    expect(await pump(a)).toEqual({ attempted: 2, delivered: 0, failed: 2 });
    const byEndpoint = async (epId: string) =>
      (await a.ctx.db.get<{ error_class: string; latency_ms: number; status_code: number | null }>(
        "SELECT error_class, latency_ms, status_code FROM webhook_attempts WHERE event_id = ? AND endpoint_id = ?",
        id,
        epId,
      ))!;
    expect(await byEndpoint(slow.id)).toMatchObject({ error_class: "timeout", status_code: null });
    expect((await byEndpoint(slow.id)).latency_ms).toBeGreaterThanOrEqual(250);
    expect(await byEndpoint(dead.id)).toMatchObject({ error_class: "connection", status_code: null });

    // Without ALLOW_PRIVATE_TARGETS the SSRF guard refuses loopback: blocked, never sent.
    const guarded = await app({});
    const rx2 = receiver();
    const ep2 = await addEndpoint(guarded, rx2.url);
    const id2 = await emit(guarded, "card.created");
    expect(await pump(guarded)).toEqual({ attempted: 1, delivered: 0, failed: 1 });
    expect(rx2.requests.length).toBe(0);
    expect((await attempts(guarded, id2))[0]).toMatchObject({ error_class: "blocked", status_code: null });
    expect((await delivery(guarded, id2, ep2.id))?.status).toBe("pending");
  });
});

// ---------------------------------------------------------------- endpoint health

describe("auto-disable", () => {
  test("20 consecutive failures disable the endpoint and drop its queued retries; enabled stays as set", async () => {
    const a = await app();
    const rx = receiver(() => new Response("down", { status: 503 }));
    const ep = await addEndpoint(a, rx.url);
    const ids: string[] = [];
    for (let i = 0; i < 19; i++) {
      ids.push(await emit(a, "card.created", { i }));
      await pump(a);
    }
    expect(await endpoint(a, ep.id)).toMatchObject({ status: "enabled", consecutive_failures: 19 });
    ids.push(await emit(a, "card.created", { i: 19 }));
    await pump(a);
    expect(await endpoint(a, ep.id)).toMatchObject({ status: "auto_disabled", disabled_reason: "failing", enabled: 1, consecutive_failures: 20, auto_disabled_at: a.clock.iso() });
    expect((await deliveriesOf(a, ep.id)).every((s) => s === "not_sent")).toBe(true);
    expect((await deliveriesOf(a, ep.id)).length).toBe(20);

    // Retries that would have been due are gone, and new events are not queued for it.
    a.clock.advance(2 * DAY);
    await emit(a, "card.created");
    expect((await pump(a)).attempted).toBe(0);
    expect(rx.requests.length).toBe(20);
    expect((await deliveriesOf(a, ep.id)).length).toBe(20);
  });

  test("one success clears the streak", async () => {
    const a = await app();
    let status = 500;
    const rx = receiver(() => new Response("", { status }));
    const ep = await addEndpoint(a, rx.url);
    for (let i = 0; i < 19; i++) {
      await emit(a, "card.created", { i });
      await pump(a);
    }
    expect((await endpoint(a, ep.id)).consecutive_failures).toBe(19);
    status = 200;
    await emit(a, "card.created", { ok: true });
    await pump(a);
    expect(await endpoint(a, ep.id)).toMatchObject({ status: "enabled", consecutive_failures: 0, first_failure_at: null, last_status_code: 200 });
    status = 500;
    for (let i = 0; i < 19; i++) {
      await emit(a, "card.created", { again: i });
      await pump(a);
    }
    expect(await endpoint(a, ep.id)).toMatchObject({ status: "enabled", consecutive_failures: 19 });
    expect(rx.requests.length).toBe(39);
  });

  test("24 h of only failures disables the endpoint with fewer than 20 failures", async () => {
    const a = await app();
    const rx = receiver(() => new Response("", { status: 500 }));
    const ep = await addEndpoint(a, rx.url);
    const t0 = a.clock.nowMs();
    const first = await emit(a, "card.created");
    await pump(a); // attempt 1 at t0
    a.clock.set(t0 + MINUTE);
    await pump(a); // attempt 2
    a.clock.set(t0 + 6 * MINUTE);
    await pump(a); // attempt 3; the next is due at +36 min
    a.clock.set(t0 + 12 * HOUR);
    await pump(a); // attempt 4; the next is due at 14 h
    a.clock.set(t0 + 24 * HOUR - SECOND);
    const second = await emit(a, "card.created");
    await pump(a); // attempt 5 of the first event and attempt 1 of the second
    expect(await endpoint(a, ep.id)).toMatchObject({ status: "enabled", consecutive_failures: 6, first_failure_at: new Date(t0).toISOString() });
    expect((await delivery(a, first, ep.id))?.status).toBe("pending");

    a.clock.set(t0 + 24 * HOUR);
    await emit(a, "card.created");
    await pump(a);
    expect(await endpoint(a, ep.id)).toMatchObject({ status: "auto_disabled", disabled_reason: "failing", consecutive_failures: 7 });
    expect((await delivery(a, first, ep.id))?.status).toBe("not_sent");
    expect((await delivery(a, second, ep.id))?.status).toBe("not_sent");
  });
});

// ---------------------------------------------------------------- signatures

describe("signing", () => {
  test("during a rotation grace period two signatures, each secret verifies; after it only the new one", async () => {
    const a = await app();
    a.clock.set(Date.now());
    const rx = receiver();
    const ep = await addEndpoint(a, rx.url);
    const oldSecret = generateSecret();
    const newSecret = generateSecret();
    await endpointsStore.setSecrets(
      a.ctx.db,
      ep.id,
      { secret_enc: a.ctx.secretBox.encrypt(newSecret), prev_secret_enc: a.ctx.secretBox.encrypt(oldSecret), prev_secret_expires_ms: a.clock.nowMs() + 2 * SECOND },
      a.clock.iso(),
    );
    await emit(a, "card.created");
    await pump(a);
    const during = rx.requests[0];
    expect(during.headers["webhook-signature"].split(" ").length).toBe(2);
    expect(() => new Webhook(newSecret).verify(during.body, svHeaders(during.headers))).not.toThrow();
    expect(() => new Webhook(oldSecret).verify(during.body, svHeaders(during.headers))).not.toThrow();
    expect(() => new Webhook(ep.secret).verify(during.body, svHeaders(during.headers))).toThrow();

    a.clock.advance(2 * SECOND); // the grace period ends exactly now
    await emit(a, "card.created");
    await pump(a);
    const after = rx.requests[1];
    expect(after.headers["webhook-signature"].split(" ").length).toBe(1);
    expect(() => new Webhook(newSecret).verify(after.body, svHeaders(after.headers))).not.toThrow();
    expect(() => new Webhook(oldSecret).verify(after.body, svHeaders(after.headers))).toThrow();
  });

  test("a legacy endpoint gets both schemes: X-<Product>-Signature keyed by the stored secret, and the open one", async () => {
    const a = await app();
    a.clock.set(Date.now());
    const rx = receiver();
    const tack = await addEndpoint(a, `${rx.url}/tack`, { legacy: true });
    const social = await addEndpoint(a, `${rx.url}/social`, { legacy: true, product: "social", scopeId: "com_1" });
    await emit(a, "card.created");
    await emit(a, "post.created", {}, { product: "social", scopeId: "com_1" });
    await pump(a);
    for (const [path, ep, header] of [["/tack", tack, "x-tack-signature"], ["/social", social, "x-svc-signature"]] as const) {
      const req = rx.requests.find((r) => r.path === path)!;
      const ts = req.headers["webhook-timestamp"];
      const hex = createHmac("sha256", ep.secret).update(`${ts}.${req.body}`).digest("hex");
      expect(req.headers[header]).toBe(`t=${ts},v1=${hex}`);
      // "A pre-move secret verifies with an open-scheme verifier as whsec_ + base64(stored)".
      const asStandard = "whsec_" + Buffer.from(ep.secret, "utf8").toString("base64");
      expect(() => new Webhook(asStandard).verify(req.body, svHeaders(req.headers))).not.toThrow();
    }
    expect(rx.requests.find((r) => r.path === "/tack")!.headers["x-svc-signature"]).toBeUndefined();
  });
});

// ---------------------------------------------------------------- isolation and leases

describe("concurrency", () => {
  test("a receiver that never answers occupies only its own slots; a healthy one gets everything", async () => {
    const a = await app();
    const release = Promise.withResolvers<void>();
    cleanups.push(() => release.resolve());
    let inFlight = 0;
    let maxInFlight = 0;
    const slow = receiver(async () => {
      maxInFlight = Math.max(maxInFlight, ++inFlight);
      await release.promise;
      inFlight--;
      return new Response("finally");
    });
    const fast = receiver();
    await addEndpoint(a, slow.url);
    await addEndpoint(a, fast.url);
    const n = 40;
    for (let i = 0; i < n; i++) await emit(a, "card.created", { i });
    await a.webhooks.dispatchPending();
    const run = a.webhooks.deliverDue();
    await fast.waitForRequests(n, 5000);
    expect(slow.requests.length).toBe(a.webhooks.options.perEndpointConcurrency);
    release.resolve();
    expect(await run).toEqual({ attempted: 2 * n, delivered: 2 * n, failed: 0 });
    expect(maxInFlight).toBeLessThanOrEqual(a.webhooks.options.perEndpointConcurrency);
    expect(slow.requests.length).toBe(n);
  });

  test("several dead endpoints cannot take the whole pool: stuck attempts stop counting once slow", async () => {
    const a = await app();
    Object.assign(a.webhooks.options, { maxConcurrency: 16, perEndpointConcurrency: 8, slowAfterMs: 100, maxInFlight: 64 });
    const release = Promise.withResolvers<void>();
    cleanups.push(() => release.resolve());
    const dead = receiver(async () => {
      await release.promise;
      return new Response("late");
    });
    const fast = receiver();
    // Three dead endpoints could hold 24 slots: more than the 16 of the pool.
    for (let i = 0; i < 3; i++) await addEndpoint(a, `${dead.url}/dead${i}`);
    await addEndpoint(a, `${fast.url}/ok`);
    const n = 30;
    for (let i = 0; i < n; i++) await emit(a, "card.created", { i });
    await a.webhooks.dispatchPending();
    const run = a.webhooks.deliverDue();
    await fast.waitForRequests(n, 5000);
    expect(dead.requests.length).toBe(24); // 8 per dead endpoint, no more
    release.resolve();
    expect(await run).toEqual({ attempted: 4 * n, delivered: 4 * n, failed: 0 });
  });

  test("two pumps at once never send one delivery twice", async () => {
    const a = await app();
    const rx = receiver(async () => {
      await Bun.sleep(5); // real network time so the two drains overlap
      return new Response("ok");
    });
    await addEndpoint(a, rx.url);
    await addEndpoint(a, rx.url);
    for (let i = 0; i < 30; i++) await emit(a, "card.created", { i });
    await a.webhooks.dispatchPending();
    const [s1, s2] = await Promise.all([a.webhooks.deliverDue(), a.webhooks.deliverDue()]);
    expect(s1.attempted + s2.attempted).toBe(60);
    expect(rx.requests.length).toBe(60);
    const pairs = new Set(rx.requests.map((r) => r.headers["webhook-id"] + r.headers["webhook-signature"]));
    expect(pairs.size).toBe(60);
  });

  test("a delivery claimed by a pump that died is retried once its lease expires", async () => {
    const a = await app();
    const rx = receiver();
    const ep = await addEndpoint(a, rx.url);
    const id = await emit(a, "card.created");
    await a.webhooks.dispatchPending();
    // Simulate another process that claimed it and crashed before recording anything.
    const d = (await delivery(a, id, ep.id))!;
    const lease = a.clock.nowMs() + a.webhooks.options.leaseMs;
    await a.ctx.db.run("UPDATE webhook_deliveries SET lease_until_ms = ? WHERE id = ?", lease, d.id);
    expect((await a.webhooks.deliverDue()).attempted).toBe(0);
    a.clock.set(lease - 1);
    expect((await a.webhooks.deliverDue()).attempted).toBe(0);
    a.clock.set(lease);
    expect(await a.webhooks.deliverDue()).toEqual({ attempted: 1, delivered: 1, failed: 0 });
    expect(rx.requests.length).toBe(1);
  });
});

// ---------------------------------------------------------------- manual sends and retention

describe("sendOnce and purge", () => {
  test("a test/replay send is logged with its trigger and leaves the schedule alone; a failed one leaves the streak, a 2xx clears it", async () => {
    const a = await app();
    let status = 500;
    const rx = receiver(() => new Response(`answer ${status}`, { status }));
    const ep = await addEndpoint(a, rx.url);
    const id = await emit(a, "card.created");
    await pump(a);
    const before = (await delivery(a, id, ep.id))!;
    const health = await endpoint(a, ep.id);
    expect(health.consecutive_failures).toBe(1);

    a.clock.advance(10 * SECOND);
    const failed = await a.webhooks.sendOnce(ep.id, id, "replay", before.id);
    expect(failed).toEqual({ succeeded: false, status_code: 500, latency_ms: expect.any(Number), error_class: "http_status", response_body: "answer 500" });
    // A failed manual send is the latest attempt but adds nothing to the streak.
    expect(await endpoint(a, ep.id)).toMatchObject({ consecutive_failures: 1, first_failure_at: health.first_failure_at, last_status_code: 500, last_attempt_at: a.clock.iso() });
    status = 200;
    const ok = await a.webhooks.sendOnce(ep.id, id, "test");
    expect(ok).toMatchObject({ succeeded: true, status_code: 200, error_class: null, response_body: "answer 200" });

    expect(await delivery(a, id, ep.id)).toEqual(before);
    // "One successful delivery clears consecutive_failures and first_failure_at" (spec 2).
    expect(await endpoint(a, ep.id)).toMatchObject({ consecutive_failures: 0, first_failure_at: null, last_status_code: 200, status: "enabled" });
    expect((await attempts(a, id)).map((x) => [x.attempt_number, x.trigger, x.delivery_id])).toEqual([
      [1, "scheduled", before.id],
      [2, "replay", before.id],
      [3, "test", null],
    ]);
    expect(rx.requests.map((r) => r.body)).toEqual([rx.requests[0].body, rx.requests[0].body, rx.requests[0].body]);
    await expect(a.webhooks.sendOnce("ep_nope", id, "test")).rejects.toMatchObject({ status: 404 });
  });

  test("a successful replay clears the streak of an auto_disabled endpoint but does not lift the auto-disable", async () => {
    const a = await app();
    let status = 500;
    const rx = receiver(() => new Response("", { status }));
    const ep = await addEndpoint(a, rx.url);
    const id = await emit(a, "card.created");
    await pump(a);
    // The 24 h rule: the failure after the last retry delay is more than 24 h after the first.
    for (let i = 0; i < 6; i++) {
      a.clock.advance(DAY);
      await a.webhooks.deliverDue();
    }
    expect(await endpoint(a, ep.id)).toMatchObject({ status: "auto_disabled", enabled: 1 });
    expect((await endpoint(a, ep.id)).consecutive_failures).toBeGreaterThan(1);
    status = 204;
    expect((await a.webhooks.sendOnce(ep.id, id, "replay", (await delivery(a, id, ep.id))!.id)).succeeded).toBe(true);
    expect(await endpoint(a, ep.id)).toMatchObject({ status: "auto_disabled", disabled_reason: "failing", consecutive_failures: 0, first_failure_at: null, last_status_code: 204 });
  });

  test("the response body kept in the log is capped at 1 KiB", async () => {
    const a = await app();
    const rx = receiver(() => new Response("x".repeat(5000), { status: 500 }));
    await addEndpoint(a, rx.url);
    const id = await emit(a, "card.created");
    await pump(a);
    expect((await attempts(a, id))[0].response_body).toBe("x".repeat(1024));
  });

  test("events older than 30 days are purged with their deliveries and attempts", async () => {
    const a = await app();
    const rx = receiver();
    await addEndpoint(a, rx.url);
    await emit(a, "card.created");
    await pump(a);
    a.clock.advance(15 * DAY);
    await emit(a, "card.created");
    await pump(a);
    expect([await count(a, "webhook_events"), await count(a, "webhook_deliveries"), await count(a, "webhook_attempts")]).toEqual([2, 2, 2]);
    a.clock.advance(15 * DAY - MINUTE);
    expect(await a.webhooks.purgeExpired()).toBe(0);
    a.clock.advance(2 * MINUTE);
    expect(await a.webhooks.purgeExpired()).toBe(1);
    expect([await count(a, "webhook_events"), await count(a, "webhook_deliveries"), await count(a, "webhook_attempts")]).toEqual([1, 1, 1]);
  });

  test("the pump and purge jobs are registered", async () => {
    const a = await app();
    const names = a.ctx.scheduler.list().map((j) => j.name);
    expect(names).toContain("webhooks.pump");
    expect(names).toContain("webhooks.purge");
    const rx = receiver();
    await addEndpoint(a, rx.url);
    await emit(a, "card.created");
    await a.ctx.scheduler.runNow("webhooks.pump");
    await rx.waitForRequests(1, 3000);
  });
});
