/**
 * Every content operation of the community service over HTTP, the way a product team uses it:
 * actors and counters; the social graph (follows, private actors' follow requests, mutes,
 * blocks, restricts, close friends); posts with mentions (tags), comments with approval,
 * reactions, bookmarks, reposts, views and polls; hashtags with search and hashtag follows;
 * home and discover feeds with hides; a scheduled post. Webhook deliveries of the content
 * events go to a real receiver and are checked with standardwebhooks.
 *
 * HTTP only: runs in-process (npm test, PostgreSQL) and against the compiled binary
 * (npm run test:bin). Timestamps are checked for format and order, never against a clock.
 * Workspace/community administration, webhooks, conversations, assets, flags/moderation and
 * notifications are walked in every-route-admin.test.ts.
 */
import { afterAll, beforeAll, describe, expect, setSystemTime, test } from "bun:test";
import { Webhook } from "standardwebhooks";
import { startTestApp, type TestApp } from "../helpers/app";
import { startReceiver, type ReceivedRequest, type Receiver } from "../helpers/http-receiver";
import { allPages, communitySetup, createPost, type Social } from "../helpers/social";
import { ON_BINARY } from "../helpers/target";

let app: TestApp;
let receiver: Receiver;
beforeAll(async () => {
  // Loopback receivers allowed; the webhook pump (and, on the binary, the scheduler) run by themselves.
  app = await startTestApp({ ALLOW_PRIVATE_TARGETS: "true" });
  receiver = startReceiver();
});
afterAll(async () => {
  await app.stop();
  await receiver.stop();
});

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const UNKNOWN = "0192f201-1111-7aaa-8bbb-0c0d0e0f1a1b";
const ids = (rows: { id: string }[]) => rows.map((r) => r.id);

/** Polls `read` until `done` holds (real time, deadline `ms`); returns the last value. */
async function until<T>(read: () => Promise<T> | T, done: (v: T) => boolean, ms = 15_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await read();
    if (done(v) || Date.now() > deadline) return v;
    await Bun.sleep(50);
  }
}

/** A webhook endpoint of the community on the receiver, at its own path. */
async function subscribe(s: Social, path: string, event_types: string[]) {
  const r = await app.call("POST", `${s.base}/webhooks/endpoints`, { token: s.token, body: { url: `${receiver.url}${path}`, event_types } });
  expect(r.status).toBe(201);
  expect(r.body.signing_secret).toMatch(/^whsec_/);
  return r.body as { id: string; signing_secret: string };
}

/**
 * The verified envelopes received at `path` (standardwebhooks signature, timestamp as sent),
 * one per webhook-id as a receiver dedupes them: delivery is at least once, and a delivery
 * that outlived its deadline on a loaded machine comes again.
 */
function envelopes(secret: string, path: string): any[] {
  const seen = new Set<string>();
  const got = receiver.requests.filter((q) => q.path === path && !seen.has(q.headers["webhook-id"]) && seen.add(q.headers["webhook-id"]));
  return got.map((q: ReceivedRequest) => {
    // The in-process app signs with its injected clock: verify at the time the request names.
    setSystemTime(new Date(Number(q.headers["webhook-timestamp"]) * 1000));
    try {
      return new Webhook(secret).verify(q.body, { "webhook-id": q.headers["webhook-id"], "webhook-timestamp": q.headers["webhook-timestamp"], "webhook-signature": q.headers["webhook-signature"] });
    } finally {
      setSystemTime();
    }
  });
}

describe("actors and counters", () => {
  test("upsert, batch upsert, by-external lookups, list, read, patch, counters, delete", async () => {
    const s = await communitySetup(app);
    const hook = await subscribe(s, "/actors", ["actor.updated"]);

    // Upsert: created once, then updated in place (same id).
    const ada = await s.call("POST", "/actors", { external_id: "ada", display_name: "Ada", avatar_url: "https://cdn.example.com/ada.png", metadata: { plan: "pro" } });
    expect(ada.status).toBe(201);
    expect(ada.body).toEqual({
      created: true,
      actor: {
        id: expect.stringMatching(UUID),
        community_id: s.cid,
        external_id: "ada",
        display_name: "Ada",
        avatar_url: "https://cdn.example.com/ada.png",
        metadata: { plan: "pro" },
        status: "active",
        is_private: false,
        shadow_banned_at: null,
        shadow_banned_until: null,
        shadow_banned_reason: null,
        created_at: expect.stringMatching(ISO),
        updated_at: ada.body.actor.created_at,
      },
    });
    const a = ada.body.actor;

    // Batch: per-item results; an existing actor is updated (created false).
    const batch = await s.call("POST", "/actors/batch", { actors: [{ external_id: "grace", display_name: "Grace" }, { external_id: "linus" }, { external_id: "ada", display_name: "Ada L.", metadata: { plan: "pro" } }] });
    expect(batch.status).toBe(201);
    expect(batch.body).toMatchObject({ succeeded: 3, failed: 0 });
    expect(batch.body.data.map((d: any) => [d.index, d.success, d.created, d.error, d.actor.external_id])).toEqual([
      [0, true, true, null, "grace"],
      [1, true, true, null, "linus"],
      [2, true, false, null, "ada"],
    ]);
    expect(batch.body.data[2].actor).toMatchObject({ id: a.id, display_name: "Ada L.", avatar_url: null });
    const [grace, linus] = [batch.body.data[0].actor, batch.body.data[1].actor];

    // Lookups by external id: one, and many in request order with the missing listed.
    const byExt = await s.call("GET", "/actors/by-external/grace");
    expect(byExt.status).toBe(200);
    expect(byExt.body).toEqual(grace);
    const many = await s.call("POST", "/actors/by-external/batch", { external_ids: ["linus", "nobody", "ada", "linus"] });
    expect(many.status).toBe(200);
    expect(ids(many.body.data)).toEqual([linus.id, a.id]);
    expect(many.body.missing).toEqual(["nobody"]);

    // List: newest first over cursor pages; ids= answers in request order.
    expect(ids(await allPages(s, "/actors", 2))).toEqual([linus.id, grace.id, a.id]);
    const picked = await s.call("GET", `/actors?ids=${[grace.id, UNKNOWN, a.id].join(",")}`);
    expect(picked.status).toBe(200);
    expect(ids(picked.body.data)).toEqual([grace.id, a.id]);

    // Read and patch (only the fields sent change).
    const read = await s.call("GET", `/actors/${a.id}`);
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ id: a.id, external_id: "ada", display_name: "Ada L.", metadata: { plan: "pro" } });
    const patched = await s.call("PATCH", `/actors/${a.id}`, { display_name: "Countess", is_private: true });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ id: a.id, display_name: "Countess", is_private: true, metadata: { plan: "pro" }, status: "active", created_at: a.created_at });
    expect(Date.parse(patched.body.updated_at)).toBeGreaterThanOrEqual(Date.parse(a.created_at));
    expect((await s.call("GET", `/actors/${a.id}`)).body).toMatchObject({ display_name: "Countess", is_private: true });

    // Counters: one actor, and many (de-duplicated, unknown listed as missing).
    await s.call("POST", "/follows", { actor_id: grace.id, dst_actor_id: linus.id });
    const one = await s.call("GET", `/actors/${linus.id}/counters`);
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({ actor_id: linus.id, community_id: s.cid, follower_count: 1, following_count: 0, post_count: 0, comment_count: 0, blocks_count: 0, updated_at: expect.stringMatching(ISO) });
    const all = await s.call("GET", `/counters?actor_ids=${[grace.id, linus.id, UNKNOWN, grace.id].join(",")}`);
    expect(all.status).toBe(200);
    expect(all.body.data.map((c: any) => [c.actor_id, c.follower_count, c.following_count])).toEqual([
      [grace.id, 0, 1],
      [linus.id, 1, 0],
    ]);
    expect(all.body.missing).toEqual([UNKNOWN]);

    // Delete: hard, then 404 everywhere; the follower's counter is corrected.
    expect((await s.call("DELETE", `/actors/${linus.id}`)).status).toBe(204);
    expect((await s.call("GET", `/actors/${linus.id}`)).status).toBe(404);
    expect((await s.call("GET", "/actors/by-external/linus")).status).toBe(404);
    expect((await s.counters(grace.id)).following_count).toBe(0);
    expect(ids(await allPages(s, "/actors", 5))).toEqual([grace.id, a.id]);

    // The re-upsert (batch) and the patch were delivered as actor.updated.
    const got = await until(() => envelopes(hook.signing_secret, "/actors"), (v) => v.length >= 2);
    expect(got.map((e) => [e.type, e.community_id, e.data.id])).toEqual([
      ["actor.updated", s.cid, a.id],
      ["actor.updated", s.cid, a.id],
    ]);
    // Deliveries may arrive in either order.
    expect(got.map((e) => [...e.data.changed_fields].sort().join(",")).sort()).toEqual(["avatar_url,display_name", "display_name,is_private"]);
  }, 60_000);
});

describe("social graph", () => {
  test("follows (single, batch, private actors' requests approved and declined), lists, unfollow, mutes, blocks, restricts, close friends", async () => {
    const s = await communitySetup(app);
    const hook = await subscribe(s, "/graph", ["edge.follow.created", "edge.follow.deleted", "edge.follow.requested", "edge.follow.request_approved"]);
    const [ann, bob, cat, dan] = [await s.actor({ display_name: "Ann" }), await s.actor({ display_name: "Bob" }), await s.actor({ display_name: "Cat" }), await s.actor({ display_name: "Dan" })];
    const priv = await s.actor({ display_name: "Private", is_private: true });

    // Follow: the edge once; a repeat answers it again.
    const f = await s.call("POST", "/follows", { actor_id: ann.id, dst_actor_id: bob.id, payload: { source: "profile" } });
    expect(f.status).toBe(201);
    expect(f.body).toEqual({
      status: "followed",
      created: true,
      edge: { id: expect.stringMatching(UUID), community_id: s.cid, kind: "follow", src_actor_id: ann.id, dst_actor_id: bob.id, dst_post_id: null, payload: { source: "profile" }, created_at: expect.stringMatching(ISO) },
    });
    expect((await s.call("POST", "/follows", { actor_id: ann.id, dst_actor_id: bob.id })).body).toMatchObject({ status: "followed", created: false, edge: { id: f.body.edge.id } });

    // Batch: per-item results, a self-follow fails alone.
    const batch = await s.call("POST", "/follows/batch", { follows: [{ actor_id: cat.id, dst_actor_id: bob.id }, { actor_id: dan.id, dst_actor_id: bob.id }, { actor_id: dan.id, dst_actor_id: dan.id }, { actor_id: ann.id, dst_actor_id: cat.id }] });
    expect(batch.status).toBe(201);
    expect(batch.body).toMatchObject({ succeeded: 3, failed: 1 });
    expect(batch.body.data.map((d: any) => [d.index, d.success, d.error?.status ?? null])).toEqual([
      [0, true, null],
      [1, true, null],
      [2, false, 422],
      [3, true, null],
    ]);
    expect(await s.counters(bob.id)).toMatchObject({ follower_count: 3, following_count: 0 });
    expect(await s.counters(ann.id)).toMatchObject({ follower_count: 0, following_count: 2 });

    // Followers and following, newest first, with the other actor expanded on request.
    const followers = await allPages(s, `/actors/${bob.id}/followers?expand=src_actor`, 2);
    expect(followers.map((e) => e.src_actor_id)).toEqual([dan.id, cat.id, ann.id]);
    expect(followers.map((e) => e.src_actor.display_name)).toEqual(["Dan", "Cat", "Ann"]);
    const following = await allPages(s, `/actors/${ann.id}/following?expand=dst_actor`, 1);
    expect(following.map((e) => e.dst_actor.id)).toEqual([cat.id, bob.id]);
    expect(following.every((e) => e.kind === "follow" && e.src_actor_id === ann.id)).toBe(true);

    // A private actor: requests wait, listed newest first; one approved, one declined.
    expect((await s.call("POST", "/follows", { actor_id: ann.id, dst_actor_id: priv.id })).body).toEqual({ status: "pending", edge: null, created: true });
    expect((await s.call("POST", "/follows", { actor_id: bob.id, dst_actor_id: priv.id })).body).toEqual({ status: "pending", edge: null, created: true });
    const reqs = await s.call("GET", `/actors/${priv.id}/follow-requests`);
    expect(reqs.status).toBe(200);
    expect(reqs.body.data.map((r: any) => [r.src_actor_id, r.src_display_name])).toEqual([
      [bob.id, "Bob"],
      [ann.id, "Ann"],
    ]);
    expect(reqs.body.data[0]).toMatchObject({ request_id: expect.stringMatching(UUID), src_external_id: bob.external_id, created_at: expect.stringMatching(ISO) });
    const ok = await s.call("POST", `/follow-requests/${priv.id}/${ann.id}/approve`);
    expect(ok.status).toBe(201);
    expect(ok.body).toMatchObject({ created: true, edge: { kind: "follow", src_actor_id: ann.id, dst_actor_id: priv.id } });
    expect((await s.call("DELETE", `/follow-requests/${priv.id}/${bob.id}`)).status).toBe(204);
    expect((await s.call("GET", `/actors/${priv.id}/follow-requests`)).body.data).toEqual([]);
    expect((await allPages(s, `/actors/${priv.id}/followers`)).map((e) => e.src_actor_id)).toEqual([ann.id]);
    expect((await s.call("POST", "/follows", { actor_id: ann.id, dst_actor_id: priv.id })).body).toMatchObject({ status: "followed", created: false });

    // Unfollow: 204, and again 204; counters back.
    expect((await s.call("DELETE", `/follows/${cat.id}/${bob.id}`)).status).toBe(204);
    expect((await s.call("DELETE", `/follows/${cat.id}/${bob.id}`)).status).toBe(204);
    expect(await s.counters(bob.id)).toMatchObject({ follower_count: 2 });
    expect((await allPages(s, `/actors/${bob.id}/followers`)).map((e) => e.src_actor_id)).toEqual([dan.id, ann.id]);

    // Mutes: silent, listed, undone.
    const mute = await s.call("POST", "/mutes", { src_actor_id: ann.id, dst_actor_id: dan.id, payload: { until: "never" } });
    expect(mute.status).toBe(201);
    expect(mute.body).toMatchObject({ created: true, edge: { kind: "mute", src_actor_id: ann.id, dst_actor_id: dan.id, payload: { until: "never" } } });
    expect((await s.call("GET", `/actors/${ann.id}/mutes?expand=dst_actor`)).body.data.map((e: any) => e.dst_actor.display_name)).toEqual(["Dan"]);
    expect((await s.call("DELETE", `/mutes/${ann.id}/${dan.id}`)).status).toBe(204);
    expect((await s.call("GET", `/actors/${ann.id}/mutes`)).body.data).toEqual([]);

    // Restricts: listed, undone.
    const restrict = await s.call("POST", "/restricts", { src_actor_id: bob.id, dst_actor_id: cat.id });
    expect(restrict.status).toBe(201);
    expect(restrict.body).toMatchObject({ created: true, edge: { kind: "restrict", src_actor_id: bob.id, dst_actor_id: cat.id } });
    expect((await s.call("GET", `/actors/${bob.id}/restricts`)).body.data.map((e: any) => e.dst_actor_id)).toEqual([cat.id]);
    expect((await s.call("DELETE", `/restricts/${bob.id}/${cat.id}`)).status).toBe(204);
    expect((await s.call("GET", `/actors/${bob.id}/restricts`)).body.data).toEqual([]);

    // Close friends: 204 to add, listed with the member's profile, removed.
    expect((await s.call("POST", "/close-friends", { owner_actor_id: bob.id, member_actor_id: dan.id })).status).toBe(204);
    expect((await s.call("POST", "/close-friends", { owner_actor_id: bob.id, member_actor_id: ann.id })).status).toBe(204);
    const cf = await allPages(s, `/actors/${bob.id}/close-friends`, 1);
    expect(cf.map((x) => x.member_actor_id).sort()).toEqual([ann.id, dan.id].sort());
    expect(cf.find((x) => x.member_actor_id === dan.id)).toEqual({ owner_actor_id: bob.id, member_actor_id: dan.id, member_external_id: dan.external_id, member_display_name: "Dan", member_avatar_url: null, created_at: expect.stringMatching(ISO) });
    expect((await s.call("DELETE", `/close-friends/${bob.id}/${ann.id}`)).status).toBe(204);
    expect((await s.call("GET", `/actors/${bob.id}/close-friends`)).body.data.map((x: any) => x.member_actor_id)).toEqual([dan.id]);

    // Block: removes follows both ways and close friends; then following is 409; unblock.
    await s.call("POST", "/follows", { actor_id: bob.id, dst_actor_id: dan.id });
    const block = await s.call("POST", "/blocks", { src_actor_id: dan.id, dst_actor_id: bob.id });
    expect(block.status).toBe(201);
    expect(block.body).toMatchObject({ created: true, edge: { kind: "block", src_actor_id: dan.id, dst_actor_id: bob.id } });
    expect(await s.counters(dan.id)).toMatchObject({ follower_count: 0, following_count: 0, blocks_count: 1 });
    expect((await s.call("GET", `/actors/${bob.id}/close-friends`)).body.data).toEqual([]);
    expect((await allPages(s, `/actors/${dan.id}/blocks`)).map((e) => e.dst_actor_id)).toEqual([bob.id]);
    const refused = await s.call("POST", "/follows", { actor_id: bob.id, dst_actor_id: dan.id });
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe("BLOCKED");
    expect((await s.call("DELETE", `/blocks/${dan.id}/${bob.id}`)).status).toBe(204);
    expect(await s.counters(dan.id)).toMatchObject({ blocks_count: 0 });
    expect((await s.call("GET", `/actors/${dan.id}/blocks`)).body.data).toEqual([]);
    expect((await s.call("POST", "/follows", { actor_id: bob.id, dst_actor_id: dan.id })).status).toBe(201);

    // The follow events reached the receiver, signed, with the community envelope.
    const want = { "edge.follow.created": 7, "edge.follow.requested": 2, "edge.follow.request_approved": 1, "edge.follow.deleted": 3 };
    const count = (v: any[]) => Object.fromEntries(Object.keys(want).map((t) => [t, v.filter((e) => e.type === t).length]));
    const got = await until(() => envelopes(hook.signing_secret, "/graph"), (v) => v.length >= 13);
    expect(count(got)).toEqual(want);
    for (const e of got) expect(e).toMatchObject({ id: expect.stringMatching(/^evt_/), community_id: s.cid, created_at: expect.stringMatching(ISO) });
    expect(got.filter((e) => e.type === "edge.follow.deleted").map((e) => e.data.reason ?? null).sort()).toEqual(["block", "block", null].sort());
  }, 60_000);
});

describe("posts and engagement", () => {
  test("posts (mentions, tags, quote, draft, patch, delete), comments with approval, reactions, bookmarks, reposts, views, polls", async () => {
    const s = await communitySetup(app);
    const hook = await subscribe(s, "/content", ["post.created", "post.updated", "post.deleted", "tag.created", "comment.created", "comment.updated", "post.reaction.created", "comment.reaction.created", "repost.created"]);
    const [au, fan, critic, lurker] = [await s.actor({ external_id: `au-${Date.now()}`, display_name: "Author" }), await s.actor({ display_name: "Fan" }), await s.actor(), await s.actor({ display_name: "Lurker" })];

    // A post with hashtags and a mention: the mention becomes a pending tag.
    const p = await s.call("POST", "/posts", { actor_id: au.id, body: `  Meetup on Friday #Meetup #friday with @${fan.external_id}  ` });
    expect(p.status).toBe(201);
    // (bun's toMatchObject writes its asymmetric matchers into the object it checks: keep a copy to use)
    const post = structuredClone(p.body);
    expect(p.body).toMatchObject({
      id: expect.stringMatching(UUID),
      community_id: s.cid,
      actor_id: au.id,
      kind: "text",
      status: "published",
      visibility: "public",
      body: `Meetup on Friday #Meetup #friday with @${fan.external_id}`,
      hashtags: ["meetup", "friday"],
      mentions: [fan.id],
      reaction_counts: {},
      comment_count: 0,
      published_at: expect.stringMatching(ISO),
    });
    const tags = await s.call("GET", `/posts/${post.id}/tags`);
    expect(tags.status).toBe(200);
    expect(tags.body.data).toEqual([expect.objectContaining({ post_id: post.id, tagger_actor_id: au.id, tagged_actor_id: fan.id, status: "pending" })]);
    const approved = await s.call("POST", `/posts/${post.id}/tags/${fan.id}/approve`);
    expect(approved.status).toBe(200);
    expect(approved.body).toMatchObject({ tagged_actor_id: fan.id, status: "approved" });
    const declined = await s.call("POST", `/posts/${post.id}/tags/${fan.id}/decline`);
    expect(declined.status).toBe(200);
    expect(declined.body.status).toBe("declined");
    expect((await s.call("GET", `/posts/${post.id}/tags`)).body.data.map((t: any) => t.status)).toEqual(["declined"]);

    // Read, list (newest first, author filter), patch (hashtags re-parsed), a draft stays out of lists.
    expect((await s.call("GET", `/posts/${post.id}`)).body).toMatchObject({ id: post.id, hashtags: ["meetup", "friday"] });
    const quote = await createPost(s, { actor_id: fan.id, kind: "quote", quote_post_id: post.id, body: "See you there" });
    expect(quote).toMatchObject({ kind: "quote", quote_post_id: post.id });
    const draft = await createPost(s, { actor_id: au.id, body: "not yet", status: "draft" });
    expect(draft).toMatchObject({ status: "draft", published_at: null });
    expect(ids(await allPages(s, "/posts", 1))).toEqual([quote.id, post.id]);
    expect(ids(await allPages(s, `/posts?author_id=${au.id}`))).toEqual([post.id]);
    const edited = await s.call("PATCH", `/posts/${post.id}`, { body: "Meetup moved to Saturday #meetup #saturday" });
    expect(edited.status).toBe(200);
    expect(edited.body).toMatchObject({ body: "Meetup moved to Saturday #meetup #saturday", hashtags: ["meetup", "saturday"] });
    expect((await s.call("GET", "/hashtags/friday")).body.post_count).toBe(0);
    expect((await s.call("GET", "/hashtags/saturday")).body.post_count).toBe(1);
    const published = await s.call("PATCH", `/posts/${draft.id}`, { status: "published" });
    expect(published.body).toMatchObject({ status: "published", published_at: expect.stringMatching(ISO) });
    expect((await s.counters(au.id)).post_count).toBe(2);

    // Comments: created, replied to, read, listed (top level newest first; replies oldest first), patched, deleted.
    const path = `/posts/${post.id}/comments`;
    const c1 = await s.call("POST", path, { actor_id: fan.id, body: "  Count me in!  " });
    expect(c1.status).toBe(201);
    expect(structuredClone(c1.body)).toMatchObject({ id: expect.stringMatching(UUID), post_id: post.id, parent_id: null, actor_id: fan.id, body: "Count me in!", depth: 0, status: "published", pinned: false });
    const reply = await s.call("POST", path, { actor_id: au.id, body: "Great", parent_id: c1.body.id });
    expect(reply.body).toMatchObject({ parent_id: c1.body.id, depth: 1 });
    const c2 = await s.call("POST", path, { actor_id: lurker.id, body: "maybe" });
    expect(ids(await allPages(s, path, 1))).toEqual([c2.body.id, c1.body.id]);
    expect(ids((await s.call("GET", `${path}?parent_id=${c1.body.id}`)).body.data)).toEqual([reply.body.id]);
    expect((await s.call("GET", `${path}/${c1.body.id}`)).body).toMatchObject({ id: c1.body.id, body: "Count me in!" });
    const pin = await s.call("PATCH", `${path}/${c1.body.id}`, { pinned: true, actor_id: au.id });
    expect(pin.status).toBe(200);
    expect(pin.body).toMatchObject({ pinned: true, pinned_at: expect.stringMatching(ISO) });
    expect(ids(await allPages(s, path, 5))).toEqual([c1.body.id, c2.body.id]);
    expect((await s.call("DELETE", `${path}/${c2.body.id}`)).status).toBe(204);
    expect((await s.call("GET", `${path}/${c2.body.id}`)).status).toBe(404);
    expect((await s.call("GET", `/posts/${post.id}`)).body.comment_count).toBe(2);

    // A restricted commenter waits for the post author's approval.
    await s.call("POST", "/restricts", { src_actor_id: au.id, dst_actor_id: critic.id });
    const held = await s.call("POST", path, { actor_id: critic.id, body: "hmm" });
    expect(held.body.status).toBe("pending_approval");
    expect(ids((await s.call("GET", `${path}?requester_id=${lurker.id}`)).body.data)).not.toContain(held.body.id);
    const approve = await s.call("POST", `${path}/${held.body.id}/approve`, { approver_actor_id: au.id });
    expect(approve.status).toBe(200);
    expect(approve.body.status).toBe("published");
    expect(ids((await s.call("GET", `${path}?requester_id=${lurker.id}`)).body.data)).toContain(held.body.id);
    expect((await s.call("GET", `/posts/${post.id}`)).body.comment_count).toBe(3);

    // Reactions on the post and on a comment, counted exactly; undone with 204.
    const like = await s.call("POST", `/posts/${post.id}/reactions`, { actor_id: fan.id, type: "like" });
    expect(like.status).toBe(201);
    expect(like.body).toMatchObject({ created: true, reaction_counts: { like: 1 }, reaction: { target_type: "post", target_id: post.id, actor_id: fan.id, type: "like" } });
    expect((await s.call("POST", `/posts/${post.id}/reactions`, { actor_id: lurker.id, type: "love" })).body.reaction_counts).toEqual({ like: 1, love: 1 });
    expect((await s.call("DELETE", `/posts/${post.id}/reactions/${lurker.id}/love`)).status).toBe(204);
    expect((await s.call("GET", `/posts/${post.id}`)).body).toMatchObject({ reaction_counts: { like: 1 }, reaction_count: 1 });
    const cr = await s.call("POST", `${path}/${c1.body.id}/reactions`, { actor_id: au.id, type: "haha" });
    expect(cr.status).toBe(201);
    expect(cr.body.reaction_counts).toEqual({ haha: 1 });
    expect((await s.call("GET", `${path}/${c1.body.id}`)).body.reaction_counts).toEqual({ haha: 1 });
    expect((await s.call("DELETE", `${path}/${c1.body.id}/reactions/${au.id}/haha`)).status).toBe(204);
    expect((await s.call("GET", `${path}/${c1.body.id}`)).body.reaction_counts).toEqual({});

    // Bookmarks: private to the actor, with the post; removed with 204.
    const bm = await s.call("POST", "/bookmarks", { actor_id: lurker.id, post_id: post.id });
    expect(bm.status).toBe(201);
    expect(bm.body).toMatchObject({ actor_id: lurker.id, post_id: post.id, created: true });
    await s.call("POST", "/bookmarks", { actor_id: lurker.id, post_id: quote.id });
    const marks = await allPages(s, `/actors/${lurker.id}/bookmarks`, 1);
    expect(marks.map((x) => x.post.id).sort()).toEqual([post.id, quote.id].sort());
    expect((await s.call("GET", `/actors/${fan.id}/bookmarks`)).body.data).toEqual([]);
    expect((await s.call("DELETE", `/bookmarks/${lurker.id}/${quote.id}`)).status).toBe(204);
    expect((await s.call("GET", `/actors/${lurker.id}/bookmarks`)).body.data.map((x: any) => x.post_id)).toEqual([post.id]);

    // Reposts: a repost post pointing at the source, listed, undone.
    const rp = await s.call("POST", `/posts/${post.id}/reposts`, { actor_id: lurker.id });
    expect(rp.status).toBe(201);
    expect(rp.body).toMatchObject({ created: true, post: { kind: "repost", actor_id: lurker.id, source_post_id: post.id, status: "published" } });
    const reposts = await s.call("GET", `/posts/${post.id}/reposts`);
    expect(reposts.status).toBe(200);
    expect(ids(reposts.body.data)).toEqual([rp.body.post.id]);
    expect((await s.call("GET", `/posts/${post.id}`)).body.repost_count).toBe(1);
    expect((await s.call("DELETE", `/posts/${post.id}/reposts/${lurker.id}`)).status).toBe(204);
    expect((await s.call("GET", `/posts/${rp.body.post.id}`)).status).toBe(404);
    expect((await s.call("GET", `/posts/${post.id}/reposts`)).body.data).toEqual([]);

    // Views: counted once per viewer; the author sees who viewed.
    expect((await s.call("POST", `/posts/${post.id}/views`, { viewer_actor_id: lurker.id })).status).toBe(204);
    expect((await s.call("POST", `/posts/${post.id}/views`, { viewer_actor_id: lurker.id })).status).toBe(204);
    expect((await s.call("GET", `/posts/${post.id}`)).body.view_count).toBe(1);
    const viewers = await s.call("GET", `/posts/${post.id}/viewers?requester_id=${au.id}`);
    expect(viewers.status).toBe(200);
    expect(viewers.body.data).toEqual([{ viewer_actor_id: lurker.id, viewer_external_id: lurker.external_id, viewer_display_name: "Lurker", viewer_avatar_url: null, viewed_at: expect.stringMatching(ISO) }]);
    expect((await s.call("GET", `/posts/${post.id}/viewers?requester_id=${lurker.id}`)).status).toBe(403);

    // Polls: one vote per actor (a later vote replaces), zero-filled results.
    const poll = await createPost(s, { actor_id: au.id, kind: "poll", attributes: { poll: { question: "Which day?", options: ["Fri", "Sat", "Sun"] } } });
    for (const [actor, option] of [[fan.id, 0], [lurker.id, 0], [lurker.id, 1]] as const) {
      expect((await s.call("POST", `/posts/${poll.id}/votes`, { actor_id: actor, option_index: option })).status).toBe(204);
    }
    const results = await s.call("GET", `/posts/${poll.id}/poll-results`);
    expect(results.status).toBe(200);
    expect(results.body).toMatchObject({ post_id: poll.id, question: "Which day?", total_votes: 2, options: [{ index: 0, label: "Fri", count: 1 }, { index: 1, label: "Sat", count: 1 }, { index: 2, label: "Sun", count: 0 }] });

    // Delete: 204, then 404; counters and directory released.
    expect((await s.call("DELETE", `/posts/${quote.id}`)).status).toBe(204);
    expect((await s.call("GET", `/posts/${quote.id}`)).status).toBe(404);
    expect((await s.counters(fan.id)).post_count).toBe(0);

    // What the receiver got, in kinds and targets.
    const want: Record<string, number> = { "post.created": 4, "post.updated": 2, "post.deleted": 2, "tag.created": 1, "comment.created": 4, "comment.updated": 2, "post.reaction.created": 2, "comment.reaction.created": 1, "repost.created": 1 };
    const total = Object.values(want).reduce((a, b) => a + b, 0);
    const got = await until(() => envelopes(hook.signing_secret, "/content"), (v) => v.length >= total);
    const counts: Record<string, number> = {};
    for (const e of got) counts[e.type] = (counts[e.type] ?? 0) + 1;
    expect(counts).toEqual(want);
    expect(got.find((e) => e.type === "tag.created").data).toMatchObject({ post_id: post.id, tagged_actor_id: fan.id, status: "pending" });
    expect(got.find((e) => e.type === "repost.created").data).toMatchObject({ id: rp.body.post.id, source_post_id: post.id });
    expect(got.filter((e) => e.type === "post.reaction.created").map((e) => e.data.reaction).sort()).toEqual(["like", "love"]);
    expect(got.find((e) => e.type === "comment.reaction.created").data).toMatchObject({ comment_id: c1.body.id, post_id: post.id, actor_id: au.id, reaction: "haha" });
  }, 60_000);
});

describe("hashtags, feeds and hides", () => {
  test("hashtag directory and search, hashtag follows, home and discover feeds, hides", async () => {
    const s = await communitySetup(app);
    const [me, friend, stranger, other] = [await s.actor(), await s.actor(), await s.actor(), await s.actor()];
    await s.call("POST", "/follows", { actor_id: me.id, dst_actor_id: friend.id });
    await s.call("POST", "/follows", { actor_id: other.id, dst_actor_id: friend.id });
    const f1 = await createPost(s, { actor_id: friend.id, body: "Coffee #MeetUp" });
    const f2 = await createPost(s, { actor_id: friend.id, body: "Tea #meet" });
    const tagged = await createPost(s, { actor_id: stranger.id, body: "Cats #mead" });
    const plain = await createPost(s, { actor_id: stranger.id, body: "nothing" });
    const mine = await createPost(s, { actor_id: me.id, body: "mine", visibility: "followers" });

    // Directory: normalised lookups; prefix search, alphabetical.
    const tag = await s.call("GET", "/hashtags/%23MEETUP");
    expect(tag.status).toBe(200);
    expect(tag.body).toEqual({ community_id: s.cid, tag: "meetup", first_used_at: expect.stringMatching(ISO), post_count: 1 });
    expect((await s.call("GET", "/hashtags/unknown")).status).toBe(404);
    const search = await s.call("GET", "/search/hashtags?q=ME");
    expect(search.status).toBe(200);
    expect(search.body.data.map((h: any) => [h.tag, h.post_count])).toEqual([
      ["mead", 1],
      ["meet", 1],
      ["meetup", 1],
    ]);
    expect((await s.call("GET", "/search/hashtags?q=%23mee&limit=1")).body.data.map((h: any) => h.tag)).toEqual(["meet"]);

    // Hashtag follows: a followed tag brings a stranger's post into the home feed.
    const hf = await s.call("POST", `/actors/${me.id}/hashtag-follows`, { tag: "#Mead" });
    expect(hf.status).toBe(201);
    expect(hf.body).toEqual({ actor_id: me.id, community_id: s.cid, tag: "mead", followed_at: expect.stringMatching(ISO) });
    expect((await s.call("POST", `/actors/${me.id}/hashtag-follows`, { tag: "meet" })).status).toBe(201);
    expect((await allPages(s, `/actors/${me.id}/hashtag-follows`, 1)).map((f) => f.tag).sort()).toEqual(["mead", "meet"]);
    expect((await s.call("DELETE", `/actors/${me.id}/hashtag-follows/meet`)).status).toBe(204);
    expect((await s.call("GET", `/actors/${me.id}/hashtag-follows`)).body.data.map((f: any) => f.tag)).toEqual(["mead"]);

    // Home: followed actors, followed hashtags and own posts, newest first.
    const home = async (actor: string) => ids(await allPages(s, `/actors/${actor}/feeds/home`, 2));
    expect(await home(me.id)).toEqual([mine.id, tagged.id, f2.id, f1.id]);
    expect(await home(other.id)).toEqual([f2.id, f1.id]);

    // Discover: latest (default), top by engagement, hot.
    for (const [actor, target] of [[me.id, f1.id], [other.id, f1.id], [stranger.id, f1.id], [me.id, tagged.id]] as const) {
      expect((await s.call("POST", `/posts/${target}/reactions`, { actor_id: actor, type: "like" })).status).toBe(201);
    }
    const discover = async (q: string, limit = 2) => ids(await allPages(s, `/feeds/discover?${q}`, limit));
    expect(await discover("")).toEqual([plain.id, tagged.id, f2.id, f1.id]);
    expect(await discover("ranking=latest", 3)).toEqual([plain.id, tagged.id, f2.id, f1.id]);
    const top = await discover("ranking=top&window=24h", 1);
    expect(top.slice(0, 2)).toEqual([f1.id, tagged.id]);
    expect(top.slice(2).sort()).toEqual([plain.id, f2.id].sort());
    expect((await discover("ranking=hot", 1)).slice(0, 2)).toEqual([f1.id, tagged.id]);

    // Hides: out of that actor's feeds only; listed; undone.
    const h = await s.call("POST", "/hides", { src_actor_id: me.id, post_id: f1.id });
    expect(h.status).toBe(201);
    expect(h.body).toMatchObject({ created: true, edge: { kind: "hide", src_actor_id: me.id, dst_actor_id: friend.id, dst_post_id: f1.id } });
    expect((await allPages(s, `/actors/${me.id}/hides`)).map((e) => e.dst_post_id)).toEqual([f1.id]);
    expect(await home(me.id)).toEqual([mine.id, tagged.id, f2.id]);
    expect(await home(other.id)).toEqual([f2.id, f1.id]);
    expect(ids(await allPages(s, `/feeds/discover?actor_id=${me.id}`, 5))).not.toContain(f1.id);
    expect((await s.call("DELETE", `/hides/${me.id}/${f1.id}`)).status).toBe(204);
    expect((await s.call("GET", `/actors/${me.id}/hides`)).body.data).toEqual([]);
    expect(await home(me.id)).toEqual([mine.id, tagged.id, f2.id, f1.id]);
  }, 60_000);

  test("a scheduled post stays out of lists until its time; the running process publishes it once", async () => {
    const s = await communitySetup(app);
    const a = await s.actor();
    const f = await s.actor();
    await s.call("POST", "/follows", { actor_id: f.id, dst_actor_id: a.id });
    const at = new Date(app.clock.nowMs() + 1500).toISOString();
    const sp = await createPost(s, { actor_id: a.id, body: "Later #sched", status: "scheduled", scheduled_for: at });
    expect(sp).toMatchObject({ status: "scheduled", scheduled_for: at, published_at: null });
    expect((await s.call("GET", "/posts")).body.data).toEqual([]);
    expect((await s.call("GET", `/actors/${f.id}/feeds/home`)).body.data).toEqual([]);
    expect((await s.counters(a.id)).post_count).toBe(0);
    if (!ON_BINARY) {
      // In-process the injected clock stands still: the post stays scheduled (the publishing
      // job itself is covered by posts.test.ts and scheduled.test.ts).
      expect((await s.call("GET", `/posts/${sp.id}`)).body.status).toBe("scheduled");
      return;
    }
    // The binary's own scheduler (social.posts.publish, every 5 s) publishes it.
    const r = await until(() => s.call("GET", `/posts/${sp.id}`), (x) => x.body.status === "published", 20_000);
    expect(r.body).toMatchObject({ status: "published", scheduled_for: at });
    expect(Date.parse(r.body.published_at)).toBeGreaterThanOrEqual(Date.parse(at));
    expect(ids((await s.call("GET", "/posts")).body.data)).toEqual([sp.id]);
    expect(ids((await s.call("GET", `/actors/${f.id}/feeds/home`)).body.data)).toEqual([sp.id]);
    expect((await s.counters(a.id)).post_count).toBe(1);
    expect((await s.call("GET", "/hashtags/sched")).body.post_count).toBe(1);
  }, 60_000);
});
