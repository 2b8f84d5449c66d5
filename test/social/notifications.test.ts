/**
 * Notification inbox: groups by (type, target) with exact activity and actor counts under
 * concurrency, unread/unseen counts, read and seen (all or some), a new activity reopening
 * its group, follow notifications from the follow routes (none for suppressed batches),
 * and every content type (reaction, comment, reply, mention, tag, repost, vote).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestApp, type TestApp } from "../helpers/app";
import { allPages, communitySetup } from "../helpers/social";
import { ON_BINARY } from "../helpers/target";

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
  if (!ON_BINARY) app.webhooks.options.autoKick = false;
});
afterAll(() => app.stop());

/**
 * Spaces activities apart in time, for orderings by timestamp: in-process the injected clock moves
 * by `ms`; the binary runs on the real clock, so wait until it shows another millisecond (a few ms:
 * the ordering only needs distinct timestamps).
 */
const later = async (ms: number) => {
  if (ON_BINARY) await Bun.sleep(3);
  else app.clock.advance(ms);
};

describe("inbox", () => {
  test("grouping, exact counts under concurrency, read/seen, reopen", async () => {
    const s = await communitySetup(app);
    const me = await s.actor();
    const p = (await s.call("POST", "/posts", { actor_id: me.id, body: "hi" })).body;
    const fans = await Promise.all(Array.from({ length: 25 }, () => s.actor()));
    await later(1000);
    await Promise.all(fans.flatMap((f) => [s.call("POST", `/posts/${p.id}/reactions`, { actor_id: f.id, type: "like" }), s.call("POST", `/posts/${p.id}/reactions`, { actor_id: f.id, type: "love" })]));
    await later(1000);
    await s.call("POST", `/posts/${p.id}/comments`, { actor_id: fans[0].id, body: "c1" });
    await later(1000);
    await s.call("POST", `/posts/${p.id}/comments`, { actor_id: fans[1].id, body: "c2" });
    // Own reactions notify nobody.
    await s.call("POST", `/posts/${p.id}/reactions`, { actor_id: me.id, type: "like" });
    const r = await s.call("GET", `/actors/${me.id}/notifications`);
    expect(r.status).toBe(200);
    expect(r.body.data.map((n: any) => [n.type, n.target_id, n.activity_count, n.actor_count])).toEqual([
      ["comment", p.id, 2, 2],
      ["reaction", p.id, 50, 25],
    ]);
    expect(r.body.data[0].latest_actor_ids).toEqual([fans[1].id, fans[0].id]);
    expect(r.body.data[1].latest_actor_ids.length).toBe(5);
    expect(r.body).toMatchObject({ unread_count: 2, unseen_count: 2 });
    const seen = await s.call("POST", `/actors/${me.id}/notifications/seen`, {});
    expect(seen.body).toEqual({ updated: 2, unread_count: 2, unseen_count: 0 });
    const read = await s.call("POST", `/actors/${me.id}/notifications/read`, { ids: [r.body.data[0].id] });
    expect(read.body).toEqual({ updated: 1, unread_count: 1, unseen_count: 0 });
    expect((await s.call("POST", `/actors/${me.id}/notifications/read`, { ids: ["nope"] })).status).toBe(400);
    await later(1000);
    await s.call("POST", `/posts/${p.id}/comments`, { actor_id: fans[2].id, body: "c3" });
    expect((await s.call("GET", `/actors/${me.id}/notifications/counts`)).body).toEqual({ unread_count: 2, unseen_count: 1 });
    const again = await allPages(s, `/actors/${me.id}/notifications`, 1);
    expect(again.map((n) => [n.type, n.activity_count, n.is_read, n.is_seen])).toEqual([["comment", 3, false, false], ["reaction", 50, false, true]]);
    await s.call("POST", `/actors/${me.id}/notifications/read`, {});
    expect((await s.call("GET", `/actors/${me.id}/notifications/counts`)).body).toEqual({ unread_count: 0, unseen_count: 0 });
  });

  test("types: follow, follow_request, follow_request_approved, reply, mention, tag, repost, vote; suppressed batch follows notify nobody", async () => {
    const s = await communitySetup(app);
    const [a, b, c] = [await s.actor(), await s.actor(), await s.actor()];
    const priv = await s.actor({ is_private: true });
    await s.call("POST", "/follows", { actor_id: b.id, dst_actor_id: a.id });
    await s.call("POST", "/follows", { actor_id: a.id, dst_actor_id: priv.id });
    await s.call("POST", `/follow-requests/${priv.id}/${a.id}/approve`);
    await s.call("POST", "/follows/batch", { follows: [{ actor_id: c.id, dst_actor_id: a.id }], suppress_notifications: true });
    const p = (await s.call("POST", "/posts", { actor_id: a.id, kind: "poll", body: `hey @${b.external_id}`, attributes: { poll: { question: "q", options: ["x", "y"] } } })).body;
    const top = (await s.call("POST", `/posts/${p.id}/comments`, { actor_id: b.id, body: "top" })).body;
    await s.call("POST", `/posts/${p.id}/comments`, { actor_id: c.id, body: "reply", parent_id: top.id });
    await s.call("POST", `/posts/${p.id}/reposts`, { actor_id: c.id });
    await s.call("POST", `/posts/${p.id}/votes`, { actor_id: c.id, option_index: 1 });
    await s.call("POST", `/posts/${p.id}/tags/${b.id}/approve`);
    const types = async (id: string) => (await allPages(s, `/actors/${id}/notifications`, 50)).map((n) => n.type).sort();
    expect(await types(a.id)).toEqual(["comment", "follow", "follow_request_approved", "repost", "tag", "vote"]);
    const follow = (await allPages(s, `/actors/${a.id}/notifications`, 50)).find((n) => n.type === "follow");
    expect([follow.activity_count, follow.latest_actor_ids]).toEqual([1, [b.id]]);
    expect(await types(priv.id)).toEqual(["follow", "follow_request"]);
    expect(await types(b.id)).toEqual(["mention", "reply"]);
  });
});
