/**
 * Every OpenAPI operation of the community service's admin side, walked over HTTP the way a
 * customer backend and its operators use them, each answered with success at least once:
 * communities administration (/social/v1/workspaces/{id}/communities...), the community
 * webhook records (/webhooks: create, read, pause, test, deliveries, redeliver, rotate,
 * delete) and the shared webhook routes at both scopes (endpoints, test, rotate-secret,
 * events, replay), conversations and messages, assets (multipart and two-step uploads,
 * processing, signed renditions), flags and moderation (queue, actions, keyword filters)
 * and the notification inbox. Deliveries go to a real receiver on loopback and are verified
 * with the independent `standardwebhooks` package and an X-Svc-Signature recomputed with
 * node:crypto.
 *
 * Runs unchanged in-process (`npx bun test`, SQLite or PostgreSQL) and against the binary
 * (`npm run test:bin`). Background work (webhook deliveries, asset processing) is the
 * scheduler's: the binary's process runs its own; in-process, the one line below starts the
 * app's scheduler as `bunker serve` does. Either way the test waits for results over HTTP
 * with a deadline. Timestamps are checked for shape and order, not against a clock.
 */
import { afterAll, beforeAll, describe, expect, setSystemTime, test } from "bun:test";
import { createHmac } from "node:crypto";
import sharp from "sharp";
import { Webhook } from "standardwebhooks";
import { ownerWithKey, startTestApp, type TestApp } from "../helpers/app";
import { startReceiver, type ReceivedRequest, type Receiver } from "../helpers/http-receiver";
import { allPages, communitySetup, createPost, waitUntil, type Social } from "../helpers/social";
import { ON_BINARY } from "../helpers/target";

let app: TestApp;
let receiver: Receiver;
beforeAll(async () => {
  app = await startTestApp({ ALLOW_PRIVATE_TARGETS: "true" });
  // The process of `bunker serve` runs its scheduler; the in-process app starts it the same way.
  if (!ON_BINARY) app.ctx.scheduler.start();
  receiver = startReceiver();
});
afterAll(async () => {
  await app?.stop();
  await receiver?.stop();
});

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const admin = (wsId: string) => `/social/v1/workspaces/${wsId}/communities`;

/** Requests the receiver got on `path` (optionally of one event id), in arrival order. */
const at = (path: string, eventId?: string) => receiver.requests.filter((q) => q.path === path && (eventId === undefined || q.headers["webhook-id"] === eventId));

/** Waits until the receiver holds `count` requests on `path` (of `eventId`): deliveries are the scheduler's. */
async function received(path: string, count: number, eventId?: string): Promise<ReceivedRequest[]> {
  await waitUntil(() => at(path, eventId).length >= count, 20_000, `${count} deliveries to ${path}${eventId ? ` of ${eventId}` : ""}`);
  return at(path, eventId);
}

/** Standard Webhooks verification with the independent library, at the app's time (which signs). */
function verifyStandard(secret: string, req: ReceivedRequest): any {
  setSystemTime(app.clock.now());
  try {
    return new Webhook(secret).verify(req.body, { "webhook-id": req.headers["webhook-id"], "webhook-timestamp": req.headers["webhook-timestamp"], "webhook-signature": req.headers["webhook-signature"] });
  } finally {
    setSystemTime();
  }
}

/** Spec 3: X-Svc-Signature t=<unix>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">, t within 5 minutes. */
function svcSignatureValid(secret: string, req: ReceivedRequest): boolean {
  const m = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(req.headers["x-svc-signature"] ?? "");
  if (!m) return false;
  return m[2] === createHmac("sha256", secret).update(`${m[1]}.${req.body}`).digest("hex") && Math.abs(Number(m[1]) - app.clock.nowMs() / 1000) <= 300;
}

/** A public (signed) URL of the API, fetched without a credential. */
const fetchPublic = (url: string, init?: RequestInit) => app.handle(new Request(url, init));

async function jpeg(width: number, height: number): Promise<Uint8Array> {
  return new Uint8Array(await sharp({ create: { width, height, channels: 3, background: { r: 20, g: 120, b: 200 } } }).jpeg().toBuffer());
}

/** Waits until the asset left processing (or uploading) and returns it. */
async function settledAsset(s: Social, id: string): Promise<any> {
  let asset: any;
  await waitUntil(async () => {
    asset = (await s.call("GET", `/assets/${id}`)).body;
    return asset.status === "ready" || asset.status === "failed";
  }, 30_000, `asset ${id} processed`);
  return asset;
}

describe("communities administration", () => {
  test("create (Idempotency-Key), list with q and status, read, update settings and status, delete", async () => {
    const { token, ws } = await ownerWithKey(app);
    const headers = { "idempotency-key": "every-route-create" };
    const body = { slug: "garden-club", display_name: "  Garden club ", description: "Seeds and soil.", settings: { max_group_conversation_size: 12 } };
    const created = await app.call("POST", admin(ws.id), { token, body, headers });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.stringMatching(UUID),
      workspace_id: ws.id,
      slug: "garden-club",
      display_name: "Garden club",
      description: "Seeds and soil.",
      app_id: null,
      settings: expect.objectContaining({ max_group_conversation_size: 12 }),
      status: "active",
      created_at: expect.stringMatching(ISO),
      updated_at: created.body.created_at,
    });
    const replay = await app.call("POST", admin(ws.id), { token, body, headers });
    expect(replay.status).toBe(201);
    expect(replay.headers.get("idempotent-replay")).toBe("true");
    expect(replay.body).toEqual(created.body);
    const c = created.body;
    const other = (await app.call("POST", admin(ws.id), { token, body: { slug: "chess-club", display_name: "Chess" } })).body;

    // List: newest first; q matches slug or display name case-insensitively.
    const all = await app.call("GET", admin(ws.id), { token });
    expect(all.status).toBe(200);
    expect(all.body).toEqual({ data: [other, c], pagination: { next_cursor: null, has_more: false } });
    expect((await app.call("GET", `${admin(ws.id)}?q=GARDEN`, { token })).body.data.map((x: any) => x.id)).toEqual([c.id]);
    const page = await app.call("GET", `${admin(ws.id)}?limit=1`, { token });
    expect(page.body.data.map((x: any) => x.id)).toEqual([other.id]);
    expect(page.body.pagination.has_more).toBe(true);
    expect((await app.call("GET", `${admin(ws.id)}?cursor=${page.body.pagination.next_cursor}`, { token })).body.data.map((x: any) => x.id)).toEqual([c.id]);

    const one = await app.call("GET", `${admin(ws.id)}/${c.id}`, { token });
    expect(one.status).toBe(200);
    expect(one.body).toEqual(c);

    const patched = await app.call("PATCH", `${admin(ws.id)}/${c.id}`, { token, body: { display_name: "Garden club (paused)", settings: { max_group_conversation_size: 3 }, status: "suspended" } });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ id: c.id, display_name: "Garden club (paused)", description: "Seeds and soil.", status: "suspended", settings: expect.objectContaining({ max_group_conversation_size: 3 }) });
    expect(patched.body.updated_at).toMatch(ISO);
    expect(patched.body.updated_at >= c.updated_at).toBe(true);
    expect((await app.call("GET", `${admin(ws.id)}/${c.id}`, { token })).body).toEqual(patched.body);
    expect((await app.call("GET", `${admin(ws.id)}?status=suspended`, { token })).body.data.map((x: any) => x.id)).toEqual([c.id]);
    expect((await app.call("GET", `${admin(ws.id)}?status=active`, { token })).body.data.map((x: any) => x.id)).toEqual([other.id]);
    const back = await app.call("PATCH", `${admin(ws.id)}/${c.id}`, { token, body: { status: "active" } });
    expect(back.body.status).toBe("active");

    // Delete: 204, then gone (admin read, the community's routes, the list; the slug is free again).
    const del = await app.call("DELETE", `${admin(ws.id)}/${other.id}`, { token });
    expect(del.status).toBe(204);
    expect((await app.call("GET", `${admin(ws.id)}/${other.id}`, { token })).status).toBe(404);
    const gone = await app.call("GET", `/social/v1/communities/${other.id}/webhooks`, { token });
    expect([gone.status, gone.body.error.message]).toEqual([404, "Community not found"]);
    expect((await app.call("GET", admin(ws.id), { token })).body.data.map((x: any) => x.id)).toEqual([c.id]);
    expect((await app.call("POST", admin(ws.id), { token, body: { slug: "chess-club", display_name: "Chess again" } })).status).toBe(201);
  });
});

describe("community webhook records (spec 3)", () => {
  test("public event types; create, read, list; test ping through the queue; deliveries; redeliver; pause; rotate; delete", async () => {
    const types = await app.call("GET", "/social/v1/webhook-event-types");
    expect(types.status).toBe(200);
    expect(types.body.data).toHaveLength(21);
    expect(types.body.data).toEqual(expect.arrayContaining(["post.created", "dm.message.created", "flag.created", "moderation.action.applied", "asset.ready"]));

    const s = await communitySetup(app);
    const hooks = `${s.base}/webhooks`;
    const made = await app.call("POST", hooks, { token: s.token, body: { url: `${receiver.url}/records`, event_types: ["post.created"] } });
    expect(made.status).toBe(201);
    expect(made.headers.get("deprecation")).toBe("true");
    const secret = made.body.signing_secret as string;
    expect(secret).toMatch(/^whsec_/);
    const hookId = made.body.id as string;
    expect(hookId).toMatch(/^whk_/);
    // (No asymmetric matchers inside toMatchObject on a body used later: bun writes them into the object.)
    expect(made.body).toMatchObject({ community_id: s.cid, url: `${receiver.url}/records`, event_types: ["post.created"], disabled: false, signing_secret_hint: secret.slice(-4) });
    const { signing_secret: _s, ...masked } = made.body;
    expect((await app.call("GET", `${hooks}/${hookId}`, { token: s.token })).body).toEqual(masked);
    expect((await app.call("GET", hooks, { token: s.token })).body).toEqual({ data: [masked], pagination: { next_cursor: null, has_more: false } });

    // A real event of a subscribed type reaches it, signed both ways.
    const author = await s.actor();
    const post = await createPost(s, { actor_id: author.id, body: "first post" });
    const isPost = (q: ReceivedRequest) => JSON.parse(q.body).type === "post.created";
    await waitUntil(() => at("/records").some(isPost), 20_000, "post.created delivered");
    const evReq = at("/records").find(isPost)!;
    expect(verifyStandard(secret, evReq)).toMatchObject({ type: "post.created", community_id: s.cid, data: { id: post.id } });
    expect(svcSignatureValid(secret, evReq)).toBe(true);

    // Test: 202 at once, the ping comes through the queue.
    const t1 = await app.call("POST", `${hooks}/${hookId}/test`, { token: s.token });
    expect(t1.status).toBe(202);
    expect(t1.body).toEqual({ accepted: true, event_id: expect.stringMatching(/^evt_/), delivery_id: expect.stringMatching(/^dlv_/) });
    const [ping] = await received("/records", 1, t1.body.event_id);
    const pingBody = verifyStandard(secret, ping);
    expect(pingBody).toEqual({ id: t1.body.event_id, type: "ping", created_at: expect.stringMatching(ISO), community_id: s.cid, data: { webhook_id: hookId } });
    expect(svcSignatureValid(secret, ping)).toBe(true);

    // Deliveries: the attempt with the bytes sent (recorded once the receiver answered).
    let attempts: any[] = [];
    await waitUntil(async () => {
      attempts = (await app.call("GET", `${hooks}/${hookId}/deliveries`, { token: s.token })).body.data;
      return attempts.some((a) => a.event_id === t1.body.event_id);
    }, 10_000, "the ping's attempt recorded");
    const attempt = attempts.find((a) => a.event_id === t1.body.event_id);
    expect(attempt).toMatchObject({ id: expect.stringMatching(/^att_/), delivery_id: t1.body.delivery_id, event_type: "ping", attempt_number: 1, request_body: ping.body, response_status: 200, response_body: "ok", error_class: null, succeeded: true });
    expect(attempt.created_at).toMatch(ISO);

    // Redeliver: the same bytes under the same event id, freshly signed.
    const re = await app.call("POST", `${hooks}/${hookId}/deliveries/${t1.body.delivery_id}/redeliver`, { token: s.token });
    expect(re.status).toBe(202);
    expect(re.body).toEqual({ accepted: true, event_id: t1.body.event_id, delivery_id: t1.body.delivery_id });
    const both = await received("/records", 2, t1.body.event_id);
    expect(both[1].body).toBe(ping.body);
    expect(verifyStandard(secret, both[1]).id).toBe(t1.body.event_id);
    await waitUntil(async () => (await app.call("GET", `${hooks}/${hookId}/deliveries`, { token: s.token })).body.data.filter((a: any) => a.event_id === t1.body.event_id).length === 2, 10_000, "the redelivery recorded");

    // Pause: test refused; re-enable.
    const paused = await app.call("PATCH", `${hooks}/${hookId}`, { token: s.token, body: { disabled: true } });
    expect(paused.status).toBe(200);
    expect(paused.body).toMatchObject({ disabled: true, disabled_reason: "manual" });
    expect(paused.body.disabled_at).toMatch(ISO);
    expect((await app.call("POST", `${hooks}/${hookId}/test`, { token: s.token })).body.error.code).toBe("WEBHOOK_DISABLED");
    const resumed = await app.call("PATCH", `${hooks}/${hookId}`, { token: s.token, body: { disabled: false } });
    expect(resumed.body).toMatchObject({ disabled: false, disabled_at: null, disabled_reason: null });

    // Rotate: a new secret, effective at once (the old one verifies nothing).
    const rotated = await app.call("POST", `${hooks}/${hookId}/rotate-secret`, { token: s.token });
    expect(rotated.status).toBe(200);
    const secret2 = rotated.body.signing_secret as string;
    expect(secret2).toMatch(/^whsec_/);
    expect(secret2).not.toBe(secret);
    expect(rotated.body.signing_secret_hint).toBe(secret2.slice(-4));
    const t2 = await app.call("POST", `${hooks}/${hookId}/test`, { token: s.token });
    const [ping2] = await received("/records", 1, t2.body.event_id);
    expect(verifyStandard(secret2, ping2).id).toBe(t2.body.event_id);
    expect(svcSignatureValid(secret2, ping2)).toBe(true);
    expect(() => verifyStandard(secret, ping2)).toThrow();
    expect(svcSignatureValid(secret, ping2)).toBe(false);

    const del = await app.call("DELETE", `${hooks}/${hookId}`, { token: s.token });
    expect(del.status).toBe(204);
    expect((await app.call("GET", `${hooks}/${hookId}`, { token: s.token })).status).toBe(404);
    expect((await app.call("GET", hooks, { token: s.token })).body.data).toEqual([]);
  }, 60_000);
});

describe("shared webhook routes", () => {
  test("workspace and community scopes: event types, endpoints, test, rotate-secret, events, replay; a community event fans out to the community's endpoint", async () => {
    const s = await communitySetup(app);
    const scopes = [
      { name: "workspace", base: `/social/v1/workspaces/${s.ws.id}/webhooks`, path: "/shared-ws" },
      { name: "community", base: `${s.base}/webhooks`, path: "/shared-c" },
    ];
    for (const scope of scopes) {
      const call = (method: string, path: string, body?: unknown) => app.call(method, `${scope.base}${path}`, { token: s.token, body });
      const types = await call("GET", "/event-types");
      expect(types.status).toBe(200);
      expect(types.body.data).toHaveLength(21);
      expect(types.body.data.find((t: any) => t.type === "post.created")).toEqual({ type: "post.created", description: expect.any(String), example: expect.any(Object) });

      const ep = await call("POST", "/endpoints", { url: `${receiver.url}${scope.path}`, description: `${scope.name} endpoint`, event_types: ["post.created", "comment.created"] });
      expect(ep.status).toBe(201);
      const secret = ep.body.signing_secret as string;
      expect(ep.body.id).toMatch(/^ep_/);
      expect(ep.body).toMatchObject({ url: `${receiver.url}${scope.path}`, description: `${scope.name} endpoint`, event_types: ["post.created", "comment.created"], enabled: true, status: "enabled", signing_secret_hint: secret.slice(-4) });
      const { signing_secret: _x, ...view } = ep.body;
      expect((await call("GET", `/endpoints/${ep.body.id}`)).body).toEqual(view);
      expect((await call("GET", "/endpoints")).body.data).toEqual([view]);
      const patched = await call("PATCH", `/endpoints/${ep.body.id}`, { description: "renamed", event_types: ["post.created"] });
      expect(patched.status).toBe(200);
      expect(patched.body).toMatchObject({ description: "renamed", event_types: ["post.created"] });
      expect((await call("GET", `/endpoints/${ep.body.id}`)).body.description).toBe("renamed");

      // Test: sent now, the receiver's answer returned; signed with the secret.
      const sent = await call("POST", `/endpoints/${ep.body.id}/test`, { event_type: "post.created" });
      expect(sent.status).toBe(200);
      expect(sent.body.event_id).toMatch(/^evt_/);
      expect(sent.body).toMatchObject({ succeeded: true, status_code: 200, trigger: "test", error_class: null });
      const [testReq] = at(scope.path, sent.body.event_id);
      expect(verifyStandard(secret, testReq)).toMatchObject({ id: sent.body.event_id, type: "post.created", test: true });

      // Rotate with no grace: the new secret alone signs.
      const rotated = await call("POST", `/endpoints/${ep.body.id}/rotate-secret`, { grace_hours: 0 });
      expect(rotated.status).toBe(200);
      const secret2 = rotated.body.signing_secret as string;
      expect(secret2).not.toBe(secret);
      const sent2 = await call("POST", `/endpoints/${ep.body.id}/test`, {});
      expect(sent2.body.succeeded).toBe(true);
      const [testReq2] = at(scope.path, sent2.body.event_id);
      expect(verifyStandard(secret2, testReq2).id).toBe(sent2.body.event_id);
      expect(() => verifyStandard(secret, testReq2)).toThrow();

      // Events log: the tests, with their delivery; one event in detail; a replay resends its bytes.
      const log = await call("GET", "/events");
      expect(log.status).toBe(200);
      expect(log.body.data.map((e: any) => e.id)).toEqual(expect.arrayContaining([sent.body.event_id, sent2.body.event_id]));
      const detail = await call("GET", `/events/${sent.body.event_id}`);
      expect(detail.status).toBe(200);
      expect(detail.body).toMatchObject({ id: sent.body.event_id, type: "post.created", is_test: true, payload: JSON.parse(testReq.body), attempts: [expect.objectContaining({ endpoint_id: ep.body.id, trigger: "test", status_code: 200 })] });
      const replay = await app.call("POST", `${scope.base}/events/${sent2.body.event_id}/replay?endpoint_id=${ep.body.id}`, { token: s.token });
      expect(replay.status).toBe(200);
      expect(replay.body.data).toEqual([expect.objectContaining({ endpoint_id: ep.body.id, succeeded: true, status_code: 200, trigger: "replay" })]);
      const replays = at(scope.path, sent2.body.event_id);
      expect(replays).toHaveLength(2);
      expect(replays[1].body).toBe(testReq2.body);
      expect(verifyStandard(secret2, replays[1]).id).toBe(sent2.body.event_id);
    }

    // A community event (a post) is delivered by the scheduler to the community endpoint only.
    const author = await s.actor();
    const post = await createPost(s, { actor_id: author.id, body: "fan out" });
    const isPost = (q: ReceivedRequest) => JSON.parse(q.body).type === "post.created" && JSON.parse(q.body).data?.id === post.id;
    await waitUntil(() => at("/shared-c").some(isPost), 20_000, "post.created to the community endpoint");
    const delivered = at("/shared-c").find(isPost)!;
    const eventId = delivered.headers["webhook-id"];
    const community = `${s.base}/webhooks`;
    let ev: any;
    await waitUntil(async () => {
      ev = (await app.call("GET", `${community}/events/${eventId}`, { token: s.token })).body;
      return ev.deliveries?.[0]?.status === "delivered";
    }, 10_000, "the delivery settled");
    expect(ev).toMatchObject({ id: eventId, type: "post.created", is_test: false, payload: JSON.parse(delivered.body) });
    expect((await app.call("GET", `${community}/events?type=post.created`, { token: s.token })).body.data.map((e: any) => e.id)).toContain(eventId);
    // Replay without endpoint_id: to every endpoint that had the event.
    const replay = await app.call("POST", `${community}/events/${eventId}/replay`, { token: s.token });
    expect(replay.body.data).toEqual([expect.objectContaining({ succeeded: true, trigger: "replay" })]);
    expect(at("/shared-c", eventId).map((q) => q.body)).toEqual([delivered.body, delivered.body]);
    expect(at("/shared-ws").some(isPost)).toBe(false);

    // Delete at both scopes.
    for (const scope of scopes) {
      const [ep] = (await app.call("GET", `${scope.base}/endpoints`, { token: s.token })).body.data;
      expect((await app.call("DELETE", `${scope.base}/endpoints/${ep.id}`, { token: s.token })).status).toBe(204);
      expect((await app.call("GET", `${scope.base}/endpoints/${ep.id}`, { token: s.token })).status).toBe(404);
      expect((await app.call("GET", `${scope.base}/endpoints`, { token: s.token })).body.data).toEqual([]);
    }
  }, 60_000);
});

describe("conversations and messages", () => {
  test("direct and group conversations, messages, read state and unread count, participants, folders; dm.message.created delivered", async () => {
    const s = await communitySetup(app);
    const hook = (await app.call("POST", `${s.base}/webhooks`, { token: s.token, body: { url: `${receiver.url}/dm`, event_types: ["dm.message.created"] } })).body;
    const [ann, bob, cat, dan] = [await s.actor(), await s.actor(), await s.actor(), await s.actor()];

    const dm = await s.call("POST", "/conversations", { actor_id: ann.id, recipient_actor_id: bob.id });
    expect(dm.status).toBe(201);
    expect(dm.body).toMatchObject({ community_id: s.cid, kind: "direct", name: null, created_by: null, last_message_at: null });
    expect(dm.body.participants.map((p: any) => p.actor_id).sort()).toEqual([ann.id, bob.id].sort());
    expect((await s.call("POST", "/conversations", { actor_id: bob.id, recipient_actor_id: ann.id })).body.id).toBe(dm.body.id);
    const group = await s.call("POST", "/conversations", { actor_id: ann.id, kind: "group", actor_ids: [bob.id, cat.id], name: "Trip" });
    expect(group.status).toBe(201);
    expect(group.body).toMatchObject({ kind: "group", name: "Trip", created_by: ann.id });

    // Messages: newest first; the sender has read its own.
    const m1 = await s.call("POST", `/conversations/${dm.body.id}/messages`, { actor_id: ann.id, body: "  Lunch?  " });
    expect(m1.status).toBe(201);
    expect(m1.body).toEqual({ id: expect.any(String), conversation_id: dm.body.id, community_id: s.cid, sender_actor_id: ann.id, body: "Lunch?", assets: [], created_at: expect.stringMatching(ISO) });
    const m2 = (await s.call("POST", `/conversations/${dm.body.id}/messages`, { actor_id: bob.id, body: "Sure" })).body;
    const m3 = (await s.call("POST", `/conversations/${group.body.id}/messages`, { actor_id: cat.id, body: "Tickets booked" })).body;
    const msgs = await s.call("GET", `/conversations/${dm.body.id}/messages`);
    expect(msgs.status).toBe(200);
    expect(msgs.body.data.map((m: any) => m.id)).toEqual([m2.id, m1.body.id]);
    expect((await allPages(s, `/conversations/${dm.body.id}/messages`, 1)).map((m) => m.body)).toEqual(["Sure", "Lunch?"]);
    const read1 = await s.call("GET", `/conversations/${dm.body.id}`);
    expect(read1.status).toBe(200);
    expect(read1.body.last_message_at).toMatch(ISO);

    // Unread: ann has bob's message and cat's; reading the direct one leaves the group.
    const unread = async (id: string) => {
      const r = await s.call("GET", `/conversations/unread-count?actor_id=${id}`);
      expect(r.status).toBe(200);
      return r.body.count as number;
    };
    expect(await unread(ann.id)).toBe(2);
    expect(await unread(bob.id)).toBe(1);
    const read = await s.call("POST", `/conversations/${dm.body.id}/read`, { actor_id: ann.id });
    expect(read.status).toBe(200);
    expect(read.body.participants.find((p: any) => p.actor_id === ann.id).last_read_at).toMatch(ISO);
    expect(await unread(ann.id)).toBe(1);

    // Participants: add, mute (excluded from unread), leave.
    const added = await s.call("POST", `/conversations/${group.body.id}/participants`, { actor_id: ann.id, actor_ids: [dan.id] });
    expect(added.status).toBe(200);
    expect(added.body.participants.map((p: any) => p.actor_id)).toContain(dan.id);
    const muted = await s.call("PATCH", `/conversations/${group.body.id}/participants/${ann.id}`, { muted: true });
    expect(muted.status).toBe(200);
    expect(muted.body.participants.find((p: any) => p.actor_id === ann.id).muted).toBe(true);
    expect(await unread(ann.id)).toBe(0);
    const left = await s.call("DELETE", `/conversations/${group.body.id}/participants/${cat.id}`);
    expect(left.status).toBe(204);
    expect((await s.call("GET", `/conversations/${group.body.id}`)).body.participants.map((p: any) => p.actor_id).sort()).toEqual([ann.id, bob.id, dan.id].sort());

    // Folders: bob's inbox has all three, most recent activity first (dan's, just opened, then the
    // group's last message, then the direct one's); once bob restricts dan,
    // dan's direct conversation moves to bob's requests.
    const fromDan = (await s.call("POST", "/conversations", { actor_id: dan.id, recipient_actor_id: bob.id })).body;
    const inbox = await s.call("GET", `/conversations?actor_id=${bob.id}`);
    expect(inbox.status).toBe(200);
    expect(inbox.body.data.map((c: any) => c.id)).toEqual([fromDan.id, group.body.id, dm.body.id]);
    expect((await s.call("POST", "/restricts", { src_actor_id: bob.id, dst_actor_id: dan.id })).status).toBe(201);
    expect((await s.call("GET", `/conversations?actor_id=${bob.id}&status=requests`)).body.data.map((c: any) => c.id)).toEqual([fromDan.id]);
    expect((await s.call("GET", `/conversations?actor_id=${bob.id}&status=inbox`)).body.data.map((c: any) => c.id)).toEqual([group.body.id, dm.body.id]);
    expect((await s.call("GET", `/conversations?actor_id=${bob.id}&status=all`)).body.data.map((c: any) => c.id)).toEqual([fromDan.id, group.body.id, dm.body.id]);

    // Each message was delivered as dm.message.created with its recipients.
    const reqs = await received("/dm", 3);
    const events = reqs.map((q) => verifyStandard(hook.signing_secret, q));
    const byMessage = new Map(events.map((e) => [e.data.id, e]));
    expect(byMessage.get(m1.body.id)).toMatchObject({ type: "dm.message.created", community_id: s.cid, data: { conversation_id: dm.body.id, conversation_kind: "direct", sender_actor_id: ann.id, recipient_actor_ids: [bob.id], body: "Lunch?" } });
    expect(byMessage.get(m3.id).data.recipient_actor_ids.sort()).toEqual([ann.id, bob.id].sort());
  }, 60_000);
});

describe("assets", () => {
  test("multipart upload and two-step upload are processed into renditions; signed rendition URLs; a ready asset goes into a message", async () => {
    const s = await communitySetup(app);
    const owner = await s.actor();
    const form = new FormData();
    form.append("actor_id", owner.id);
    form.append("file", new Blob([(await jpeg(1200, 900)) as Uint8Array<ArrayBuffer>]), "photo.jpg");
    const up = await s.call("POST", "/assets", form);
    expect(up.status).toBe(201);
    expect(up.body).toMatchObject({ community_id: s.cid, owner_actor_id: owner.id, kind: "image", status: "processing", renditions: [] });

    // Two-step: a signed PUT URL, then the bytes.
    const slot = await s.call("POST", "/assets/uploads", { actor_id: owner.id });
    expect(slot.status).toBe(201);
    expect(slot.body).toMatchObject({ asset: { status: "uploading", owner_actor_id: owner.id }, upload_method: "PUT" });
    expect(slot.body.upload_expires_at).toMatch(ISO);
    const png = new Uint8Array(await sharp({ create: { width: 300, height: 200, channels: 4, background: "#ff880080" } }).png().toBuffer());
    const put = await fetchPublic(slot.body.upload_url, { method: "PUT", body: png, headers: { "content-type": "application/octet-stream" } });
    expect(put.status).toBe(204);
    expect((await fetchPublic(slot.body.upload_url, { method: "PUT", body: png })).status).toBe(409);

    const jpg = await settledAsset(s, up.body.id);
    expect(jpg).toMatchObject({ status: "ready", content_type: "image/jpeg", width: 1200, height: 900, failure_reason: null });
    expect(jpg.renditions.map((r: any) => [r.name, r.content_type, r.width, r.height])).toEqual([
      ["thumb", "image/jpeg", 200, 150],
      ["small", "image/jpeg", 640, 480],
      ["large", "image/jpeg", 1200, 900],
      ["webp", "image/webp", 1200, 900],
    ]);
    const two = await settledAsset(s, slot.body.asset.id);
    expect(two).toMatchObject({ status: "ready", content_type: "image/png", width: 300, height: 200 });

    // A rendition: credential-free through its signed URL, a real image of the stated size.
    const small = jpg.renditions.find((r: any) => r.name === "small");
    const res = await fetchPublic(small.url);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("image/jpeg");
    const bytes = new Uint8Array(await res.arrayBuffer());
    expect(bytes.byteLength).toBe(small.byte_size);
    const meta = await sharp(bytes).metadata();
    expect([meta.format, meta.width, meta.height]).toEqual(["jpeg", 640, 480]);
    const webp = await fetchPublic(two.renditions.find((r: any) => r.name === "webp").url);
    expect(webp.status).toBe(200);
    expect((await sharp(new Uint8Array(await webp.arrayBuffer())).metadata()).format).toBe("webp");
    expect((await fetchPublic(small.url.replace("/small?", "/large?"))).status).toBe(403);

    // The ready asset event is in the community's events log; the asset goes into a message.
    let logged: any[] = [];
    await waitUntil(async () => {
      logged = (await app.call("GET", `${s.base}/webhooks/events?type=asset.ready`, { token: s.token })).body.data;
      return logged.length >= 2;
    }, 10_000, "asset.ready events logged");
    const payloads = await Promise.all(logged.map(async (e) => (await app.call("GET", `${s.base}/webhooks/events/${e.id}`, { token: s.token })).body.payload.data.id));
    expect(payloads.sort()).toEqual([up.body.id, slot.body.asset.id].sort());
    const peer = await s.actor();
    const conv = (await s.call("POST", "/conversations", { actor_id: owner.id, recipient_actor_id: peer.id })).body;
    const msg = await s.call("POST", `/conversations/${conv.id}/messages`, { actor_id: owner.id, body: "look", assets: [{ asset_id: jpg.id, alt_text: "blue" }] });
    expect(msg.status).toBe(201);
    expect(msg.body.assets).toEqual([{ asset_id: jpg.id, alt_text: "blue" }]);
  }, 60_000);
});

describe("flags and moderation", () => {
  test("flags fill the review queue; actions with their events; keyword filters block and are removed", async () => {
    const s = await communitySetup(app);
    const mod = (method: string, path: string, body?: unknown) => app.call(method, `/social/v1/workspaces/${s.ws.id}/communities/${s.cid}/moderation${path}`, { token: s.token, body });
    const hook = (await app.call("POST", `${s.base}/webhooks`, { token: s.token, body: { url: `${receiver.url}/mod`, event_types: ["flag.created", "flag.updated", "moderation.action.applied"] } })).body;
    const [author, r1, r2, viewer] = [await s.actor(), await s.actor(), await s.actor(), await s.actor()];
    const post = await createPost(s, { actor_id: author.id, body: "cheap pills here" });

    const f1 = await s.call("POST", "/flags", { reporter_actor_id: r1.id, target_type: "post", target_id: post.id, reason: "spam", note: "ads" });
    expect(f1.status).toBe(201);
    expect(f1.body).toMatchObject({ created: true, flag: { reporter_actor_id: r1.id, target_type: "post", target_id: post.id, target_actor_id: author.id, reason: "spam", note: "ads", status: "open", auto_hidden: false } });
    const f2 = await s.call("POST", "/flags", { reporter_actor_id: r2.id, target_type: "post", target_id: post.id, reason: "other" });
    expect(f2.body.created).toBe(true);

    const queue = await mod("GET", "/queue");
    expect(queue.status).toBe(200);
    expect(queue.body.data).toEqual([expect.objectContaining({ target_type: "post", target_id: post.id, target_actor_id: author.id, flag_count: 2, reporter_count: 2, reasons: { other: 1, spam: 1 } })]);
    expect(queue.body.data[0].flags.map((f: any) => f.id).sort()).toEqual([f1.body.flag.id, f2.body.flag.id].sort());

    // Remove through a flag: the flags close, the post is gone for readers, the queue is empty.
    const removed = await mod("POST", "/actions", { action: "remove", flag_id: f1.body.flag.id, reason: "spam", moderator_external_id: "mod_7" });
    expect(removed.status).toBe(201);
    expect(removed.body).toMatchObject({ action: "remove", target_type: "post", target_id: post.id, flag_id: f1.body.flag.id, flags_closed: 2, moderator_external_id: "mod_7", reason: "spam" });
    expect((await s.call("GET", `/posts/${post.id}?actor_id=${viewer.id}`)).status).toBe(404);
    expect((await mod("GET", "/queue")).body.data).toEqual([]);
    const restored = await mod("POST", "/actions", { action: "restore", target_type: "post", target_id: post.id });
    expect(restored.status).toBe(201);
    expect((await s.call("GET", `/posts/${post.id}?actor_id=${viewer.id}`)).status).toBe(200);
    const warned = await mod("POST", "/actions", { action: "warn", target_type: "post", target_id: post.id, reason: "no ads" });
    expect(warned.body).toMatchObject({ action: "warn", target_actor_id: author.id });
    const inbox = (await s.call("GET", `/actors/${author.id}/notifications`)).body.data;
    expect(inbox.map((n: any) => n.type)).toContain("moderation");

    // Keyword filters: block refuses the write; removed, the same write passes.
    const kw = await mod("POST", "/keywords", { keyword: "  Cheap Pills ", action: "block" });
    expect(kw.status).toBe(201);
    expect(kw.body).toMatchObject({ community_id: s.cid, keyword: "cheap pills", action: "block" });
    expect(kw.body.created_at).toMatch(ISO);
    const list = await mod("GET", "/keywords");
    expect(list.status).toBe(200);
    expect(list.body.data.map((k: any) => [k.id, k.keyword])).toEqual([[kw.body.id, "cheap pills"]]);
    const blocked = await s.call("POST", "/posts", { actor_id: author.id, body: "CHEAP PILLS again" });
    expect(blocked.status).toBe(422);
    expect(blocked.body.error.code).toBe("CONTENT_BLOCKED");
    expect((await mod("DELETE", `/keywords/${kw.body.id}`)).status).toBe(204);
    expect((await mod("GET", "/keywords")).body.data).toEqual([]);
    expect((await s.call("POST", "/posts", { actor_id: author.id, body: "cheap pills again" })).status).toBe(201);

    // The events, delivered: two flags, their closing, and the three actions.
    await waitUntil(() => at("/mod").filter((q) => JSON.parse(q.body).type === "moderation.action.applied").length >= 3, 20_000, "moderation events delivered");
    await waitUntil(() => at("/mod").filter((q) => JSON.parse(q.body).type === "flag.updated").length >= 2, 20_000, "flag.updated delivered");
    const events = at("/mod").map((q) => verifyStandard(hook.signing_secret, q));
    const of = (type: string) => events.filter((e) => e.type === type).map((e) => e.data);
    expect(of("flag.created").map((d) => d.id).sort()).toEqual([f1.body.flag.id, f2.body.flag.id].sort());
    expect(of("flag.updated").map((d) => d.status)).toEqual(["resolved", "resolved"]);
    expect(of("moderation.action.applied").map((d) => d.action).sort()).toEqual(["remove", "restore", "warn"]);
  }, 60_000);
});

describe("notifications", () => {
  test("the inbox groups activities on a post; counts; seen and read (some, then all)", async () => {
    const s = await communitySetup(app);
    const [me, fan1, fan2] = [await s.actor(), await s.actor(), await s.actor()];
    const post = await createPost(s, { actor_id: me.id, body: "my garden" });
    for (const f of [fan1, fan2]) expect((await s.call("POST", `/posts/${post.id}/reactions`, { actor_id: f.id, type: "like" })).status).toBeLessThan(300);
    expect((await s.call("POST", `/posts/${post.id}/comments`, { actor_id: fan1.id, body: "lovely" })).status).toBe(201);
    expect((await s.call("POST", "/follows", { actor_id: fan2.id, dst_actor_id: me.id })).status).toBe(201);

    const list = await s.call("GET", `/actors/${me.id}/notifications`);
    expect(list.status).toBe(200);
    const byType = Object.fromEntries(list.body.data.map((n: any) => [n.type, n]));
    expect(Object.keys(byType).sort()).toEqual(["comment", "follow", "reaction"]);
    expect(byType.reaction).toMatchObject({ actor_id: me.id, target_type: "post", target_id: post.id, activity_count: 2, actor_count: 2, is_read: false, is_seen: false });
    expect(byType.reaction.latest_actor_ids.sort()).toEqual([fan1.id, fan2.id].sort());
    expect(byType.comment).toMatchObject({ target_id: post.id, activity_count: 1, latest_actor_ids: [fan1.id] });
    expect(byType.follow).toMatchObject({ latest_actor_ids: [fan2.id] });
    for (const n of list.body.data) expect([n.created_at, n.updated_at].every((x: string) => ISO.test(x))).toBe(true);
    expect(list.body).toMatchObject({ unread_count: 3, unseen_count: 3 });

    const counts = await s.call("GET", `/actors/${me.id}/notifications/counts`);
    expect(counts.status).toBe(200);
    expect(counts.body).toEqual({ unread_count: 3, unseen_count: 3 });
    const seen = await s.call("POST", `/actors/${me.id}/notifications/seen`, {});
    expect(seen.status).toBe(200);
    expect(seen.body).toEqual({ updated: 3, unread_count: 3, unseen_count: 0 });
    const readSome = await s.call("POST", `/actors/${me.id}/notifications/read`, { ids: [byType.reaction.id] });
    expect(readSome.status).toBe(200);
    expect(readSome.body).toEqual({ updated: 1, unread_count: 2, unseen_count: 0 });
    const after = (await s.call("GET", `/actors/${me.id}/notifications`)).body.data;
    expect(Object.fromEntries(after.map((n: any) => [n.type, [n.is_read, n.is_seen]]))).toEqual({ reaction: [true, true], comment: [false, true], follow: [false, true] });
    expect((await s.call("POST", `/actors/${me.id}/notifications/read`, {})).body).toEqual({ updated: 2, unread_count: 0, unseen_count: 0 });
    expect((await s.call("GET", `/actors/${me.id}/notifications/counts`)).body).toEqual({ unread_count: 0, unseen_count: 0 });
  });
});
