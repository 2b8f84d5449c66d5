/**
 * A scheduled post is published exactly once across a restart (same SQLite file or the same
 * PostgreSQL database) and, on PostgreSQL, with two nodes running the publishing job at once
 * (SQLite serves one node per file).
 */
import { expect } from "bun:test";
import { startTestApp } from "../helpers/app";
import { communitySetup, eventsOf } from "../helpers/social";
import { inProcess } from "../helpers/target";

inProcess("restarts in-process apps on the same data, sets their injected clocks past scheduled_for and runs the publishing job by hand")("scheduled publish: exactly once across a restart and two nodes", async () => {
  const a = await startTestApp();
  a.webhooks.options.autoKick = false;
  const s = await communitySetup(a);
  const author = await s.actor();
  const at = new Date(a.clock.nowMs() + 60_000).toISOString();
  const p = await s.call("POST", "/posts", { actor_id: author.id, body: "later", status: "scheduled", scheduled_for: at });
  expect(p.status).toBe(201);
  await a.ctx.scheduler.runNow("social.posts.publish");
  const dir = a.dir;
  const databaseUrl = a.ctx.config.databaseUrl;
  await a.stop();
  // Restart on the same data, as two nodes.
  const env: Record<string, string> = databaseUrl ? { DATABASE_URL: databaseUrl } : {};
  const b = await startTestApp(env, dir);
  const c = databaseUrl ? await startTestApp(env, dir) : b;
  try {
    for (const x of [b, c]) {
      x.webhooks.options.autoKick = false;
      x.clock.set(Date.parse(at) + 1000);
    }
    await Promise.all([b.ctx.scheduler.runNow("social.posts.publish"), c.ctx.scheduler.runNow("social.posts.publish"), b.ctx.scheduler.runNow("social.posts.publish")]);
    await c.ctx.scheduler.runNow("social.posts.publish");
    const r = await b.call("GET", `${s.base}/posts/${p.body.id}`, { token: s.token });
    expect(r.body).toMatchObject({ status: "published", published_at: new Date(Date.parse(at) + 1000).toISOString() });
    expect((await b.call("GET", `${s.base}/actors/${author.id}/counters`, { token: s.token })).body.post_count).toBe(1);
    expect((await eventsOf(b, s.cid, "post.")).map((e) => [e.type, e.data.status])).toEqual([["post.created", "scheduled"], ["post.updated", "published"]]);
  } finally {
    await b.stop();
    if (c !== b) await c.stop();
  }
}, 60_000);
