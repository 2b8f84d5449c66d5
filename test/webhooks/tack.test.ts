/**
 * The card board's webhook records (/tack/api/v1/workspaces/{workspace}/webhooks) end to
 * end: a real app, a real HTTP receiver on loopback, signatures checked with the
 * independent `standardwebhooks` package and node:crypto (X-Tack-Signature).
 */
import { afterAll, afterEach, beforeAll, describe, expect, setSystemTime, test } from "bun:test";
import { createHmac, randomBytes } from "node:crypto";
import { Webhook } from "standardwebhooks";
import { HOUR, MINUTE } from "../../src/core/clock";
import * as endpointsStore from "../../src/kernel/webhooks/store/endpoints";
import { ownerWithKey, startTestApp, type TestApp } from "../helpers/app";
import type { ReceivedRequest, Receiver } from "../helpers/http-receiver";
import { startWebhookTestApp, stopWebhookTestApp } from "../helpers/webhook-app";
import { addMember, P } from "../helpers/members";
import { inProcess } from "../helpers/target";

let app: TestApp;
let receiver: Receiver;
beforeAll(async () => {
  ({ app, receiver } = await startWebhookTestApp());
});
afterAll(() => stopWebhookTestApp({ app, receiver }));
afterEach(() => {
  receiver.setHandler(() => new Response("ok"));
});

/** {workspace} is the board workspace's ws_ id or its name. */
const base = (ws: string) => `/tack/api/v1/workspaces/${ws}/webhooks`;
let boards = 0;
/**
 * A key allowing everything and a board workspace of its platform workspace: ws is the board
 * workspace ({id: ws_..., slug: its name}; webhooks are scoped to it), platform the platform one.
 */
const owner = async () => {
  const o = await ownerWithKey(app);
  const name = `board-${++boards}`;
  const r = await app.call("POST", "/tack/api/v1/workspaces", { token: o.token, body: { name } });
  if (r.status !== 201) throw new Error(`board workspace create failed: ${r.status} ${JSON.stringify(r.body)}`);
  return { token: o.token, session: o.session, platform: o.ws, ws: { id: r.body.id as string, slug: name } };
};
const OWN_SECRET = "board-secret-0123456789-abcdef";

async function register(token: string, ws: string, body: Record<string, unknown> = {}) {
  const res = await app.call("POST", base(ws), { token, body: { url: `${receiver.url}/tack`, ...body } });
  if (res.status !== 201) throw new Error(`register failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as { id: string; signing_secret: string | null } & Record<string, any>;
}

async function deliverNow() {
  await app.webhooks.dispatchPending();
  await app.webhooks.deliverDue();
}

const requestsFor = (eventId: string) => receiver.requests.filter((q) => q.headers["webhook-id"] === eventId);
const asWhsec = (secret: string) => "whsec_" + Buffer.from(secret, "utf8").toString("base64");

/** Verifies the Standard Webhooks headers with the independent library, at the app's clock. */
function verifyStandard(secret: string, req: ReceivedRequest) {
  setSystemTime(app.clock.now());
  try {
    return new Webhook(secret).verify(req.body, {
      "webhook-id": req.headers["webhook-id"],
      "webhook-timestamp": req.headers["webhook-timestamp"],
      "webhook-signature": req.headers["webhook-signature"],
    });
  } finally {
    setSystemTime();
  }
}

/** Recomputes X-Tack-Signature: `t=<unix>,v1=<hex HMAC-SHA256 of "<t>.<body>" keyed by the secret string>`. */
function tackHeaderMatches(secret: string, req: ReceivedRequest) {
  const m = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(req.headers["x-tack-signature"] ?? "");
  if (!m) return false;
  return m[2] === createHmac("sha256", secret).update(`${m[1]}.${req.body}`).digest("hex") && m[1] === req.headers["webhook-timestamp"];
}

describe("register, read, list", () => {
  inProcess("created_at equals the frozen injected clock; reads the stored endpoint row (app.ctx.db)")("without a secret: 201 active record with a generated whsec_ secret shown once; reads mask it; no Deprecation", async () => {
    const { token, ws } = await owner();
    const r = await app.call("POST", base(ws.id), { token, body: { url: `${receiver.url}/tack`, events: ["card.created", "card.moved"] } });
    expect(r.status).toBe(201);
    expect(r.headers.get("deprecation")).toBeNull();
    expect(r.headers.get("sunset")).toBeNull();
    const hook = r.body;
    expect(hook.id).toMatch(/^whk_[0-9a-f]{32}$/);
    expect(hook.signing_secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    expect(hook).toEqual({
      id: hook.id,
      workspace_id: ws.id,
      url: `${receiver.url}/tack`,
      events: ["card.created", "card.moved"],
      active: true,
      status: "enabled",
      disabled_reason: null,
      signing_secret_hint: hook.signing_secret.slice(-4),
      legacy_signature: false,
      created_at: app.clock.iso(),
      updated_at: app.clock.iso(),
      signing_secret: hook.signing_secret,
    });

    const { signing_secret: _s, ...masked } = hook;
    const one = await app.call("GET", `${base(ws.id)}/${hook.id}`, { token });
    expect(one.status).toBe(200);
    expect(one.headers.get("deprecation")).toBeNull();
    expect(one.body).toEqual(masked);
    const list = await app.call("GET", base(ws.id), { token });
    expect(list.status).toBe(200);
    expect(list.body).toEqual({ data: [masked], pagination: { total: 1, limit: 50, offset: 0, has_more: false } });
    expect(JSON.stringify([one.body, list.body])).not.toContain(hook.signing_secret);

    const row = (await endpointsStore.endpointInScope(app.ctx.db, "tack", ws.id, hook.id))!;
    expect(row.legacy).toBe(0);
    expect(row.secret_enc).not.toContain(hook.signing_secret);
    expect(app.ctx.secretBox.decrypt(row.secret_enc)).toBe(hook.signing_secret);
  });

  inProcess("reads the stored endpoint row and the audit log (app.ctx.db)")("with the caller's own secret: stored encrypted, never echoed (signing_secret null), legacy_signature true", async () => {
    const { token, ws, platform } = await owner();
    const hook = await register(token, ws.id, { secret: OWN_SECRET });
    expect(hook).toMatchObject({ active: true, events: [], legacy_signature: true, signing_secret: null, signing_secret_hint: OWN_SECRET.slice(-4) });
    const row = (await endpointsStore.endpointInScope(app.ctx.db, "tack", ws.id, hook.id))!;
    expect(row.legacy).toBe(1);
    expect(row.secret_enc).not.toContain(OWN_SECRET);
    expect(app.ctx.secretBox.decrypt(row.secret_enc)).toBe(OWN_SECRET);
    const all = JSON.stringify([(await app.call("GET", `${base(ws.id)}/${hook.id}`, { token })).body, (await app.call("GET", base(ws.id), { token })).body]);
    expect(all).not.toContain(OWN_SECRET);
    // Not in the audit log either.
    const audit = JSON.stringify(await app.ctx.db.all("SELECT * FROM platform_audit_log WHERE workspace_id = ?", platform.id));
    expect(audit).toContain(hook.id);
    expect(audit).not.toContain(OWN_SECRET);
  });

  test("secret rules: 16-256 visible ASCII characters; a whsec_ secret must carry 24-64 base64 bytes", async () => {
    const { token, ws } = await owner();
    const bad = ["x".repeat(15), "x".repeat(257), "has a space in it!!", "tab\there-0123456789", "ünïcödé-secret-0123", "whsec_" + randomBytes(23).toString("base64"), "whsec_not*base64*at*all*0123456789", "whsec_" + randomBytes(65).toString("base64")];
    for (const secret of bad) {
      const r = await app.call("POST", base(ws.id), { token, body: { url: `${receiver.url}/x`, secret } });
      expect(r.status).toBe(400);
      expect(r.body.error.code).toBe("VALIDATION_ERROR");
      expect(JSON.stringify(r.body.error.details)).toContain("secret");
    }
    const nonString = await app.call("POST", base(ws.id), { token, body: { url: `${receiver.url}/x`, secret: 12345678901234567 } });
    expect(nonString.status).toBe(400);
    expect((await app.call("GET", base(ws.id), { token })).body.pagination.total).toBe(0);
    // The edges and a Standard Webhooks secret are accepted.
    for (const secret of ["x".repeat(16), "~".repeat(256), "whsec_" + randomBytes(24).toString("base64"), "whsec_" + randomBytes(64).toString("base64")]) {
      const r = await app.call("POST", base(ws.id), { token, body: { url: `${receiver.url}/x`, secret } });
      expect(r.status).toBe(201);
      expect(r.body.signing_secret).toBeNull();
    }
  });

  test("bad input 400: missing or bad url, events not an array", async () => {
    const { token, ws } = await owner();
    expect((await app.call("POST", base(ws.id), { token, body: {} })).status).toBe(400);
    expect((await app.call("POST", base(ws.id), { token, body: { url: "not a url" } })).status).toBe(400);
    expect((await app.call("POST", base(ws.id), { token, body: { url: "ftp://example.com/x" } })).status).toBe(400);
    expect((await app.call("POST", base(ws.id), { token, body: { url: `${receiver.url}/x`, events: "card.created" } })).status).toBe(400);
  });

  test("an unknown event type is 400 naming the card board's valid types", async () => {
    const { token, ws } = await owner();
    const r = await app.call("POST", base(ws.id), { token, body: { url: `${receiver.url}/x`, events: ["card.created", "job.succeeded"] } });
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe("VALIDATION_ERROR");
    expect(r.body.error.details[0].field).toBe("events");
    for (const t of ["card.created", "card.updated", "card.moved", "card.completed", "card.archived", "comment.created", "list.created", "project.archived"]) expect(r.body.error.message).toContain(t);
    expect(r.body.error.message).toContain("job.succeeded");
    const hook = await register(token, ws.id);
    const p = await app.call("PATCH", `${base(ws.id)}/${hook.id}`, { token, body: { events: ["entry.created"] } });
    expect(p.status).toBe(400);
    expect(p.body.error.message).toContain("card.moved");
  });

  inProcess("reads the stored idempotent response (app.ctx.db)")("Idempotency-Key: a replay answers the same record with signing_secret null; the secret is not in the idempotency record", async () => {
    const { token, ws } = await owner();
    const body = { url: `${receiver.url}/idem` };
    const first = await app.call("POST", base(ws.id), { token, body, headers: { "idempotency-key": "tack-1" } });
    expect(first.status).toBe(201);
    expect(first.body.signing_secret).toMatch(/^whsec_/);
    const again = await app.call("POST", base(ws.id), { token, body, headers: { "idempotency-key": "tack-1" } });
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotent-replay")).toBe("true");
    expect(again.body).toEqual({ ...first.body, signing_secret: null });
    expect((await app.call("GET", base(ws.id), { token })).body.pagination.total).toBe(1);
    const stored = JSON.stringify(await app.ctx.db.all("SELECT * FROM core_idempotency_keys"));
    expect(stored).not.toContain(first.body.signing_secret);
    expect((await app.call("POST", base(ws.id), { token, body: { url: `${receiver.url}/other` }, headers: { "idempotency-key": "tack-1" } })).status).toBe(409);
  });

  inProcess("moves the injected clock between creations to order them")("list: oldest first, offset pages with total; shared endpoints of the scope included; limit 1-100, offset >= 0", async () => {
    const { token, ws } = await owner();
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      ids.push((await register(token, ws.id, { url: `${receiver.url}/l${i}` })).id);
      app.clock.advance(1000);
    }
    const shared = await app.call("POST", `${base(ws.id)}/endpoints`, { token, body: { url: `${receiver.url}/shared`, event_types: ["card.completed"] } });
    expect(shared.status).toBe(201);
    ids.push(shared.body.id);

    const all = await app.call("GET", base(ws.id), { token });
    expect(all.body.data.map((h: any) => h.id)).toEqual(ids);
    expect(all.body.pagination).toEqual({ total: 4, limit: 50, offset: 0, has_more: false });
    expect(all.body.data[3]).toMatchObject({ id: expect.stringMatching(/^ep_/), events: ["card.completed"], active: true, legacy_signature: false });

    const p1 = await app.call("GET", `${base(ws.id)}?limit=3`, { token });
    expect(p1.body.data.map((h: any) => h.id)).toEqual(ids.slice(0, 3));
    expect(p1.body.pagination).toEqual({ total: 4, limit: 3, offset: 0, has_more: true });
    const p2 = await app.call("GET", `${base(ws.id)}?limit=3&offset=3`, { token });
    expect(p2.body.data.map((h: any) => h.id)).toEqual(ids.slice(3));
    expect(p2.body.pagination).toEqual({ total: 4, limit: 3, offset: 3, has_more: false });
    const past = await app.call("GET", `${base(ws.id)}?offset=10`, { token });
    expect(past.body).toEqual({ data: [], pagination: { total: 4, limit: 50, offset: 10, has_more: false } });

    expect((await app.call("GET", `${base(ws.id)}?limit=100`, { token })).status).toBe(200);
    for (const q of ["limit=101", "limit=0", "limit=abc", "offset=-1", "offset=1.5", "offset=x"]) {
      const r = await app.call("GET", `${base(ws.id)}?${q}`, { token });
      expect(r.status).toBe(400);
      expect(r.body.error.code).toBeTruthy();
    }
  });

  test("the cap of 10 per workspace is shared with the shared surface: the 11th is 409 on both", async () => {
    const { token, ws } = await owner();
    for (let i = 0; i < 4; i++) expect((await app.call("POST", `${base(ws.id)}/endpoints`, { token, body: { url: `${receiver.url}/s${i}` } })).status).toBe(201);
    for (let i = 0; i < 6; i++) await register(token, ws.id, i % 2 ? { secret: OWN_SECRET } : {});
    const eleventh = await app.call("POST", base(ws.id), { token, body: { url: `${receiver.url}/x` } });
    expect(eleventh.status).toBe(409);
    expect(eleventh.body.error.code).toBe("ENDPOINT_LIMIT_REACHED");
    expect((await app.call("POST", `${base(ws.id)}/endpoints`, { token, body: { url: `${receiver.url}/x` } })).status).toBe(409);
    expect((await app.call("GET", base(ws.id), { token })).body.pagination.total).toBe(10);
    // Deleting one frees a slot.
    const first = (await app.call("GET", base(ws.id), { token })).body.data[0].id;
    expect((await app.call("DELETE", `${base(ws.id)}/${first}`, { token })).status).toBe(204);
    expect((await app.call("POST", base(ws.id), { token, body: { url: `${receiver.url}/x` } })).status).toBe(201);
  });
});

describe("workspace by name or id, and who may call", () => {
  test("every route works with the workspace slug as with its id, on the same records", async () => {
    const { token, ws } = await owner();
    const bySlug = await register(token, ws.slug, { events: ["card.created"] });
    expect(bySlug.workspace_id).toBe(ws.id);
    const byId = (await app.call("GET", `${base(ws.id)}/${bySlug.id}`, { token })).body;
    expect(byId).toMatchObject({ id: bySlug.id, workspace_id: ws.id });
    expect((await app.call("GET", base(ws.slug), { token })).body.data.map((h: any) => h.id)).toEqual([bySlug.id]);
    const patched = await app.call("PATCH", `${base(ws.slug)}/${bySlug.id}`, { token, body: { events: [] } });
    expect(patched.status).toBe(200);
    expect(patched.body.events).toEqual([]);
    // The shared surface under /tack/api accepts the slug too.
    const eps = await app.call("GET", `${base(ws.slug)}/endpoints`, { token });
    expect(eps.status).toBe(200);
    expect(eps.body.data.map((e: any) => e.id)).toEqual([bySlug.id]);
    expect((await app.call("DELETE", `${base(ws.slug)}/${bySlug.id}`, { token })).status).toBe(204);
    expect((await app.call("GET", `${base(ws.id)}/${bySlug.id}`, { token })).status).toBe(404);
  });

  test("another workspace's key, an unknown workspace and another product's id answer 404", async () => {
    const { token, ws, platform } = await owner();
    const hook = await register(token, ws.id);
    const other = await owner();
    for (const ref of [ws.id, ws.slug]) {
      for (const [method, path, body] of [
        ["GET", base(ref)],
        ["POST", base(ref), { url: `${receiver.url}/x` }],
        ["GET", `${base(ref)}/${hook.id}`],
        ["PATCH", `${base(ref)}/${hook.id}`, { active: false }],
        ["DELETE", `${base(ref)}/${hook.id}`],
        ["GET", `${base(ref)}/endpoints`],
      ] as [string, string, unknown?][]) {
        const r = await app.call(method, path, { token: other.token, body });
        expect(r.status).toBe(404);
        expect(r.body.error.code).toBeTruthy();
      }
    }
    // This workspace's key on the other workspace's path: the record is not there.
    expect((await app.call("GET", `${base(other.ws.id)}/${hook.id}`, { token: other.token })).status).toBe(404);
    for (const ref of ["no-such-workspace", "0192f0c5-0000-7000-8000-000000000000"]) expect((await app.call("GET", base(ref), { token })).status).toBe(404);
    // A trawl endpoint of the same workspace is not a card-board webhook.
    const trawl = await app.call("POST", `/trawl/v1/workspaces/${platform.id}/webhooks/endpoints`, { token, body: { url: `${receiver.url}/t` } });
    expect(trawl.status).toBe(201);
    expect((await app.call("GET", `${base(ws.id)}/${trawl.body.id}`, { token })).status).toBe(404);
    expect((await app.call("GET", `${base(ws.id)}/${hook.id}`, { token })).body.active).toBe(true);
  });

  inProcess("reads the queued invitation mail (app.ctx.mailer) to add a member")("no credential 401; a member cannot write; a key with tack.webhooks.read only reads; card board switched off 403", async () => {
    const { token, session, ws, platform } = await owner();
    const hook = await register(token, ws.id);
    expect((await app.call("GET", base(ws.id))).status).toBe(401);

    // The built-in member role holds no tack.webhooks.write (writes stay with admins).
    const member = await addMember(app, session, platform.slug);
    expect((await app.call("POST", base(ws.id), { token: member.token, body: { url: `${receiver.url}/x` } })).status).toBe(403);
    expect((await app.call("PATCH", `${base(ws.id)}/${hook.id}`, { token: member.token, body: { active: false } })).status).toBe(403);

    const minted = await app.call("POST", `${P}/workspaces/${platform.slug}/api-keys`, {
      token: session,
      body: { name: "reader", policy: [{ effect: "allow", actions: ["tack.webhooks.read"], resources: ["*"] }] },
    });
    expect(minted.status).toBe(201);
    const reader = minted.body.key as string;
    expect((await app.call("GET", base(ws.slug), { token: reader })).status).toBe(200);
    expect((await app.call("GET", `${base(ws.id)}/${hook.id}`, { token: reader })).status).toBe(200);
    for (const [method, path, body] of [
      ["POST", base(ws.id), { url: `${receiver.url}/x` }],
      ["PATCH", `${base(ws.id)}/${hook.id}`, { active: false }],
      ["DELETE", `${base(ws.id)}/${hook.id}`],
    ] as [string, string, unknown?][]) {
      const r = await app.call(method, path, { token: reader, body });
      expect(r.status).toBe(403);
    }
    // trawl.webhooks.read does not cover the card board.
    const trawlKey = (await app.call("POST", `${P}/workspaces/${platform.slug}/api-keys`, {
      token: session,
      body: { name: "trawl", policy: [{ effect: "allow", actions: ["trawl.webhooks.read"], resources: ["*"] }] },
    })).body.key as string;
    expect((await app.call("GET", base(ws.id), { token: trawlKey })).status).toBe(403);

    expect((await app.call("DELETE", `${P}/workspaces/${platform.slug}/services/tack`, { token: session })).status).toBe(200);
    const off = await app.call("GET", base(ws.id), { token });
    expect(off.status).toBe(403);
    expect(off.body.error.code).toBe("SERVICE_NOT_ENABLED");
    expect((await app.call("GET", `${base(ws.id)}/event-types`, { token })).status).toBe(403);
    expect((await app.call("PUT", `${P}/workspaces/${platform.slug}/services/tack`, { token: session })).status).toBe(200);
    expect((await app.call("GET", base(ws.id), { token })).status).toBe(200);
  });
});

describe("delivery", () => {
  inProcess("emits through the in-process webhook engine (app.webhooks.emit) and pumps it by hand")("card.created reaches a real receiver, signed with the generated secret (Standard Webhooks only)", async () => {
    const { token, ws } = await owner();
    const hook = await register(token, ws.id, { url: `${receiver.url}/generated` });
    const data = { id: "card_1", title: "Ship the billing page", list_id: "list_1", actor_id: "usr_1" };
    const { id } = await app.webhooks.emit(app.ctx.db, { product: "tack", scopeId: ws.id }, "card.created", data);
    await deliverNow();
    const got = requestsFor(id);
    expect(got).toHaveLength(1);
    expect(got[0].path).toBe("/generated");
    expect(verifyStandard(hook.signing_secret!, got[0])).toEqual({ id, type: "card.created", created_at: app.clock.iso(), data });
    expect(got[0].headers["x-tack-signature"]).toBeUndefined();
    expect(() => verifyStandard("whsec_" + randomBytes(24).toString("base64"), got[0])).toThrow();
  });

  inProcess("emits through the in-process webhook engine (app.webhooks.emit) and pumps it by hand")("with the caller's own secret: Standard Webhooks verifies with whsec_ + base64(secret) and X-Tack-Signature with the secret", async () => {
    const { token, ws } = await owner();
    await register(token, ws.id, { url: `${receiver.url}/own`, secret: OWN_SECRET, events: ["card.created"] });
    const data = { id: "card_2", title: "Write the changelog" };
    const { id } = await app.webhooks.emit(app.ctx.db, { product: "tack", scopeId: ws.id }, "card.created", data);
    const skipped = await app.webhooks.emit(app.ctx.db, { product: "tack", scopeId: ws.id }, "card.moved", { id: "card_2" });
    await deliverNow();
    const got = requestsFor(id);
    expect(got).toHaveLength(1);
    expect(verifyStandard(asWhsec(OWN_SECRET), got[0])).toMatchObject({ id, type: "card.created", data });
    expect(tackHeaderMatches(OWN_SECRET, got[0])).toBe(true);
    expect(tackHeaderMatches("some-other-secret-0123456789", got[0])).toBe(false);
    expect(requestsFor(skipped.id)).toHaveLength(0);
  });

  inProcess("emits through the in-process webhook engine (app.webhooks.emit) and pumps it by hand")("a caller secret that is a whsec_ secret verifies as given", async () => {
    const { token, ws } = await owner();
    const secret = "whsec_" + randomBytes(32).toString("base64");
    await register(token, ws.id, { url: `${receiver.url}/std`, secret });
    const { id } = await app.webhooks.emit(app.ctx.db, { product: "tack", scopeId: ws.id }, "card.completed", { id: "card_3" });
    await deliverNow();
    const [req] = requestsFor(id);
    expect(verifyStandard(secret, req)).toMatchObject({ id, type: "card.completed" });
    expect(tackHeaderMatches(secret, req)).toBe(true);
  });
});

describe("update and delete", () => {
  inProcess("emits through the in-process webhook engine (app.webhooks.emit) and pumps it by hand; compares updated_at with the injected clock after moving it")("PATCH url and events; bad values 400; unknown id 404", async () => {
    const { token, ws } = await owner();
    const hook = await register(token, ws.id, { events: ["card.created"] });
    app.clock.advance(1000);
    const r = await app.call("PATCH", `${base(ws.id)}/${hook.id}`, { token, body: { url: `${receiver.url}/moved`, events: ["card.moved", "card.completed"] } });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ id: hook.id, url: `${receiver.url}/moved`, events: ["card.moved", "card.completed"], active: true, updated_at: app.clock.iso() });
    expect(r.body.signing_secret).toBeUndefined();
    const moved = await app.webhooks.emit(app.ctx.db, { product: "tack", scopeId: ws.id }, "card.moved", { id: "c" });
    const created = await app.webhooks.emit(app.ctx.db, { product: "tack", scopeId: ws.id }, "card.created", { id: "c" });
    await deliverNow();
    expect(requestsFor(moved.id).map((q) => q.path)).toEqual(["/moved"]);
    expect(requestsFor(created.id)).toHaveLength(0);

    expect((await app.call("PATCH", `${base(ws.id)}/${hook.id}`, { token, body: { url: "gopher://x" } })).status).toBe(400);
    expect((await app.call("PATCH", `${base(ws.id)}/${hook.id}`, { token, body: { active: "no" } })).status).toBe(400);
    expect((await app.call("PATCH", `${base(ws.id)}/whk_${"0".repeat(32)}`, { token, body: { active: false } })).status).toBe(404);
    expect((await app.call("GET", `${base(ws.id)}/${hook.id}`, { token })).body.url).toBe(`${receiver.url}/moved`);
  });

  inProcess("emits through the in-process webhook engine (app.webhooks.emit) and pumps it by hand and moves the injected clock past the retry")("active:false pauses (queued retry dropped, nothing new delivered); active:true delivers again", async () => {
    const { token, ws } = await owner();
    const hook = await register(token, ws.id, { url: `${receiver.url}/pause` });
    const scope = { product: "tack" as const, scopeId: ws.id };
    receiver.setHandler(() => new Response("down", { status: 503 }));
    const ev = await app.webhooks.emit(app.ctx.db, scope, "card.created", { id: "c1" });
    await deliverNow();
    expect(requestsFor(ev.id)).toHaveLength(1);

    const paused = await app.call("PATCH", `${base(ws.id)}/${hook.id}`, { token, body: { active: false } });
    expect(paused.status).toBe(200);
    // The pause is active:false; status is the shared vocabulary's (enabled | auto_disabled).
    expect(paused.body).toMatchObject({ active: false, status: "enabled", disabled_reason: null });
    receiver.setHandler(() => new Response("ok"));
    app.clock.advance(2 * HOUR);
    const during = await app.webhooks.emit(app.ctx.db, scope, "card.created", { id: "c2" });
    await deliverNow();
    expect(requestsFor(ev.id)).toHaveLength(1);
    expect(requestsFor(during.id)).toHaveLength(0);
    const log = await app.call("GET", `${base(ws.id)}/events/${ev.id}`, { token });
    expect(log.status).toBe(200);
    expect(log.body.deliveries[0]).toMatchObject({ endpoint_id: hook.id, status: "not_sent", next_attempt_at: null });

    const on = await app.call("PATCH", `${base(ws.id)}/${hook.id}`, { token, body: { active: true } });
    expect(on.body).toMatchObject({ active: true, status: "enabled", disabled_reason: null });
    const after = await app.webhooks.emit(app.ctx.db, scope, "card.created", { id: "c3" });
    await deliverNow();
    expect(requestsFor(after.id)).toHaveLength(1);
  });

  inProcess("emits through the in-process webhook engine (app.webhooks.emit) and pumps it by hand and moves the injected clock by 25 h")("auto-disabled after 24 h of failures shows active false; active:true re-enables and clears the streak", async () => {
    const { token, ws } = await owner();
    const hook = await register(token, ws.id, { url: `${receiver.url}/flaky`, secret: OWN_SECRET });
    const scope = { product: "tack" as const, scopeId: ws.id };
    receiver.setHandler(() => new Response("down", { status: 500 }));
    await app.webhooks.emit(app.ctx.db, scope, "card.created", { id: "c1" });
    await deliverNow();
    const shared = () => app.call("GET", `${base(ws.id)}/endpoints/${hook.id}`, { token });
    expect((await shared()).body).toMatchObject({ consecutive_failures: 1, first_failure_at: app.clock.iso() });
    app.clock.advance(25 * HOUR);
    await app.webhooks.deliverDue();
    const down = (await app.call("GET", `${base(ws.id)}/${hook.id}`, { token })).body;
    expect(down).toMatchObject({ active: false, status: "auto_disabled", disabled_reason: "failing" });
    expect((await shared()).body.consecutive_failures).toBe(2);

    receiver.setHandler(() => new Response("ok"));
    const on = await app.call("PATCH", `${base(ws.id)}/${hook.id}`, { token, body: { active: true } });
    expect(on.status).toBe(200);
    expect(on.body).toMatchObject({ active: true, status: "enabled", disabled_reason: null, legacy_signature: true });
    expect((await shared()).body).toMatchObject({ consecutive_failures: 0, first_failure_at: null, status: "enabled" });
    const next = await app.webhooks.emit(app.ctx.db, scope, "card.created", { id: "c2" });
    await deliverNow();
    const [req] = requestsFor(next.id);
    expect(tackHeaderMatches(OWN_SECRET, req)).toBe(true);
  });

  inProcess("emits through the in-process webhook engine (app.webhooks.emit) and pumps it by hand and moves the injected clock past the retries")("DELETE: 204, queued retries dropped (nothing arrives later); then 404", async () => {
    const { token, ws } = await owner();
    const keep = await register(token, ws.id, { url: `${receiver.url}/keep` });
    const gone = await register(token, ws.id, { url: `${receiver.url}/gone` });
    receiver.setHandler((req) => (new URL(req.url).pathname === "/gone" ? new Response("down", { status: 500 }) : new Response("ok")));
    const ev = await app.webhooks.emit(app.ctx.db, { product: "tack", scopeId: ws.id }, "card.deleted", { id: "c1" });
    await deliverNow();
    expect(requestsFor(ev.id).map((q) => q.path).sort()).toEqual(["/gone", "/keep"]);
    const before = await app.call("GET", `${base(ws.id)}/events/${ev.id}`, { token });
    expect(before.body.deliveries.find((d: any) => d.endpoint_id === gone.id)).toMatchObject({ status: "pending", next_attempt_at: expect.any(String) });

    const del = await app.call("DELETE", `${base(ws.id)}/${gone.id}`, { token });
    expect(del.status).toBe(204);
    expect(del.headers.get("deprecation")).toBeNull();
    app.clock.advance(2 * MINUTE);
    await app.webhooks.deliverDue();
    app.clock.advance(30 * HOUR);
    await app.webhooks.deliverDue();
    expect(requestsFor(ev.id)).toHaveLength(2);
    const after = await app.call("GET", `${base(ws.id)}/events/${ev.id}`, { token });
    expect(after.body.deliveries.map((d: any) => d.endpoint_id)).toEqual([keep.id]);

    expect((await app.call("GET", `${base(ws.id)}/${gone.id}`, { token })).status).toBe(404);
    expect((await app.call("DELETE", `${base(ws.id)}/${gone.id}`, { token })).status).toBe(404);
  });
});

describe("the shared surface under /tack/api", () => {
  test("event-types, endpoints, events and test answer beside /webhooks/{webhook_id}; OpenAPI lists the routes", async () => {
    const { token, ws } = await owner();
    const hook = await register(token, ws.id);
    const types = await app.call("GET", `${base(ws.id)}/event-types`, { token });
    expect(types.status).toBe(200);
    expect(types.body.data.map((e: any) => e.type)).toEqual(expect.arrayContaining(["card.created", "card.moved", "card.completed"]));
    const eps = await app.call("GET", `${base(ws.id)}/endpoints`, { token });
    expect(eps.status).toBe(200);
    expect(eps.body.data.map((e: any) => e.id)).toEqual([hook.id]);
    expect((await app.call("GET", `${base(ws.id)}/events`, { token })).status).toBe(200);
    const sent = await app.call("POST", `${base(ws.id)}/endpoints/${hook.id}/test`, { token, body: { event_type: "card.moved" } });
    expect(sent.status).toBe(200);
    expect(sent.body).toMatchObject({ succeeded: true, status_code: 200, trigger: "test" });
    const [req] = requestsFor(sent.body.event_id);
    expect(verifyStandard(hook.signing_secret!, req)).toMatchObject({ type: "card.moved", data: { test: true } });

    const doc = await app.call("GET", "/tack/openapi.json");
    expect(doc.status).toBe(200);
    const paths = Object.keys(doc.body.paths);
    for (const p of ["/tack/api/v1/workspaces/{workspace_id}/webhooks", "/tack/api/v1/workspaces/{workspace_id}/webhooks/{webhook_id}", "/tack/api/v1/workspaces/{workspace_id}/webhooks/endpoints"]) {
      expect(paths).toContain(p);
    }
    expect(doc.body.paths["/tack/api/v1/workspaces/{workspace_id}/webhooks"].post.deprecated).toBeFalsy();
  });
});
