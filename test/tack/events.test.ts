/**
 * Card-board events reach a real receiver on loopback through the board workspace's
 * webhooks, signed (checked with the independent `standardwebhooks` package), filtered by
 * the webhook's events[]; another board workspace's webhook hears nothing. Also: migration
 * 0061 moves platform-scoped card-board webhooks to a board workspace.
 */
import { afterAll, beforeAll, describe, expect, setSystemTime, test } from "bun:test";
import { Webhook } from "standardwebhooks";
import m0061 from "../../src/services/tack/migrations/0061_tack_webhook_scope.sql" with { type: "text" };
import { tx } from "../../src/core/db";
import type { TestApp } from "../helpers/app";
import type { ReceivedRequest, Receiver } from "../helpers/http-receiver";
import { ON_BINARY, inProcess } from "../helpers/target";
import { startWebhookTestApp, stopWebhookTestApp } from "../helpers/webhook-app";
import { B, card, newBoard } from "./board-helpers";

let app: TestApp;
let receiver: Receiver;
beforeAll(async () => {
  ({ app, receiver } = await startWebhookTestApp());
});
afterAll(() => stopWebhookTestApp({ app, receiver }));

async function deliverNow() {
  await app.webhooks.dispatchPending();
  await app.webhooks.deliverDue();
}

/**
 * Delivers what is due (in-process: the test pumps the engine) or, on the binary whose own
 * scheduler delivers, waits until `path` has received `count` requests.
 */
async function delivered(path: string, count: number, timeoutMs = 15_000) {
  if (!ON_BINARY) return deliverNow();
  const deadline = Date.now() + timeoutMs;
  while (at(path).length < count) {
    if (Date.now() > deadline) throw new Error(`${at(path).length}/${count} deliveries at ${path} after ${timeoutMs} ms`);
    await Bun.sleep(50);
  }
}

/** The ids of the events recorded for a board workspace (the outbox, read over HTTP). */
async function eventIds(b: { ws: string; token: string }) {
  const r = await app.call("GET", `${B}/${b.ws}/webhooks/events?limit=100`, { token: b.token });
  expect(r.status).toBe(200);
  return r.body.data.map((e: any) => e.id as string);
}

function verify(secret: string, req: ReceivedRequest) {
  setSystemTime(app.clock.now());
  try {
    return new Webhook(secret).verify(req.body, { "webhook-id": req.headers["webhook-id"], "webhook-timestamp": req.headers["webhook-timestamp"], "webhook-signature": req.headers["webhook-signature"] }) as any;
  } finally {
    setSystemTime();
  }
}

const at = (path: string) => receiver.requests.filter((r) => r.path === path);

describe("events", () => {
  test("every board mutation is delivered, signed, to the board workspace's webhook", async () => {
    const b = await newBoard(app);
    const other = await newBoard(app);
    if (!ON_BINARY) await deliverNow(); // the boards' own project.created, before the webhooks exist
    const hook = await app.call("POST", `${B}/${b.ws}/webhooks`, { token: b.token, body: { url: `${receiver.url}/all` } });
    expect(hook.status).toBe(201);
    const secret = hook.body.signing_secret as string;
    await app.call("POST", `${B}/${other.ws}/webhooks`, { token: other.token, body: { url: `${receiver.url}/other` } });

    const c = await card(app, b, { title: "Ship it" });
    await app.call("PATCH", `${b.p}/cards/${c.id}`, { token: b.token, body: { title: "Ship it now" } });
    await app.call("POST", `${b.p}/cards/${c.id}/move`, { token: b.token, body: { list: "doing" } });
    await app.call("POST", `${b.p}/cards/${c.id}/complete`, { token: b.token });
    await app.call("POST", `${b.p}/cards/${c.id}/reopen`, { token: b.token });
    await app.call("POST", `${b.p}/cards/${c.id}/comments`, { token: b.token, body: { body: "done?" } });
    await app.call("DELETE", `${b.p}/cards/${c.id}`, { token: b.token });
    await app.call("POST", `${b.p}/lists`, { token: b.token, body: { name: "later" } });
    await app.call("PATCH", `${b.p}/lists/later`, { token: b.token, body: { position: 0 } });
    await app.call("DELETE", `${b.p}/lists/later`, { token: b.token });
    await app.call("POST", `${B}/${b.ws}/projects`, { token: b.token, body: { name: "ops" } });
    await app.call("DELETE", `${B}/${b.ws}/projects/ops`, { token: b.token });
    await delivered("/all", 12);

    // Deliveries run in parallel: put them back in emission order (evt_ ids are time-ordered).
    const got = at("/all").map((r) => verify(secret, r)).sort((x, y) => (x.id < y.id ? -1 : 1));
    expect(got.map((e) => e.type)).toEqual([
      "card.created", "card.updated", "card.moved", "card.completed", "card.reopened", "comment.created", "card.archived",
      "list.created", "list.updated", "list.deleted", "project.created", "project.archived",
    ]);
    const [created, updated, moved] = got;
    expect(created.data).toMatchObject({ id: c.id, title: "Ship it", list_id: b.lists.todo, position: 0, actor_id: expect.any(String) });
    expect(updated.data.changes).toEqual({ title: { from: "Ship it", to: "Ship it now" } });
    expect(moved.data).toMatchObject({ id: c.id, from_list: b.lists.todo, to_list: b.lists.doing, from_position: 0, to_position: 0, list_id: b.lists.doing });
    expect(got[5].data).toMatchObject({ card_id: c.id, body: "done?" });
    expect(at("/other")).toEqual([]);
  });

  test("events[] filters; card.moved from batch-move once per card", async () => {
    const b = await newBoard(app);
    await app.call("POST", `${B}/${b.ws}/webhooks`, { token: b.token, body: { url: `${receiver.url}/moves`, events: ["card.moved"] } });
    const c1 = await card(app, b, { title: "a" });
    const c2 = await card(app, b, { title: "b" });
    await app.call("POST", `${b.p}/cards/batch-move`, { token: b.token, body: { moves: [{ card_id: c1.id, list: "done" }, { card_id: c2.id, list: "done" }] } });
    await delivered("/moves", 2);
    const types = at("/moves").map((r) => JSON.parse(r.body)).sort((x, y) => (x.id < y.id ? -1 : 1));
    expect(types.map((e) => [e.type, e.data.id])).toEqual([["card.moved", c1.id], ["card.moved", c2.id]]);
  });

  test("a failed write emits nothing (the event is in the write's transaction)", async () => {
    const b = await newBoard(app);
    await app.call("POST", `${B}/${b.ws}/webhooks`, { token: b.token, body: { url: `${receiver.url}/none` } });
    await card(app, b, { title: "keep", list: "doing" });
    await delivered("/none", 1);
    const before = at("/none").length;
    const recorded = await eventIds(b);
    expect((await app.call("DELETE", `${b.p}/lists/doing`, { token: b.token })).status).toBe(409);
    expect((await app.call("POST", `${b.p}/cards`, { token: b.token, body: { title: "x", labels: ["ghost"] } })).status).toBe(400);
    // A write that succeeds after them: whatever the failed ones had recorded would be dispatched with it or before it.
    const after = await card(app, b, { title: "after" });
    await delivered("/none", before + 1);
    expect(at("/none").length).toBe(before + 1);
    expect(JSON.parse(at("/none").at(-1)!.body).data.id).toBe(after.id);
    expect((await eventIds(b)).length).toBe(recorded.length + 1);
  });
});

describe("platform workspace delete", () => {
  inProcess("reads the store (app.ctx.db) for the deleted rows")("takes its board workspaces, their cards' search rows and their webhooks along", async () => {
    const b = await newBoard(app);
    const hook = await app.call("POST", `${B}/${b.ws}/webhooks`, { token: b.token, body: { url: `${receiver.url}/gone` } });
    expect(hook.status).toBe(201);
    await card(app, b, { title: "Uniquewordzz here" });
    const wsId = (await app.call("GET", `${B}/${b.ws}`, { token: b.token })).body.id as string;
    expect((await app.call("DELETE", `/platform/v1/workspaces/${b.platformWs.slug}`, { token: b.session })).status).toBe(204);
    expect(await app.ctx.db.get("SELECT id FROM webhook_endpoints WHERE id = ?", hook.body.id)).toBeNull();
    expect(await app.ctx.db.get("SELECT id FROM tack_workspaces WHERE id = ?", wsId)).toBeNull();
    const key = app.ctx.db.engine === "postgres" ? "search_id" : "rowid";
    expect((await app.ctx.db.all(`SELECT ${key} FROM tack_cards_fts WHERE ${key} NOT IN (SELECT search_id FROM tack_cards)`)).length).toBe(0);
  });
});

describe("migration 0061", () => {
  inProcess("rewrites an endpoint row and runs the migration's SQL through app.ctx.db")("moves platform-scoped card-board webhooks to a board workspace named after the slug", async () => {
    const b = await newBoard(app);
    const platformId = b.platformWs.id;
    // A card-board webhook as it was before 0061: scoped to the platform workspace.
    const hook = await app.call("POST", `${B}/${b.ws}/webhooks`, { token: b.token, body: { url: `${receiver.url}/legacy`, events: ["card.created"] } });
    await app.ctx.db.run("UPDATE webhook_endpoints SET scope_id = ?, event_types = ? WHERE id = ?", platformId, '["card.created","card.deleted"]', hook.body.id);
    await tx(app.ctx.db, async (t) => {
      for (const stmt of m0061.split(/;\s*\n/).map((s) => s.replace(/^--.*$/gm, "").trim()).filter(Boolean)) await t.run(stmt);
    });
    const boardId = `ws_${platformId.replaceAll("-", "")}`;
    const row = await app.ctx.db.get<{ scope_id: string; event_types: string }>("SELECT scope_id, event_types FROM webhook_endpoints WHERE id = ?", hook.body.id);
    expect(row).toEqual({ scope_id: boardId, event_types: '["card.created","card.archived"]' });
    const moved = await app.call("GET", `${B}/${b.platformWs.slug}`, { token: b.token });
    expect(moved.body).toMatchObject({ id: boardId, name: b.platformWs.slug });
    const hooks = await app.call("GET", `${B}/${b.platformWs.slug}/webhooks`, { token: b.token });
    expect(hooks.body.data.map((h: any) => [h.id, h.workspace_id])).toEqual([[hook.body.id, boardId]]);
  });
});
