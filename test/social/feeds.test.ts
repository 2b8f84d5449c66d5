/**
 * Feeds: home (followed actors and hashtags, own posts, visibility-checked, minus muted and
 * blocked, shadow bans) with cursor pages stable while new posts arrive; discover with
 * latest, top and hot rankings on a fixed data set.
 *
 * First pages stay exact while kept in memory (feeds/page-cache.ts, SQLite): a first page is
 * read (which keeps it), one thing a feed depends on changes, and the first page read again
 * must show the change at once. On PostgreSQL nothing is kept and the same assertions hold.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { FeedPageCache } from "../../src/services/social/feeds/page-cache";
import { hotScore } from "../../src/services/social/feeds/service";
import type { SocialService } from "../../src/services/social/routes";
import { startTestApp, type TestApp } from "../helpers/app";
import { inProcess, ON_BINARY } from "../helpers/target";
import { allPages, communitySetup, createPost, type Social } from "../helpers/social";

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
  if (!ON_BINARY) app.webhooks.options.autoKick = false;
});
afterAll(() => app.stop());

const post = async (s: Social, body: Record<string, unknown>) => {
  const created = await createPost(s, body);
  if (!ON_BINARY) app.clock.advance(1000); // the binary's real clock moves by itself (ties: ids, in creation order)
  return created as { id: string };
};

describe("home feed", () => {
  test("followed actors (public, followers; close friends only for members), own posts, followed hashtags; minus muted, blocked, drafts, deleted", async () => {
    const s = await communitySetup(app);
    const [me, fa, fb, stranger, muted, blocker] = [await s.actor(), await s.actor(), await s.actor(), await s.actor(), await s.actor(), await s.actor()];
    for (const d of [fa, fb, muted, blocker]) await s.call("POST", "/follows", { actor_id: me.id, dst_actor_id: d.id });
    await s.call("POST", "/close-friends", { owner_actor_id: fa.id, member_actor_id: me.id });
    await s.call("POST", "/mutes", { src_actor_id: me.id, dst_actor_id: muted.id });
    const mine = await post(s, { actor_id: me.id, body: "mine", visibility: "followers" });
    const a1 = await post(s, { actor_id: fa.id, body: "a public" });
    const a2 = await post(s, { actor_id: fa.id, body: "a followers", visibility: "followers" });
    const a3 = await post(s, { actor_id: fa.id, body: "a close", visibility: "close_friends" });
    const b3 = await post(s, { actor_id: fb.id, body: "b close", visibility: "close_friends" });
    await post(s, { actor_id: fb.id, body: "b draft", status: "draft" });
    const gone = await post(s, { actor_id: fb.id, body: "b gone" });
    await s.call("DELETE", `/posts/${gone.id}`);
    await post(s, { actor_id: stranger.id, body: "no tag" });
    const tagged = await post(s, { actor_id: stranger.id, body: "with #cats" });
    await post(s, { actor_id: stranger.id, body: "hidden #cats", visibility: "followers" });
    await post(s, { actor_id: muted.id, body: "muted" });
    const bl = await post(s, { actor_id: blocker.id, body: "blocker" });
    await s.call("POST", `/actors/${me.id}/hashtag-follows`, { tag: "cats" });
    const feed = async () => (await allPages(s, `/actors/${me.id}/feeds/home`, 2)).map((p) => p.id);
    expect(await feed()).toEqual([bl.id, tagged.id, a3.id, a2.id, a1.id, mine.id]);
    await s.call("POST", "/blocks", { src_actor_id: blocker.id, dst_actor_id: me.id });
    expect(await feed()).toEqual([tagged.id, a3.id, a2.id, a1.id, mine.id]);
    // Shadow-banned authors reach only themselves.
    const moderate = (body: Record<string, unknown>) => app.call("POST", `/social/v1/workspaces/${s.ws.id}/communities/${s.cid}/moderation/actions`, { token: s.token, body });
    expect((await moderate({ action: "ban", target_type: "actor", target_id: fa.id, shadow: true })).status).toBe(201);
    expect(await feed()).toEqual([tagged.id, mine.id]);
    expect((await allPages(s, `/actors/${fa.id}/feeds/home`, 10)).map((p) => p.id)).toEqual([a3.id, a2.id, a1.id]);
    // A private author's public posts need a follow.
    expect((await moderate({ action: "restore", target_type: "actor", target_id: fa.id })).status).toBe(201);
    await s.call("POST", "/actors", { external_id: stranger.external_id, display_name: stranger.display_name, is_private: true });
    expect(await feed()).toEqual([a3.id, a2.id, a1.id, mine.id]);
  });

  test("cursor pages are stable while new posts arrive", async () => {
    const s = await communitySetup(app);
    const me = await s.actor();
    const f = await s.actor();
    await s.call("POST", "/follows", { actor_id: me.id, dst_actor_id: f.id });
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) ids.unshift((await post(s, { actor_id: f.id, body: `p${i}` })).id);
    const p1 = await s.call("GET", `/actors/${me.id}/feeds/home?limit=3`);
    expect(p1.body.data.map((p: any) => p.id)).toEqual(ids.slice(0, 3));
    await post(s, { actor_id: f.id, body: "new" });
    const p2 = await s.call("GET", `/actors/${me.id}/feeds/home?limit=3&cursor=${p1.body.pagination.next_cursor}`);
    expect(p2.body.data.map((p: any) => p.id)).toEqual(ids.slice(3, 6));
    expect((await s.call("GET", `/actors/${me.id}/feeds/home?cursor=bad`)).status).toBe(400);
    expect((await s.call("GET", `/actors/0192f2a0-3333-7ccc-8ddd-1e1f2a2b3c3d/feeds/home`)).status).toBe(404);
  });
});

describe("discover", () => {
  inProcess("moves the injected clock by 40 h and 10 h to age the posts")("latest, top and hot on a fixed data set; 400 for unknown ranking or window; stable hot pages", async () => {
    const s = await communitySetup(app);
    const [a, b] = [await s.actor(), await s.actor()];
    const fans = await Promise.all(Array.from({ length: 6 }, () => s.actor()));
    // old: 6 reactions, 50 h old; mid: 2 reactions + 1 comment, 10 h old; fresh: nothing, 0 h old.
    const old = await post(s, { actor_id: a.id, body: "old" });
    for (const f of fans) await s.call("POST", `/posts/${old.id}/reactions`, { actor_id: f.id, type: "like" });
    app.clock.advance(40 * 3600_000);
    const mid = await post(s, { actor_id: b.id, body: "mid" });
    for (const f of fans.slice(0, 2)) await s.call("POST", `/posts/${mid.id}/reactions`, { actor_id: f.id, type: "like" });
    await s.call("POST", `/posts/${mid.id}/comments`, { actor_id: fans[0].id, body: "c" });
    app.clock.advance(10 * 3600_000);
    const fresh = await post(s, { actor_id: a.id, body: "fresh" });
    await post(s, { actor_id: a.id, body: "fo", visibility: "followers" });
    const ids = async (q: string) => (await allPages(s, `/feeds/discover?${q}`, 1)).map((p) => p.id);
    expect(await ids("ranking=latest")).toEqual([fresh.id, mid.id, old.id]);
    expect(await ids("")).toEqual([fresh.id, mid.id, old.id]);
    expect(await ids("ranking=top")).toEqual([old.id, mid.id, fresh.id]);
    expect(await ids("ranking=top&window=24h")).toEqual([mid.id, fresh.id]);
    // hot: E(old)=6, 50 h; E(mid)=4, 10 h; E(fresh)=0, 0 h.
    const now = app.clock.nowMs();
    const at = (h: number) => new Date(now - h * 3600_000).toISOString();
    const scores = { old: hotScore({ reaction_count: 6, comment_count: 0, repost_count: 0, published_at: at(50) }, now), mid: hotScore({ reaction_count: 2, comment_count: 1, repost_count: 0, published_at: at(10) }, now), fresh: hotScore({ reaction_count: 0, comment_count: 0, repost_count: 0, published_at: at(0) }, now) };
    expect(scores.fresh).toBeGreaterThan(scores.mid);
    expect(scores.mid).toBeGreaterThan(scores.old);
    expect(await ids("ranking=hot")).toEqual([fresh.id, mid.id, old.id]);
    // A later post does not shift the pages of a hot listing already begun.
    const first = await s.call("GET", "/feeds/discover?ranking=hot&limit=1");
    await post(s, { actor_id: b.id, body: "newer" });
    const second = await s.call("GET", `/feeds/discover?ranking=hot&limit=2&cursor=${first.body.pagination.next_cursor}`);
    expect(second.body.data.map((p: any) => p.id)).toEqual([mid.id, old.id]);
    expect(second.body.pagination.has_more).toBe(false);
    // Viewer: its mutes apply.
    await s.call("POST", "/mutes", { src_actor_id: b.id, dst_actor_id: a.id });
    expect((await allPages(s, `/feeds/discover?actor_id=${b.id}`, 5)).every((p) => p.actor_id === b.id)).toBe(true);
    expect((await s.call("GET", "/feeds/discover?ranking=best")).status).toBe(400);
    expect((await s.call("GET", "/feeds/discover?ranking=hot&window=2d")).status).toBe(400);
    expect((await s.call("GET", `/feeds/discover?ranking=top&cursor=${first.body.pagination.next_cursor}`)).status).toBe(400);
  });
});

describe("hides", () => {
  test("hide is idempotent, filters home and discover for that actor only, lists newest first, 204 always to undo", async () => {
    const s = await communitySetup(app);
    const [me, other, au] = [await s.actor(), await s.actor(), await s.actor()];
    for (const v of [me, other]) await s.call("POST", "/follows", { actor_id: v.id, dst_actor_id: au.id });
    const p1 = await post(s, { actor_id: au.id, body: "one" });
    const p2 = await post(s, { actor_id: au.id, body: "two" });
    const fo = await post(s, { actor_id: au.id, body: "fo", visibility: "close_friends" });
    const h = await s.call("POST", "/hides", { src_actor_id: me.id, post_id: p1.id });
    expect(h.status).toBe(201);
    expect(h.body).toMatchObject({ created: true, edge: { kind: "hide", src_actor_id: me.id, dst_actor_id: au.id, dst_post_id: p1.id, payload: {} } });
    expect((await s.call("POST", "/hides", { actor_id: me.id, dst_post_id: p1.id })).body).toMatchObject({ created: false, edge: { id: h.body.edge.id } });
    expect((await s.call("POST", "/hides", { src_actor_id: me.id, post_id: fo.id })).status).toBe(404);
    expect((await s.call("POST", "/hides", { src_actor_id: me.id })).status).toBe(400);
    if (!ON_BINARY) app.clock.advance(1000); // on the real clock a tie is broken by the hide's id (UUIDv7, later)
    await s.call("POST", "/hides", { src_actor_id: me.id, post_id: p2.id });
    const ids = async (path: string) => (await allPages(s, path, 1)).map((p) => p.id);
    expect(await ids(`/actors/${me.id}/feeds/home`)).toEqual([]);
    expect(await ids(`/actors/${other.id}/feeds/home`)).toEqual([p2.id, p1.id]);
    expect(await ids(`/feeds/discover?actor_id=${me.id}`)).toEqual([]);
    expect(await ids(`/feeds/discover?actor_id=${other.id}`)).toEqual([p2.id, p1.id]);
    expect((await s.call("GET", `/posts/${p1.id}?actor_id=${me.id}`)).status).toBe(200);
    expect((await allPages(s, `/actors/${me.id}/hides`, 1)).map((e) => e.dst_post_id)).toEqual([p2.id, p1.id]);
    expect((await s.call("DELETE", `/hides/${me.id}/${p1.id}`)).status).toBe(204);
    expect((await s.call("DELETE", `/hides/${me.id}/${p1.id}`)).status).toBe(204);
    expect((await s.call("DELETE", `/hides/${crypto.randomUUID()}/${crypto.randomUUID()}`)).status).toBe(204);
    expect((await s.call("DELETE", `/hides/nope/nope`)).status).toBe(400);
    expect(await ids(`/actors/${me.id}/feeds/home`)).toEqual([p1.id]);
  });
});

const home = async (s: Social, actor: string, limit = 50) => {
  const r = await s.call("GET", `/actors/${actor}/feeds/home?limit=${limit}`);
  expect(r.status).toBe(200);
  return r.body as { data: any[]; pagination: { next_cursor: string | null; has_more: boolean } };
};
const homeIds = async (s: Social, actor: string) => (await home(s, actor)).data.map((p) => p.id);
const discoverIds = async (s: Social, viewer?: string) => {
  const r = await s.call("GET", `/feeds/discover?limit=50${viewer ? `&actor_id=${viewer}` : ""}`);
  expect(r.status).toBe(200);
  return (r.body.data as any[]).map((p) => p.id);
};
const moderate = (s: Social, body: Record<string, unknown>) => app.call("POST", `/social/v1/workspaces/${s.ws.id}/communities/${s.cid}/moderation/actions`, { token: s.token, body });

describe("home and discover first pages after each kind of change", () => {
  test("a kept page answers the same JSON as the page it was built from, and its posts as GET /posts/{id} shows them", async () => {
    const s = await communitySetup(app);
    const [me, a] = [await s.actor(), await s.actor()];
    await s.call("POST", "/follows", { actor_id: me.id, dst_actor_id: a.id });
    const p1 = await post(s, { actor_id: a.id, body: "one #x" });
    expect((await s.call("POST", `/posts/${p1.id}/reactions`, { actor_id: me.id, type: "like" })).status).toBe(201);
    await post(s, { actor_id: a.id, kind: "poll", body: "which?", attributes: { poll: { question: "which?", options: ["a", "b"] } } });
    const first = await s.call("GET", `/actors/${me.id}/feeds/home?limit=50`);
    const again = await s.call("GET", `/actors/${me.id}/feeds/home?limit=50`);
    expect(again.status).toBe(200);
    expect(again.headers.get("content-type")).toBe(first.headers.get("content-type"));
    expect(again.body).toEqual(first.body);
    expect(first.body.data).toHaveLength(2);
    for (const p of first.body.data) expect((await s.call("GET", `/posts/${p.id}?actor_id=${me.id}`)).body).toEqual(p);
    expect(first.body.data[1].reaction_counts).toEqual({ like: 1 });
  });

  test("posts: a new one, an edit, a reaction, a delete, a moderator's removal", async () => {
    const s = await communitySetup(app);
    const [me, a] = [await s.actor(), await s.actor()];
    await s.call("POST", "/follows", { actor_id: me.id, dst_actor_id: a.id });
    const p1 = await post(s, { actor_id: a.id, body: "first" });
    expect(await homeIds(s, me.id)).toEqual([p1.id]);
    expect(await discoverIds(s)).toEqual([p1.id]);
    const p2 = await post(s, { actor_id: a.id, body: "second" });
    expect(await homeIds(s, me.id)).toEqual([p2.id, p1.id]);
    expect(await discoverIds(s)).toEqual([p2.id, p1.id]);
    expect((await s.call("PATCH", `/posts/${p2.id}`, { body: "second, edited" })).status).toBe(200);
    expect((await home(s, me.id)).data[0].body).toBe("second, edited");
    expect((await s.call("POST", `/posts/${p1.id}/reactions`, { actor_id: a.id, type: "like" })).status).toBe(201);
    expect((await home(s, me.id)).data[1].reaction_count).toBe(1);
    expect((await s.call("DELETE", `/posts/${p2.id}`)).status).toBe(204);
    expect(await homeIds(s, me.id)).toEqual([p1.id]);
    expect(await discoverIds(s)).toEqual([p1.id]);
    expect((await moderate(s, { action: "remove", target_type: "post", target_id: p1.id })).status).toBe(201);
    expect(await homeIds(s, me.id)).toEqual([]);
    expect(await discoverIds(s)).toEqual([]);
  });

  test("the graph: follow, unfollow, mute, block either way, close friends, hashtag follow, hide", async () => {
    const s = await communitySetup(app);
    const [me, a, b] = [await s.actor(), await s.actor(), await s.actor()];
    const pa = await post(s, { actor_id: a.id, body: "a public" });
    const pf = await post(s, { actor_id: a.id, body: "a followers", visibility: "followers" });
    const pc = await post(s, { actor_id: a.id, body: "a close", visibility: "close_friends" });
    const pt = await post(s, { actor_id: b.id, body: "b #tagged" });
    expect(await homeIds(s, me.id)).toEqual([]);
    await s.call("POST", "/follows", { actor_id: me.id, dst_actor_id: a.id });
    expect(await homeIds(s, me.id)).toEqual([pf.id, pa.id]);
    await s.call("POST", "/close-friends", { owner_actor_id: a.id, member_actor_id: me.id });
    expect(await homeIds(s, me.id)).toEqual([pc.id, pf.id, pa.id]);
    await s.call("DELETE", `/close-friends/${a.id}/${me.id}`);
    expect(await homeIds(s, me.id)).toEqual([pf.id, pa.id]);
    await s.call("POST", `/actors/${me.id}/hashtag-follows`, { tag: "tagged" });
    expect(await homeIds(s, me.id)).toEqual([pt.id, pf.id, pa.id]);
    await s.call("POST", "/hides", { src_actor_id: me.id, dst_post_id: pt.id });
    expect(await homeIds(s, me.id)).toEqual([pf.id, pa.id]);
    expect(await discoverIds(s, me.id)).toEqual([pa.id]);
    await s.call("POST", "/mutes", { src_actor_id: me.id, dst_actor_id: a.id });
    expect(await homeIds(s, me.id)).toEqual([]);
    expect(await discoverIds(s, me.id)).toEqual([]);
    await s.call("DELETE", `/mutes/${me.id}/${a.id}`);
    expect(await homeIds(s, me.id)).toEqual([pf.id, pa.id]);
    await s.call("POST", "/blocks", { src_actor_id: a.id, dst_actor_id: me.id });
    expect(await homeIds(s, me.id)).toEqual([]);
    expect(await discoverIds(s, me.id)).toEqual([]);
    expect(await discoverIds(s)).toEqual([pt.id, pa.id]);
    await s.call("DELETE", `/blocks/${a.id}/${me.id}`);
    await s.call("POST", "/follows", { actor_id: me.id, dst_actor_id: a.id });
    expect(await homeIds(s, me.id)).toEqual([pf.id, pa.id]);
    await s.call("DELETE", `/follows/${me.id}/${a.id}`);
    expect(await homeIds(s, me.id)).toEqual([]);
  });

  test("authors: private, shadow-banned and restored, deleted; a deleted viewer is 404", async () => {
    const s = await communitySetup(app);
    const [me, a, other] = [await s.actor(), await s.actor(), await s.actor()];
    await s.call("POST", "/follows", { actor_id: other.id, dst_actor_id: a.id });
    const pa = await post(s, { actor_id: a.id, body: "public #open" });
    await s.call("POST", `/actors/${me.id}/hashtag-follows`, { tag: "open" });
    expect(await homeIds(s, me.id)).toEqual([pa.id]);
    expect(await homeIds(s, other.id)).toEqual([pa.id]);
    await s.call("POST", "/actors", { external_id: a.external_id, display_name: a.display_name, is_private: true });
    expect(await homeIds(s, me.id)).toEqual([]);
    expect(await homeIds(s, other.id)).toEqual([pa.id]);
    expect((await home(s, other.id)).data[0].effective_visibility).toBe("followers");
    expect(await discoverIds(s)).toEqual([]);
    await s.call("POST", "/actors", { external_id: a.external_id, display_name: a.display_name, is_private: false });
    expect(await discoverIds(s)).toEqual([pa.id]);
    expect((await moderate(s, { action: "ban", target_type: "actor", target_id: a.id, shadow: true })).status).toBe(201);
    expect(await homeIds(s, other.id)).toEqual([]);
    expect(await homeIds(s, a.id)).toEqual([pa.id]);
    expect(await discoverIds(s)).toEqual([]);
    expect((await moderate(s, { action: "restore", target_type: "actor", target_id: a.id })).status).toBe(201);
    expect(await homeIds(s, other.id)).toEqual([pa.id]);
    expect(await discoverIds(s)).toEqual([pa.id]);
    expect((await s.call("DELETE", `/actors/${a.id}`)).status).toBe(204);
    expect(await homeIds(s, other.id)).toEqual([]);
    expect(await discoverIds(s)).toEqual([]);
    expect((await s.call("DELETE", `/actors/${other.id}`)).status).toBe(204);
    expect((await s.call("GET", `/actors/${other.id}/feeds/home`)).status).toBe(404);
  });

  test("pages after the first still follow their cursor; the first page's next_cursor leads to the same second page after a new post", async () => {
    const s = await communitySetup(app);
    const [me, a] = [await s.actor(), await s.actor()];
    await s.call("POST", "/follows", { actor_id: me.id, dst_actor_id: a.id });
    const ps: string[] = [];
    for (let i = 0; i < 5; i++) ps.unshift((await post(s, { actor_id: a.id, body: `p${i}` })).id);
    const p1 = await home(s, me.id, 2);
    expect(p1.data.map((p) => p.id)).toEqual(ps.slice(0, 2));
    const fresh = await post(s, { actor_id: a.id, body: "newest" });
    expect((await home(s, me.id, 2)).data.map((p) => p.id)).toEqual([fresh.id, ps[0]]);
    const p2 = await s.call("GET", `/actors/${me.id}/feeds/home?limit=2&cursor=${p1.pagination.next_cursor}`);
    expect(p2.body.data.map((p: any) => p.id)).toEqual(ps.slice(2, 4));
  });

  inProcess("moves the injected clock")("a story's expiry and a shadow ban's end change first pages without a write", async () => {
    const s = await communitySetup(app);
    const [me, a, b] = [await s.actor(), await s.actor(), await s.actor()];
    for (const d of [a, b]) await s.call("POST", "/follows", { actor_id: me.id, dst_actor_id: d.id });
    const pb = await post(s, { actor_id: b.id, body: "b" });
    const story = await post(s, { actor_id: a.id, kind: "story", body: "today" });
    expect(await homeIds(s, me.id)).toEqual([story.id, pb.id]);
    expect(await discoverIds(s)).toEqual([story.id, pb.id]);
    app.clock.advance(24 * 3600_000);
    expect(await homeIds(s, me.id)).toEqual([pb.id]);
    expect(await discoverIds(s)).toEqual([pb.id]);
    expect((await moderate(s, { action: "ban", target_type: "actor", target_id: b.id, shadow: true, duration_s: 60 })).status).toBe(201);
    expect(await homeIds(s, me.id)).toEqual([]);
    expect(await discoverIds(s)).toEqual([]);
    app.clock.advance(61_000);
    expect(await homeIds(s, me.id)).toEqual([pb.id]);
    expect(await discoverIds(s)).toEqual([pb.id]);
  });

  inProcess("reads the feed service's cache")("on SQLite a second read is answered from memory; a write empties it", async () => {
    const s = await communitySetup(app);
    const [me, a] = [await s.actor(), await s.actor()];
    await s.call("POST", "/follows", { actor_id: me.id, dst_actor_id: a.id });
    await post(s, { actor_id: a.id, body: "kept" });
    const pages = app.contextOf("social").service<SocialService>("social")!.feeds.pages;
    await home(s, me.id);
    await discoverIds(s);
    expect(pages.size).toBe(app.ctx.db.engine === "sqlite" ? 2 : 0);
    await s.call("POST", "/mutes", { src_actor_id: me.id, dst_actor_id: a.id });
    expect(pages.size).toBe(0);
  });
});

describe("FeedPageCache", () => {
  const sqliteLike = { engine: "sqlite", listen: async () => async () => {} } as never;
  const ready = async (c: FeedPageCache) => {
    await Promise.resolve();
    await Promise.resolve();
    return c;
  };

  test("a page built while a change committed is answered but not kept; a kept page lives until its time or the next change", async () => {
    const c = await ready(new FeedPageCache(sqliteLike));
    const mark = c.mark();
    c.changed();
    c.put("k", "[1]", mark, null);
    expect(c.get("k", "2026-01-01T00:00:00.000Z")).toBeNull();
    c.put("k", "[2]", c.mark(), "2026-01-01T00:01:00.000Z");
    expect(c.get("k", "2026-01-01T00:00:59.999Z")).toBe("[2]");
    expect(c.get("k", "2026-01-01T00:01:00.000Z")).toBeNull();
    c.put("k", "[3]", c.mark(), null);
    c.changed();
    expect(c.get("k", "2026-01-01T00:00:00.000Z")).toBeNull();
  });

  test("bounded by size: the least recently read page goes first; PostgreSQL keeps nothing", async () => {
    const c = await ready(new FeedPageCache(sqliteLike, 10));
    c.put("a", "aaaa", c.mark(), null);
    c.put("b", "bbbb", c.mark(), null);
    expect(c.get("a", "t")).toBe("aaaa");
    c.put("c", "cccc", c.mark(), null);
    expect([c.get("a", "t"), c.get("b", "t"), c.get("c", "t")]).toEqual(["aaaa", null, "cccc"]);
    c.put("d", "d".repeat(11), c.mark(), null);
    expect(c.get("d", "t")).toBeNull();
    const pg = await ready(new FeedPageCache({ engine: "postgres" } as never));
    pg.put("a", "aaaa", pg.mark(), null);
    expect(pg.get("a", "t")).toBeNull();
  });
});
