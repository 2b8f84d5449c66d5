/**
 * Community-scoped webhooks (spec 3 records at /social/v1/communities/{id}/webhooks) and the
 * shared webhook routes at both community-service scopes, end to end: real receivers on
 * loopback, signatures checked with the independent `standardwebhooks` package and the
 * X-Svc-Signature recomputed with node:crypto, delivery driven through the engine and the
 * injected clock.
 */
import { afterAll, afterEach, beforeAll, describe, expect, setSystemTime, test } from "bun:test";
import { createHmac } from "node:crypto";
import { Webhook } from "standardwebhooks";
import { HOUR, MINUTE } from "../../src/core/clock";
import type { EventCatalogue } from "../../src/kernel/webhooks/catalogue";
import * as endpointsStore from "../../src/kernel/webhooks/store/endpoints";
import { ownerWithKey, startTestApp, type TestApp } from "../helpers/app";
import type { ReceivedRequest, Receiver } from "../helpers/http-receiver";
import { startWebhookTestApp, stopWebhookTestApp } from "../helpers/webhook-app";
import { addMember } from "../helpers/members";
import { inProcess } from "../helpers/target";

/** Why most tests here are source-only: they emit events and pump deliveries by hand through the in-process engine, on the injected clock. */
const ENGINE = "emits events and pumps deliveries through the in-process engine (app.webhooks) on the injected clock";

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
const hooks = (communityId: string) => `/social/v1/communities/${communityId}/webhooks`;
let seq = 0;

/** An owner with an all-actions key and one community of their workspace. */
async function setup() {
  const owner = await ownerWithKey(app);
  const r = await app.call("POST", `/social/v1/workspaces/${owner.ws.id}/communities`, { token: owner.token, body: { slug: `hooks-${++seq}`, display_name: "Hooks" } });
  if (r.status !== 201) throw new Error(`community create failed: ${r.status} ${JSON.stringify(r.body)}`);
  return { ...owner, community: r.body as { id: string; workspace_id: string } };
}

async function createHook(token: string, communityId: string, body: Record<string, unknown> = {}, path = "/c") {
  const r = await app.call("POST", hooks(communityId), { token, body: { url: `${receiver.url}${path}`, ...body } });
  if (r.status !== 201) throw new Error(`webhook create failed: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body as Record<string, any> & { id: string; signing_secret: string };
}

async function deliverNow() {
  await app.webhooks.dispatchPending();
  await app.webhooks.deliverDue();
}

/** Verifies the Standard Webhooks headers with the independent library, at the app's clock. */
function verifyStandard(secret: string, req: ReceivedRequest) {
  setSystemTime(app.clock.now());
  try {
    return new Webhook(secret).verify(req.body, { "webhook-id": req.headers["webhook-id"], "webhook-timestamp": req.headers["webhook-timestamp"], "webhook-signature": req.headers["webhook-signature"] }) as any;
  } finally {
    setSystemTime();
  }
}

/** Spec 3: X-Svc-Signature t=<unix>,v1=<hex HMAC-SHA256 of "<t>.<raw body>" keyed by the signing secret>, t within 5 minutes. */
function svcSignatureValid(secret: string, req: ReceivedRequest) {
  const m = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(req.headers["x-svc-signature"] ?? "");
  if (!m) return false;
  const expected = createHmac("sha256", secret).update(`${m[1]}.${req.body}`).digest("hex");
  return m[2] === expected && Math.abs(Number(m[1]) - app.clock.nowMs() / 1000) <= 300;
}

const requestsFor = (eventId: string) => receiver.requests.filter((q) => q.headers["webhook-id"] === eventId);

const emit = async (communityId: string, type: string, data: Record<string, unknown>) =>
  (await app.webhooks.emit(app.ctx.db, { product: "social", scopeId: communityId }, type, { community_id: communityId, ...data })).id;

describe("create, read, list", () => {
  inProcess("created_at equals the frozen injected clock; reads the stored endpoint row (app.ctx.db)")("201 with the subscriber and signing_secret once; later reads show only the hint; stored encrypted as a legacy row", async () => {
    const { token, community } = await setup();
    const r = await app.call("POST", hooks(community.id), { token, body: { url: `${receiver.url}/c`, event_types: ["post.created", "comment.created"] } });
    expect(r.status).toBe(201);
    expect(r.headers.get("deprecation")).toBe("true");
    expect(r.headers.get("sunset")).toBe(SUNSET);
    const hook = r.body;
    expect(hook.signing_secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    expect(hook).toEqual({
      id: expect.stringMatching(/^whk_[0-9a-f]{32}$/),
      community_id: community.id,
      url: `${receiver.url}/c`,
      event_types: ["post.created", "comment.created"],
      disabled: false,
      disabled_at: null,
      disabled_reason: null,
      consecutive_failures: 0,
      first_failure_at: null,
      last_status_code: null,
      last_attempt_at: null,
      signing_secret_hint: hook.signing_secret.slice(-4),
      created_at: app.clock.iso(),
      updated_at: app.clock.iso(),
      signing_secret: hook.signing_secret,
    });
    const { signing_secret: _secret, ...masked } = hook;
    const one = await app.call("GET", `${hooks(community.id)}/${hook.id}`, { token });
    expect(one.status).toBe(200);
    expect(one.body).toEqual(masked);
    const list = await app.call("GET", hooks(community.id), { token });
    expect(list.body).toEqual({ data: [masked], pagination: { next_cursor: null, has_more: false } });
    expect(JSON.stringify([one.body, list.body])).not.toContain(hook.signing_secret);
    const row = (await endpointsStore.endpointInScope(app.ctx.db, "social", community.id, hook.id))!;
    expect(row.legacy).toBe(1);
    expect(row.secret_enc).not.toContain(hook.signing_secret);
  });

  test("event_types omitted or empty: every type of the public catalogue now, as an explicit list", async () => {
    const { token, community } = await setup();
    const catalogue = await app.call("GET", "/social/v1/webhook-event-types");
    expect(catalogue.status).toBe(200);
    expect(catalogue.body.data).toHaveLength(21);
    expect((await createHook(token, community.id)).event_types).toEqual(catalogue.body.data);
    expect((await createHook(token, community.id, { event_types: [] })).event_types).toEqual(catalogue.body.data);
  });

  test("unknown event types are 400 naming the valid set (ping is not subscribable); bad url 400", async () => {
    const { token, community } = await setup();
    for (const types of [["post.created", "post.exploded"], ["ping"], ["entry.created"]]) {
      const r = await app.call("POST", hooks(community.id), { token, body: { url: `${receiver.url}/c`, event_types: types } });
      expect(r.status).toBe(400);
      expect(r.body.error.code).toBe("VALIDATION_ERROR");
      for (const valid of ["post.created", "edge.follow.request_approved", "asset.failed"]) expect(r.body.error.message).toContain(valid);
      expect(r.body.error.details[0].field).toBe("event_types");
      expect(r.headers.get("deprecation")).toBe("true");
    }
    expect((await app.call("POST", hooks(community.id), { token, body: {} })).status).toBe(400);
    expect((await app.call("POST", hooks(community.id), { token, body: { url: "ftp://example.com/x" } })).status).toBe(400);
    expect((await app.call("GET", hooks(community.id), { token })).body.data).toEqual([]);
  });

  test("at most 10 per community, the cap shared with the shared-route endpoints: the 11th is 409 ENDPOINT_LIMIT_REACHED", async () => {
    const { token, community } = await setup();
    const shared = await app.call("POST", `${hooks(community.id)}/endpoints`, { token, body: { url: `${receiver.url}/shared` } });
    expect(shared.status).toBe(201);
    for (let i = 0; i < 9; i++) await createHook(token, community.id);
    const eleventh = await app.call("POST", hooks(community.id), { token, body: { url: `${receiver.url}/c` } });
    expect(eleventh.status).toBe(409);
    expect(eleventh.body.error.code).toBe("ENDPOINT_LIMIT_REACHED");
    // This surface lists its own 9; the shared list shows all 10.
    expect((await app.call("GET", hooks(community.id), { token })).body.data).toHaveLength(9);
    expect((await app.call("GET", `${hooks(community.id)}/endpoints`, { token })).body.data).toHaveLength(10);
    // Another community has its own cap.
    const other = await setup();
    expect((await app.call("POST", hooks(other.community.id), { token: other.token, body: { url: `${receiver.url}/c` } })).status).toBe(201);
  });

  inProcess("reads the stored idempotent response (app.ctx.db)")("Idempotency-Key on create: a replay answers the same webhook with signing_secret null", async () => {
    const { token, community } = await setup();
    const headers = { "idempotency-key": "hook-1" };
    const body = { url: `${receiver.url}/c`, event_types: ["post.created"] };
    const first = await app.call("POST", hooks(community.id), { token, body, headers });
    expect(first.status).toBe(201);
    const again = await app.call("POST", hooks(community.id), { token, body, headers });
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotent-replay")).toBe("true");
    expect(again.body).toEqual({ ...first.body, signing_secret: null });
    expect((await app.call("GET", hooks(community.id), { token })).body.data).toHaveLength(1);
    // The stored response never holds the secret.
    const stored = await app.ctx.db.all<{ body: string }>("SELECT body FROM core_idempotency_keys WHERE key = ?", "hook-1");
    expect(stored).toHaveLength(1);
    expect(stored[0].body).toContain(first.body.id);
    expect(stored[0].body).not.toContain(first.body.signing_secret);
  });
});

describe("delivery", () => {
  inProcess(ENGINE)("an event reaches the subscribed types only, with the community envelope, Standard Webhooks and X-Svc-Signature", async () => {
    const { token, community } = await setup();
    const posts = await createHook(token, community.id, { event_types: ["post.created"] }, "/posts");
    const comments = await createHook(token, community.id, { event_types: ["comment.created"] }, "/comments");
    const id = await emit(community.id, "post.created", { id: "p1", status: "draft" });
    await deliverNow();
    const got = requestsFor(id);
    expect(got).toHaveLength(1);
    const req = got[0];
    expect(req.path).toBe("/posts");
    expect(Object.keys(JSON.parse(req.body))).toEqual(["id", "type", "created_at", "community_id", "data"]);
    const payload = verifyStandard(posts.signing_secret, req);
    expect(payload).toEqual({ id, type: "post.created", created_at: app.clock.iso(), community_id: community.id, data: { community_id: community.id, id: "p1", status: "draft" } });
    expect(id).toMatch(/^evt_/);
    expect(svcSignatureValid(posts.signing_secret, req)).toBe(true);
    expect(svcSignatureValid(comments.signing_secret, req)).toBe(false);
    expect(req.headers["x-svc-signature"].split(",")[0]).toBe(`t=${req.headers["webhook-timestamp"]}`);
    expect(() => verifyStandard(comments.signing_secret, req)).toThrow();
  });

  inProcess(ENGINE)("test: 202, then a signed ping through the queue; the deliveries list shows the attempt with its request body", async () => {
    const { token, community } = await setup();
    const hook = await createHook(token, community.id, { event_types: ["post.created"] });
    receiver.setHandler(() => new Response("pong", { status: 200 }));
    const r = await app.call("POST", `${hooks(community.id)}/${hook.id}/test`, { token });
    expect(r.status).toBe(202);
    expect(r.headers.get("deprecation")).toBe("true");
    expect(r.body).toEqual({ accepted: true, event_id: expect.stringMatching(/^evt_/), delivery_id: expect.stringMatching(/^dlv_/) });
    expect(requestsFor(r.body.event_id)).toHaveLength(0); // queued, not sent inline
    await deliverNow();
    const [req] = requestsFor(r.body.event_id);
    expect(req).toBeDefined();
    expect(verifyStandard(hook.signing_secret, req)).toEqual({ id: r.body.event_id, type: "ping", created_at: app.clock.iso(), community_id: community.id, data: { webhook_id: hook.id } });
    expect(svcSignatureValid(hook.signing_secret, req)).toBe(true);

    const deliveries = await app.call("GET", `${hooks(community.id)}/${hook.id}/deliveries`, { token });
    expect(deliveries.status).toBe(200);
    expect(deliveries.body).toEqual({
      data: [
        {
          id: expect.stringMatching(/^att_/),
          delivery_id: r.body.delivery_id,
          event_id: r.body.event_id,
          event_type: "ping",
          attempt_number: 1,
          trigger: "scheduled",
          request_body: req.body,
          response_status: 200,
          response_body: "pong",
          error_class: null,
          latency_ms: expect.any(Number),
          succeeded: true,
          created_at: app.clock.iso(),
        },
      ],
      pagination: { next_cursor: null, has_more: false },
    });
    // The ping is in the scope's events log (shared route), marked as a test.
    const log = await app.call("GET", `${hooks(community.id)}/events/${r.body.event_id}`, { token });
    expect(log.body).toMatchObject({ type: "ping", is_test: true, deliveries: [{ endpoint_id: hook.id, status: "delivered" }] });
  });

  inProcess(ENGINE)("only that subscriber gets the ping, also when another endpoint of the community takes every type", async () => {
    const { token, community } = await setup();
    const a = await createHook(token, community.id, {}, "/a");
    await createHook(token, community.id, {}, "/b");
    const all = await app.call("POST", `${hooks(community.id)}/endpoints`, { token, body: { url: `${receiver.url}/all` } });
    expect(all.body.event_types).toEqual([]);
    const r = await app.call("POST", `${hooks(community.id)}/${a.id}/test`, { token });
    await deliverNow();
    expect(requestsFor(r.body.event_id).map((q) => q.path)).toEqual(["/a"]);
  });

  inProcess(ENGINE)("a ping to a failing receiver is retried on the schedule like any delivery", async () => {
    const { token, community } = await setup();
    const hook = await createHook(token, community.id);
    receiver.setHandler(() => new Response("no", { status: 502 }));
    const r = await app.call("POST", `${hooks(community.id)}/${hook.id}/test`, { token });
    await deliverNow();
    receiver.setHandler(() => new Response("ok"));
    app.clock.advance(MINUTE);
    await deliverNow();
    expect(requestsFor(r.body.event_id).map((q) => q.body)).toEqual([requestsFor(r.body.event_id)[0].body, requestsFor(r.body.event_id)[0].body]);
    const attempts = (await app.call("GET", `${hooks(community.id)}/${hook.id}/deliveries`, { token })).body.data;
    expect(attempts.map((a: any) => [a.attempt_number, a.trigger, a.response_status, a.succeeded])).toEqual([
      [2, "retry", 200, true],
      [1, "scheduled", 502, false],
    ]);
    expect((await app.call("GET", `${hooks(community.id)}/${hook.id}`, { token })).body).toMatchObject({ consecutive_failures: 0, last_status_code: 200 });
  });

  inProcess(ENGINE)("failures: attempts carry status, first KiB, error class and a growing attempt_number; limit and cursor pages", async () => {
    const { token, community } = await setup();
    const hook = await createHook(token, community.id, { event_types: ["comment.created"] });
    receiver.setHandler(() => new Response("x".repeat(3000), { status: 500 }));
    const id = await emit(community.id, "comment.created", { id: "c1", parent_id: null });
    await deliverNow();
    app.clock.advance(MINUTE);
    await deliverNow();
    const list = await app.call("GET", `${hooks(community.id)}/${hook.id}/deliveries`, { token });
    expect(list.body.data.map((a: any) => [a.attempt_number, a.trigger])).toEqual([
      [2, "retry"],
      [1, "scheduled"],
    ]);
    for (const a of list.body.data) {
      expect(a).toMatchObject({ event_id: id, event_type: "comment.created", response_status: 500, error_class: "http_status", succeeded: false });
      expect(a.response_body).toBe("x".repeat(1024));
      expect(a.request_body).toBe(requestsFor(id)[0].body);
    }
    expect((await app.call("GET", `${hooks(community.id)}/${hook.id}`, { token })).body).toMatchObject({ consecutive_failures: 2, last_status_code: 500, disabled: false });
    const page1 = await app.call("GET", `${hooks(community.id)}/${hook.id}/deliveries?limit=1`, { token });
    expect(page1.body.data.map((a: any) => a.attempt_number)).toEqual([2]);
    expect(page1.body.pagination.has_more).toBe(true);
    const page2 = await app.call("GET", `${hooks(community.id)}/${hook.id}/deliveries?limit=1&cursor=${page1.body.pagination.next_cursor}`, { token });
    expect(page2.body.data.map((a: any) => a.attempt_number)).toEqual([1]);
    expect(page2.body.pagination).toEqual({ next_cursor: null, has_more: false });
    expect((await app.call("GET", `${hooks(community.id)}/${hook.id}/deliveries?limit=200`, { token })).status).toBe(200);
    for (const q of ["limit=0", "limit=201", "cursor=abc*", `cursor=${Buffer.from('{"ms":"x"}').toString("base64url")}`]) {
      const r = await app.call("GET", `${hooks(community.id)}/${hook.id}/deliveries?${q}`, { token });
      expect(r.status).toBe(400);
      if (q.startsWith("cursor")) expect(r.body.error.code).toBe("INVALID_CURSOR");
    }
  });

  inProcess(ENGINE)("redeliver: 202, the same bytes and event id again (by delivery id or attempt id), freshly signed", async () => {
    const { token, community } = await setup();
    const hook = await createHook(token, community.id, { event_types: ["post.deleted"] });
    const id = await emit(community.id, "post.deleted", { id: "p9", deleted_at: app.clock.iso() });
    await deliverNow();
    const [original] = requestsFor(id);
    const [attempt] = (await app.call("GET", `${hooks(community.id)}/${hook.id}/deliveries`, { token })).body.data;
    app.clock.advance(2 * HOUR);

    const r = await app.call("POST", `${hooks(community.id)}/${hook.id}/deliveries/${attempt.delivery_id}/redeliver`, { token });
    expect(r.status).toBe(202);
    expect(r.headers.get("deprecation")).toBe("true");
    expect(r.body).toEqual({ accepted: true, event_id: id, delivery_id: attempt.delivery_id });
    await deliverNow();
    const again = requestsFor(id);
    expect(again).toHaveLength(2);
    expect(again[1].body).toBe(original.body);
    expect(again[1].headers["webhook-id"]).toBe(id);
    expect(Number(again[1].headers["webhook-timestamp"])).toBe(Number(original.headers["webhook-timestamp"]) + 2 * 3600);
    expect(verifyStandard(hook.signing_secret, again[1]).id).toBe(id);
    expect(svcSignatureValid(hook.signing_secret, again[1])).toBe(true);

    // By the attempt's own id as well.
    expect((await app.call("POST", `${hooks(community.id)}/${hook.id}/deliveries/${attempt.id}/redeliver`, { token })).status).toBe(202);
    await deliverNow();
    expect(requestsFor(id).map((q) => q.body)).toEqual([original.body, original.body, original.body]);
    const attempts = (await app.call("GET", `${hooks(community.id)}/${hook.id}/deliveries`, { token })).body.data;
    expect(attempts.map((a: any) => a.attempt_number)).toEqual([3, 2, 1]);

    // While a pump holds the delivery's lease (an attempt in flight): 409 DELIVERY_IN_FLIGHT.
    await app.ctx.db.run("UPDATE webhook_deliveries SET lease_until_ms = ? WHERE id = ?", app.clock.nowMs() + 60_000, attempt.delivery_id);
    const busy = await app.call("POST", `${hooks(community.id)}/${hook.id}/deliveries/${attempt.delivery_id}/redeliver`, { token });
    expect(busy.status).toBe(409);
    expect(busy.body.error.code).toBe("DELIVERY_IN_FLIGHT");
    app.clock.advance(MINUTE);
    expect((await app.call("POST", `${hooks(community.id)}/${hook.id}/deliveries/${attempt.delivery_id}/redeliver`, { token })).status).toBe(202);

    // Unknown ids, and another subscriber's delivery, are 404; a malformed one is 400.
    const other = await createHook(token, community.id, { event_types: ["post.created"] });
    const unknown = `dlv_${"0".repeat(32)}`;
    for (const ref of [unknown, attempt.delivery_id]) {
      const target = ref === unknown ? hook.id : other.id;
      const nf = await app.call("POST", `${hooks(community.id)}/${target}/deliveries/${ref}/redeliver`, { token });
      expect(nf.status).toBe(404);
      expect(nf.headers.get("deprecation")).toBe("true");
    }
    const malformed = await app.call("POST", `${hooks(community.id)}/${hook.id}/deliveries/dlv_nope/redeliver`, { token });
    expect(malformed.status).toBe(400);
    expect(malformed.body.error.details.map((d: { field: string }) => d.field)).toEqual(["delivery_id"]);
  });

  inProcess("grows the in-process event catalogue (app.webhookApi) and emits through the in-process engine")("types added to the catalogue later never fire for an existing subscriber until it subscribes", async () => {
    // A private app: this test grows the catalogue.
    const own = await startTestApp({ ALLOW_PRIVATE_TARGETS: "true" });
    own.webhooks.options.autoKick = false;
    try {
      const owner = await ownerWithKey(own);
      const c = (await own.call("POST", `/social/v1/workspaces/${owner.ws.id}/communities`, { token: owner.token, body: { slug: "grows", display_name: "Grows" } })).body;
      const sub = await own.call("POST", hooks(c.id), { token: owner.token, body: { url: `${receiver.url}/snapshot` } });
      const every = await own.call("POST", `${hooks(c.id)}/endpoints`, { token: owner.token, body: { url: `${receiver.url}/every` } });
      expect([sub.status, every.status]).toEqual([201, 201]);
      (own.webhookApi.catalogue as EventCatalogue).register("social", [{ type: "story.created", description: "A story was posted.", example: { id: "s1" } }]);
      expect((await own.call("GET", "/social/v1/webhook-event-types")).body.data).toContain("story.created");
      const deliver = async () => {
        await own.webhooks.dispatchPending();
        await own.webhooks.deliverDue();
      };
      const first = (await own.webhooks.emit(own.ctx.db, { product: "social", scopeId: c.id }, "story.created", { id: "s1" })).id;
      await deliver();
      expect(requestsFor(first).map((q) => q.path)).toEqual(["/every"]);
      const patched = await own.call("PATCH", `${hooks(c.id)}/${sub.body.id}`, { token: owner.token, body: { event_types: [...sub.body.event_types, "story.created"] } });
      expect(patched.status).toBe(200);
      expect(patched.body.event_types).toContain("story.created");
      const second = (await own.webhooks.emit(own.ctx.db, { product: "social", scopeId: c.id }, "story.created", { id: "s2" })).id;
      await deliver();
      expect(requestsFor(second).map((q) => q.path).sort()).toEqual(["/every", "/snapshot"]);
    } finally {
      await own.stop();
    }
  });
});

describe("disabled state", () => {
  inProcess(ENGINE)("PATCH disabled:true pauses (queued retries dropped, nothing new delivered, test 409); disabled:false re-enables and clears the streak", async () => {
    const { token, community } = await setup();
    const hook = await createHook(token, community.id, { event_types: ["post.created"] });
    receiver.setHandler(() => new Response("down", { status: 503 }));
    const failing = await emit(community.id, "post.created", { id: "p1" });
    await deliverNow();
    expect((await app.call("GET", `${hooks(community.id)}/${hook.id}`, { token })).body).toMatchObject({ consecutive_failures: 1, first_failure_at: app.clock.iso() });

    app.clock.advance(10_000);
    const paused = await app.call("PATCH", `${hooks(community.id)}/${hook.id}`, { token, body: { disabled: true } });
    expect(paused.status).toBe(200);
    expect(paused.body).toMatchObject({ disabled: true, disabled_reason: "manual", disabled_at: app.clock.iso() });
    // The shared record of the same row: the pause is enabled:false; status stays the engine's verdict.
    expect((await app.call("GET", `${hooks(community.id)}/endpoints/${hook.id}`, { token })).body).toMatchObject({ enabled: false, status: "enabled", disabled_reason: null });
    const ev = await app.call("GET", `${hooks(community.id)}/events/${failing}`, { token });
    expect(ev.body.deliveries).toEqual([expect.objectContaining({ endpoint_id: hook.id, status: "not_sent", next_attempt_at: null })]);

    receiver.setHandler(() => new Response("ok"));
    const whilePaused = await emit(community.id, "post.created", { id: "p2" });
    app.clock.advance(HOUR);
    await deliverNow();
    expect(requestsFor(whilePaused)).toHaveLength(0);
    expect(requestsFor(failing)).toHaveLength(1);
    const test = await app.call("POST", `${hooks(community.id)}/${hook.id}/test`, { token });
    expect(test.status).toBe(409);
    expect(test.body.error.code).toBe("WEBHOOK_DISABLED");
    expect(test.headers.get("deprecation")).toBe("true");
    const list = await app.call("GET", hooks(community.id), { token });
    expect(list.body.data.map((h: any) => [h.id, h.disabled])).toEqual([[hook.id, true]]);

    const resumed = await app.call("PATCH", `${hooks(community.id)}/${hook.id}`, { token, body: { disabled: false } });
    expect(resumed.body).toMatchObject({ disabled: false, disabled_at: null, disabled_reason: null, consecutive_failures: 0, first_failure_at: null });
    const after = await emit(community.id, "post.created", { id: "p3" });
    await deliverNow();
    expect(requestsFor(after)).toHaveLength(1);
    // disabled:false also clears the streak of a subscriber that was never disabled.
    receiver.setHandler(() => new Response("down", { status: 503 }));
    await emit(community.id, "post.created", { id: "p4" });
    await deliverNow();
    expect((await app.call("GET", `${hooks(community.id)}/${hook.id}`, { token })).body.consecutive_failures).toBe(1);
    expect((await app.call("PATCH", `${hooks(community.id)}/${hook.id}`, { token, body: { disabled: false } })).body).toMatchObject({ disabled: false, consecutive_failures: 0, first_failure_at: null });
    expect((await app.call("PATCH", `${hooks(community.id)}/${hook.id}`, { token, body: { disabled: "no" } })).status).toBe(400);
  });

  inProcess(ENGINE)("20 consecutive failures auto-disable (disabled_at, reason failing, retries cancelled); rotate-secret gives a new secret and re-enables", async () => {
    const { token, community } = await setup();
    const hook = await createHook(token, community.id, { event_types: ["comment.created"] });
    receiver.setHandler(() => new Response("broken", { status: 500 }));
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) ids.push(await emit(community.id, "comment.created", { id: `c${i}` }));
    await deliverNow();
    const disabled = (await app.call("GET", `${hooks(community.id)}/${hook.id}`, { token })).body;
    expect(disabled).toMatchObject({ disabled: true, disabled_reason: "failing", disabled_at: app.clock.iso(), consecutive_failures: 20 });
    // In-flight retries cancelled: nothing more is sent, whatever the clock says.
    app.clock.advance(3 * HOUR);
    await deliverNow();
    expect(ids.map((id) => requestsFor(id).length)).toEqual(ids.map(() => 1));
    const redeliver = await app.call("POST", `${hooks(community.id)}/${hook.id}/deliveries/${(await app.call("GET", `${hooks(community.id)}/${hook.id}/deliveries?limit=1`, { token })).body.data[0].delivery_id}/redeliver`, { token });
    expect(redeliver.status).toBe(409);
    expect(redeliver.body.error.code).toBe("WEBHOOK_DISABLED");

    receiver.setHandler(() => new Response("ok"));
    const rotated = await app.call("POST", `${hooks(community.id)}/${hook.id}/rotate-secret`, { token });
    expect(rotated.status).toBe(200);
    expect(rotated.headers.get("deprecation")).toBe("true");
    expect(rotated.body.signing_secret).toMatch(/^whsec_/);
    expect(rotated.body.signing_secret).not.toBe(hook.signing_secret);
    expect(rotated.body).toMatchObject({ disabled: false, disabled_at: null, disabled_reason: null, consecutive_failures: 0, first_failure_at: null, signing_secret_hint: rotated.body.signing_secret.slice(-4) });
    expect((await app.call("GET", `${hooks(community.id)}/${hook.id}`, { token })).body.signing_secret).toBeUndefined();

    const fresh = await emit(community.id, "comment.created", { id: "after" });
    await deliverNow();
    const [req] = requestsFor(fresh);
    expect(verifyStandard(rotated.body.signing_secret, req).id).toBe(fresh);
    expect(svcSignatureValid(rotated.body.signing_secret, req)).toBe(true);
    // No grace period: the old secret verifies neither header.
    expect(() => verifyStandard(hook.signing_secret, req)).toThrow();
    expect(svcSignatureValid(hook.signing_secret, req)).toBe(false);
  });
});

describe("routes and access", () => {
  inProcess(ENGINE)("GET one, DELETE (204, queued retries gone), another community's webhook id is 404", async () => {
    const { token, community } = await setup();
    const hook = await createHook(token, community.id);
    const other = await setup();
    expect((await app.call("GET", `${hooks(other.community.id)}/${hook.id}`, { token: other.token })).status).toBe(404);
    expect((await app.call("PATCH", `${hooks(other.community.id)}/${hook.id}`, { token: other.token, body: { disabled: true } })).status).toBe(404);
    // A shared-route endpoint (ep_...) is not a record of this surface: not even the shape of one.
    const shared = await app.call("POST", `${hooks(community.id)}/endpoints`, { token, body: { url: `${receiver.url}/shared` } });
    expect((await app.call("GET", `${hooks(community.id)}/${shared.body.id}`, { token })).status).toBe(400);
    // One failed delivery waiting for its retry.
    receiver.setHandler(() => new Response("down", { status: 503 }));
    const pending = await emit(community.id, "post.created", { id: "p1" });
    const toHook = () => requestsFor(pending).filter((q) => q.path === "/c");
    await deliverNow();
    expect(toHook()).toHaveLength(1);
    receiver.setHandler(() => new Response("ok"));
    const del = await app.call("DELETE", `${hooks(community.id)}/${hook.id}`, { token });
    expect(del.status).toBe(204);
    app.clock.advance(HOUR);
    await deliverNow();
    expect(toHook()).toHaveLength(1);
    // The shared endpoint of the same community still got its retry.
    expect(requestsFor(pending).filter((q) => q.path === "/shared")).toHaveLength(2);
    expect(del.headers.get("deprecation")).toBe("true");
    expect((await app.call("GET", `${hooks(community.id)}/${hook.id}`, { token })).status).toBe(404);
    expect((await app.call("GET", hooks(community.id), { token })).body.data).toEqual([]);
  });

  inProcess("reads the queued invitation mail (app.ctx.mailer) to add a member")("community scope: unknown or another workspace's community 404; actions social.webhooks.read/write; service off 403", async () => {
    const { token, session, ws, community } = await setup();
    const hook = await createHook(token, community.id);
    const stranger = await ownerWithKey(app);
    for (const path of [hooks(community.id), `${hooks(community.id)}/${hook.id}`, `${hooks(community.id)}/endpoints`, `${hooks(crypto.randomUUID())}`]) {
      const r = await app.call("GET", path, { token: stranger.token });
      expect(r.status).toBe(404);
      expect(r.body.error.message).toBe("Community not found");
    }
    // A malformed id is a validation error before any lookup, here and on the shared routes.
    for (const path of ["/social/v1/communities/not-a-uuid/webhooks", "/social/v1/communities/not-a-uuid/webhooks/endpoints"]) {
      const r = await app.call("GET", path, { token: stranger.token });
      expect(r.status).toBe(400);
      expect(r.body.error.details[0].field).toBe("community_id");
    }
    expect((await app.call("GET", hooks(community.id))).status).toBe(401);

    const minted = await app.call("POST", `/platform/v1/workspaces/${ws.slug}/api-keys`, {
      token: session,
      body: { name: "hooks-reader", policy: [{ effect: "allow", actions: ["social.webhooks.read"], resources: ["*"] }] },
    });
    const reader = minted.body.key as string;
    expect((await app.call("GET", hooks(community.id), { token: reader })).status).toBe(200);
    expect((await app.call("GET", `${hooks(community.id)}/${hook.id}/deliveries`, { token: reader })).status).toBe(200);
    expect((await app.call("GET", `${hooks(community.id)}/endpoints`, { token: reader })).status).toBe(200);
    for (const [method, path, body] of [
      ["POST", hooks(community.id), { url: `${receiver.url}/c` }],
      ["PATCH", `${hooks(community.id)}/${hook.id}`, { disabled: true }],
      ["POST", `${hooks(community.id)}/${hook.id}/test`],
      ["POST", `${hooks(community.id)}/${hook.id}/rotate-secret`],
      ["POST", `${hooks(community.id)}/endpoints`, { url: `${receiver.url}/c` }],
    ] as const) {
      const r = await app.call(method, path, { token: reader, body });
      expect(r.status).toBe(403);
      expect(r.body.error.message).toContain("social.webhooks.write");
    }
    // The built-in member role reads (migration 0033) but does not write.
    const member = await addMember(app, session, ws.slug);
    expect((await app.call("GET", hooks(community.id), { token: member.token })).status).toBe(200);
    expect((await app.call("POST", hooks(community.id), { token: member.token, body: { url: `${receiver.url}/m` } })).status).toBe(403);

    expect((await app.call("DELETE", `/platform/v1/workspaces/${ws.slug}/services/social`, { token: session })).status).toBe(200);
    for (const path of [hooks(community.id), `${hooks(community.id)}/endpoints`, `/social/v1/workspaces/${ws.id}/webhooks/endpoints`]) {
      const off = await app.call("GET", path, { token });
      expect(off.status).toBe(403);
      expect(off.body.error.code).toBe("SERVICE_NOT_ENABLED");
    }
    expect((await app.call("PUT", `/platform/v1/workspaces/${ws.slug}/services/social`, { token: session })).status).toBe(200);
  });

  inProcess(ENGINE)("shared routes at both scopes: workspace /social/v1/workspaces/{id}/webhooks and community /social/v1/communities/{id}/webhooks", async () => {
    const { token, ws, community } = await setup();
    for (const scope of [`/social/v1/workspaces/${ws.id}/webhooks`, hooks(community.id)]) {
      const types = await app.call("GET", `${scope}/event-types`, { token });
      expect(types.status).toBe(200);
      expect(types.headers.get("deprecation")).toBeNull();
      expect(types.body.data).toHaveLength(21);
      expect(types.body.data[0]).toEqual({ type: expect.any(String), description: expect.any(String), example: expect.any(Object) });
      const ep = await app.call("POST", `${scope}/endpoints`, { token, body: { url: `${receiver.url}/shared`, event_types: ["post.created"] } });
      expect(ep.status).toBe(201);
      expect(ep.body.signing_secret).toMatch(/^whsec_/);
      const sent = await app.call("POST", `${scope}/endpoints/${ep.body.id}/test`, { token, body: { event_type: "post.created" } });
      expect(sent.status).toBe(200);
      expect(sent.body).toMatchObject({ succeeded: true, status_code: 200, trigger: "test" });
      const [req] = requestsFor(sent.body.event_id);
      expect(verifyStandard(ep.body.signing_secret, req)).toMatchObject({ id: sent.body.event_id, type: "post.created", test: true });
      // Shared-route endpoints get only the open-scheme headers.
      expect(req.headers["x-svc-signature"]).toBeUndefined();
      const log = await app.call("GET", `${scope}/events`, { token });
      expect(log.body.data.map((e: any) => e.id)).toContain(sent.body.event_id);
      expect((await app.call("PATCH", `${scope}/endpoints/${ep.body.id}`, { token, body: { enabled: false } })).body).toMatchObject({ enabled: false, status: "enabled" });
      expect((await app.call("DELETE", `${scope}/endpoints/${ep.body.id}`, { token })).status).toBe(204);
    }
    // A community event reaches the community's shared endpoints; the shared replay resends it.
    const ep = await app.call("POST", `${hooks(community.id)}/endpoints`, { token, body: { url: `${receiver.url}/shared2` } });
    const id = await emit(community.id, "edge.follow.created", { id: "e1" });
    await deliverNow();
    const replay = await app.call("POST", `${hooks(community.id)}/events/${id}/replay`, { token });
    expect(replay.body.data).toEqual([expect.objectContaining({ endpoint_id: ep.body.id, succeeded: true, trigger: "replay" })]);
    expect(requestsFor(id).map((q) => q.body)).toEqual([requestsFor(id)[0].body, requestsFor(id)[0].body]);
    // The workspace scope's endpoints are another scope: they did not get the community event.
    expect(requestsFor(id).every((q) => q.path === "/shared2")).toBe(true);
  });

  test("GET /social/v1/webhook-event-types needs no credential and lists the 21 types; Deprecation only on the spec-3 record routes", async () => {
    const r = await app.call("GET", "/social/v1/webhook-event-types");
    expect(r.status).toBe(200);
    expect(r.body.data).toHaveLength(21);
    expect(r.body.data).toEqual(expect.arrayContaining(["post.created", "dm.message.created", "tag.created", "asset.ready", "asset.failed", "edge.follow.requested"]));
    expect(r.headers.get("deprecation")).toBeNull();
    const { community } = await setup();
    const unauth = await app.call("GET", hooks(community.id));
    expect(unauth.status).toBe(401);
    expect(unauth.headers.get("deprecation")).toBe("true");
    expect(unauth.headers.get("sunset")).toBe(SUNSET);
  });
});
