/**
 * Communities (admin lane of the community service) end to end over the app's HTTP
 * pipeline: validation edges, list filters and cursors, status transitions, cross-workspace
 * 404s, actions and service activation, Idempotency-Key, delete.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import * as endpointsStore from "../../src/kernel/webhooks/store/endpoints";
import { createWorkspace, ownerWithKey, signup, startTestApp, type TestApp } from "../helpers/app";
import { createAuthApp } from "../helpers/auth";
import { addMember, auditActions } from "../helpers/members";
import { inProcess, ON_BINARY } from "../helpers/target";

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ ALLOW_PRIVATE_TARGETS: "true" });
  if (!ON_BINARY) app.webhooks.options.autoKick = false;
});
afterAll(async () => {
  await app.stop();
});

const base = (wsId: string) => `/social/v1/workspaces/${wsId}/communities`;
let seq = 0;
const slug = (prefix = "c") => `${prefix}-${++seq}`;
/**
 * Spaces activities apart in time, for orderings by timestamp: in-process the injected clock moves
 * by `ms`; the binary runs on the real clock, so wait until it shows another millisecond (a few ms:
 * the ordering only needs distinct timestamps).
 */
const later = async (ms: number) => {
  if (ON_BINARY) await Bun.sleep(3);
  else app.clock.advance(ms);
};

async function create(token: string, wsId: string, body: Record<string, unknown> = {}) {
  const r = await app.call("POST", base(wsId), { token, body: { slug: slug(), display_name: "A community", ...body } });
  if (r.status !== 201) throw new Error(`community create failed: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body as Record<string, any> & { id: string };
}

describe("create and read", () => {
  inProcess("created_at/updated_at equal the frozen injected clock; reads the audit log from the store")("201 with the full record; GET answers the same; the change is audited", async () => {
    const { token, ws } = await ownerWithKey(app);
    const r = await app.call("POST", base(ws.id), { token, body: { slug: "book-club", display_name: "  Book club  ", description: "We read." } });
    expect(r.status).toBe(201);
    expect(r.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$/),
      workspace_id: ws.id,
      slug: "book-club",
      display_name: "Book club",
      description: "We read.",
      app_id: null,
      settings: expect.objectContaining({ max_group_conversation_size: 50 }),
      status: "active",
      created_at: app.clock.iso(),
      updated_at: app.clock.iso(),
    });
    const one = await app.call("GET", `${base(ws.id)}/${r.body.id}`, { token });
    expect(one.status).toBe(200);
    expect(one.body).toEqual(r.body);
    expect((await auditActions(app, ws.id)).filter((a) => a.action.startsWith("social."))).toEqual([{ action: "social.community.create", target_id: r.body.id, actor_id: expect.any(String) }]);
  });

  test("slug shape: 3-63 of [a-z0-9-], starting and ending with a letter or digit", async () => {
    const { token, ws } = await ownerWithKey(app);
    const post = (s: unknown) => app.call("POST", base(ws.id), { token, body: { slug: s, display_name: "x" } });
    for (const good of ["abc", "a-b", "0ab", "a".repeat(63), "x1-2-3y"]) expect((await post(good)).status).toBe(201);
    for (const bad of ["ab", "a".repeat(64), "Abc", "-abc", "abc-", "a_b", "a b", "abé", ""]) {
      const r = await post(bad);
      expect(r.status).toBe(400);
      expect(r.body.error.code).toBe("VALIDATION_ERROR");
      expect(r.body.error.details[0].field).toBe("slug");
    }
    expect((await app.call("POST", base(ws.id), { token, body: { display_name: "x" } })).status).toBe(400);
  });

  test("slug taken in the same workspace is 409 SLUG_TAKEN; another workspace may use it", async () => {
    const { token, ws, session } = await ownerWithKey(app);
    await create(token, ws.id, { slug: "same-slug" });
    const again = await app.call("POST", base(ws.id), { token, body: { slug: "same-slug", display_name: "Other" } });
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe("SLUG_TAKEN");
    const ws2 = await createWorkspace(app, session);
    expect((await app.call("POST", base(ws2.id), { token: session, body: { slug: "same-slug", display_name: "Other" } })).status).toBe(201);
  });

  test("display_name 1-200 characters after trimming; description up to 2000 or null", async () => {
    const { token, ws } = await ownerWithKey(app);
    const post = (body: Record<string, unknown>) => app.call("POST", base(ws.id), { token, body: { slug: slug(), display_name: "x", ...body } });
    expect((await post({ display_name: "n".repeat(200) })).status).toBe(201);
    expect((await post({ display_name: ` ${"n".repeat(200)} ` })).body.display_name).toBe("n".repeat(200));
    for (const bad of ["", "   ", "n".repeat(201)]) {
      const r = await post({ display_name: bad });
      expect(r.status).toBe(400);
      expect(r.body.error.details[0].field).toBe("display_name");
    }
    expect((await post({ description: "d".repeat(2000) })).status).toBe(201);
    expect((await post({ description: null })).body.description).toBeNull();
    expect((await post({ description: "d".repeat(2001) })).status).toBe(400);
  });

  test("settings: max_group_conversation_size 2-1000 (default 50); unknown keys and wrong types are 400", async () => {
    const { token, ws } = await ownerWithKey(app);
    const post = (settings: unknown) => app.call("POST", base(ws.id), { token, body: { slug: slug(), display_name: "x", settings } });
    expect((await post({ max_group_conversation_size: 2 })).body.settings).toMatchObject({ max_group_conversation_size: 2 });
    expect((await post({ max_group_conversation_size: 1000 })).body.settings).toMatchObject({ max_group_conversation_size: 1000 });
    expect((await post({})).body.settings).toMatchObject({ max_group_conversation_size: 50 });
    for (const bad of [{ max_group_conversation_size: 1 }, { max_group_conversation_size: 1001 }, { max_group_conversation_size: 2.5 }, { max_group_conversation_size: "10" }]) {
      const r = await post(bad);
      expect(r.status).toBe(400);
      expect(r.body.error.details[0].field).toBe("settings.max_group_conversation_size");
    }
    const unknown = await post({ max_comment_depht: 3 });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.details[0]).toEqual({ field: "settings.max_comment_depht", reason: expect.stringContaining("max_group_conversation_size") });
    expect((await post([1])).status).toBe(400);
  });

  test("app_id: a UUID of an Auth App in the same workspace (else 404); one community per App (409 APP_ALREADY_CONNECTED)", async () => {
    const authApp = await createAuthApp(app);
    const other = await createAuthApp(app);
    const token = authApp.key;
    const ws = authApp.workspace;
    const bad = await app.call("POST", base(ws.id), { token, body: { slug: slug(), display_name: "x", app_id: "app_123" } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details[0].field).toBe("app_id");
    const c = await create(token, ws.id, { app_id: authApp.id.toUpperCase() });
    expect(c.app_id).toBe(authApp.id);
    const taken = await app.call("POST", base(ws.id), { token, body: { slug: slug(), display_name: "x", app_id: authApp.id } });
    expect(taken.status).toBe(409);
    expect(taken.body.error.code).toBe("APP_ALREADY_CONNECTED");
    const foreign = await app.call("POST", base(ws.id), { token, body: { slug: slug(), display_name: "x", app_id: other.id } });
    expect(foreign.status).toBe(404);
    expect(foreign.body.error.code).toBe("NOT_FOUND");
    const unknown = await app.call("POST", base(ws.id), { token, body: { slug: slug(), display_name: "x", app_id: crypto.randomUUID() } });
    expect(unknown.status).toBe(404);
    expect((await create(token, ws.id, { app_id: null })).app_id).toBeNull();
  });

  test("Idempotency-Key: a replay answers the first response; another body is 409; a malformed key 400", async () => {
    const { token, ws } = await ownerWithKey(app);
    const body = { slug: slug(), display_name: "Once" };
    const headers = { "idempotency-key": "create-once:1" };
    const first = await app.call("POST", base(ws.id), { token, body, headers });
    expect(first.status).toBe(201);
    const again = await app.call("POST", base(ws.id), { token, body, headers });
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get("idempotent-replay")).toBe("true");
    const other = await app.call("POST", base(ws.id), { token, body: { ...body, display_name: "Twice" }, headers });
    expect(other.status).toBe(409);
    expect(other.body.error.code).toBe("IDEMPOTENCY_KEY_REUSE");
    expect((await app.call("POST", base(ws.id), { token, body: { slug: slug(), display_name: "x" }, headers: { "idempotency-key": "bad key!" } })).status).toBe(400);
    expect((await app.call("GET", `${base(ws.id)}?q=${body.slug}`, { token })).body.data).toHaveLength(1);
  });
});

describe("list", () => {
  test("newest first, cursor pages until has_more is false; limit 1-200", async () => {
    const { token, ws } = await ownerWithKey(app);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      ids.push((await create(token, ws.id)).id);
      await later(1000);
    }
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const r: any = await app.call("GET", `${base(ws.id)}?limit=2${cursor ? `&cursor=${cursor}` : ""}`, { token });
      expect(r.status).toBe(200);
      seen.push(...r.body.data.map((c: any) => c.id));
      cursor = r.body.pagination.next_cursor;
      expect(r.body.pagination.has_more).toBe(cursor !== null);
      pages++;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen).toEqual([...ids].reverse());
    const all = await app.call("GET", base(ws.id), { token });
    expect(all.body.data.map((c: any) => c.id)).toEqual([...ids].reverse());
    expect(all.body.pagination).toEqual({ next_cursor: null, has_more: false });
    expect((await app.call("GET", `${base(ws.id)}?limit=200`, { token })).status).toBe(200);
    for (const bad of ["0", "201", "abc", "1.5"]) expect((await app.call("GET", `${base(ws.id)}?limit=${bad}`, { token })).status).toBe(400);
    const malformed = await app.call("GET", `${base(ws.id)}?cursor=not*a*cursor`, { token });
    expect(malformed.status).toBe(400);
    expect(malformed.body.error.code).toBe("INVALID_CURSOR");
    const forged = Buffer.from(JSON.stringify({ id: 1 })).toString("base64url");
    expect((await app.call("GET", `${base(ws.id)}?cursor=${forged}`, { token })).status).toBe(400);
  });

  test("q: case-insensitive substring of display name or slug; % and _ are literal; at most 128 characters", async () => {
    const { token, ws } = await ownerWithKey(app);
    const pct = await create(token, ws.id, { slug: "pct", display_name: "100% Organic" });
    const plain = await create(token, ws.id, { slug: "plain", display_name: "1000 Organic" });
    const under = await create(token, ws.id, { slug: "snake", display_name: "snake_case fans" });
    const noUnder = await create(token, ws.id, { slug: "snakes", display_name: "snakeXcase fans" });
    const umlaut = await create(token, ws.id, { slug: "gruene", display_name: "ÄPFEL Grüne" });
    const q = async (text: string) => {
      const r = await app.call("GET", `${base(ws.id)}?q=${encodeURIComponent(text)}`, { token });
      expect(r.status).toBe(200);
      return r.body.data.map((c: any) => c.id).sort();
    };
    expect(await q("%")).toEqual([pct.id]);
    expect(await q("0%")).toEqual([pct.id]);
    expect(await q("_")).toEqual([under.id]);
    expect(await q("e_c")).toEqual([under.id]);
    expect(await q("ORGANIC")).toEqual([pct.id, plain.id].sort());
    expect(await q("snake")).toEqual([under.id, noUnder.id].sort());
    expect(await q("akes")).toEqual([noUnder.id]); // the slug "snakes"
    expect(await q("äpfel")).toEqual([umlaut.id]); // Unicode case folding
    expect(await q("\\")).toEqual([]);
    expect(await q("nothing here")).toEqual([]);
    expect((await app.call("GET", `${base(ws.id)}?q=${"o".repeat(128)}`, { token })).status).toBe(200);
    const long = await app.call("GET", `${base(ws.id)}?q=${"o".repeat(129)}`, { token });
    expect(long.status).toBe(400);
    expect(long.body.error.details[0].field).toBe("q");
  });

  test("status filter; unknown status 400; follow-up pages keep the filters (omitted or repeated); other filters with a cursor 400", async () => {
    const { token, ws } = await ownerWithKey(app);
    const made: Record<string, any>[] = [];
    for (let i = 0; i < 6; i++) {
      made.push(await create(token, ws.id, { display_name: i % 2 ? `Match ${i}` : `Other ${i}` }));
      await later(1000);
    }
    // Suspend two of the "Match" ones.
    for (const c of [made[1], made[5]]) expect((await app.call("PATCH", `${base(ws.id)}/${c.id}`, { token, body: { status: "suspended" } })).status).toBe(200);
    const suspended = await app.call("GET", `${base(ws.id)}?status=suspended`, { token });
    expect(suspended.body.data.map((c: any) => c.id)).toEqual([made[5].id, made[1].id]);
    expect((await app.call("GET", `${base(ws.id)}?status=deleted`, { token })).status).toBe(400);

    const first = await app.call("GET", `${base(ws.id)}?q=match&limit=1`, { token });
    expect(first.body.data.map((c: any) => c.id)).toEqual([made[5].id]);
    const cursor = first.body.pagination.next_cursor;
    // Omitted: the cursor's q still applies.
    const second = await app.call("GET", `${base(ws.id)}?limit=1&cursor=${cursor}`, { token });
    expect(second.body.data.map((c: any) => c.id)).toEqual([made[3].id]);
    // Repeated: same answer.
    const repeated = await app.call("GET", `${base(ws.id)}?q=match&limit=1&cursor=${cursor}`, { token });
    expect(repeated.body.data.map((c: any) => c.id)).toEqual([made[3].id]);
    const third = await app.call("GET", `${base(ws.id)}?limit=5&cursor=${second.body.pagination.next_cursor}`, { token });
    expect(third.body.data.map((c: any) => c.id)).toEqual([made[1].id]);
    expect(third.body.pagination.has_more).toBe(false);
    // Different filters with that cursor.
    for (const other of ["q=other", "status=active"]) {
      const r = await app.call("GET", `${base(ws.id)}?${other}&cursor=${cursor}`, { token });
      expect(r.status).toBe(400);
      expect(r.body.error.code).toBe("INVALID_CURSOR");
    }
    // Both filters at once, kept across pages.
    const both = await app.call("GET", `${base(ws.id)}?q=match&status=suspended&limit=1`, { token });
    expect(both.body.data.map((c: any) => c.id)).toEqual([made[5].id]);
    const bothNext = await app.call("GET", `${base(ws.id)}?cursor=${both.body.pagination.next_cursor}`, { token });
    expect(bothNext.body.data.map((c: any) => c.id)).toEqual([made[1].id]);
    expect(bothNext.body.pagination.has_more).toBe(false);
    const active = await app.call("GET", `${base(ws.id)}?q=match&status=active`, { token });
    expect(active.body.data.map((c: any) => c.id)).toEqual([made[3].id]);
  });
});

describe("update", () => {
  inProcess("updated_at equals the injected clock after advancing it")("only sent fields change; settings merge; null resets a setting; empty body is a no-op", async () => {
    const { token, ws } = await ownerWithKey(app);
    const c = await create(token, ws.id, { description: "old", settings: { max_group_conversation_size: 10 } });
    app.clock.advance(5000);
    const r = await app.call("PATCH", `${base(ws.id)}/${c.id}`, { token, body: { display_name: " Renamed ", description: null } });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ ...c, display_name: "Renamed", description: null, updated_at: app.clock.iso() });
    const s = await app.call("PATCH", `${base(ws.id)}/${c.id}`, { token, body: { settings: {} } });
    expect(s.body.settings).toMatchObject({ max_group_conversation_size: 10 });
    const reset = await app.call("PATCH", `${base(ws.id)}/${c.id}`, { token, body: { settings: { max_group_conversation_size: null } } });
    expect(reset.body.settings).toMatchObject({ max_group_conversation_size: 50 });
    const noop = await app.call("PATCH", `${base(ws.id)}/${c.id}`, { token, body: {} });
    expect(noop.status).toBe(200);
    expect(noop.body).toEqual(reset.body);
    for (const bad of [{ display_name: "" }, { display_name: "n".repeat(201) }, { status: "deleted" }, { settings: { max_group_conversation_size: 0 } }, { description: "d".repeat(2001) }]) {
      expect((await app.call("PATCH", `${base(ws.id)}/${c.id}`, { token, body: bad })).status).toBe(400);
    }
    expect((await app.call("GET", `${base(ws.id)}/${c.id}`, { token })).body.display_name).toBe("Renamed");
  });

  inProcess("counts audit rows read from the store (app.ctx.db)")("status: active <-> suspended freely; archived is final (409 COMMUNITY_ARCHIVED), other fields stay editable", async () => {
    const { token, ws } = await ownerWithKey(app);
    const c = await create(token, ws.id);
    const patch = (body: Record<string, unknown>) => app.call("PATCH", `${base(ws.id)}/${c.id}`, { token, body });
    expect((await patch({ status: "suspended" })).body.status).toBe("suspended");
    expect((await patch({ status: "active" })).body.status).toBe("active");
    expect((await patch({ status: "suspended" })).body.status).toBe("suspended");
    expect((await patch({ status: "archived" })).body.status).toBe("archived");
    for (const status of ["active", "suspended"]) {
      const r = await patch({ status });
      expect(r.status).toBe(409);
      expect(r.body.error.code).toBe("COMMUNITY_ARCHIVED");
    }
    expect((await patch({ status: "archived" })).status).toBe(200);
    expect((await patch({ display_name: "Archive of the club" })).body).toMatchObject({ status: "archived", display_name: "Archive of the club" });
    expect((await auditActions(app, ws.id)).filter((a) => a.action === "social.community.update")).toHaveLength(5);
  });
});

describe("access", () => {
  test("another workspace's community or an unknown id is 404, also for its owner; a non-UUID id is 400", async () => {
    const a = await ownerWithKey(app);
    const b = await ownerWithKey(app);
    const c = await create(a.token, a.ws.id);
    // Through b's workspace (b is allowed everything there).
    for (const [method, body] of [["GET"], ["PATCH", { display_name: "x" }], ["DELETE"]] as const) {
      const r = await app.call(method, `${base(b.ws.id)}/${c.id}`, { token: b.token, body });
      expect(r.status).toBe(404);
      expect(r.body.error.code).toBe("NOT_FOUND");
    }
    // Through a's workspace with b's key: the workspace itself is not found for b.
    expect((await app.call("GET", `${base(a.ws.id)}/${c.id}`, { token: b.token })).status).toBe(404);
    expect((await app.call("GET", base(a.ws.id), { token: b.token })).status).toBe(404);
    expect((await app.call("GET", `${base(a.ws.id)}/${crypto.randomUUID()}`, { token: a.token })).status).toBe(404);
    const malformed = await app.call("GET", `${base(a.ws.id)}/not-a-uuid`, { token: a.token });
    expect(malformed.status).toBe(400);
    expect(malformed.body.error.details[0].field).toBe("community_id");
    expect((await app.call("GET", `${base(crypto.randomUUID())}`, { token: a.token })).status).toBe(404);
    expect((await app.call("GET", `${base(a.ws.id)}/${c.id}`, { token: a.token })).status).toBe(200);
  });

  inProcess("reads the queued invitation mail (app.ctx.mailer) and the action catalogue (app.ctx.actions)")("401 without a credential; 403 without the route's action; a key limited to social.list/read lists and reads only", async () => {
    const owner = await ownerWithKey(app);
    const c = await create(owner.token, owner.ws.id);
    expect((await app.call("GET", base(owner.ws.id))).status).toBe(401);
    expect((await app.call("POST", base(owner.ws.id), { body: { slug: slug(), display_name: "x" } })).status).toBe(401);

    // The built-in member role reads communities (migration 0033) but holds no social write.
    const member = await addMember(app, owner.session, owner.ws.slug);
    expect((await app.call("GET", base(owner.ws.id), { token: member.token })).status).toBe(200);
    expect((await app.call("GET", `${base(owner.ws.id)}/${c.id}`, { token: member.token })).status).toBe(200);
    const denied = await app.call("PATCH", `${base(owner.ws.id)}/${c.id}`, { token: member.token, body: { display_name: "x" } });
    expect(denied.status).toBe(403);
    expect(denied.body.error.code).toBe("FORBIDDEN");

    const minted = await app.call("POST", `/platform/v1/workspaces/${owner.ws.slug}/api-keys`, {
      token: owner.session,
      body: { name: "reader", policy: [{ effect: "allow", actions: ["social.list", "social.read"], resources: ["*"] }] },
    });
    expect(minted.status).toBe(201);
    const reader = minted.body.key as string;
    expect((await app.call("GET", base(owner.ws.id), { token: reader })).status).toBe(200);
    expect((await app.call("GET", `${base(owner.ws.id)}/${c.id}`, { token: reader })).status).toBe(200);
    for (const [method, path, body] of [
      ["POST", base(owner.ws.id), { slug: slug(), display_name: "x" }],
      ["PATCH", `${base(owner.ws.id)}/${c.id}`, { display_name: "x" }],
      ["DELETE", `${base(owner.ws.id)}/${c.id}`],
    ] as const) {
      const r = await app.call(method, path, { token: reader, body });
      expect(r.status).toBe(403);
      expect(r.body.error.message).toContain(method === "POST" ? "social.create" : method === "PATCH" ? "social.update" : "social.delete");
    }
    // The actions are in the catalogue, so policies and roles may name them.
    for (const a of ["social.list", "social.read", "social.create", "social.update", "social.delete", "social.webhooks.read", "social.webhooks.write"]) expect(app.ctx.actions.has(a)).toBe(true);
  });

  test("403 SERVICE_NOT_ENABLED when the workspace switched the social service off; back on, it works again", async () => {
    const owner = await ownerWithKey(app);
    const c = await create(owner.token, owner.ws.id);
    expect((await app.call("DELETE", `/platform/v1/workspaces/${owner.ws.slug}/services/social`, { token: owner.session })).status).toBe(200);
    for (const [method, path, body] of [
      ["GET", base(owner.ws.id)],
      ["POST", base(owner.ws.id), { slug: slug(), display_name: "x" }],
      ["GET", `${base(owner.ws.id)}/${c.id}`],
      ["PATCH", `${base(owner.ws.id)}/${c.id}`, { display_name: "x" }],
    ] as const) {
      const r = await app.call(method, path, { token: owner.token, body });
      expect(r.status).toBe(403);
      expect(r.body.error.code).toBe("SERVICE_NOT_ENABLED");
    }
    expect((await app.call("PUT", `/platform/v1/workspaces/${owner.ws.slug}/services/social`, { token: owner.session })).status).toBe(200);
    expect((await app.call("GET", `${base(owner.ws.id)}/${c.id}`, { token: owner.token })).status).toBe(200);
  });
});

describe("delete", () => {
  inProcess("checks the webhook endpoint rows and the audit log in the store (app.ctx.db)")("204; the community and its webhook endpoints are gone; the slug is free again", async () => {
    const { token, ws } = await ownerWithKey(app);
    const c = await create(token, ws.id, { slug: "to-delete" });
    const hook = await app.call("POST", `/social/v1/communities/${c.id}/webhooks`, { token, body: { url: "http://127.0.0.1:9/hook" } });
    expect(hook.status).toBe(201);
    const shared = await app.call("POST", `/social/v1/communities/${c.id}/webhooks/endpoints`, { token, body: { url: "http://127.0.0.1:9/shared" } });
    expect(shared.status).toBe(201);
    expect(await endpointsStore.endpointIds(app.ctx.db, "social", c.id)).toHaveLength(2);

    const del = await app.call("DELETE", `${base(ws.id)}/${c.id}`, { token });
    expect(del.status).toBe(204);
    expect((await app.call("GET", `${base(ws.id)}/${c.id}`, { token })).status).toBe(404);
    expect((await app.call("DELETE", `${base(ws.id)}/${c.id}`, { token })).status).toBe(404);
    expect((await app.call("GET", `/social/v1/communities/${c.id}/webhooks`, { token })).status).toBe(404);
    expect(await endpointsStore.endpointIds(app.ctx.db, "social", c.id)).toEqual([]);
    expect((await create(token, ws.id, { slug: "to-delete" })).slug).toBe("to-delete");
    expect((await auditActions(app, ws.id)).map((a) => a.action)).toContain("social.community.delete");
  });
});

test("a signed-in console session works on the admin lane like a key", async () => {
  const user = await signup(app);
  const ws = await createWorkspace(app, user.token);
  const c = await create(user.token, ws.id);
  expect((await app.call("GET", `${base(ws.id)}/${c.id}`, { token: user.token })).status).toBe(200);
});
