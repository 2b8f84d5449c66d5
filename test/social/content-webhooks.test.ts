/**
 * Content events delivered to a real loopback receiver: every part-2 event type fires from
 * its operation, with its named data fields, in the community envelope, signed (checked with
 * standardwebhooks).
 */
import { afterAll, beforeAll, describe, expect, setSystemTime, test } from "bun:test";
import sharp from "sharp";
import { Webhook } from "standardwebhooks";
import type { TestApp } from "../helpers/app";
import type { Receiver } from "../helpers/http-receiver";
import { communitySetup, waitUntil } from "../helpers/social";
import { ON_BINARY } from "../helpers/target";
import { startWebhookTestApp, stopWebhookTestApp } from "../helpers/webhook-app";

let app: TestApp;
let receiver: Receiver;
beforeAll(async () => {
  ({ app, receiver } = await startWebhookTestApp());
});
afterAll(() => stopWebhookTestApp({ app, receiver }));

const TYPES = [
  "post.created", "post.updated", "post.deleted", "post.reaction.created", "repost.created", "comment.created", "comment.updated", "comment.deleted",
  "comment.reaction.created", "flag.created", "flag.updated", "moderation.action.applied", "tag.created", "asset.ready", "asset.failed",
];

describe("content deliveries", () => {
  test("every content event type is delivered, signed, with its named fields", async () => {
    const s = await communitySetup(app);
    const hook = await app.call("POST", `${s.base}/webhooks`, { token: s.token, body: { url: `${receiver.url}/content`, event_types: TYPES } });
    expect(hook.status).toBe(201);
    const [a, b] = [await s.actor(), await s.actor()];
    const p = (await s.call("POST", "/posts", { actor_id: a.id, body: `hello @${b.external_id}`, status: "draft" })).body;
    await s.call("PATCH", `/posts/${p.id}`, { status: "published" });
    await s.call("POST", `/posts/${p.id}/reactions`, { actor_id: b.id, type: "like" });
    const r = (await s.call("POST", `/posts/${p.id}/reposts`, { actor_id: b.id })).body;
    const c = (await s.call("POST", `/posts/${p.id}/comments`, { actor_id: b.id, body: "hi" })).body;
    await s.call("POST", `/posts/${p.id}/comments/${c.id}/reactions`, { actor_id: a.id, type: "love" });
    await s.call("PATCH", `/posts/${p.id}/comments/${c.id}`, { body: "hi!" });
    await s.call("DELETE", `/posts/${p.id}/comments/${c.id}`);
    const f = (await s.call("POST", "/flags", { reporter_actor_id: b.id, target_type: "post", target_id: p.id, reason: "spam" })).body;
    await app.call("POST", `/social/v1/workspaces/${s.ws.id}/communities/${s.cid}/moderation/actions`, { token: s.token, body: { action: "dismiss", flag_id: f.flag.id } });
    const form = (bytes: Uint8Array) => {
      const fd = new FormData();
      fd.append("actor_id", a.id);
      fd.append("file", new Blob([bytes as Uint8Array<ArrayBuffer>]), "f");
      return fd;
    };
    await s.call("POST", "/assets", form(new Uint8Array(await sharp({ create: { width: 8, height: 8, channels: 3, background: "#123456" } }).jpeg().toBuffer())));
    await s.call("POST", "/assets", form(new Uint8Array([1, 2, 3, 4])));
    if (!ON_BINARY) await app.ctx.scheduler.runNow("social.assets.process");
    await s.call("DELETE", `/posts/${p.id}`);
    const got = () => receiver.requests.filter((q) => q.path === "/content");
    if (ON_BINARY) {
      // The process's scheduler processes the assets and delivers: wait for every type, and both post.deleted.
      const types = () => got().map((q) => JSON.parse(q.body).type as string);
      await waitUntil(() => new Set(types()).size >= TYPES.length && types().filter((t) => t === "post.deleted").length >= 2, 30_000, "every content event type delivered").catch(() => {});
    } else {
      await app.webhooks.dispatchPending();
      await app.webhooks.deliverDue();
    }
    setSystemTime(app.clock.now());
    try {
      const bodies = got().map((q) =>
        new Webhook(hook.body.signing_secret).verify(q.body, { "webhook-id": q.headers["webhook-id"], "webhook-timestamp": q.headers["webhook-timestamp"], "webhook-signature": q.headers["webhook-signature"] }),
      ) as any[];
      expect([...new Set(bodies.map((x) => x.type))].sort()).toEqual([...TYPES].sort());
      for (const x of bodies) expect(x).toMatchObject({ id: expect.stringMatching(/^evt_/), community_id: s.cid, created_at: expect.any(String) });
      const of = (type: string) => bodies.filter((x) => x.type === type).map((x) => x.data);
      expect(of("post.created")[0]).toMatchObject({ id: p.id, status: "draft" });
      expect(of("repost.created")[0]).toMatchObject({ id: r.post.id, source_post_id: p.id });
      expect(of("comment.created")[0]).toMatchObject({ id: c.id, parent_id: null });
      expect(of("flag.created")[0]).toMatchObject({ auto_hidden: false });
      expect(of("tag.created")[0]).toMatchObject({ tagged_actor_id: b.id });
      expect(of("asset.failed")[0]).toMatchObject({ failure_reason: "unsupported_format" });
      expect(of("moderation.action.applied")[0]).toMatchObject({ action: "dismiss" });
      expect(of("post.deleted").map((d) => d.id).sort()).toEqual([p.id, r.post.id].sort());
    } finally {
      setSystemTime();
    }
  });
});
