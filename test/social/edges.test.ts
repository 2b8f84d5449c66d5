/**
 * Mutes, blocks, restricts and close friends over HTTP: self rules (422), blocks either way
 * (409), what a block removes (follows both ways with their counters, requests, close
 * friends), idempotent creates, 204-always deletes, lists, actions, and actor deletion
 * correcting the counters of the other side.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { recount } from "../../src/services/social/graph/store";
import { startTestApp, type TestApp } from "../helpers/app";
import { inProcess, ON_BINARY } from "../helpers/target";
import { allPages, communitySetup, eventsOf, keyWith } from "../helpers/social";

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
  if (!ON_BINARY) app.webhooks.options.autoKick = false;
});
afterAll(() => app.stop());

const UNKNOWN = "0192f201-1111-7aaa-8bbb-0c0d0e0f1a1b";

describe("mutes", () => {
  test("201 {edge, created}; idempotent; 422 self; 409 block either way; 400 invalid ids; 404 unknown; list and delete", async () => {
    const s = await communitySetup(app);
    const a = await s.actor();
    const b = await s.actor();
    const c = await s.actor();
    const r = await s.call("POST", "/mutes", { src_actor_id: a.id, dst_actor_id: b.id, payload: { until: "never" } });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ created: true, edge: { kind: "mute", src_actor_id: a.id, dst_actor_id: b.id, payload: { until: "never" }, dst_post_id: null } });
    expect((await s.call("POST", "/mutes", { src_actor_id: a.id, dst_actor_id: b.id })).body).toMatchObject({ created: false, edge: { id: r.body.edge.id } });
    const self = await s.call("POST", "/mutes", { src_actor_id: a.id, dst_actor_id: a.id });
    expect(self.status).toBe(422);
    expect(self.body.error.code).toBe("CANNOT_MUTE_SELF");
    expect((await s.call("POST", "/mutes", { src_actor_id: "x", dst_actor_id: b.id })).status).toBe(400);
    expect((await s.call("POST", "/mutes", { src_actor_id: a.id, dst_actor_id: UNKNOWN })).status).toBe(404);
    await s.call("POST", "/blocks", { src_actor_id: c.id, dst_actor_id: a.id });
    expect((await s.call("POST", "/mutes", { src_actor_id: a.id, dst_actor_id: c.id })).status).toBe(409);
    expect((await s.call("POST", "/mutes", { src_actor_id: c.id, dst_actor_id: a.id })).status).toBe(409);
    const list = await s.call("GET", `/actors/${a.id}/mutes?expand=dst_actor`);
    expect(list.body.data.map((e: any) => e.dst_actor.id)).toEqual([b.id]);
    expect((await s.call("GET", `/actors/${a.id}/mutes?expand=src_actor`)).body.error.code).toBe("INVALID_EXPAND");
    expect((await s.call("DELETE", `/mutes/${a.id}/${b.id}`)).status).toBe(204);
    expect((await s.call("DELETE", `/mutes/${a.id}/${b.id}`)).status).toBe(204);
    expect((await s.call("GET", `/actors/${a.id}/mutes`)).body.data).toEqual([]);
    // Muting emits nothing: it is silent.
    expect((await eventsOf(app, s.cid, "edge.")).length).toBe(0);
  });

  test("actions: social.create to mute, social.delete to unmute", async () => {
    const s = await communitySetup(app);
    const a = await s.actor();
    const b = await s.actor();
    const reader = await keyWith(app, s, ["social.read", "social.list"]);
    expect((await app.call("POST", `${s.base}/mutes`, { token: reader, body: { src_actor_id: a.id, dst_actor_id: b.id } })).status).toBe(403);
    expect((await app.call("DELETE", `${s.base}/mutes/${a.id}/${b.id}`, { token: reader })).status).toBe(403);
  });
});

describe("blocks", () => {
  test("a block removes follows both ways (counters exact, edge.follow.deleted), requests and close friends; then follows and close friends are 409 either way", async () => {
    const s = await communitySetup(app);
    const a = await s.actor();
    const b = await s.actor();
    const priv = await s.actor({ is_private: true });
    await s.call("POST", "/follows", { actor_id: a.id, dst_actor_id: b.id });
    await s.call("POST", "/follows", { actor_id: b.id, dst_actor_id: a.id });
    await s.call("POST", "/close-friends", { owner_actor_id: a.id, member_actor_id: b.id });
    await s.call("POST", "/close-friends", { owner_actor_id: b.id, member_actor_id: a.id });
    await s.call("POST", "/follows", { actor_id: priv.id, dst_actor_id: a.id });
    await s.call("POST", "/follows", { actor_id: a.id, dst_actor_id: priv.id });

    const r = await s.call("POST", "/blocks", { src_actor_id: a.id, dst_actor_id: b.id });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ created: true, edge: { kind: "block", src_actor_id: a.id, dst_actor_id: b.id } });
    expect(await s.counters(a.id)).toMatchObject({ follower_count: 1, following_count: 0, blocks_count: 1 });
    expect(await s.counters(b.id)).toMatchObject({ follower_count: 0, following_count: 0, blocks_count: 0 });
    const deleted = (await eventsOf(app, s.cid, "edge.follow.deleted")).map((e) => e.data);
    expect(deleted.length).toBe(2);
    expect(deleted.every((d) => d.reason === "block")).toBe(true);
    expect((await s.call("GET", `/actors/${a.id}/close-friends`)).body.data).toEqual([]);
    expect((await s.call("GET", `/actors/${b.id}/close-friends`)).body.data).toEqual([]);

    for (const [x, y] of [[a, b], [b, a]]) {
      const f = await s.call("POST", "/follows", { actor_id: x.id, dst_actor_id: y.id });
      expect(f.status).toBe(409);
      expect(f.body.error.code).toBe("BLOCKED");
      expect((await s.call("POST", "/close-friends", { owner_actor_id: x.id, member_actor_id: y.id })).status).toBe(409);
      expect((await s.call("POST", "/restricts", { src_actor_id: x.id, dst_actor_id: y.id })).status).toBe(409);
    }
    // Blocking a private actor drops the pending request.
    await s.call("POST", "/blocks", { src_actor_id: priv.id, dst_actor_id: a.id });
    expect((await s.call("GET", `/actors/${priv.id}/follow-requests`)).body.data).toEqual([]);
    expect((await s.call("POST", `/follow-requests/${priv.id}/${a.id}/approve`)).status).toBe(404);

    expect((await s.call("POST", "/blocks", { src_actor_id: a.id, dst_actor_id: b.id })).body.created).toBe(false);
    expect(await s.counters(a.id)).toMatchObject({ blocks_count: 1 });
    const self = await s.call("POST", "/blocks", { src_actor_id: a.id, dst_actor_id: a.id });
    expect(self.status).toBe(422);
    expect((await allPages(s, `/actors/${a.id}/blocks`)).map((e) => e.dst_actor_id)).toEqual([b.id]);

    expect((await s.call("DELETE", `/blocks/${a.id}/${b.id}`)).status).toBe(204);
    expect((await s.call("DELETE", `/blocks/${a.id}/${b.id}`)).status).toBe(204);
    expect(await s.counters(a.id)).toMatchObject({ blocks_count: 0 });
    expect((await s.call("POST", "/follows", { actor_id: a.id, dst_actor_id: b.id })).status).toBe(201);
  });

  test("b blocked by a can still be blocked back: two blocks, two blocks_count", async () => {
    const s = await communitySetup(app);
    const a = await s.actor();
    const b = await s.actor();
    expect((await s.call("POST", "/blocks", { src_actor_id: a.id, dst_actor_id: b.id })).status).toBe(201);
    expect((await s.call("POST", "/blocks", { src_actor_id: b.id, dst_actor_id: a.id })).status).toBe(201);
    expect((await s.counters(b.id)).blocks_count).toBe(1);
  });
});

describe("restricts", () => {
  test("201 {edge, created}; idempotent; 422 self; list; 204 always delete", async () => {
    const s = await communitySetup(app);
    const a = await s.actor();
    const b = await s.actor();
    const r = await s.call("POST", "/restricts", { src_actor_id: a.id, dst_actor_id: b.id });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ created: true, edge: { kind: "restrict" } });
    expect((await s.call("POST", "/restricts", { src_actor_id: a.id, dst_actor_id: b.id })).body.created).toBe(false);
    expect((await s.call("POST", "/restricts", { src_actor_id: a.id, dst_actor_id: a.id })).status).toBe(422);
    expect((await s.call("GET", `/actors/${a.id}/restricts`)).body.data.map((e: any) => e.dst_actor_id)).toEqual([b.id]);
    expect((await s.call("DELETE", `/restricts/${a.id}/${b.id}`)).status).toBe(204);
    expect((await s.call("DELETE", `/restricts/${a.id}/${b.id}`)).status).toBe(204);
  });
});

describe("close friends", () => {
  inProcess("compares created_at with the frozen injected clock (equal to the member's) and moves it")("204 idempotent; 422 self-add; 404 unknown; list with member profile, newest first; 204 always delete", async () => {
    const s = await communitySetup(app);
    const owner = await s.actor();
    const m1 = await s.actor({ display_name: "One", avatar_url: "https://cdn.example.com/1.png" });
    const m2 = await s.actor();
    const add = await s.call("POST", "/close-friends", { owner_actor_id: owner.id, member_actor_id: m1.id });
    expect(add.status).toBe(204);
    expect((await s.call("POST", "/close-friends", { owner_actor_id: owner.id, member_actor_id: m1.id })).status).toBe(204);
    app.clock.advance(1000);
    expect((await s.call("POST", "/close-friends", { owner_actor_id: owner.id, member_actor_id: m2.id })).status).toBe(204);
    const self = await s.call("POST", "/close-friends", { owner_actor_id: owner.id, member_actor_id: owner.id });
    expect(self.status).toBe(422);
    expect((await s.call("POST", "/close-friends", { owner_actor_id: owner.id, member_actor_id: UNKNOWN })).status).toBe(404);
    const list = await allPages(s, `/actors/${owner.id}/close-friends`, 1);
    expect(list.map((x) => x.member_actor_id)).toEqual([m2.id, m1.id]);
    expect(list[1]).toEqual({ owner_actor_id: owner.id, member_actor_id: m1.id, member_external_id: m1.external_id, member_display_name: "One", member_avatar_url: "https://cdn.example.com/1.png", created_at: m1.created_at });
    expect((await s.call("DELETE", `/close-friends/${owner.id}/${m1.id}`)).status).toBe(204);
    expect((await s.call("DELETE", `/close-friends/${owner.id}/${m1.id}`)).status).toBe(204);
    expect((await s.call("GET", `/actors/${owner.id}/close-friends`)).body.data.length).toBe(1);
  });

  test("Idempotency-Key on a 204 write replays 204", async () => {
    const s = await communitySetup(app);
    const owner = await s.actor();
    const m = await s.actor();
    const h = { "idempotency-key": "cf-1" };
    expect((await s.call("POST", "/close-friends", { owner_actor_id: owner.id, member_actor_id: m.id }, h)).status).toBe(204);
    const replay = await s.call("POST", "/close-friends", { owner_actor_id: owner.id, member_actor_id: m.id }, h);
    expect(replay.status).toBe(204);
    expect(replay.headers.get("idempotent-replay")).toBe("true");
  });
});

describe("actor deletion", () => {
  inProcess("recounts the edges in the store through app.ctx.db")("deleting an actor corrects the follow and block counters of the others", async () => {
    const s = await communitySetup(app);
    const [a, b, c] = [await s.actor(), await s.actor(), await s.actor()];
    await s.call("POST", "/follows", { actor_id: a.id, dst_actor_id: b.id });
    await s.call("POST", "/follows", { actor_id: b.id, dst_actor_id: a.id });
    await s.call("POST", "/follows", { actor_id: c.id, dst_actor_id: a.id });
    await s.call("POST", "/blocks", { src_actor_id: c.id, dst_actor_id: b.id });
    expect((await s.call("DELETE", `/actors/${b.id}`)).status).toBe(204);
    for (const x of [a, c]) {
      const got = await s.counters(x.id);
      expect({ follower_count: got.follower_count, following_count: got.following_count, blocks_count: got.blocks_count }).toEqual(await recount(app.ctx.db, x.id));
    }
    expect(await s.counters(a.id)).toMatchObject({ follower_count: 1, following_count: 0 });
    expect(await s.counters(c.id)).toMatchObject({ blocks_count: 0, following_count: 1 });
  });
});
