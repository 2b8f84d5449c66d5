/**
 * Actors and counters of the community service over HTTP: upsert (single and batch, per-item
 * results), by-external lookups, list with ids and cursors, patch, delete, counters, limits at
 * their boundaries, Idempotency-Key, actions, service switch-off and cross-workspace 404s.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestApp, type TestApp } from "../helpers/app";
import { inProcess, ON_BINARY } from "../helpers/target";
import { allPages, communitySetup, eventsOf, keyWith } from "../helpers/social";

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
  if (!ON_BINARY) app.webhooks.options.autoKick = false;
});
afterAll(() => app.stop());

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe("upsert", () => {
  inProcess("compares created_at/updated_at with the injected clock and moves it")("201 {actor, created:true}; a repeat overwrites omitted fields and answers created:false", async () => {
    const s = await communitySetup(app);
    const r = await s.call("POST", "/actors", { external_id: "u-1", display_name: "Ada", avatar_url: "https://cdn.example.com/a.png", metadata: { plan: "pro" } });
    expect(r.status).toBe(201);
    expect(r.body).toEqual({
      created: true,
      actor: {
        id: expect.stringMatching(UUID),
        community_id: s.cid,
        external_id: "u-1",
        display_name: "Ada",
        avatar_url: "https://cdn.example.com/a.png",
        metadata: { plan: "pro" },
        status: "active",
        is_private: false,
        shadow_banned_at: null,
        shadow_banned_until: null,
        shadow_banned_reason: null,
        created_at: app.clock.iso(),
        updated_at: app.clock.iso(),
      },
    });
    app.clock.advance(1000);
    const again = await s.call("POST", "/actors", { external_id: "u-1", display_name: "Ada L." });
    expect(again.status).toBe(201);
    expect(again.body.created).toBe(false);
    expect(again.body.actor).toMatchObject({ id: r.body.actor.id, display_name: "Ada L.", avatar_url: null, metadata: {}, created_at: r.body.actor.created_at, updated_at: app.clock.iso() });
  });

  test("external_id 1-256 characters; bad fields are 400", async () => {
    const s = await communitySetup(app);
    expect((await s.call("POST", "/actors", { external_id: "x".repeat(256) })).status).toBe(201);
    for (const body of [{ external_id: "x".repeat(257) }, { external_id: "" }, {}, { external_id: "a", metadata: [1] }, { external_id: "a", avatar_url: "ftp://x" }, { external_id: "a", display_name: "n".repeat(201) }]) {
      expect((await s.call("POST", "/actors", body)).status).toBe(400);
    }
  });

  test("is_private set on upsert stays when a later upsert omits it; PATCH changes it", async () => {
    const s = await communitySetup(app);
    const a = await s.actor({ external_id: "priv", is_private: true });
    expect(a.is_private).toBe(true);
    expect((await s.call("POST", "/actors", { external_id: "priv" })).body.actor.is_private).toBe(true);
    expect((await s.call("PATCH", `/actors/${a.id}`, { is_private: false })).body.is_private).toBe(false);
  });

  test("concurrent upserts of one external_id create one actor", async () => {
    const s = await communitySetup(app);
    const rs = await Promise.all(Array.from({ length: 10 }, () => s.call("POST", "/actors", { external_id: "race" })));
    expect(rs.map((r) => r.status)).toEqual(Array(10).fill(201));
    expect(rs.filter((r) => r.body.created).length).toBe(1);
    expect(new Set(rs.map((r) => r.body.actor.id)).size).toBe(1);
  });
});

describe("batch upsert", () => {
  test("1-200 items: per-item results; 0 and 201 are 400; an invalid item is 400", async () => {
    const s = await communitySetup(app);
    await s.actor({ external_id: "b-0" });
    const items = Array.from({ length: 200 }, (_, i) => ({ external_id: `b-${i}`, display_name: `B ${i}` }));
    const r = await s.call("POST", "/actors/batch", { actors: items });
    expect(r.status).toBe(201);
    expect(r.body.succeeded).toBe(200);
    expect(r.body.failed).toBe(0);
    expect(r.body.data[0]).toMatchObject({ index: 0, success: true, created: false, error: null, actor: { external_id: "b-0", display_name: "B 0" } });
    expect(r.body.data[199]).toMatchObject({ index: 199, success: true, created: true, error: null });
    expect((await s.call("POST", "/actors/batch", { actors: [...items, { external_id: "b-200" }] })).status).toBe(400);
    expect((await s.call("POST", "/actors/batch", { actors: [] })).status).toBe(400);
    expect((await s.call("POST", "/actors/batch", {})).status).toBe(400);
    const bad = await s.call("POST", "/actors/batch", { actors: [{ external_id: "ok" }, { external_id: "x".repeat(257) }] });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details[0].field).toBe("actors[1].external_id");
    expect((await s.call("GET", "/actors/by-external/ok")).status).toBe(404);
  });

  test("events: actor.updated for every existing actor re-upserted, none for new ones", async () => {
    const s = await communitySetup(app);
    const a = await s.actor({ external_id: "ev-1", display_name: "Old" });
    await s.call("POST", "/actors/batch", { actors: [{ external_id: "ev-1", display_name: "New" }, { external_id: "ev-2" }] });
    const events = await eventsOf(app, s.cid, "actor.");
    expect(events.length).toBe(1);
    expect(JSON.stringify(events[0].data)).toContain(a.id);
    expect(JSON.stringify(events[0].data)).toContain('"changed_fields":["display_name"]');
  });
});

describe("lookups and list", () => {
  test("by-external single and batch (request order, duplicates removed, missing listed; 1-200)", async () => {
    const s = await communitySetup(app);
    const a = await s.actor({ external_id: "e-a" });
    const b = await s.actor({ external_id: "e-b" });
    expect((await s.call("GET", "/actors/by-external/e-a")).body.id).toBe(a.id);
    expect((await s.call("GET", "/actors/by-external/nope")).status).toBe(404);
    const r = await s.call("POST", "/actors/by-external/batch", { external_ids: ["e-b", "zz", "e-a", "e-b"] });
    expect(r.status).toBe(200);
    expect(r.body.data.map((x: any) => x.id)).toEqual([b.id, a.id]);
    expect(r.body.missing).toEqual(["zz"]);
    expect((await s.call("POST", "/actors/by-external/batch", { external_ids: Array.from({ length: 200 }, (_, i) => `n${i}`) })).status).toBe(200);
    expect((await s.call("POST", "/actors/by-external/batch", { external_ids: Array.from({ length: 201 }, (_, i) => `n${i}`) })).status).toBe(400);
    expect((await s.call("POST", "/actors/by-external/batch", { external_ids: [] })).status).toBe(400);
    expect((await s.call("POST", "/actors/by-external/batch", { external_ids: ["x".repeat(257)] })).status).toBe(400);
  });

  test("list: newest first over opaque cursors; ids returns request order (max 100); legacy raw-id cursor is INVALID_CURSOR", async () => {
    const s = await communitySetup(app);
    const made = [];
    for (let i = 0; i < 5; i++) made.push(await s.actor());
    const all = await allPages(s, "/actors", 2);
    expect(all.map((a) => a.id)).toEqual(made.map((a) => a.id).reverse());
    const ids = [made[3].id, "0192f201-1111-7aaa-8bbb-0c0d0e0f1a1b", made[0].id];
    const r = await s.call("GET", `/actors?ids=${ids.join(",")}&limit=1`);
    expect(r.body.data.map((a: any) => a.id)).toEqual([made[3].id, made[0].id]);
    expect(r.body.pagination).toEqual({ next_cursor: null, has_more: false });
    const hundred = Array.from({ length: 100 }, (_, i) => `0192f201-1111-7aaa-8bbb-${String(i).padStart(12, "0")}`);
    expect((await s.call("GET", `/actors?ids=${hundred.join(",")}`)).status).toBe(200);
    expect((await s.call("GET", `/actors?ids=${[...hundred, "0192f201-1111-7aaa-8bbb-999999999999"].join(",")}`)).status).toBe(400);
    const legacy = await s.call("GET", `/actors?cursor=${made[2].id}`);
    expect(legacy.status).toBe(400);
    expect(legacy.body.error.code).toBe("INVALID_CURSOR");
    const wrongShape = await s.call("GET", `/actors?cursor=${Buffer.from(JSON.stringify({ id: 1 })).toString("base64url")}`);
    expect(wrongShape.body.error.code).toBe("INVALID_CURSOR");
    expect((await s.call("GET", "/actors?limit=200")).status).toBe(200);
    expect((await s.call("GET", "/actors?limit=201")).status).toBe(400);
    expect((await s.call("GET", "/actors?limit=0")).status).toBe(400);
  });

  test("default page size is 50", async () => {
    const s = await communitySetup(app);
    await s.call("POST", "/actors/batch", { actors: Array.from({ length: 51 }, (_, i) => ({ external_id: `p${i}` })) });
    const r = await s.call("GET", "/actors");
    expect(r.body.data.length).toBe(50);
    expect(r.body.pagination.has_more).toBe(true);
  });
});

describe("patch and delete", () => {
  inProcess("compares updated_at with the injected clock after moving it")("PATCH changes only sent fields and emits actor.updated; status enum", async () => {
    const s = await communitySetup(app);
    const a = await s.actor({ display_name: "A", metadata: { k: 1 } });
    app.clock.advance(1000);
    const r = await s.call("PATCH", `/actors/${a.id}`, { status: "suspended" });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ status: "suspended", display_name: "A", metadata: { k: 1 }, updated_at: app.clock.iso() });
    expect((await s.call("PATCH", `/actors/${a.id}`, { status: "gone" })).status).toBe(400);
    expect((await s.call("PATCH", `/actors/${a.id}`, { status: "deleted" })).body.status).toBe("deleted");
    const events = await eventsOf(app, s.cid, "actor.updated");
    expect(events.map((e) => JSON.stringify(e.data).includes('"changed_fields":["status"]'))).toEqual([true, true]);
    // Nothing changed: no event.
    await s.call("PATCH", `/actors/${a.id}`, { status: "deleted" });
    expect((await eventsOf(app, s.cid, "actor.updated")).length).toBe(2);
  });

  test("DELETE is a hard delete (204), then 404", async () => {
    const s = await communitySetup(app);
    const a = await s.actor();
    expect((await s.call("DELETE", `/actors/${a.id}`)).status).toBe(204);
    expect((await s.call("GET", `/actors/${a.id}`)).status).toBe(404);
    expect((await s.call("GET", `/actors/by-external/${a.external_id}`)).status).toBe(404);
    expect((await s.call("DELETE", `/actors/${a.id}`)).status).toBe(404);
  });
});

describe("cascades", () => {
  inProcess("counts the community's rows in the store through app.ctx.db")("deleting the community removes its actors, counters, edges, hashtags and conversations", async () => {
    const s = await communitySetup(app);
    const [a, b] = [await s.actor(), await s.actor()];
    await s.call("POST", "/follows", { actor_id: a.id, dst_actor_id: b.id });
    await s.call("POST", "/conversations", { actor_id: a.id, recipient_actor_id: b.id });
    expect((await app.call("DELETE", `/social/v1/workspaces/${s.ws.id}/communities/${s.cid}`, { token: s.token })).status).toBe(204);
    for (const table of ["social_actors", "social_counters", "social_edges", "social_conversations", "social_conversation_participants"]) {
      const r = await app.ctx.db.get<{ n: number }>(`SELECT count(*) AS n FROM ${table} WHERE community_id = ?`, s.cid);
      expect([table, Number(r!.n)]).toEqual([table, 0]);
    }
  });

  test("deleting an actor removes its conversation memberships and hashtag follows", async () => {
    const s = await communitySetup(app);
    const [a, b] = [await s.actor(), await s.actor()];
    const conv = (await s.call("POST", "/conversations", { actor_id: a.id, recipient_actor_id: b.id })).body;
    await s.call("POST", `/conversations/${conv.id}/messages`, { actor_id: a.id, body: "hi" });
    expect((await s.call("DELETE", `/actors/${a.id}`)).status).toBe(204);
    const after = await s.call("GET", `/conversations/${conv.id}`);
    expect(after.body.participants.map((p: any) => p.actor_id)).toEqual([b.id]);
    expect((await s.call("GET", `/conversations/${conv.id}/messages`)).body.data[0].sender_actor_id).toBeNull();
  });
});

describe("counters", () => {
  test("zeroed on create; /counters takes up to 100 de-duplicated ids and lists the missing", async () => {
    const s = await communitySetup(app);
    const a = await s.actor();
    expect(await s.counters(a.id)).toEqual({ actor_id: a.id, community_id: s.cid, follower_count: 0, following_count: 0, post_count: 0, comment_count: 0, blocks_count: 0, updated_at: a.created_at });
    const unknown = "0192f201-1111-7aaa-8bbb-0c0d0e0f1a1b";
    const r = await s.call("GET", `/counters?actor_ids=${a.id},${unknown},${a.id}`);
    expect(r.status).toBe(200);
    expect(r.body.data.map((c: any) => c.actor_id)).toEqual([a.id]);
    expect(r.body.missing).toEqual([unknown]);
    expect((await s.call("GET", "/counters")).status).toBe(400);
    expect((await s.call("GET", "/counters?actor_ids=nope")).status).toBe(400);
    const ids = Array.from({ length: 101 }, (_, i) => `0192f201-1111-7aaa-8bbb-${String(i).padStart(12, "0")}`);
    expect((await s.call("GET", `/counters?actor_ids=${ids.slice(0, 100).join(",")}`)).status).toBe(200);
    expect((await s.call("GET", `/counters?actor_ids=${ids.join(",")}`)).status).toBe(400);
  });
});

describe("access", () => {
  test("Idempotency-Key: replay answers the first response with Idempotent-Replay; another body is 409 IDEMPOTENCY_KEY_REUSE", async () => {
    const s = await communitySetup(app);
    const h = { "idempotency-key": "actor-create:1" };
    const first = await s.call("POST", "/actors", { external_id: "idem" }, h);
    const replay = await s.call("POST", "/actors", { external_id: "idem" }, h);
    expect(replay.status).toBe(201);
    expect(replay.headers.get("idempotent-replay")).toBe("true");
    expect(replay.body).toEqual(first.body);
    expect(replay.body.created).toBe(true);
    const reuse = await s.call("POST", "/actors", { external_id: "other" }, h);
    expect(reuse.status).toBe(409);
    expect(reuse.body.error.code).toBe("IDEMPOTENCY_KEY_REUSE");
    expect((await s.call("POST", "/actors", { external_id: "x" }, { "idempotency-key": "bad key!" })).status).toBe(400);
  });

  test("another workspace's community and actors are 404; unknown ids 404, malformed 400", async () => {
    const s = await communitySetup(app);
    const other = await communitySetup(app);
    const a = await s.actor();
    expect((await app.call("GET", `${s.base}/actors/${a.id}`, { token: other.token })).status).toBe(404);
    expect((await app.call("POST", `${s.base}/actors`, { token: other.token, body: { external_id: "x" } })).status).toBe(404);
    expect((await other.call("GET", `/actors/${a.id}`)).status).toBe(404);
    expect((await s.call("GET", "/actors/not-a-uuid")).status).toBe(400);
    expect((await app.call("GET", "/social/v1/communities/0192f201-1111-7aaa-8bbb-0c0d0e0f1a1b/actors", { token: s.token })).status).toBe(404);
  });

  test("actions: social.create / read / list / update / delete; 403 without", async () => {
    const s = await communitySetup(app);
    const a = await s.actor();
    const reader = await keyWith(app, s, ["social.read", "social.list"]);
    const as = (token: string, method: string, path: string, body?: unknown) => app.call(method, `${s.base}${path}`, { token, body });
    expect((await as(reader, "GET", `/actors/${a.id}`)).status).toBe(200);
    expect((await as(reader, "GET", "/actors")).status).toBe(200);
    for (const [m, path, body, action] of [
      ["POST", "/actors", { external_id: "z" }, "social.create"],
      ["POST", "/actors/batch", { actors: [{ external_id: "z" }] }, "social.create"],
      ["PATCH", `/actors/${a.id}`, { display_name: "z" }, "social.update"],
      ["DELETE", `/actors/${a.id}`, undefined, "social.delete"],
    ] as const) {
      const r = await as(reader, m, path, body);
      expect(r.status).toBe(403);
      expect(r.body.error.message).toContain(action);
    }
    const creator = await keyWith(app, s, ["social.create"]);
    expect((await as(creator, "GET", "/actors")).status).toBe(403);
    expect((await as(creator, "GET", `/actors/${a.id}`)).status).toBe(403);
  });

  test("403 SERVICE_NOT_ENABLED when social is switched off", async () => {
    const s = await communitySetup(app);
    const a = await s.actor();
    expect((await app.call("DELETE", `/platform/v1/workspaces/${s.ws.slug}/services/social`, { token: s.session })).status).toBe(200);
    for (const [m, path, body] of [["GET", `/actors/${a.id}`], ["POST", "/actors", { external_id: "q" }], ["GET", "/counters?actor_ids=" + a.id]] as const) {
      const r = await s.call(m, path, body);
      expect(r.status).toBe(403);
      expect(r.body.error.code).toBe("SERVICE_NOT_ENABLED");
    }
  });
});
