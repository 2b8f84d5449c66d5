/**
 * Posts over HTTP: kinds and their validation, draft / scheduled / published with the
 * scheduler publishing exactly once, visibility matrix, soft delete (with reposts),
 * hashtags into the directory, @mentions into pending tags, stories expiring after 24 h,
 * quote posts, GET /posts exactly as the spec, events in the write's transaction.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestApp, type TestApp } from "../helpers/app";
import { inProcess, ON_BINARY } from "../helpers/target";
import { allPages, communitySetup, createPost, eventsOf, type Social } from "../helpers/social";

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
  if (!ON_BINARY) app.webhooks.options.autoKick = false;
});
afterAll(() => app.stop());

const post = createPost;

describe("create and validation", () => {
  inProcess("compares published_at and first_used_at with the injected clock")("text post: 201, fields, counters, hashtag directory, post.created with status", async () => {
    const s = await communitySetup(app);
    const a = await s.actor();
    const r = await s.call("POST", "/posts", { actor_id: a.id, body: "  Hello #Meetup and #friday #meetup  " });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ actor_id: a.id, kind: "text", status: "published", visibility: "public", body: "Hello #Meetup and #friday #meetup", hashtags: ["meetup", "friday"], published_at: app.clock.iso(), expires_at: null, reaction_counts: {}, comment_count: 0 });
    expect((await s.counters(a.id)).post_count).toBe(1);
    expect((await s.call("GET", "/hashtags/meetup")).body).toMatchObject({ post_count: 1, first_used_at: app.clock.iso() });
    const ev = await eventsOf(app, s.cid, "post.");
    expect(ev.map((e) => e.type)).toEqual(["post.created"]);
    expect(ev[0].data).toMatchObject({ id: r.body.id, status: "published" });
  });

  inProcess("makes a ready asset by inserting it into the store through app.ctx.db")("body limits (10,000 after trim ok, 10,001 rejected), kinds' required fields, 404 and 403 authors", async () => {
    const s = await communitySetup(app);
    const a = await s.actor();
    expect((await s.call("POST", "/posts", { actor_id: a.id, body: ` ${"x".repeat(10_000)} ` })).status).toBe(201);
    expect((await s.call("POST", "/posts", { actor_id: a.id, body: "x".repeat(10_001) })).status).toBe(400);
    expect((await s.call("POST", "/posts", { actor_id: a.id, body: "   " })).status).toBe(400);
    expect((await s.call("POST", "/posts", { actor_id: a.id, kind: "nope", body: "x" })).status).toBe(400);
    expect((await s.call("POST", "/posts", { actor_id: a.id, kind: "link", body: "x" })).status).toBe(400);
    expect((await s.call("POST", "/posts", { actor_id: a.id, kind: "link", attributes: { url: "ftp://x" } })).status).toBe(400);
    expect((await s.call("POST", "/posts", { actor_id: a.id, kind: "link", attributes: { url: "https://example.com/a" } })).status).toBe(201);
    expect((await s.call("POST", "/posts", { actor_id: a.id, kind: "image" })).status).toBe(400);
    expect((await s.call("POST", "/posts", { actor_id: a.id, kind: "quote", body: "x" })).status).toBe(400);
    expect((await s.call("POST", "/posts", { actor_id: a.id, body: "x", quote_post_id: a.id })).status).toBe(400);
    const opts = (n: number) => Array.from({ length: n }, (_, i) => `o${i}`);
    expect((await s.call("POST", "/posts", { actor_id: a.id, kind: "poll", attributes: { poll: { question: "Q?", options: opts(1) } } })).status).toBe(400);
    expect((await s.call("POST", "/posts", { actor_id: a.id, kind: "poll", attributes: { poll: { question: "Q?", options: opts(2) } } })).status).toBe(201);
    expect((await s.call("POST", "/posts", { actor_id: a.id, kind: "poll", attributes: { poll: { question: "Q?", options: opts(10) } } })).status).toBe(201);
    expect((await s.call("POST", "/posts", { actor_id: a.id, kind: "poll", attributes: { poll: { question: "Q?", options: opts(11) } } })).status).toBe(400);
    expect((await s.call("POST", "/posts", { actor_id: a.id, kind: "text", body: "x", attributes: { poll: { question: "Q?", options: opts(2) } } })).status).toBe(400);
    expect((await s.call("POST", "/posts", { actor_id: "0192f201-1111-7aaa-8bbb-0c0d0e0f1a1b", body: "x" })).status).toBe(404);
    expect((await s.call("POST", "/posts", { body: "x" })).status).toBe(400);
    // Assets must be ready and owned by the author.
    const img = { asset_id: "0192f2d0-6666-7ccc-8ddd-4e4f5a5b6c6d" };
    const bad = await s.call("POST", "/posts", { actor_id: a.id, kind: "image", assets: [img] });
    expect(bad.status).toBe(422);
    expect(bad.body.error.code).toBe("INVALID_ASSET");
    await app.ctx.db.run(
      "INSERT INTO social_assets (id, community_id, owner_actor_id, kind, status, created_at, updated_at) VALUES (?, ?, ?, 'image', 'ready', ?, ?)",
      img.asset_id, s.cid, a.id, app.clock.iso(), app.clock.iso(),
    );
    expect((await s.call("POST", "/posts", { actor_id: a.id, kind: "image", assets: [img] })).status).toBe(201);
    const other = await s.actor();
    expect((await s.call("POST", "/posts", { actor_id: other.id, kind: "image", assets: [img] })).status).toBe(422);
    expect((await s.call("POST", "/posts", { actor_id: a.id, kind: "image", assets: Array.from({ length: 21 }, () => img) })).status).toBe(400);
    // Suspended actors cannot write.
    await s.call("PATCH", `/actors/${other.id}`, { status: "suspended" });
    const sus = await s.call("POST", "/posts", { actor_id: other.id, body: "x" });
    expect(sus.status).toBe(403);
    expect(sus.body.error.code).toBe("ACTOR_SUSPENDED");
  });
});

describe("drafts and scheduled posts", () => {
  inProcess("compares published_at with the injected clock after moving it")("draft: post.created with status draft, not counted, not listed; PATCH publishes (post.updated)", async () => {
    const s = await communitySetup(app);
    const a = await s.actor();
    const d = await post(s, { actor_id: a.id, body: "Soon #later", status: "draft" });
    expect(d).toMatchObject({ status: "draft", published_at: null });
    expect((await s.counters(a.id)).post_count).toBe(0);
    expect((await s.call("GET", "/hashtags/later")).status).toBe(404);
    expect((await s.call("GET", "/posts")).body.data).toEqual([]);
    expect((await s.call("GET", `/posts/${d.id}`)).status).toBe(200);
    const other = await s.actor();
    expect((await s.call("GET", `/posts/${d.id}?actor_id=${other.id}`)).status).toBe(404);
    expect((await s.call("GET", `/posts/${d.id}?actor_id=${a.id}`)).status).toBe(200);
    app.clock.advance(1000);
    const p = await s.call("PATCH", `/posts/${d.id}`, { status: "published" });
    expect(p.status).toBe(200);
    expect(p.body).toMatchObject({ status: "published", published_at: app.clock.iso() });
    expect((await s.counters(a.id)).post_count).toBe(1);
    expect((await s.call("GET", "/hashtags/later")).body.post_count).toBe(1);
    const back = await s.call("PATCH", `/posts/${d.id}`, { status: "draft" });
    expect(back.status).toBe(409);
    expect(back.body.error.code).toBe("INVALID_TRANSITION");
    const ev = await eventsOf(app, s.cid, "post.");
    expect(ev.map((e) => [e.type, e.data.status])).toEqual([["post.created", "draft"], ["post.updated", "published"]]);
    expect(ev[1].data.changed_fields).toEqual(["status", "published_at"]);
  });

  inProcess("moves the injected clock past scheduled_for and runs the publishing job by hand")("scheduled: needs a future scheduled_for; published by the job exactly once, at its time", async () => {
    const s = await communitySetup(app);
    const a = await s.actor();
    expect((await s.call("POST", "/posts", { actor_id: a.id, body: "x", status: "scheduled" })).status).toBe(400);
    expect((await s.call("POST", "/posts", { actor_id: a.id, body: "x", status: "scheduled", scheduled_for: app.clock.iso() })).status).toBe(400);
    expect((await s.call("POST", "/posts", { actor_id: a.id, body: "x", scheduled_for: new Date(app.clock.nowMs() + 1000).toISOString() })).status).toBe(400);
    const at = new Date(app.clock.nowMs() + 60_000).toISOString();
    const sp = await post(s, { actor_id: a.id, body: "Later #sched", status: "scheduled", scheduled_for: at });
    expect(sp).toMatchObject({ status: "scheduled", scheduled_for: at, published_at: null });
    await app.ctx.scheduler.runNow("social.posts.publish");
    expect((await s.call("GET", `/posts/${sp.id}`)).body.status).toBe("scheduled");
    app.clock.advance(60_000);
    // Two runs at once (and again later): one publication.
    await Promise.all([app.ctx.scheduler.runNow("social.posts.publish"), app.ctx.scheduler.runNow("social.posts.publish")]);
    await app.ctx.scheduler.runNow("social.posts.publish");
    const r = await s.call("GET", `/posts/${sp.id}`);
    expect(r.body).toMatchObject({ status: "published", published_at: app.clock.iso() });
    expect((await s.counters(a.id)).post_count).toBe(1);
    expect((await s.call("GET", "/hashtags/sched")).body.post_count).toBe(1);
    const ev = await eventsOf(app, s.cid, "post.");
    expect(ev.map((e) => [e.type, e.data.status])).toEqual([["post.created", "scheduled"], ["post.updated", "published"]]);
    expect((await s.call("GET", "/posts")).body.data.map((p: any) => p.id)).toEqual([sp.id]);
  });
});

describe("visibility", () => {
  test("public / followers / close_friends × author, follower, stranger, close friend, blocked; private authors capped at followers", async () => {
    const s = await communitySetup(app);
    const [au, fol, str, cf, blk] = [await s.actor(), await s.actor(), await s.actor(), await s.actor(), await s.actor()];
    await s.call("POST", "/follows", { actor_id: fol.id, dst_actor_id: au.id });
    await s.call("POST", "/follows", { actor_id: blk.id, dst_actor_id: au.id });
    await s.call("POST", "/close-friends", { owner_actor_id: au.id, member_actor_id: cf.id });
    await s.call("POST", "/blocks", { src_actor_id: au.id, dst_actor_id: blk.id });
    const pub = await post(s, { actor_id: au.id, body: "pub" });
    const fo = await post(s, { actor_id: au.id, body: "fo", visibility: "followers" });
    const cl = await post(s, { actor_id: au.id, body: "cl", visibility: "close_friends" });
    const sees = async (v: { id: string }, p: { id: string }) => (await s.call("GET", `/posts/${p.id}?actor_id=${v.id}`)).status === 200;
    const matrix: Record<string, boolean[]> = {};
    for (const [name, v] of Object.entries({ au, fol, str, cf, blk })) matrix[name] = [await sees(v, pub), await sees(v, fo), await sees(v, cl)];
    expect(matrix).toEqual({ au: [true, true, true], fol: [true, true, false], str: [true, false, false], cf: [true, false, true], blk: [false, false, false] });
    expect((await s.call("GET", "/posts")).body.data.map((p: any) => p.id)).toEqual([pub.id]);
    // A private author's public post counts as followers-only.
    await s.call("POST", "/actors", { external_id: au.external_id, display_name: au.display_name, is_private: true });
    expect(await sees(str, pub)).toBe(false);
    expect(await sees(fol, pub)).toBe(true);
    expect((await s.call("GET", `/posts/${pub.id}`)).body.effective_visibility).toBe("followers");
    expect((await s.call("GET", "/posts")).body.data).toEqual([]);
  });

  test("shadow-banned and deleted authors leave GET /posts", async () => {
    const s = await communitySetup(app);
    const a = await s.actor();
    const b = await s.actor();
    await post(s, { actor_id: a.id, body: "a" });
    const pb = await post(s, { actor_id: b.id, body: "b" });
    const ban = await app.call("POST", `/social/v1/workspaces/${s.ws.id}/communities/${s.cid}/moderation/actions`, { token: s.token, body: { action: "ban", target_type: "actor", target_id: a.id, shadow: true } });
    expect(ban.status).toBe(201);
    expect((await s.call("GET", "/posts")).body.data.map((p: any) => p.id)).toEqual([pb.id]);
    await s.call("PATCH", `/actors/${b.id}`, { status: "deleted" });
    expect((await s.call("GET", "/posts")).body.data).toEqual([]);
  });
});

describe("GET /posts", () => {
  test("newest first, cursor pages, author_id filter, 400s", async () => {
    const s = await communitySetup(app);
    const a = await s.actor();
    const b = await s.actor();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      ids.push((await post(s, { actor_id: i % 2 ? b.id : a.id, body: `p${i}` })).id);
      // In-process two posts share a timestamp: ids break the tie (the binary runs on the real clock).
      if (i !== 2 && !ON_BINARY) app.clock.advance(1000);
    }
    expect((await allPages(s, "/posts", 2)).map((p) => p.id)).toEqual([...ids].reverse());
    expect((await allPages(s, `/posts?author_id=${b.id}`, 1)).map((p) => p.id)).toEqual([ids[3], ids[1]]);
    expect((await s.call("GET", "/posts?author_id=nope")).status).toBe(400);
    expect((await s.call("GET", "/posts?limit=201")).status).toBe(400);
    expect((await s.call("GET", "/posts?limit=200")).status).toBe(200);
    expect((await s.call("GET", "/posts?cursor=abc")).status).toBe(400);
  });
});

describe("stories, quotes, mentions, delete", () => {
  inProcess("moves the injected clock by 24 h")("a story disappears 24 h after publication", async () => {
    const s = await communitySetup(app);
    const a = await s.actor();
    const st = await post(s, { actor_id: a.id, kind: "story", body: "today" });
    expect(st.expires_at).toBe(new Date(app.clock.nowMs() + 86_400_000).toISOString());
    app.clock.advance(86_400_000 - 1);
    expect((await s.call("GET", `/posts/${st.id}`)).status).toBe(200);
    expect((await s.call("GET", "/posts")).body.data.length).toBe(1);
    app.clock.advance(1);
    expect((await s.call("GET", `/posts/${st.id}`)).status).toBe(404);
    expect((await s.call("GET", "/posts")).body.data).toEqual([]);
  });

  test("quote posts reference a post the author can see; mentions make pending tags (tag.created), approve/decline", async () => {
    const s = await communitySetup(app);
    const a = await s.actor();
    const b = await s.actor();
    const orig = await post(s, { actor_id: a.id, body: "orig" });
    const fo = await post(s, { actor_id: a.id, body: "fo", visibility: "followers" });
    expect((await s.call("POST", "/posts", { actor_id: b.id, kind: "quote", quote_post_id: fo.id, body: "q" })).status).toBe(404);
    const q = await post(s, { actor_id: b.id, kind: "quote", quote_post_id: orig.id, body: `so true @${a.external_id} @nobody @${b.external_id}` });
    expect(q.quote_post_id).toBe(orig.id);
    expect(q.mentions).toEqual([a.id]);
    const ev = await eventsOf(app, s.cid, "tag.");
    expect(ev.map((e) => e.data)).toEqual([expect.objectContaining({ post_id: q.id, tagger_actor_id: b.id, tagged_actor_id: a.id, status: "pending" })]);
    const ok = await s.call("POST", `/posts/${q.id}/tags/${a.id}/approve`);
    expect(ok.status).toBe(200);
    expect(ok.body.status).toBe("approved");
    expect((await s.call("POST", `/posts/${q.id}/tags/${a.id}/decline`)).body.status).toBe("declined");
    expect((await s.call("POST", `/posts/${q.id}/tags/${b.id}/approve`)).status).toBe(404);
    expect((await s.call("GET", `/posts/${q.id}/tags`)).body.data.length).toBe(1);
    // Across a block: no tag.
    const c = await s.actor();
    await s.call("POST", "/blocks", { src_actor_id: c.id, dst_actor_id: b.id });
    const q2 = await post(s, { actor_id: b.id, body: `hi @${c.external_id}` });
    expect((await s.call("GET", `/posts/${q2.id}/tags`)).body.data).toEqual([]);
  });

  inProcess("compares deleted_at with the injected clock")("soft delete: 204 then 404, counters and directory released, post.deleted", async () => {
    const s = await communitySetup(app);
    const a = await s.actor();
    const p = await post(s, { actor_id: a.id, body: "bye #gone" });
    expect((await s.call("DELETE", `/posts/${p.id}`)).status).toBe(204);
    expect((await s.call("DELETE", `/posts/${p.id}`)).status).toBe(404);
    expect((await s.call("GET", `/posts/${p.id}`)).status).toBe(404);
    expect((await s.counters(a.id)).post_count).toBe(0);
    expect((await s.call("GET", "/hashtags/gone")).body.post_count).toBe(0);
    const ev = await eventsOf(app, s.cid, "post.deleted");
    expect(ev[0].data).toMatchObject({ id: p.id, deleted_at: app.clock.iso() });
  });

  test("PATCH body re-parses hashtags; 404 for another community's post", async () => {
    const s = await communitySetup(app);
    const a = await s.actor();
    const p = await post(s, { actor_id: a.id, body: "#one #two" });
    const r = await s.call("PATCH", `/posts/${p.id}`, { body: "#two #three" });
    expect(r.body.hashtags).toEqual(["two", "three"]);
    expect((await s.call("GET", "/hashtags/one")).body.post_count).toBe(0);
    expect((await s.call("GET", "/hashtags/two")).body.post_count).toBe(1);
    expect((await s.call("GET", "/hashtags/three")).body.post_count).toBe(1);
    expect((await eventsOf(app, s.cid, "post.updated"))[0].data.changed_fields).toEqual(["body"]);
    const other = await communitySetup(app);
    expect((await other.call("GET", `/posts/${p.id}`)).status).toBe(404);
    expect((await other.call("PATCH", `/posts/${p.id}`, { body: "x" })).status).toBe(404);
  });
});
