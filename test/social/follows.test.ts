/**
 * Follows over HTTP: single and batch (suppress_notifications), private actors and follow
 * requests (approve, decline, list), unfollow, following/followers pages with expand and
 * cursors, exact counters under a storm of concurrent follows and unfollows, events in the
 * write's transaction and their signed webhook deliveries (checked with standardwebhooks).
 */
import { afterAll, beforeAll, describe, expect, setSystemTime, test } from "bun:test";
import { Webhook } from "standardwebhooks";
import { recount } from "../../src/services/social/graph/store";
import { startTestApp, type TestApp } from "../helpers/app";
import { startReceiver, type Receiver } from "../helpers/http-receiver";
import { allPages, communitySetup, eventsOf, keyWith } from "../helpers/social";
import { inProcess, ON_BINARY } from "../helpers/target";

let app: TestApp;
let receiver: Receiver;
beforeAll(async () => {
  // What startWebhookTestApp does, minus the in-process switch: the binary's pump runs by itself.
  app = await startTestApp({ ALLOW_PRIVATE_TARGETS: "true" });
  if (!ON_BINARY) app.webhooks.options.autoKick = false;
  receiver = startReceiver();
});
afterAll(async () => {
  await app.stop();
  await receiver.stop();
});

const UNKNOWN = "0192f201-1111-7aaa-8bbb-0c0d0e0f1a1b";

describe("follow", () => {
  inProcess("compares the edge's created_at with the injected clock")("201 followed with the edge; idempotent; counters move once; edge.follow.created once", async () => {
    const s = await communitySetup(app);
    const a = await s.actor();
    const b = await s.actor();
    const r = await s.call("POST", "/follows", { actor_id: a.id, dst_actor_id: b.id, payload: { source: "profile" } });
    expect(r.status).toBe(201);
    expect(r.body).toEqual({
      status: "followed",
      created: true,
      edge: { id: expect.any(String), community_id: s.cid, kind: "follow", src_actor_id: a.id, dst_actor_id: b.id, dst_post_id: null, payload: { source: "profile" }, created_at: app.clock.iso() },
    });
    const again = await s.call("POST", "/follows", { actor_id: a.id, dst_actor_id: b.id });
    expect(again.status).toBe(201);
    expect(again.body).toMatchObject({ status: "followed", created: false, edge: { id: r.body.edge.id } });
    expect(await s.counters(a.id)).toMatchObject({ following_count: 1, follower_count: 0 });
    expect(await s.counters(b.id)).toMatchObject({ following_count: 0, follower_count: 1 });
    expect((await eventsOf(app, s.cid, "edge.")).map((e) => e.type)).toEqual(["edge.follow.created"]);
  });

  test("400 invalid ids, 404 unknown or other community's actor, 422 self-follow", async () => {
    const s = await communitySetup(app);
    const other = await communitySetup(app);
    const a = await s.actor();
    const foreign = await other.actor();
    expect((await s.call("POST", "/follows", { actor_id: "nope", dst_actor_id: a.id })).status).toBe(400);
    expect((await s.call("POST", "/follows", { actor_id: a.id })).status).toBe(400);
    expect((await s.call("POST", "/follows", { actor_id: a.id, dst_actor_id: UNKNOWN })).status).toBe(404);
    expect((await s.call("POST", "/follows", { actor_id: a.id, dst_actor_id: foreign.id })).status).toBe(404);
    const self = await s.call("POST", "/follows", { actor_id: a.id, dst_actor_id: a.id });
    expect(self.status).toBe(422);
    expect(self.body.error.code).toBe("CANNOT_FOLLOW_SELF");
  });

  inProcess("compares deleted_at with the injected clock")("unfollow: 204 always (400 for a malformed id); counters back; edge.follow.deleted", async () => {
    const s = await communitySetup(app);
    const a = await s.actor();
    const b = await s.actor();
    await s.call("POST", "/follows", { actor_id: a.id, dst_actor_id: b.id });
    expect((await s.call("DELETE", `/follows/${a.id}/${b.id}`)).status).toBe(204);
    expect((await s.call("DELETE", `/follows/${a.id}/${b.id}`)).status).toBe(204);
    expect((await s.call("DELETE", `/follows/${UNKNOWN}/${UNKNOWN}`)).status).toBe(204);
    expect((await s.call("DELETE", `/follows/${UNKNOWN}/nope`)).status).toBe(400);
    expect(await s.counters(a.id)).toMatchObject({ following_count: 0 });
    expect(await s.counters(b.id)).toMatchObject({ follower_count: 0 });
    const ev = await eventsOf(app, s.cid, "edge.");
    expect(ev.map((e) => e.type)).toEqual(["edge.follow.created", "edge.follow.deleted"]);
    expect(ev[1].data).toMatchObject({ src_actor_id: a.id, dst_actor_id: b.id, deleted_at: app.clock.iso() });
  });

  test("another workspace cannot unfollow in this community (404 community)", async () => {
    const s = await communitySetup(app);
    const other = await communitySetup(app);
    const a = await s.actor();
    const b = await s.actor();
    await s.call("POST", "/follows", { actor_id: a.id, dst_actor_id: b.id });
    expect((await app.call("DELETE", `${s.base}/follows/${a.id}/${b.id}`, { token: other.token })).status).toBe(404);
    // Through its own community id the pair is not found: nothing happens.
    expect((await other.call("DELETE", `/follows/${a.id}/${b.id}`)).status).toBe(204);
    expect(await s.counters(b.id)).toMatchObject({ follower_count: 1 });
  });
});

describe("private actors and follow requests", () => {
  inProcess("compares a request's created_at with the frozen injected clock (equal to the actor's) and moves it")("pending request (edge null, edge.follow.requested); listed newest first; approve creates the edge with both events", async () => {
    const s = await communitySetup(app);
    const priv = await s.actor({ is_private: true });
    const a = await s.actor({ display_name: "Asker", avatar_url: "https://cdn.example.com/x.png" });
    const b = await s.actor();
    const r = await s.call("POST", "/follows", { actor_id: a.id, dst_actor_id: priv.id });
    expect(r.status).toBe(201);
    expect(r.body).toEqual({ status: "pending", edge: null, created: true });
    expect((await s.call("POST", "/follows", { actor_id: a.id, dst_actor_id: priv.id })).body).toEqual({ status: "pending", edge: null, created: false });
    app.clock.advance(1000);
    await s.call("POST", "/follows", { actor_id: b.id, dst_actor_id: priv.id });
    const list = await s.call("GET", `/actors/${priv.id}/follow-requests`);
    expect(list.body.data.map((x: any) => x.src_actor_id)).toEqual([b.id, a.id]);
    expect(list.body.data[1]).toEqual({ request_id: expect.any(String), src_actor_id: a.id, src_external_id: a.external_id, src_display_name: "Asker", src_avatar_url: "https://cdn.example.com/x.png", created_at: a.created_at });
    expect(await s.counters(priv.id)).toMatchObject({ follower_count: 0 });

    const ok = await s.call("POST", `/follow-requests/${priv.id}/${a.id}/approve`);
    expect(ok.status).toBe(201);
    expect(ok.body).toMatchObject({ created: true, edge: { kind: "follow", src_actor_id: a.id, dst_actor_id: priv.id } });
    expect(await s.counters(priv.id)).toMatchObject({ follower_count: 1 });
    expect((await s.call("POST", `/follow-requests/${priv.id}/${a.id}/approve`)).body).toMatchObject({ created: false });
    expect((await s.call("POST", `/follow-requests/${priv.id}/${UNKNOWN}/approve`)).status).toBe(404);
    expect((await s.call("POST", `/follow-requests/${a.id}/${b.id}/approve`)).status).toBe(404);
    expect((await eventsOf(app, s.cid, "edge.")).map((e) => e.type)).toEqual(["edge.follow.requested", "edge.follow.requested", "edge.follow.request_approved", "edge.follow.created"]);
    expect((await s.call("POST", "/follows", { actor_id: a.id, dst_actor_id: priv.id })).body).toMatchObject({ status: "followed", created: false });
  });

  test("decline: 204, no edge, no event; unfollow withdraws a pending request", async () => {
    const s = await communitySetup(app);
    const priv = await s.actor({ is_private: true });
    const a = await s.actor();
    const b = await s.actor();
    await s.call("POST", "/follows", { actor_id: a.id, dst_actor_id: priv.id });
    await s.call("POST", "/follows", { actor_id: b.id, dst_actor_id: priv.id });
    expect((await s.call("DELETE", `/follow-requests/${priv.id}/${a.id}`)).status).toBe(204);
    expect((await s.call("DELETE", `/follow-requests/${priv.id}/${a.id}`)).status).toBe(204);
    expect((await s.call("DELETE", `/follows/${b.id}/${priv.id}`)).status).toBe(204);
    expect((await s.call("GET", `/actors/${priv.id}/follow-requests`)).body.data).toEqual([]);
    expect((await eventsOf(app, s.cid, "edge.")).map((e) => e.type)).toEqual(["edge.follow.requested", "edge.follow.requested"]);
  });
});

describe("batch", () => {
  test("1-200 items; per-item errors (404, 409 blocked, 422); suppress_notifications skips edge.follow.created, counters still move", async () => {
    const s = await communitySetup(app);
    const hub = await s.actor();
    const ids = (await s.call("POST", "/actors/batch", { actors: Array.from({ length: 200 }, (_, i) => ({ external_id: `f${i}` })) })).body.data.map((d: any) => d.actor.id as string);
    const blocker = await s.actor();
    await s.call("POST", "/blocks", { src_actor_id: blocker.id, dst_actor_id: hub.id });
    const follows = ids.slice(0, 197).map((id: string) => ({ actor_id: id, dst_actor_id: hub.id }));
    follows.push({ actor_id: UNKNOWN, dst_actor_id: hub.id }, { actor_id: hub.id, dst_actor_id: hub.id }, { actor_id: blocker.id, dst_actor_id: hub.id });
    const r = await s.call("POST", "/follows/batch", { follows, suppress_notifications: true });
    expect(r.status).toBe(201);
    expect(r.body.succeeded).toBe(197);
    expect(r.body.failed).toBe(3);
    expect(r.body.data[0]).toMatchObject({ index: 0, success: true, status: "followed", created: true, error: null });
    expect(r.body.data.slice(197).map((d: any) => [d.index, d.success, d.error.status])).toEqual([[197, false, 404], [198, false, 422], [199, false, 409]]);
    expect(await s.counters(hub.id)).toMatchObject({ follower_count: 197 });
    expect((await eventsOf(app, s.cid, "edge.follow.created")).length).toBe(0);

    const loud = await s.call("POST", "/follows/batch", { follows: [{ actor_id: ids[198], dst_actor_id: hub.id }] });
    expect(loud.body.succeeded).toBe(1);
    expect((await eventsOf(app, s.cid, "edge.follow.created")).length).toBe(1);
    const tooMany = Array.from({ length: 201 }, () => ({ actor_id: hub.id, dst_actor_id: ids[0] }));
    expect((await s.call("POST", "/follows/batch", { follows: tooMany })).status).toBe(400);
    expect((await s.call("POST", "/follows/batch", { follows: tooMany.slice(0, 200) })).status).toBe(201);
    expect((await s.call("POST", "/follows/batch", { follows: [] })).status).toBe(400);
    expect((await s.call("POST", "/follows/batch", {})).status).toBe(400);
  });
});

describe("following and followers pages", () => {
  test("newest first over cursors; expand adds the other actor; INVALID_EXPAND; INVALID_CURSOR for raw ids; limits", async () => {
    const s = await communitySetup(app);
    const hub = await s.actor();
    const fans = [];
    for (let i = 0; i < 5; i++) {
      fans.push(await s.actor());
      await s.call("POST", "/follows", { actor_id: fans[i].id, dst_actor_id: hub.id });
      await s.call("POST", "/follows", { actor_id: hub.id, dst_actor_id: fans[i].id });
      if (!ON_BINARY) app.clock.advance(10); // the binary's real clock moves by itself (ties: edge ids, in creation order)
    }
    const followers = await allPages(s, `/actors/${hub.id}/followers`, 2);
    expect(followers.map((e) => e.src_actor_id)).toEqual(fans.map((f) => f.id).reverse());
    expect(followers[0].src_actor).toBeUndefined();
    const following = await allPages(s, `/actors/${hub.id}/following?expand=dst_actor`, 2);
    expect(following.map((e) => e.dst_actor.id)).toEqual(fans.map((f) => f.id).reverse());
    expect((await s.call("GET", `/actors/${hub.id}/followers?expand=src_actor`)).body.data[0].src_actor.id).toBe(fans[4].id);
    for (const path of [`/actors/${hub.id}/followers?expand=dst_actor`, `/actors/${hub.id}/following?expand=posts`]) {
      const r = await s.call("GET", path);
      expect(r.status).toBe(400);
      expect(r.body.error.code).toBe("INVALID_EXPAND");
    }
    const first = await s.call("GET", `/actors/${hub.id}/followers?limit=1`);
    const legacy = await s.call("GET", `/actors/${hub.id}/followers?cursor=${first.body.data[0].id}`);
    expect(legacy.status).toBe(400);
    expect(legacy.body.error.code).toBe("INVALID_CURSOR");
    expect((await s.call("GET", `/actors/${hub.id}/followers?limit=200`)).status).toBe(200);
    expect((await s.call("GET", `/actors/${hub.id}/followers?limit=201`)).status).toBe(400);
    expect((await s.call("GET", `/actors/${UNKNOWN}/followers`)).status).toBe(404);
    const creator = await keyWith(app, s, ["social.create"]);
    expect((await app.call("GET", `${s.base}/actors/${hub.id}/followers`, { token: creator })).status).toBe(403);
  });
});

describe("exact counters", () => {
  inProcess("recounts the edges in the store through app.ctx.db")("1,000 concurrent follow/unfollow pairs leave counters equal to a recount", async () => {
    const s = await communitySetup(app);
    const actors = (await s.call("POST", "/actors/batch", { actors: Array.from({ length: 12 }, (_, i) => ({ external_id: `storm-${i}` })) })).body.data.map((d: any) => d.actor.id as string);
    let seed = 7;
    const rnd = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2147483648), seed % n);
    const ops: Promise<unknown>[] = [];
    for (let i = 0; i < 1000; i++) {
      const a = actors[rnd(actors.length)];
      let b = actors[rnd(actors.length)];
      if (b === a) b = actors[(actors.indexOf(a) + 1) % actors.length];
      ops.push(s.call("POST", "/follows", { actor_id: a, dst_actor_id: b }).then((r) => expect(r.status).toBe(201)));
      ops.push(s.call("DELETE", `/follows/${a}/${b}`).then((r) => expect(r.status).toBe(204)));
    }
    await Promise.all(ops);
    const counters = (await s.call("GET", `/counters?actor_ids=${actors.join(",")}`)).body.data;
    for (const c of counters) {
      const truth = await recount(app.ctx.db, c.actor_id);
      expect({ follower_count: c.follower_count, following_count: c.following_count }).toEqual({ follower_count: truth.follower_count, following_count: truth.following_count });
    }
  }, 60_000);
});

describe("webhooks", () => {
  test("edge.follow.* deliveries are signed (standardwebhooks) with the community envelope", async () => {
    const s = await communitySetup(app);
    const hook = await app.call("POST", `${s.base}/webhooks`, { token: s.token, body: { url: `${receiver.url}/graph`, event_types: ["edge.follow.created", "edge.follow.deleted", "edge.follow.requested", "edge.follow.request_approved", "actor.updated"] } });
    expect(hook.status).toBe(201);
    const a = await s.actor();
    const b = await s.actor({ is_private: true });
    await s.call("POST", "/follows", { actor_id: a.id, dst_actor_id: b.id });
    await s.call("POST", `/follow-requests/${b.id}/${a.id}/approve`);
    await s.call("DELETE", `/follows/${a.id}/${b.id}`);
    await s.call("POST", "/actors", { external_id: a.external_id, display_name: "Renamed" });
    const graph = () => receiver.requests.filter((q) => q.path === "/graph");
    if (ON_BINARY) {
      // The process's own pump delivers: wait for the five events (real time, with a deadline).
      for (const deadline = Date.now() + 10_000; graph().length < 5 && Date.now() < deadline; ) await Bun.sleep(25);
    } else {
      await app.webhooks.dispatchPending();
      await app.webhooks.deliverDue();
    }
    const got = graph();
    setSystemTime(app.clock.now());
    try {
      const bodies = got.map((q) =>
        new Webhook(hook.body.signing_secret).verify(q.body, { "webhook-id": q.headers["webhook-id"], "webhook-timestamp": q.headers["webhook-timestamp"], "webhook-signature": q.headers["webhook-signature"] }),
      ) as any[];
      expect(bodies.map((b) => b.type).sort()).toEqual(["actor.updated", "edge.follow.created", "edge.follow.deleted", "edge.follow.request_approved", "edge.follow.requested"]);
      for (const body of bodies) expect(body).toMatchObject({ id: expect.stringMatching(/^evt_/), community_id: s.cid, created_at: expect.any(String) });
      const approved = bodies.find((x) => x.type === "edge.follow.request_approved");
      expect(approved.data).toMatchObject({ kind: "follow", src_actor_id: a.id, dst_actor_id: b.id, request_id: expect.any(String), approved_at: expect.any(String) });
    } finally {
      setSystemTime();
    }
  });
});
