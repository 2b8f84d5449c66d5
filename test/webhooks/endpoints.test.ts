import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { HOUR } from "../../src/core/clock";
import * as endpointStore from "../../src/kernel/webhooks/store/endpoints";
import { createWorkspace, signup, startTestApp, type TestApp } from "../helpers/app";
import type { Receiver } from "../helpers/http-receiver";
import { startWebhookTestApp, stopWebhookTestApp } from "../helpers/webhook-app";
import { inProcess } from "../helpers/target";

let app: TestApp;
let receiver: Receiver;
beforeAll(async () => {
  ({ app, receiver } = await startWebhookTestApp());
});
afterAll(() => stopWebhookTestApp({ app, receiver }));

const base = (wsId: string, product = "mail") => `/${product}/v1/workspaces/${wsId}/webhooks`;

async function owner() {
  const user = await signup(app);
  const ws = await createWorkspace(app, user.token);
  return { token: user.token, ws };
}

async function create(token: string, wsId: string, body: Record<string, unknown> = {}, headers: Record<string, string> = {}, product = "mail") {
  return app.call("POST", `${base(wsId, product)}/endpoints`, { token, body: { url: `${receiver.url}/hook`, ...body }, headers });
}

/** Every text cell of every table, so a test can prove a secret is stored nowhere. */
async function wholeDatabaseText(): Promise<string> {
  const db = app.ctx.db;
  const tables = await db.all<{ name: string }>(
    db.engine === "postgres"
      ? "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'"
      : "SELECT name FROM sqlite_master WHERE type = 'table'",
  );
  const dumps: string[] = [];
  for (const t of tables) dumps.push(JSON.stringify(await db.all(`SELECT * FROM "${t.name}"`)));
  return dumps.join("\n");
}

describe("create", () => {
  inProcess("created_at equals the frozen injected clock; reads the stored endpoint row and every table (app.ctx.db)")("201 with signing_secret once; reads show only the hint; the secret is encrypted at rest", async () => {
    const { token, ws } = await owner();
    const r = await create(token, ws.id, { description: "orders", event_types: ["email.sent", "email.bounced"] });
    expect(r.status).toBe(201);
    const ep = r.body;
    expect(ep.id).toMatch(/^ep_[0-9a-f]{32}$/);
    expect(ep.signing_secret).toMatch(/^whsec_[A-Za-z0-9+/=]{32}$/);
    expect(ep).toMatchObject({
      url: `${receiver.url}/hook`,
      description: "orders",
      event_types: ["email.sent", "email.bounced"],
      enabled: true,
      status: "enabled",
      signing_secret_hint: ep.signing_secret.slice(-4),
      consecutive_failures: 0,
      first_failure_at: null,
      disabled_reason: null,
      created_at: app.clock.iso(),
      updated_at: app.clock.iso(),
    });

    const one = await app.call("GET", `${base(ws.id)}/endpoints/${ep.id}`, { token });
    expect(one.status).toBe(200);
    expect(one.body.signing_secret).toBeUndefined();
    expect(one.body.signing_secret_hint).toBe(ep.signing_secret.slice(-4));
    const list = await app.call("GET", `${base(ws.id)}/endpoints`, { token });
    expect(list.body.data.map((e: any) => e.id)).toEqual([ep.id]);
    expect(JSON.stringify([one.body, list.body])).not.toContain(ep.signing_secret);

    const row = (await endpointStore.endpointInScope(app.ctx.db, "mail", ws.id, ep.id))!;
    expect(row.secret_enc.startsWith("v1.")).toBe(true);
    expect(app.ctx.secretBox.decrypt(row.secret_enc)).toBe(ep.signing_secret);
    const dump = await wholeDatabaseText();
    expect(dump).not.toContain(ep.signing_secret);
    expect(dump).not.toContain(ep.signing_secret.slice(6));
  });

  test("defaults: description empty, event_types empty (= all)", async () => {
    const { token, ws } = await owner();
    const r = await create(token, ws.id);
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ description: "", event_types: [] });
  });

  inProcess("reads every table (app.ctx.db) to prove the secret is stored nowhere")("Idempotency-Key: the replay returns the same endpoint with signing_secret null; the plaintext is stored nowhere", async () => {
    const { token, ws } = await owner();
    const headers = { "idempotency-key": "create-ep-1" };
    const first = await create(token, ws.id, { description: "x" }, headers);
    expect(first.status).toBe(201);
    expect(first.body.signing_secret).toMatch(/^whsec_/);
    const again = await create(token, ws.id, { description: "x" }, headers);
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotent-replay")).toBe("true");
    expect(again.body).toEqual({ ...first.body, signing_secret: null });
    expect((await app.call("GET", `${base(ws.id)}/endpoints`, { token })).body.data).toHaveLength(1);
    const other = await create(token, ws.id, { description: "y" }, headers);
    expect(other.status).toBe(409);
    expect(other.body.error.code).toBe("IDEMPOTENCY_KEY_REUSE");
    expect(await wholeDatabaseText()).not.toContain(first.body.signing_secret);
  });

  test("10 endpoints per scope; the 11th is 409 ENDPOINT_LIMIT_REACHED; other products and workspaces count separately", async () => {
    const { token, ws } = await owner();
    for (let i = 0; i < 10; i++) expect((await create(token, ws.id, { description: `n${i}` })).status).toBe(201);
    const eleventh = await create(token, ws.id);
    expect(eleventh.status).toBe(409);
    expect(eleventh.body.error.code).toBe("ENDPOINT_LIMIT_REACHED");
    expect((await create(token, ws.id, {}, {}, "waitlist")).status).toBe(201);
    const other = await owner();
    expect((await create(other.token, other.ws.id)).status).toBe(201);

    // Cursor pages over the 10.
    const p1 = await app.call("GET", `${base(ws.id)}/endpoints?limit=4`, { token });
    expect(p1.body.data).toHaveLength(4);
    expect(p1.body.pagination.has_more).toBe(true);
    const p2 = await app.call("GET", `${base(ws.id)}/endpoints?limit=4&cursor=${p1.body.pagination.next_cursor}`, { token });
    const p3 = await app.call("GET", `${base(ws.id)}/endpoints?limit=4&cursor=${p2.body.pagination.next_cursor}`, { token });
    expect(p3.body.data).toHaveLength(2);
    expect(p3.body.pagination).toEqual({ next_cursor: null, has_more: false });
    const all = [...p1.body.data, ...p2.body.data, ...p3.body.data].map((e: any) => e.description);
    expect(all).toEqual(Array.from({ length: 10 }, (_, i) => `n${i}`));
    expect((await app.call("GET", `${base(ws.id)}/endpoints?cursor=!!`, { token })).status).toBe(400);
    expect((await app.call("GET", `${base(ws.id)}/endpoints?limit=101`, { token })).status).toBe(400);

    // Deleting one frees a slot.
    expect((await app.call("DELETE", `${base(ws.id)}/endpoints/${p1.body.data[0].id}`, { token })).status).toBe(204);
    expect((await create(token, ws.id)).status).toBe(201);
  });

  test("unknown event type: 400 naming the valid set of the product", async () => {
    const { token, ws } = await owner();
    const r = await create(token, ws.id, { event_types: ["email.sent", "entry.created"] });
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe("VALIDATION_ERROR");
    expect(r.body.error.message).toContain("entry.created");
    expect(r.body.error.message).toContain("email.delivered");
    expect(r.body.error.details[0].field).toBe("event_types");
    // The same type is valid for the waitlist.
    expect((await create(token, ws.id, { event_types: ["entry.created"] }, {}, "waitlist")).status).toBe(201);
  });

  test("URL and field validation", async () => {
    const { token, ws } = await owner();
    for (const url of ["ftp://example.com/x", "not a url", "", "https://" + "a".repeat(2050) + ".com"]) {
      const r = await create(token, ws.id, { url });
      expect(r.status).toBe(400);
      expect(r.body.error.code).toBe("VALIDATION_ERROR");
    }
    expect((await app.call("POST", `${base(ws.id)}/endpoints`, { token, body: { description: "no url" } })).status).toBe(400);
    expect((await create(token, ws.id, { description: "d".repeat(501) })).status).toBe(400);
    expect((await create(token, ws.id, { event_types: "email.sent" })).status).toBe(400);
    expect((await app.call("GET", `${base(ws.id)}/endpoints`, { token })).body.data).toEqual([]);
  });

  test("without ALLOW_PRIVATE_TARGETS, loopback and private targets are refused", async () => {
    const strict = await startTestApp();
    try {
      const user = await signup(strict);
      const ws = await createWorkspace(strict, user.token);
      for (const url of ["http://localhost:9/hook", "http://127.0.0.1/hook", "https://10.0.0.1/x", "http://169.254.169.254/latest"]) {
        const r = await strict.call("POST", `/mail/v1/workspaces/${ws.id}/webhooks/endpoints`, { token: user.token, body: { url } });
        expect(r.status).toBe(400);
        expect(r.body.error.details[0].field).toBe("url");
      }
      const ok = await strict.call("POST", `/mail/v1/workspaces/${ws.id}/webhooks/endpoints`, { token: user.token, body: { url: "https://hooks.example.com/in" } });
      expect(ok.status).toBe(201);
    } finally {
      await strict.stop();
    }
  });
});

describe("read, update, delete", () => {
  inProcess("compares updated_at with the injected clock after moving it")("PATCH fields; unknown types 400; empty patch changes nothing", async () => {
    const { token, ws } = await owner();
    const ep = (await create(token, ws.id)).body;
    app.clock.advance(1000);
    const r = await app.call("PATCH", `${base(ws.id)}/endpoints/${ep.id}`, { token, body: { url: `${receiver.url}/v2`, description: "new", event_types: ["email.failed"] } });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ url: `${receiver.url}/v2`, description: "new", event_types: ["email.failed"], updated_at: app.clock.iso(), created_at: ep.created_at });
    expect((await app.call("PATCH", `${base(ws.id)}/endpoints/${ep.id}`, { token, body: { event_types: ["nope.nope"] } })).status).toBe(400);
    expect((await app.call("PATCH", `${base(ws.id)}/endpoints/${ep.id}`, { token, body: { url: "ftp://x" } })).status).toBe(400);
    const same = await app.call("PATCH", `${base(ws.id)}/endpoints/${ep.id}`, { token, body: {} });
    expect(same.status).toBe(200);
    expect(same.body).toEqual(r.body);
    expect((await app.call("PATCH", `${base(ws.id)}/endpoints/ep_${"0".repeat(32)}`, { token, body: {} })).status).toBe(404);
  });

  inProcess("writes an auto-disabled endpoint through the store (app.ctx.db)")("PATCH enabled:true on an auto_disabled endpoint clears the failure streak", async () => {
    const { token, ws } = await owner();
    const ep = (await create(token, ws.id)).body;
    await endpointStore.updateEndpoint(
      app.ctx.db,
      ep.id,
      { enabled: 1, status: "auto_disabled", disabled_reason: "failing", consecutive_failures: 20, first_failure_at: "2026-11-20T10:00:00.000Z", auto_disabled_at: app.clock.iso() },
      app.clock.iso(),
    );
    const before = await app.call("GET", `${base(ws.id)}/endpoints/${ep.id}`, { token });
    // Auto-disabled reads enabled false until PATCH enabled:true (status says why).
    expect(before.body).toMatchObject({ enabled: false, status: "auto_disabled", disabled_reason: "failing", consecutive_failures: 20, first_failure_at: "2026-11-20T10:00:00.000Z" });
    const r = await app.call("PATCH", `${base(ws.id)}/endpoints/${ep.id}`, { token, body: { enabled: true } });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ enabled: true, status: "enabled", disabled_reason: null, consecutive_failures: 0, first_failure_at: null });
  });

  inProcess("emits through the in-process webhook engine and reads deliveries from the store")("PATCH enabled:false pauses: enabled false, status stays enabled (the spec's enabled | auto_disabled), queued retries dropped; enabled:true brings it back", async () => {
    const { token, ws } = await owner();
    const ep = (await create(token, ws.id)).body;
    const { id: eventId } = await app.webhooks.emit(app.ctx.db, { product: "mail", scopeId: ws.id }, "email.sent", { id: "m1" });
    await app.webhooks.dispatchPending();
    const pending = async () => (await app.ctx.db.get<{ status: string; next_attempt_ms: number | null }>("SELECT status, next_attempt_ms FROM webhook_deliveries WHERE event_id = ?", eventId))!;
    expect((await pending()).status).toBe("pending");
    const off = await app.call("PATCH", `${base(ws.id)}/endpoints/${ep.id}`, { token, body: { enabled: false } });
    expect(off.body).toMatchObject({ enabled: false, status: "enabled", disabled_reason: null });
    expect((await app.call("GET", `${base(ws.id)}/endpoints/${ep.id}`, { token })).body).toEqual(off.body);
    expect(await pending()).toEqual({ status: "not_sent", next_attempt_ms: null });
    // Nothing new reaches a paused endpoint.
    const { id: later } = await app.webhooks.emit(app.ctx.db, { product: "mail", scopeId: ws.id }, "email.sent", { id: "m2" });
    await app.webhooks.dispatchPending();
    expect(await app.ctx.db.get("SELECT 1 AS one FROM webhook_deliveries WHERE event_id = ?", later)).toBeNull();
    const on = await app.call("PATCH", `${base(ws.id)}/endpoints/${ep.id}`, { token, body: { enabled: true } });
    expect(on.body).toMatchObject({ enabled: true, status: "enabled", disabled_reason: null });
  });

  inProcess("writes an auto-disabled endpoint through the store (app.ctx.db)")("pausing an auto_disabled endpoint keeps status auto_disabled; enabled:true lifts both", async () => {
    const { token, ws } = await owner();
    const ep = (await create(token, ws.id)).body;
    await endpointStore.updateEndpoint(
      app.ctx.db,
      ep.id,
      { status: "auto_disabled", disabled_reason: "failing", consecutive_failures: 20, first_failure_at: app.clock.iso(), auto_disabled_at: app.clock.iso() },
      app.clock.iso(),
    );
    const off = await app.call("PATCH", `${base(ws.id)}/endpoints/${ep.id}`, { token, body: { enabled: false } });
    expect(off.body).toMatchObject({ enabled: false, status: "auto_disabled", disabled_reason: "failing", consecutive_failures: 20 });
    const on = await app.call("PATCH", `${base(ws.id)}/endpoints/${ep.id}`, { token, body: { enabled: true } });
    expect(on.body).toMatchObject({ enabled: true, status: "enabled", disabled_reason: null, consecutive_failures: 0, first_failure_at: null });
  });

  inProcess("emits through the in-process webhook engine and reads deliveries from the store")("DELETE: 204, then 404; queued deliveries go with it", async () => {
    const { token, ws } = await owner();
    const ep = (await create(token, ws.id)).body;
    const { id: eventId } = await app.webhooks.emit(app.ctx.db, { product: "mail", scopeId: ws.id }, "email.sent", { id: "m2" });
    await app.webhooks.dispatchPending();
    const count = async () => (await app.ctx.db.get<{ n: number }>("SELECT COUNT(*) AS n FROM webhook_deliveries WHERE event_id = ?", eventId))!.n;
    expect(await count()).toBe(1);
    const del = await app.call("DELETE", `${base(ws.id)}/endpoints/${ep.id}`, { token });
    expect(del.status).toBe(204);
    expect(await count()).toBe(0);
    expect((await app.call("GET", `${base(ws.id)}/endpoints/${ep.id}`, { token })).status).toBe(404);
    expect((await app.call("DELETE", `${base(ws.id)}/endpoints/${ep.id}`, { token })).status).toBe(404);
  });

  test("another workspace's (or product's) endpoint id is 404 everywhere", async () => {
    const a = await owner();
    const b = await owner();
    const ep = (await create(a.token, a.ws.id)).body;
    // b's own workspace, a's endpoint id.
    for (const [method, path, body] of [
      ["GET", `${base(b.ws.id)}/endpoints/${ep.id}`],
      ["PATCH", `${base(b.ws.id)}/endpoints/${ep.id}`, { description: "x" }],
      ["DELETE", `${base(b.ws.id)}/endpoints/${ep.id}`],
      ["POST", `${base(b.ws.id)}/endpoints/${ep.id}/rotate-secret`, {}],
      ["POST", `${base(b.ws.id)}/endpoints/${ep.id}/test`, {}],
    ] as [string, string, unknown?][]) {
      const r = await app.call(method, path, { token: b.token, body });
      expect(r.status).toBe(404);
    }
    // Same workspace, another product.
    expect((await app.call("GET", `${base(a.ws.id, "waitlist")}/endpoints/${ep.id}`, { token: a.token })).status).toBe(404);
    // a's workspace with b's credentials: the workspace itself is not found.
    expect((await app.call("GET", `${base(a.ws.id)}/endpoints/${ep.id}`, { token: b.token })).status).toBe(404);
    expect((await app.call("GET", `${base("00000000-0000-7000-8000-00000000dead")}/endpoints`, { token: a.token })).status).toBe(404);
    expect((await app.call("GET", `${base(a.ws.id)}/endpoints/${ep.id}`, { token: a.token })).status).toBe(200);
  });
});

describe("rotate-secret", () => {
  inProcess("compares the grace end with the frozen injected clock; reads the stored secrets (app.ctx.db)")("grace 24 (default): new secret once, the previous one kept encrypted until then; 0 ends it now; 169 is 400", async () => {
    const { token, ws } = await owner();
    const ep = (await create(token, ws.id)).body;
    const path = `${base(ws.id)}/endpoints/${ep.id}/rotate-secret`;

    const r1 = await app.call("POST", path, { token, body: {} });
    expect(r1.status).toBe(200);
    expect(r1.body.signing_secret).toMatch(/^whsec_/);
    expect(r1.body.signing_secret).not.toBe(ep.signing_secret);
    expect(r1.body.signing_secret_hint).toBe(r1.body.signing_secret.slice(-4));
    expect(r1.body.previous_secret_expires_at).toBe(new Date(app.clock.nowMs() + 24 * HOUR).toISOString());
    let row = (await endpointStore.endpointInScope(app.ctx.db, "mail", ws.id, ep.id))!;
    expect(app.ctx.secretBox.decrypt(row.secret_enc)).toBe(r1.body.signing_secret);
    expect(app.ctx.secretBox.decrypt(row.prev_secret_enc!)).toBe(ep.signing_secret);
    expect(row.prev_secret_expires_ms).toBe(app.clock.nowMs() + 24 * HOUR);
    const read = await app.call("GET", `${base(ws.id)}/endpoints/${ep.id}`, { token });
    expect(read.body.signing_secret).toBeUndefined();
    expect(await wholeDatabaseText()).not.toContain(r1.body.signing_secret);

    const r2 = await app.call("POST", path, { token, body: { grace_hours: 0 } });
    expect(r2.status).toBe(200);
    expect(r2.body.previous_secret_expires_at).toBeNull();
    row = (await endpointStore.endpointInScope(app.ctx.db, "mail", ws.id, ep.id))!;
    expect(row.prev_secret_enc).toBeNull();
    expect(row.prev_secret_expires_ms).toBeNull();
    expect(app.ctx.secretBox.decrypt(row.secret_enc)).toBe(r2.body.signing_secret);

    const r3 = await app.call("POST", path, { token, body: { grace_hours: 168 } });
    expect(r3.status).toBe(200);
    expect(r3.body.previous_secret_expires_at).toBe(new Date(app.clock.nowMs() + 168 * HOUR).toISOString());

    for (const grace_hours of [169, -1, 1.5, "soon"]) {
      const bad = await app.call("POST", path, { token, body: { grace_hours } });
      expect(bad.status).toBe(400);
    }
    // Without a body at all: default grace.
    const r4 = await app.call("POST", path, { token });
    expect(r4.status).toBe(200);
    expect(r4.body.previous_secret_expires_at).toBe(new Date(app.clock.nowMs() + 24 * HOUR).toISOString());
  });
});
