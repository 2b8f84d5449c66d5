/**
 * Moderation: flags with auto-hide at the community threshold, the review queue in the
 * admin lane, actions (hide, remove, restore, warn, ban with suspension or shadow ban,
 * dismiss) with their events and notifications, keyword filters (block and hold).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestApp, type TestApp } from "../helpers/app";
import { communitySetup, eventsOf, keyWith, type Social } from "../helpers/social";
import { inProcess, ON_BINARY } from "../helpers/target";

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
  if (!ON_BINARY) app.webhooks.options.autoKick = false;
});
afterAll(() => app.stop());

const admin = (s: Social) => (method: string, path: string, body?: unknown) =>
  app.call(method, `/social/v1/workspaces/${s.ws.id}/communities/${s.cid}/moderation${path}`, { token: s.token, body });

describe("flags", () => {
  test("one open flag per reporter; the threshold of distinct reporters auto-hides; flag.created carries auto_hidden", async () => {
    const s = await communitySetup(app);
    await app.call("PATCH", `/social/v1/workspaces/${s.ws.id}/communities/${s.cid}`, { token: s.token, body: { settings: { flag_auto_hide_threshold: 2 } } });
    const au = await s.actor();
    const [r1, r2] = [await s.actor(), await s.actor()];
    const p = (await s.call("POST", "/posts", { actor_id: au.id, body: "spammy" })).body;
    const f1 = await s.call("POST", "/flags", { reporter_actor_id: r1.id, target_type: "post", target_id: p.id, reason: "spam", note: "again" });
    expect(f1.status).toBe(201);
    expect(f1.body).toMatchObject({ created: true, flag: { reporter_actor_id: r1.id, target_type: "post", target_id: p.id, target_actor_id: au.id, reason: "spam", status: "open", auto_hidden: false } });
    expect((await s.call("POST", "/flags", { reporter_actor_id: r1.id, target_type: "post", target_id: p.id, reason: "spam" })).body.created).toBe(false);
    expect((await s.call("GET", "/posts")).body.data.length).toBe(1);
    const f2 = await s.call("POST", "/flags", { reporter_actor_id: r2.id, target_type: "post", target_id: p.id, reason: "other" });
    expect(f2.body.flag.auto_hidden).toBe(true);
    expect((await s.call("GET", "/posts")).body.data).toEqual([]);
    expect((await s.call("GET", `/posts/${p.id}?actor_id=${r1.id}`)).status).toBe(404);
    expect((await s.call("GET", `/posts/${p.id}?actor_id=${au.id}`)).body.moderation).toBe("hidden");
    expect((await eventsOf(app, s.cid, "flag.created")).map((e) => e.data.auto_hidden)).toEqual([false, true]);
    expect((await s.call("POST", "/flags", { reporter_actor_id: au.id, target_type: "post", target_id: p.id, reason: "spam" })).status).toBe(422);
    expect((await s.call("POST", "/flags", { reporter_actor_id: r1.id, target_type: "post", target_id: p.id, reason: "meh" })).status).toBe(400);
    expect((await s.call("POST", "/flags", { reporter_actor_id: r1.id, target_type: "thing", target_id: p.id, reason: "spam" })).status).toBe(400);
    expect((await s.call("POST", "/flags", { reporter_actor_id: r1.id, target_type: "comment", target_id: p.id, reason: "spam" })).status).toBe(404);
    // Queue: the target with both flags.
    const q = await admin(s)("GET", "/queue");
    expect(q.status).toBe(200);
    expect(q.body.data).toEqual([expect.objectContaining({ target_type: "post", target_id: p.id, flag_count: 2, reporter_count: 2, reasons: { other: 1, spam: 1 }, auto_hidden: true })]);
    // Dismiss: flags dismissed, the post visible again.
    const d = await admin(s)("POST", "/actions", { action: "dismiss", flag_id: f1.body.flag.id, moderator_external_id: "admin_1" });
    expect(d.status).toBe(201);
    expect(d.body).toMatchObject({ action: "dismiss", target_type: "post", target_id: p.id, flag_id: f1.body.flag.id, flags_closed: 2, moderator_external_id: "admin_1" });
    expect((await s.call("GET", "/posts")).body.data.length).toBe(1);
    expect((await admin(s)("GET", "/queue")).body.data).toEqual([]);
    expect((await eventsOf(app, s.cid, "flag.updated")).map((e) => e.data.status)).toEqual(["dismissed", "dismissed"]);
    expect((await eventsOf(app, s.cid, "moderation.action.applied")).length).toBe(1);
  });
});

describe("actions", () => {
  inProcess("moves the injected clock past the shadow ban's end")("hide / remove / restore a comment with counts; warn; ban suspends; shadow ban hides from others; restore lifts it", async () => {
    const s = await communitySetup(app);
    const m = admin(s);
    const [au, c1, viewer] = [await s.actor(), await s.actor(), await s.actor()];
    const p = (await s.call("POST", "/posts", { actor_id: au.id, body: "post" })).body;
    const cm = (await s.call("POST", `/posts/${p.id}/comments`, { actor_id: c1.id, body: "rude" })).body;
    expect((await m("POST", "/actions", { action: "remove", target_type: "comment", target_id: cm.id, reason: "rude" })).status).toBe(201);
    expect((await s.call("GET", `/posts/${p.id}/comments/${cm.id}?actor_id=${c1.id}`)).status).toBe(404);
    expect((await s.call("GET", `/posts/${p.id}`)).body.comment_count).toBe(0);
    expect((await s.counters(c1.id)).comment_count).toBe(0);
    await m("POST", "/actions", { action: "restore", target_type: "comment", target_id: cm.id });
    expect((await s.call("GET", `/posts/${p.id}/comments/${cm.id}`)).body.status).toBe("published");
    expect((await s.call("GET", `/posts/${p.id}`)).body.comment_count).toBe(1);
    expect((await m("POST", "/actions", { action: "hide", target_type: "actor", target_id: c1.id })).status).toBe(422);
    expect((await m("POST", "/actions", { action: "nuke", target_type: "actor", target_id: c1.id })).status).toBe(400);
    await m("POST", "/actions", { action: "warn", target_type: "comment", target_id: cm.id, reason: "careful" });
    const inbox = (await s.call("GET", `/actors/${c1.id}/notifications`)).body.data;
    expect(inbox.map((n: any) => [n.type, n.target_id, n.activity_count, n.data.action])).toEqual([["moderation", cm.id, 2, "warn"]]);
    // Shadow ban for an hour: others stop seeing the author's posts, the author still does.
    const sp = (await s.call("POST", "/posts", { actor_id: c1.id, body: "mine" })).body;
    const ban = await m("POST", "/actions", { action: "ban", target_type: "actor", target_id: c1.id, shadow: true, duration_s: 3600, reason: "spam" });
    expect(ban.body.data).toEqual({ shadow: true, shadow_banned_until: new Date(app.clock.nowMs() + 3600_000).toISOString() });
    expect((await s.call("GET", `/actors/${c1.id}`)).body).toMatchObject({ status: "active", shadow_banned_reason: "spam" });
    expect((await s.call("GET", `/posts/${sp.id}?actor_id=${viewer.id}`)).status).toBe(404);
    expect((await s.call("GET", `/posts/${sp.id}?actor_id=${c1.id}`)).status).toBe(200);
    expect((await s.call("GET", "/feeds/discover")).body.data.map((x: any) => x.id)).toEqual([p.id]);
    app.clock.advance(3600_000);
    expect((await s.call("GET", `/posts/${sp.id}?actor_id=${viewer.id}`)).status).toBe(200);
    // Ban (suspend): the actor cannot write; restore makes it active again.
    await m("POST", "/actions", { action: "ban", target_type: "post", target_id: sp.id });
    expect((await s.call("GET", `/actors/${c1.id}`)).body.status).toBe("suspended");
    expect((await s.call("POST", "/posts", { actor_id: c1.id, body: "x" })).status).toBe(403);
    await m("POST", "/actions", { action: "restore", target_type: "actor", target_id: c1.id });
    expect((await s.call("POST", "/posts", { actor_id: c1.id, body: "x" })).status).toBe(201);
    expect((await eventsOf(app, s.cid, "moderation.action.applied")).map((e) => e.data.action)).toEqual(["remove", "restore", "warn", "ban", "ban", "restore"]);
  });

  test("admin lane access: another workspace's community 404, a key without social.update 403", async () => {
    const s = await communitySetup(app);
    const other = await communitySetup(app);
    expect((await app.call("GET", `/social/v1/workspaces/${other.ws.id}/communities/${s.cid}/moderation/queue`, { token: other.token })).status).toBe(404);
    const reader = await keyWith(app, s, ["social.list", "social.read"]);
    expect((await app.call("GET", `/social/v1/workspaces/${s.ws.id}/communities/${s.cid}/moderation/queue`, { token: reader })).status).toBe(200);
    expect((await app.call("POST", `/social/v1/workspaces/${s.ws.id}/communities/${s.cid}/moderation/keywords`, { token: reader, body: { keyword: "x" } })).status).toBe(403);
  });
});

describe("keyword filters", () => {
  test("block refuses the write (422); hold writes it hidden and queues it; whole words only", async () => {
    const s = await communitySetup(app);
    const m = admin(s);
    expect((await m("POST", "/keywords", { keyword: "  Buy Now ", action: "block" })).body).toMatchObject({ keyword: "buy now", action: "block" });
    expect((await m("POST", "/keywords", { keyword: "crypto" })).body.action).toBe("hold");
    expect((await m("POST", "/keywords", { keyword: "" })).status).toBe(400);
    expect((await m("GET", "/keywords")).body.data.map((k: any) => k.keyword)).toEqual(["buy now", "crypto"]);
    const a = await s.actor();
    const blocked = await s.call("POST", "/posts", { actor_id: a.id, body: "BUY NOW while it lasts" });
    expect(blocked.status).toBe(422);
    expect(blocked.body.error.code).toBe("CONTENT_BLOCKED");
    expect((await s.call("POST", "/posts", { actor_id: a.id, body: "buy nowhere" })).status).toBe(201);
    const held = (await s.call("POST", "/posts", { actor_id: a.id, body: "Crypto gains!" })).body;
    expect(held.moderation).toBe("hidden");
    const c = (await s.call("POST", `/posts/${held.id}/comments`, { actor_id: a.id, body: "more crypto" })).body;
    expect(c.status).toBe("hidden");
    const q = (await m("GET", "/queue")).body.data;
    expect(q.map((x: any) => [x.target_type, x.reasons])).toEqual([["post", { keyword_filter: 1 }], ["comment", { keyword_filter: 1 }]]);
    await m("POST", "/actions", { action: "restore", target_type: "post", target_id: held.id });
    expect((await s.call("GET", `/posts/${held.id}`)).body.moderation).toBeNull();
    const kw = (await m("GET", "/keywords")).body.data[0];
    expect((await m("DELETE", `/keywords/${kw.id}`)).status).toBe(204);
    expect((await s.call("POST", "/posts", { actor_id: a.id, body: "buy now" })).status).toBe(201);
  });
});
