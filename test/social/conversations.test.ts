/**
 * Conversations over HTTP: direct (idempotent per pair, blocks 409, self 422) and group
 * (cap max_group_conversation_size at its boundary), messages (dm.message.created with
 * recipient_actor_ids, delivered and verified with standardwebhooks), read state and the exact
 * unread count (muted excluded, concurrent messages), folders inbox/requests/all with
 * restricts, participants (mute, add, leave), access.
 */
import { afterAll, beforeAll, describe, expect, setSystemTime, test } from "bun:test";
import { Webhook } from "standardwebhooks";
import type { TestApp } from "../helpers/app";
import type { Receiver } from "../helpers/http-receiver";
import { allPages, communitySetup, eventsOf, keyWith, waitUntil, type Social } from "../helpers/social";
import { inProcess, ON_BINARY } from "../helpers/target";
import { startWebhookTestApp, stopWebhookTestApp } from "../helpers/webhook-app";

let app: TestApp;
let receiver: Receiver;
beforeAll(async () => {
  ({ app, receiver } = await startWebhookTestApp());
});
afterAll(() => stopWebhookTestApp({ app, receiver }));

const UNKNOWN = "0192f201-1111-7aaa-8bbb-0c0d0e0f1a1b";

/**
 * Spaces activities apart in time, for orderings by timestamp: in-process the injected clock moves
 * by `ms`; the binary runs on the real clock, so wait until it shows another millisecond (a few ms:
 * the ordering only needs distinct timestamps).
 */
const later = async (ms: number) => {
  if (ON_BINARY) await Bun.sleep(3);
  else app.clock.advance(ms);
};

const direct = (s: Social, a: string, b: string) => s.call("POST", "/conversations", { actor_id: a, recipient_actor_id: b });
const send = (s: Social, conv: string, actor: string, body = "hi") => s.call("POST", `/conversations/${conv}/messages`, { actor_id: actor, body });
const unread = async (s: Social, actor: string) => (await s.call("GET", `/conversations/unread-count?actor_id=${actor}`)).body.count as number;

describe("create", () => {
  inProcess("joined_at/created_at equal the frozen injected clock")("direct: 201 with both participants; the same pair (either order) returns the same conversation", async () => {
    const s = await communitySetup(app);
    const a = await s.actor();
    const b = await s.actor();
    const r = await direct(s, a.id, b.id);
    expect(r.status).toBe(201);
    expect(r.body).toEqual({
      id: expect.any(String),
      community_id: s.cid,
      kind: "direct",
      name: null,
      created_by: null,
      participants: expect.arrayContaining([
        { actor_id: a.id, joined_at: app.clock.iso(), last_read_at: null, muted: false, role: "member" },
        { actor_id: b.id, joined_at: app.clock.iso(), last_read_at: null, muted: false, role: "member" },
      ]),
      created_at: app.clock.iso(),
      updated_at: app.clock.iso(),
      last_message_at: null,
    });
    expect((await direct(s, b.id, a.id)).body.id).toBe(r.body.id);
    const many = await Promise.all(Array.from({ length: 5 }, () => direct(s, a.id, b.id)));
    expect(new Set(many.map((x) => x.body.id))).toEqual(new Set([r.body.id]));
    expect((await s.call("GET", `/conversations/${r.body.id}`)).body.id).toBe(r.body.id);
  });

  test("direct: 422 self, 409 block either way, 404 unknown, 400 missing recipient or a name", async () => {
    const s = await communitySetup(app);
    const a = await s.actor();
    const b = await s.actor();
    expect((await direct(s, a.id, a.id)).status).toBe(422);
    expect((await direct(s, a.id, UNKNOWN)).status).toBe(404);
    expect((await s.call("POST", "/conversations", { actor_id: a.id })).status).toBe(400);
    expect((await s.call("POST", "/conversations", { actor_id: a.id, recipient_actor_id: b.id, name: "x" })).status).toBe(400);
    expect((await s.call("POST", "/conversations", { actor_id: a.id, recipient_actor_id: b.id, kind: "room" })).status).toBe(400);
    await s.call("POST", "/blocks", { src_actor_id: b.id, dst_actor_id: a.id });
    const r = await direct(s, a.id, b.id);
    expect(r.status).toBe(409);
    expect(r.body.error.code).toBe("BLOCKED");
  });

  test("group: always new; members besides the creator; cap max_group_conversation_size (creator included) at its boundary", async () => {
    const s = await communitySetup(app);
    await app.call("PATCH", `/social/v1/workspaces/${s.ws.id}/communities/${s.cid}`, { token: s.token, body: { settings: { max_group_conversation_size: 4 } } });
    const [a, b, c, d, e] = [await s.actor(), await s.actor(), await s.actor(), await s.actor(), await s.actor()];
    const g = await s.call("POST", "/conversations", { actor_id: a.id, kind: "group", actor_ids: [b.id, c.id, d.id, a.id, b.id], name: " Book club " });
    expect(g.status).toBe(201);
    expect(g.body).toMatchObject({ kind: "group", name: "Book club", created_by: a.id });
    expect(g.body.participants.map((p: any) => p.actor_id).sort()).toEqual([a.id, b.id, c.id, d.id].sort());
    const again = await s.call("POST", "/conversations", { actor_id: a.id, kind: "group", actor_ids: [b.id] });
    expect(again.body.id).not.toBe(g.body.id);
    const over = await s.call("POST", "/conversations", { actor_id: a.id, kind: "group", actor_ids: [b.id, c.id, d.id, e.id] });
    expect(over.status).toBe(422);
    expect(over.body.error.code).toBe("GROUP_TOO_LARGE");
    expect((await s.call("POST", "/conversations", { actor_id: a.id, kind: "group", actor_ids: [] })).status).toBe(400);
    expect((await s.call("POST", "/conversations", { actor_id: a.id, kind: "group" })).status).toBe(400);
    // Adding: to the cap, not beyond.
    const add = await s.call("POST", `/conversations/${again.body.id}/participants`, { actor_id: b.id, actor_ids: [c.id, d.id] });
    expect(add.status).toBe(200);
    expect(add.body.participants.length).toBe(4);
    expect((await s.call("POST", `/conversations/${again.body.id}/participants`, { actor_id: b.id, actor_ids: [e.id] })).body.error.code).toBe("GROUP_TOO_LARGE");
    expect((await s.call("POST", `/conversations/${again.body.id}/participants`, { actor_id: e.id, actor_ids: [a.id] })).status).toBe(403);
    // Leaving frees a seat.
    expect((await s.call("DELETE", `/conversations/${again.body.id}/participants/${d.id}`)).status).toBe(204);
    expect((await s.call("POST", `/conversations/${again.body.id}/participants`, { actor_id: b.id, actor_ids: [e.id] })).status).toBe(200);
    const dm = await direct(s, a.id, b.id);
    expect((await s.call("DELETE", `/conversations/${dm.body.id}/participants/${a.id}`)).status).toBe(422);
    expect((await s.call("POST", `/conversations/${dm.body.id}/participants`, { actor_id: a.id, actor_ids: [c.id] })).status).toBe(422);
  });

  test("the default cap is 50 participants", async () => {
    const s = await communitySetup(app);
    const ids = (await s.call("POST", "/actors/batch", { actors: Array.from({ length: 51 }, (_, i) => ({ external_id: `g${i}` })) })).body.data.map((d: any) => d.actor.id);
    expect((await s.call("POST", "/conversations", { actor_id: ids[0], kind: "group", actor_ids: ids.slice(1, 50) })).status).toBe(201);
    expect((await s.call("POST", "/conversations", { actor_id: ids[0], kind: "group", actor_ids: ids.slice(1, 51) })).status).toBe(422);
  });
});

describe("messages and unread", () => {
  inProcess("created_at equals the frozen injected clock; reads the recorded events from the store")("send: 201 message; dm.message.created with recipient_actor_ids; newest-first messages; body 1-10000 after trim", async () => {
    const s = await communitySetup(app);
    const [a, b, c] = [await s.actor(), await s.actor(), await s.actor()];
    const g = (await s.call("POST", "/conversations", { actor_id: a.id, kind: "group", actor_ids: [b.id, c.id] })).body;
    // An attachment must be a ready asset of the sender (as for posts and comments).
    const unknownAsset = await s.call("POST", `/conversations/${g.id}/messages`, { actor_id: a.id, body: "hello", assets: [{ asset_id: UNKNOWN, alt_text: "pic" }] });
    expect(unknownAsset.status).toBe(422);
    expect(unknownAsset.body.error.code).toBe("INVALID_ASSET");
    const m = await s.call("POST", `/conversations/${g.id}/messages`, { actor_id: a.id, body: "  hello  " });
    expect(m.status).toBe(201);
    expect(m.body).toEqual({ id: expect.any(String), conversation_id: g.id, community_id: s.cid, sender_actor_id: a.id, body: "hello", assets: [], created_at: app.clock.iso() });
    app.clock.advance(1000);
    await send(s, g.id, b.id, "second");
    const ev = await eventsOf(app, s.cid, "dm.");
    expect(ev.length).toBe(2);
    expect(ev[0].data).toMatchObject({ id: m.body.id, conversation_kind: "group", sender_actor_id: a.id });
    expect(ev[0].data.recipient_actor_ids.sort()).toEqual([b.id, c.id].sort());
    expect((await allPages(s, `/conversations/${g.id}/messages`, 1)).map((x) => x.body)).toEqual(["second", "hello"]);
    expect((await send(s, g.id, a.id, "x".repeat(10000))).status).toBe(201);
    expect((await send(s, g.id, a.id, "x".repeat(10001))).status).toBe(400);
    expect((await send(s, g.id, a.id, "   ")).status).toBe(400);
    const outsider = await s.actor();
    const no = await send(s, g.id, outsider.id);
    expect(no.status).toBe(403);
    expect(no.body.error.code).toBe("NOT_A_PARTICIPANT");
    expect((await send(s, UNKNOWN, a.id)).status).toBe(404);
    expect((await s.call("POST", `/conversations/${g.id}/messages`, { actor_id: a.id, body: "x", assets: Array.from({ length: 21 }, () => ({ asset_id: UNKNOWN })) })).status).toBe(400);
  });

  test("blocked pair cannot message in their direct conversation (409)", async () => {
    const s = await communitySetup(app);
    const [a, b] = [await s.actor(), await s.actor()];
    const dm = (await direct(s, a.id, b.id)).body;
    expect((await send(s, dm.id, a.id)).status).toBe(201);
    await s.call("POST", "/blocks", { src_actor_id: a.id, dst_actor_id: b.id });
    expect((await send(s, dm.id, b.id)).status).toBe(409);
    expect((await send(s, dm.id, a.id)).status).toBe(409);
  });

  inProcess("last_read_at equals the frozen injected clock, and the message right after the read lands in the same frozen millisecond")("unread count: messages after last read; the sender has read its own; read clears; muted conversations excluded", async () => {
    const s = await communitySetup(app);
    const [a, b, c] = [await s.actor(), await s.actor(), await s.actor()];
    const ab = (await direct(s, a.id, b.id)).body;
    const ac = (await direct(s, a.id, c.id)).body;
    expect(await unread(s, a.id)).toBe(0);
    await send(s, ab.id, b.id);
    await send(s, ac.id, c.id);
    expect(await unread(s, a.id)).toBe(2);
    expect(await unread(s, b.id)).toBe(0);
    const r = await s.call("POST", `/conversations/${ab.id}/read`, { actor_id: a.id });
    expect(r.status).toBe(200);
    expect(r.body.participants.find((p: any) => p.actor_id === a.id).last_read_at).toBe(app.clock.iso());
    expect(await unread(s, a.id)).toBe(1);
    // Same millisecond as the read: still unread (sequence, not timestamps).
    await send(s, ab.id, b.id);
    expect(await unread(s, a.id)).toBe(2);
    const muted = await s.call("PATCH", `/conversations/${ac.id}/participants/${a.id}`, { muted: true });
    expect(muted.body.participants.find((p: any) => p.actor_id === a.id).muted).toBe(true);
    expect(await unread(s, a.id)).toBe(1);
    await s.call("PATCH", `/conversations/${ac.id}/participants/${a.id}`, { muted: false });
    expect(await unread(s, a.id)).toBe(2);
    expect((await s.call("POST", `/conversations/${ab.id}/read`, { actor_id: c.id })).status).toBe(403);
    expect((await s.call("GET", "/conversations/unread-count")).status).toBe(400);
    expect((await s.call("GET", `/conversations/unread-count?actor_id=${UNKNOWN}`)).status).toBe(404);
  });

  test("exact under concurrency: 50 conversations, 200 concurrent messages and reads", async () => {
    const s = await communitySetup(app);
    const me = await s.actor();
    const others = (await s.call("POST", "/actors/batch", { actors: Array.from({ length: 50 }, (_, i) => ({ external_id: `o${i}` })) })).body.data.map((d: any) => d.actor.id as string);
    const convs: string[] = [];
    for (const o of others) convs.push((await direct(s, me.id, o)).body.id);
    const ops: Promise<unknown>[] = [];
    for (let i = 0; i < 200; i++) {
      const k = i % 50;
      ops.push(send(s, convs[k], others[k]));
      if (i % 3 === 0) ops.push(s.call("POST", `/conversations/${convs[k]}/read`, { actor_id: me.id }));
    }
    await Promise.all(ops);
    // Truth: a conversation is unread when its newest message is newer (by sequence) than the read, here checked by reading everything then one more message in half of them.
    for (const c of convs) await s.call("POST", `/conversations/${c}/read`, { actor_id: me.id });
    expect(await unread(s, me.id)).toBe(0);
    await Promise.all(convs.slice(0, 25).map((c, k) => send(s, c, others[k])));
    expect(await unread(s, me.id)).toBe(25);
  }, 60_000);
});

describe("folders", () => {
  test("inbox (default), requests (other participant restricted by the viewer), all; most recent activity first; cursors", async () => {
    const s = await communitySetup(app);
    const [me, friend, pest, x] = [await s.actor(), await s.actor(), await s.actor(), await s.actor()];
    const c1 = (await direct(s, me.id, friend.id)).body;
    await later(10);
    const c2 = (await direct(s, pest.id, me.id)).body;
    await later(10);
    const g = (await s.call("POST", "/conversations", { actor_id: pest.id, kind: "group", actor_ids: [me.id, x.id] })).body;
    await later(10);
    await send(s, c1.id, friend.id);
    await s.call("POST", "/restricts", { src_actor_id: me.id, dst_actor_id: pest.id });
    const ids = async (status?: string) => (await allPages(s, `/conversations?actor_id=${me.id}${status ? `&status=${status}` : ""}`, 1)).map((c) => c.id);
    expect(await ids()).toEqual([c1.id]);
    expect(await ids("inbox")).toEqual([c1.id]);
    expect(await ids("requests")).toEqual([g.id, c2.id]);
    expect(await ids("all")).toEqual([c1.id, g.id, c2.id]);
    // The restricted actor's own view is unaffected.
    expect((await allPages(s, `/conversations?actor_id=${pest.id}`)).length).toBe(2);
    expect((await s.call("GET", `/conversations?actor_id=${me.id}&status=spam`)).status).toBe(400);
    expect((await s.call("GET", "/conversations")).status).toBe(400);
    expect((await s.call("GET", `/conversations?actor_id=${me.id}&cursor=${c1.id}`)).body.error.code).toBe("INVALID_CURSOR");
  });
});

describe("access and webhooks", () => {
  test("actions and cross-workspace 404", async () => {
    const s = await communitySetup(app);
    const other = await communitySetup(app);
    const [a, b] = [await s.actor(), await s.actor()];
    const dm = (await direct(s, a.id, b.id)).body;
    expect((await app.call("GET", `${s.base}/conversations/${dm.id}`, { token: other.token })).status).toBe(404);
    expect((await other.call("GET", `/conversations/${dm.id}`)).status).toBe(404);
    const reader = await keyWith(app, s, ["social.read"]);
    expect((await app.call("GET", `${s.base}/conversations/${dm.id}`, { token: reader })).status).toBe(200);
    expect((await app.call("POST", `${s.base}/conversations/${dm.id}/messages`, { token: reader, body: { actor_id: a.id, body: "x" } })).status).toBe(403);
    expect((await app.call("GET", `${s.base}/conversations?actor_id=${a.id}`, { token: reader })).status).toBe(403);
  });

  test("dm.message.created is delivered signed (standardwebhooks), with the community envelope", async () => {
    const s = await communitySetup(app);
    const hook = await app.call("POST", `${s.base}/webhooks`, { token: s.token, body: { url: `${receiver.url}/dm`, event_types: ["dm.message.created"] } });
    const [a, b] = [await s.actor(), await s.actor()];
    const dm = (await direct(s, a.id, b.id)).body;
    const m = (await send(s, dm.id, a.id, "See you Friday?")).body;
    if (ON_BINARY) await waitUntil(() => receiver.requests.some((q) => q.path === "/dm"), 15_000, "the dm delivery");
    else {
      await app.webhooks.dispatchPending();
      await app.webhooks.deliverDue();
    }
    const got = receiver.requests.filter((q) => q.path === "/dm");
    expect(got.length).toBe(1);
    setSystemTime(app.clock.now());
    try {
      const body = new Webhook(hook.body.signing_secret).verify(got[0].body, { "webhook-id": got[0].headers["webhook-id"], "webhook-timestamp": got[0].headers["webhook-timestamp"], "webhook-signature": got[0].headers["webhook-signature"] }) as any;
      expect(body).toMatchObject({ type: "dm.message.created", community_id: s.cid, data: { id: m.id, conversation_id: dm.id, conversation_kind: "direct", sender_actor_id: a.id, recipient_actor_ids: [b.id], body: "See you Friday?" } });
    } finally {
      setSystemTime();
    }
  });
});
