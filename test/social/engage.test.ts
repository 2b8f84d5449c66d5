/**
 * Reactions (posts and comments, exact counts under concurrency), bookmarks, reposts,
 * views and viewers, poll votes and results, as the spec describes them.
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

describe("reactions", () => {
  test("one per actor and type, exact counts (also under concurrency), events, delete 204, 409 blocked, 400 type", async () => {
    const s = await communitySetup(app);
    const au = await s.actor();
    const p = await post(s, { actor_id: au.id, body: "hi" });
    const actors = await Promise.all(Array.from({ length: 20 }, () => s.actor()));
    const rs = await Promise.all(actors.flatMap((a) => [s.call("POST", `/posts/${p.id}/reactions`, { actor_id: a.id, type: "like" }), s.call("POST", `/posts/${p.id}/reactions`, { actor_id: a.id, type: "like" })]));
    expect(rs.every((r) => r.status === 201)).toBe(true);
    expect(rs.filter((r) => r.body.created).length).toBe(20);
    const love = await s.call("POST", `/posts/${p.id}/reactions`, { actor_id: actors[0].id, type: "love" });
    expect(love.body).toMatchObject({ created: true, reaction_counts: { like: 20, love: 1 }, reaction: { target_type: "post", target_id: p.id, actor_id: actors[0].id, type: "love" } });
    expect((await s.call("GET", `/posts/${p.id}`)).body).toMatchObject({ reaction_counts: { like: 20, love: 1 }, reaction_count: 21 });
    expect((await s.call("POST", `/posts/${p.id}/reactions`, { actor_id: actors[0].id, type: "meh" })).status).toBe(400);
    expect((await s.call("DELETE", `/posts/${p.id}/reactions/${actors[0].id}/love`)).status).toBe(204);
    expect((await s.call("DELETE", `/posts/${p.id}/reactions/${actors[0].id}/love`)).status).toBe(204);
    expect((await s.call("GET", `/posts/${p.id}`)).body).toMatchObject({ reaction_counts: { like: 20 }, reaction_count: 20 });
    expect((await eventsOf(app, s.cid, "post.reaction.created")).length).toBe(21);
    const b = await s.actor();
    await s.call("POST", "/blocks", { src_actor_id: au.id, dst_actor_id: b.id });
    expect((await s.call("POST", `/posts/${p.id}/reactions`, { actor_id: b.id, type: "like" })).status).toBe(409);
    // Comments too.
    const c = await s.call("POST", `/posts/${p.id}/comments`, { actor_id: actors[1].id, body: "c" });
    const cr = await s.call("POST", `/posts/${p.id}/comments/${c.body.id}/reactions`, { actor_id: au.id, type: "haha" });
    expect(cr.status).toBe(201);
    expect(cr.body.reaction_counts).toEqual({ haha: 1 });
    expect((await s.call("GET", `/posts/${p.id}/comments/${c.body.id}`)).body.reaction_counts).toEqual({ haha: 1 });
    const ce = await eventsOf(app, s.cid, "comment.reaction.created");
    expect(ce[0].data).toMatchObject({ comment_id: c.body.id, post_id: p.id, actor_id: au.id, reaction: "haha" });
    expect((await s.call("DELETE", `/posts/${p.id}/comments/${c.body.id}/reactions/${au.id}/haha`)).status).toBe(204);
    expect((await s.call("GET", `/posts/${p.id}/comments/${c.body.id}`)).body.reaction_counts).toEqual({});
  });
});

describe("bookmarks", () => {
  test("idempotent, private list newest first with posts, deleted posts dropped, 204 always", async () => {
    const s = await communitySetup(app);
    const a = await s.actor();
    const b = await s.actor();
    const p1 = await post(s, { actor_id: a.id, body: "1" });
    const p2 = await post(s, { actor_id: a.id, body: "2" });
    const fo = await post(s, { actor_id: a.id, body: "fo", visibility: "followers" });
    const r = await s.call("POST", "/bookmarks", { actor_id: b.id, post_id: p1.id });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ actor_id: b.id, post_id: p1.id, created: true });
    expect((await s.call("POST", "/bookmarks", { actor_id: b.id, post_id: p1.id })).body.created).toBe(false);
    expect((await s.call("POST", "/bookmarks", { actor_id: b.id, post_id: fo.id })).status).toBe(404);
    if (!ON_BINARY) app.clock.advance(1000); // on the real clock a tie is broken by post id (p2 after p1)
    await s.call("POST", "/bookmarks", { actor_id: b.id, post_id: p2.id });
    expect((await allPages(s, `/actors/${b.id}/bookmarks`, 1)).map((x) => x.post.id)).toEqual([p2.id, p1.id]);
    expect((await s.call("GET", `/actors/${a.id}/bookmarks`)).body.data).toEqual([]);
    await s.call("DELETE", `/posts/${p2.id}`);
    expect((await allPages(s, `/actors/${b.id}/bookmarks`, 5)).map((x) => x.post_id)).toEqual([p1.id]);
    expect((await s.call("DELETE", `/bookmarks/${b.id}/${p1.id}`)).status).toBe(204);
    expect((await s.call("DELETE", `/bookmarks/${b.id}/${p1.id}`)).status).toBe(204);
  });
});

describe("reposts", () => {
  test("repost.created with source_post_id, idempotent, counts, deleting either removes the repost (post.deleted)", async () => {
    const s = await communitySetup(app);
    const a = await s.actor();
    const b = await s.actor();
    const c = await s.actor();
    const p = await post(s, { actor_id: a.id, body: "orig" });
    const r = await s.call("POST", `/posts/${p.id}/reposts`, { actor_id: b.id });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ created: true, post: { kind: "repost", actor_id: b.id, source_post_id: p.id, status: "published" } });
    expect((await s.call("POST", `/posts/${p.id}/reposts`, { actor_id: b.id })).body).toMatchObject({ created: false, post: { id: r.body.post.id } });
    // A repost of a repost reposts the original.
    const rc = await s.call("POST", `/posts/${r.body.post.id}/reposts`, { actor_id: c.id });
    expect(rc.body.post.source_post_id).toBe(p.id);
    expect((await s.call("GET", `/posts/${p.id}`)).body.repost_count).toBe(2);
    expect((await s.counters(b.id)).post_count).toBe(0);
    const ev = await eventsOf(app, s.cid, "repost.created");
    expect(ev.map((e) => e.data.source_post_id)).toEqual([p.id, p.id]);
    // Undo by route, then delete the source: the other repost goes too.
    expect((await s.call("DELETE", `/posts/${p.id}/reposts/${b.id}`)).status).toBe(204);
    expect((await s.call("GET", `/posts/${r.body.post.id}`)).status).toBe(404);
    expect((await s.call("GET", `/posts/${p.id}`)).body.repost_count).toBe(1);
    expect((await s.call("GET", `/posts/${p.id}/reposts`)).body.data.map((x: any) => x.id)).toEqual([rc.body.post.id]);
    // Reposting again after an undo works.
    expect((await s.call("POST", `/posts/${p.id}/reposts`, { actor_id: b.id })).body.created).toBe(true);
    expect((await s.call("DELETE", `/posts/${p.id}`)).status).toBe(204);
    expect((await s.call("GET", `/posts/${rc.body.post.id}`)).status).toBe(404);
    const del = await eventsOf(app, s.cid, "post.deleted");
    expect(del.length).toBe(4);
    // Followers-only posts are not repostable.
    const fo = await post(s, { actor_id: a.id, body: "fo", visibility: "followers" });
    await s.call("POST", "/follows", { actor_id: b.id, dst_actor_id: a.id });
    expect((await s.call("POST", `/posts/${fo.id}/reposts`, { actor_id: b.id })).status).toBe(422);
  });
});

describe("views and viewers", () => {
  inProcess("compares viewed_at with the injected clock after moving it")("204 recorded or already existed; viewers newest first for the author only (403 otherwise)", async () => {
    const s = await communitySetup(app);
    const a = await s.actor();
    const v1 = await s.actor();
    const v2 = await s.actor();
    const p = await post(s, { actor_id: a.id, body: "x" });
    expect((await s.call("POST", `/posts/${p.id}/views`, { viewer_actor_id: v1.id })).status).toBe(204);
    app.clock.advance(1000);
    expect((await s.call("POST", `/posts/${p.id}/views`, { viewer_actor_id: v2.id })).status).toBe(204);
    expect((await s.call("POST", `/posts/${p.id}/views`, { viewer_actor_id: v1.id })).status).toBe(204);
    expect((await s.call("GET", `/posts/${p.id}`)).body.view_count).toBe(2);
    const list = await allPages(s, `/posts/${p.id}/viewers?requester_id=${a.id}`, 1);
    expect(list.map((x) => x.viewer_actor_id)).toEqual([v2.id, v1.id]);
    expect(list[0]).toEqual({ viewer_actor_id: v2.id, viewer_external_id: v2.external_id, viewer_display_name: v2.display_name, viewer_avatar_url: null, viewed_at: app.clock.iso() });
    expect((await s.call("GET", `/posts/${p.id}/viewers?requester_id=${v1.id}`)).status).toBe(403);
    expect((await s.call("GET", `/posts/${p.id}/viewers`)).status).toBe(400);
    expect((await s.call("POST", `/posts/${p.id}/views`, { viewer_actor_id: "0192f2a0-3333-7ccc-8ddd-1e1f2a2b3c3d" })).status).toBe(404);
  });
});

describe("polls", () => {
  inProcess("moves the injected clock past the poll's closes_at and reads notifications through app.ctx.db")("votes replace earlier ones, zero-filled results, 422 and 409 rules, vote notification", async () => {
    const s = await communitySetup(app);
    const a = await s.actor();
    const [v1, v2, v3] = [await s.actor(), await s.actor(), await s.actor()];
    const p = await post(s, { actor_id: a.id, kind: "poll", attributes: { poll: { question: "Best day?", options: ["Fri", "Sat", "Sun"], closes_at: new Date(app.clock.nowMs() + 3600_000).toISOString() } } });
    const vote = (actor: string, option_index: unknown) => s.call("POST", `/posts/${p.id}/votes`, { actor_id: actor, option_index });
    expect((await vote(v1.id, 0)).status).toBe(204);
    expect((await vote(v2.id, 0)).status).toBe(204);
    expect((await vote(v2.id, 1)).status).toBe(204);
    const res = await s.call("GET", `/posts/${p.id}/poll-results`);
    expect(res.body).toMatchObject({ post_id: p.id, question: "Best day?", options: [{ index: 0, label: "Fri", count: 1 }, { index: 1, label: "Sat", count: 1 }, { index: 2, label: "Sun", count: 0 }], total_votes: 2 });
    const code = async (r: Promise<{ status: number; body: any }>) => {
      const x = await r;
      return [x.status, x.body?.error?.code];
    };
    expect(await code(vote(v3.id, 3))).toEqual([422, "OPTION_OUT_OF_RANGE"]);
    expect(await code(vote(v3.id, -1))).toEqual([422, "OPTION_OUT_OF_RANGE"]);
    expect(await code(vote(v3.id, 2))).toEqual([204, undefined]);
    expect(await code(vote(a.id, 0))).toEqual([422, "SELF_VOTE"]);
    expect((await vote(v3.id, 1.5)).status).toBe(400);
    const text = await post(s, { actor_id: a.id, body: "no poll" });
    expect(await code(s.call("POST", `/posts/${text.id}/votes`, { actor_id: v1.id, option_index: 0 }))).toEqual([422, "NO_POLL"]);
    expect(await code(s.call("GET", `/posts/${text.id}/poll-results`))).toEqual([422, "NO_POLL"]);
    const blk = await s.actor();
    await s.call("POST", "/blocks", { src_actor_id: blk.id, dst_actor_id: a.id });
    expect(await code(vote(blk.id, 0))).toEqual([409, "BLOCKED"]);
    app.clock.advance(3600_000);
    expect(await code(vote(v1.id, 1))).toEqual([422, "POLL_CLOSED"]);
    const n = await app.ctx.db.all<{ type: string; activity_count: number }>("SELECT type, activity_count FROM social_notifications WHERE actor_id = ? AND type = 'vote'", a.id);
    expect(n.map((x) => [x.type, Number(x.activity_count)])).toEqual([["vote", 4]]);
  });
});

describe("actor deletion", () => {
  test("counts on others' posts, comments, authors and hashtags stay exact when an actor is hard-deleted", async () => {
    const s = await communitySetup(app);
    const [keep, gone, other] = [await s.actor(), await s.actor(), await s.actor()];
    const kp = await post(s, { actor_id: keep.id, body: "keep #shared" });
    const gp = await post(s, { actor_id: gone.id, body: "gone #shared #onlygone" });
    await s.call("POST", `/posts/${kp.id}/reactions`, { actor_id: gone.id, type: "like" });
    await s.call("POST", `/posts/${kp.id}/reactions`, { actor_id: other.id, type: "like" });
    const kc = (await s.call("POST", `/posts/${kp.id}/comments`, { actor_id: other.id, body: "c" })).body;
    await s.call("POST", `/posts/${kp.id}/comments/${kc.id}/reactions`, { actor_id: gone.id, type: "wow" });
    await s.call("POST", `/posts/${kp.id}/comments`, { actor_id: gone.id, body: "bye" });
    await s.call("POST", `/posts/${gp.id}/comments`, { actor_id: other.id, body: "on gone's post" });
    await s.call("POST", `/posts/${kp.id}/reposts`, { actor_id: gone.id });
    const rep = (await s.call("POST", `/posts/${gp.id}/reposts`, { actor_id: other.id })).body.post;
    expect((await s.call("GET", `/posts/${kp.id}`)).body).toMatchObject({ reaction_counts: { like: 2 }, comment_count: 2, repost_count: 1 });
    expect((await s.counters(other.id)).comment_count).toBe(2);
    expect((await s.call("DELETE", `/actors/${gone.id}`)).status).toBe(204);
    expect((await s.call("GET", `/posts/${kp.id}`)).body).toMatchObject({ reaction_counts: { like: 1 }, reaction_count: 1, comment_count: 1, repost_count: 0 });
    expect((await s.call("GET", `/posts/${kp.id}/comments/${kc.id}`)).body.reaction_counts).toEqual({});
    expect((await s.counters(other.id)).comment_count).toBe(1);
    expect((await s.call("GET", "/hashtags/shared")).body.post_count).toBe(1);
    expect((await s.call("GET", "/hashtags/onlygone")).body.post_count).toBe(0);
    expect((await s.call("GET", `/posts/${rep.id}`)).status).toBe(404);
  });
});
