/**
 * Comments over HTTP: body limits, depth computed and capped, author_only visibility,
 * pending_approval for restricted commenters with approve by the post author, pinned
 * comments first, replies oldest first, soft delete, counters, events.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestApp, type TestApp } from "../helpers/app";
import { inProcess, ON_BINARY } from "../helpers/target";
import { allPages, communitySetup, eventsOf } from "../helpers/social";

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
  if (!ON_BINARY) app.webhooks.options.autoKick = false;
});
afterAll(() => app.stop());

async function setup() {
  const s = await communitySetup(app);
  const author = await s.actor();
  const p = await s.call("POST", "/posts", { actor_id: author.id, body: "post" });
  const comment = async (actor: string, body: Record<string, unknown> = {}) => {
    const r = await s.call("POST", `/posts/${p.body.id}/comments`, { actor_id: actor, body: "hi", ...body });
    if (r.status !== 201) throw new Error(`comment failed: ${r.status} ${JSON.stringify(r.body)}`);
    if (!ON_BINARY) app.clock.advance(1000); // the binary's real clock moves by itself
    return r.body;
  };
  return { s, author, post: p.body, comment, path: `/posts/${p.body.id}/comments` };
}

const ids = (rows: { id: string }[]) => rows.map((r) => r.id);

describe("create", () => {
  inProcess("makes 20 ready assets by inserting them into the store through app.ctx.db")("201 with fields; body 1-10,000 after trim; counters; comment.created with parent_id; 404s", async () => {
    const { s, author, post, path } = await setup();
    const a = await s.actor();
    const r = await s.call("POST", path, { actor_id: a.id, body: "  Count me in!  " });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ post_id: post.id, parent_id: null, actor_id: a.id, body: "Count me in!", depth: 0, status: "published", visibility: "public", reaction_counts: {}, pinned: false, pinned_at: null, assets: [] });
    expect((await s.call("POST", path, { actor_id: a.id, body: "x".repeat(10_000) })).status).toBe(201);
    expect((await s.call("POST", path, { actor_id: a.id, body: `  ${"x".repeat(10_000)}  ` })).status).toBe(201);
    expect((await s.call("POST", path, { actor_id: a.id, body: "x".repeat(10_001) })).status).toBe(400);
    expect((await s.call("POST", path, { actor_id: a.id, body: "   " })).status).toBe(400);
    expect((await s.call("POST", path, { actor_id: a.id, body: "x", visibility: "secret" })).status).toBe(400);
    expect((await s.call("POST", path, { actor_id: a.id, body: "x", assets: Array.from({ length: 21 }, () => ({ asset_id: a.id })) })).status).toBe(400);
    expect((await s.call("POST", path, { actor_id: a.id, body: "x", assets: [{ asset_id: a.id }] })).status).toBe(422);
    // 20 ready assets of the author: accepted, in order.
    const ids = Array.from({ length: 20 }, () => Bun.randomUUIDv7());
    for (const id of ids) await app.ctx.db.run("INSERT INTO social_assets (id, community_id, owner_actor_id, kind, status, created_at, updated_at) VALUES (?, ?, ?, 'image', 'ready', ?, ?)", id, s.cid, a.id, app.clock.iso(), app.clock.iso());
    const twenty = await s.call("POST", path, { actor_id: a.id, body: "pics", assets: ids.map((asset_id) => ({ asset_id, alt_text: null })) });
    expect(twenty.status).toBe(201);
    expect(twenty.body.assets.map((x: any) => x.asset_id)).toEqual(ids);
    await s.call("DELETE", `${path}/${twenty.body.id}`);
    expect((await s.call("POST", "/posts/0192f2a0-3333-7ccc-8ddd-1e1f2a2b3c3d/comments", { actor_id: a.id, body: "x" })).status).toBe(404);
    expect((await s.call("POST", path, { actor_id: a.id, body: "x", parent_id: "0192f2a0-3333-7ccc-8ddd-1e1f2a2b3c3d" })).status).toBe(404);
    expect((await s.call("GET", `/posts/${post.id}`)).body.comment_count).toBe(3);
    expect((await s.counters(a.id)).comment_count).toBe(3);
    const ev = await eventsOf(app, s.cid, "comment.");
    expect(ev.map((e) => e.type)).toEqual(["comment.created", "comment.created", "comment.created", "comment.created", "comment.deleted"]);
    expect(ev[0]).toMatchObject({ type: "comment.created", data: { id: r.body.id, parent_id: null } });
    // Blocked commenters: 409.
    const b = await s.actor();
    await s.call("POST", "/blocks", { src_actor_id: author.id, dst_actor_id: b.id });
    const blk = await s.call("POST", path, { actor_id: b.id, body: "x" });
    expect(blk.status).toBe(409);
    // A followers-only post is 404 to a stranger.
    const fo = await s.call("POST", "/posts", { actor_id: author.id, body: "fo", visibility: "followers" });
    expect((await s.call("POST", `/posts/${fo.body.id}/comments`, { actor_id: a.id, body: "x" })).status).toBe(404);
  });

  test("depth computed and capped by max_comment_depth (a reply below the cap joins its parent's level)", async () => {
    const { s, comment } = await setup();
    await app.call("PATCH", `/social/v1/workspaces/${s.ws.id}/communities/${s.cid}`, { token: s.token, body: { settings: { max_comment_depth: 2 } } });
    const a = await s.actor();
    const c0 = await comment(a.id);
    const c1 = await comment(a.id, { parent_id: c0.id });
    const c2 = await comment(a.id, { parent_id: c1.id });
    const c3 = await comment(a.id, { parent_id: c2.id });
    expect([c0.depth, c1.depth, c2.depth, c3.depth]).toEqual([0, 1, 2, 2]);
    expect(c3.parent_id).toBe(c1.id);
    expect((await s.call("GET", `/posts/${c0.post_id}/comments?parent_id=${c1.id}`)).body.data.map((c: any) => c.id)).toEqual([c2.id, c3.id]);
  });
});

describe("listing and visibility", () => {
  inProcess("compares pinned_at with the injected clock and moves it")("top level newest first with pinned first, replies oldest first, cursor pages", async () => {
    const { s, author, post, comment, path } = await setup();
    const a = await s.actor();
    const t1 = await comment(a.id);
    const t2 = await comment(a.id);
    const t3 = await comment(a.id);
    const r1 = await comment(a.id, { parent_id: t1.id });
    const r2 = await comment(a.id, { parent_id: t1.id });
    expect(ids(await allPages(s, path, 1))).toEqual([t3.id, t2.id, t1.id]);
    expect(ids(await allPages(s, `${path}?parent_id=${t1.id}`, 1))).toEqual([r1.id, r2.id]);
    // Pinning: only the post author, only top-level.
    expect((await s.call("PATCH", `${path}/${t1.id}`, { pinned: true, actor_id: a.id })).status).toBe(403);
    expect((await s.call("PATCH", `${path}/${r1.id}`, { pinned: true, actor_id: author.id })).status).toBe(422);
    const pin = await s.call("PATCH", `${path}/${t1.id}`, { pinned: true, actor_id: author.id });
    expect(pin.body).toMatchObject({ pinned: true, pinned_at: app.clock.iso() });
    app.clock.advance(1000);
    await s.call("PATCH", `${path}/${t2.id}`, { pinned: true, actor_id: author.id });
    expect(ids(await allPages(s, path, 1))).toEqual([t2.id, t1.id, t3.id]);
    expect(ids(await allPages(s, path, 2))).toEqual([t2.id, t1.id, t3.id]);
    expect(ids(await allPages(s, path, 50))).toEqual([t2.id, t1.id, t3.id]);
    expect((await s.call("GET", `${path}?cursor=abc`)).status).toBe(400);
    expect((await s.call("GET", `${path}?limit=201`)).status).toBe(400);
    expect(post.id).toBeTruthy();
  });

  test("author_only: seen by the post author and the comment author only", async () => {
    const { s, author, comment, path } = await setup();
    const a = await s.actor();
    const other = await s.actor();
    const pub = await comment(a.id);
    const priv = await comment(a.id, { visibility: "author_only" });
    const list = async (viewer?: string) => ids((await s.call("GET", `${path}${viewer ? `?requester_id=${viewer}` : ""}`)).body.data);
    expect(await list()).toEqual([pub.id]);
    expect(await list(other.id)).toEqual([pub.id]);
    expect(await list(a.id)).toEqual([priv.id, pub.id]);
    expect(await list(author.id)).toEqual([priv.id, pub.id]);
    expect(ids((await s.call("GET", `${path}?actor_id=${author.id}`)).body.data)).toEqual([priv.id, pub.id]);
    expect((await s.call("GET", `${path}/${priv.id}?actor_id=${other.id}`)).status).toBe(404);
    expect((await s.call("GET", `${path}/${priv.id}?actor_id=${author.id}`)).status).toBe(200);
    expect((await s.call("GET", `${path}/${priv.id}`)).status).toBe(404);
  });

  test("restricted commenter: pending_approval, seen by both authors only, approve by the post author only", async () => {
    const { s, author, post, path } = await setup();
    const r = await s.actor();
    const other = await s.actor();
    await s.call("POST", "/restricts", { src_actor_id: author.id, dst_actor_id: r.id });
    const c = await s.call("POST", path, { actor_id: r.id, body: "hmm" });
    expect(c.body.status).toBe("pending_approval");
    expect((await s.call("GET", `/posts/${post.id}`)).body.comment_count).toBe(0);
    expect((await s.counters(r.id)).comment_count).toBe(0);
    const list = async (viewer?: string) => ids((await s.call("GET", `${path}${viewer ? `?requester_id=${viewer}` : ""}`)).body.data);
    expect(await list()).toEqual([]);
    expect(await list(other.id)).toEqual([]);
    expect(await list(r.id)).toEqual([c.body.id]);
    expect(await list(author.id)).toEqual([c.body.id]);
    const no = await s.call("POST", `${path}/${c.body.id}/approve`, { approver_actor_id: other.id });
    expect(no.status).toBe(403);
    const ok = await s.call("POST", `${path}/${c.body.id}/approve`, { approver_actor_id: author.id });
    expect(ok.status).toBe(200);
    expect(ok.body.status).toBe("published");
    const again = await s.call("POST", `${path}/${c.body.id}/approve`, { approver_actor_id: author.id });
    expect(again.status).toBe(200);
    expect(await list(other.id)).toEqual([c.body.id]);
    expect((await s.call("GET", `/posts/${post.id}`)).body.comment_count).toBe(1);
    expect((await s.counters(r.id)).comment_count).toBe(1);
    expect((await eventsOf(app, s.cid, "comment.updated")).length).toBe(1);
  });

  test("patch status and body, soft delete (204 then 404), counters and events", async () => {
    const { s, post, comment, path } = await setup();
    const a = await s.actor();
    const c = await comment(a.id);
    const p = await s.call("PATCH", `${path}/${c.id}`, { body: " edited ", status: "hidden" });
    expect(p.body).toMatchObject({ body: "edited", status: "hidden" });
    expect((await s.call("GET", `/posts/${post.id}`)).body.comment_count).toBe(0);
    expect(ids((await s.call("GET", path)).body.data)).toEqual([]);
    expect((await s.call("PATCH", `${path}/${c.id}`, { status: "pending_approval" })).status).toBe(400);
    await s.call("PATCH", `${path}/${c.id}`, { status: "published" });
    expect((await s.call("GET", `/posts/${post.id}`)).body.comment_count).toBe(1);
    expect((await s.call("DELETE", `${path}/${c.id}`)).status).toBe(204);
    expect((await s.call("DELETE", `${path}/${c.id}`)).status).toBe(404);
    expect((await s.call("GET", `${path}/${c.id}`)).status).toBe(404);
    expect((await s.call("GET", `/posts/${post.id}`)).body.comment_count).toBe(0);
    expect((await s.counters(a.id)).comment_count).toBe(0);
    const ev = await eventsOf(app, s.cid, "comment.");
    expect(ev.map((e) => e.type)).toEqual(["comment.created", "comment.updated", "comment.updated", "comment.deleted"]);
    expect(ev[1].data.changed_fields).toEqual(["body", "status"]);
    const other = await communitySetup(app);
    expect((await other.call("GET", `${path}/${c.id}`)).status).toBe(404);
  });
});

