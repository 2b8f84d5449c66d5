/**
 * Every OpenAPI operation of the card board, reached over HTTP with a success status along
 * the product's main flow, the way an API user drives it: a board workspace, a label, a
 * project with its lists, cards created, listed, searched, updated, moved (one and in a
 * batch), completed and reopened, commented and archived, the activity read back, and the
 * board's webhooks (the card board's own records and the shared endpoints beside them)
 * delivering to a real receiver on loopback, signatures checked with the independent
 * `standardwebhooks` package, the event log read, an event replayed, a test send, a secret
 * rotated. HTTP only: runs in-process, on PostgreSQL and against the binary (where the
 * process's own engine delivers in the background; the test waits for the receiver).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ownerWithKey, startTestApp, type TestApp } from "../helpers/app";
import { startReceiver, type ReceivedRequest, type Receiver } from "../helpers/http-receiver";
import { until, verifyDelivery } from "../helpers/until";

const B = "/tack/api/v1/workspaces";
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

let app: TestApp;
let receiver: Receiver;
let token: string;

beforeAll(async () => {
  receiver = startReceiver();
  app = await startTestApp({ ALLOW_PRIVATE_TARGETS: "true" });
  ({ token } = await ownerWithKey(app));
});
afterAll(async () => {
  await app?.stop();
  await receiver?.stop();
});

const call = (method: string, path: string, body?: unknown) => app.call(method, path, { token, body });

const waitUntil = (what: string, check: () => boolean | Promise<boolean>, timeoutMs = 15_000) => until(what, check, timeoutMs);

const verify = (secret: string, req: ReceivedRequest) => verifyDelivery(app, secret, req);

const at = (path: string) => receiver.requests.filter((r) => r.path === path);
const typesAt = (path: string) => at(path).map((r) => JSON.parse(r.body).type as string);

// State carried through the flow.
const ws = "acme-board";
const P = `${B}/${ws}/projects/web`;
let wsId: string;
let hook: { id: string; signing_secret: string };
let endpoint: { id: string; signing_secret: string };
let lists: Record<string, string> = {};
let cardA: any;
let cardB: any;

describe("card board, every route", () => {
  test("board workspace, label, project and lists: create, list, read by name or id, update", async () => {
    const created = await call("POST", B, { name: ws, display_name: "Acme", metadata: { plan: "team" } });
    expect(created.status).toBe(201);
    expect(created.body.id).toMatch(/^ws_[0-9a-f]{32}$/);
    expect(created.body).toMatchObject({ name: ws, display_name: "Acme", metadata: { plan: "team" }, archived_at: null });
    expect(created.body.created_at).toMatch(ISO);
    wsId = created.body.id;
    const listed = await call("GET", B);
    expect(listed.status).toBe(200);
    expect(listed.body.data.map((w: any) => w.id)).toEqual([wsId]);
    expect(listed.body.pagination).toEqual({ total: 1, limit: 50, offset: 0, has_more: false });
    expect((await call("GET", `${B}/${wsId}`)).body).toEqual(created.body);
    const renamed = await call("PATCH", `${B}/${ws}`, { display_name: "Acme Inc" });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({ id: wsId, display_name: "Acme Inc", metadata: { plan: "team" } });
    expect((await call("GET", `${B}/${ws}`)).body.display_name).toBe("Acme Inc");

    const label = await call("POST", `${B}/${ws}/labels`, { name: "bug", color: "#FF0000" });
    expect(label.status).toBe(201);
    expect(label.body.id).toMatch(/^lbl_/);
    expect(label.body).toMatchObject({ workspace_id: wsId, name: "bug", color: "#ff0000" });
    expect((await call("POST", `${B}/${ws}/labels`, { name: "later" })).status).toBe(201);
    const labels = await call("GET", `${B}/${ws}/labels`);
    expect(labels.status).toBe(200);
    expect(labels.body.data.map((l: any) => l.name).sort()).toEqual(["bug", "later"]);
    expect((await call("GET", `${B}/${ws}/labels/${label.body.id}`)).body.name).toBe("bug");
    const recolored = await call("PATCH", `${B}/${ws}/labels/bug`, { color: "#00aa00" });
    expect(recolored.status).toBe(200);
    expect((await call("GET", `${B}/${ws}/labels/bug`)).body.color).toBe("#00aa00");

    const project = await call("POST", `${B}/${ws}/projects`, { name: "web", display_name: "Website", lists: [{ name: "todo", display_name: "To do" }, { name: "doing" }] });
    expect(project.status).toBe(201);
    expect(project.body.id).toMatch(/^proj_/);
    expect(project.body).toMatchObject({ workspace_id: wsId, name: "web", status: "active" });
    expect(project.body.lists.map((l: any) => [l.name, l.position])).toEqual([["todo", 0], ["doing", 1]]);
    for (const l of project.body.lists) lists[l.name] = l.id;
    const projects = await call("GET", `${B}/${ws}/projects`);
    expect(projects.status).toBe(200);
    expect(projects.body.data.map((p: any) => p.name)).toEqual(["web"]);
    expect((await call("GET", `${B}/${ws}/projects/${project.body.id}`)).body.name).toBe("web");
    const patched = await call("PATCH", P, { display_name: "Site" });
    expect(patched.status).toBe(200);
    expect((await call("GET", P)).body.display_name).toBe("Site");

    const done = await call("POST", `${P}/lists`, { name: "done", display_name: "Done" });
    expect(done.status).toBe(201);
    expect(done.body.id).toMatch(/^list_/);
    expect(done.body).toMatchObject({ name: "done", position: 2 });
    lists.done = done.body.id;
    expect((await call("POST", `${P}/lists`, { name: "icebox", position: 0 })).body.position).toBe(0);
    const moved = await call("PATCH", `${P}/lists/icebox`, { position: 3, display_name: "Ice box" });
    expect(moved.status).toBe(200);
    expect(moved.body).toMatchObject({ name: "icebox", display_name: "Ice box", position: 3 });
    const all = await call("GET", `${P}/lists`);
    expect(all.status).toBe(200);
    expect(all.body.data.map((l: any) => `${l.name}:${l.position}`)).toEqual(["todo:0", "doing:1", "done:2", "icebox:3"]);
    expect((await call("GET", `${P}/lists/${lists.doing}`)).body.name).toBe("doing");
  });

  test("webhooks: a card-board record and a shared endpoint, event types, a test send and a rotated secret", async () => {
    const types = await call("GET", `${B}/${ws}/webhooks/event-types`);
    expect(types.status).toBe(200);
    expect(types.body.data.map((t: any) => t.type)).toEqual(expect.arrayContaining(["card.created", "card.moved", "card.completed", "comment.created"]));

    const made = await call("POST", `${B}/${ws}/webhooks`, { url: `${receiver.url}/board`, events: ["card.created"] });
    expect(made.status).toBe(201);
    expect(made.body.id).toMatch(/^whk_/);
    expect(made.body).toMatchObject({ workspace_id: wsId, url: `${receiver.url}/board`, events: ["card.created"], active: true });
    expect(made.body.signing_secret).toMatch(/^whsec_/);
    hook = made.body;
    // Every type from now on (an empty list subscribes to all).
    const all = await call("PATCH", `${B}/${ws}/webhooks/${hook.id}`, { events: [] });
    expect(all.status).toBe(200);
    expect(all.body.events).toEqual([]);
    const one = await call("GET", `${B}/${ws}/webhooks/${hook.id}`);
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({ id: hook.id, events: [], active: true });
    expect(one.body.signing_secret).toBeUndefined();

    const ep = await call("POST", `${B}/${ws}/webhooks/endpoints`, { url: `${receiver.url}/completed`, description: "done cards", event_types: ["card.completed"] });
    expect(ep.status).toBe(201);
    expect(ep.body.id).toMatch(/^ep_/);
    expect(ep.body).toMatchObject({ event_types: ["card.completed"], enabled: true, status: "enabled" });
    endpoint = ep.body;
    const eps = await call("GET", `${B}/${ws}/webhooks/endpoints`);
    expect(eps.status).toBe(200);
    expect(eps.body.data.map((e: any) => e.id).sort()).toEqual([hook.id, endpoint.id].sort());
    const records = await call("GET", `${B}/${ws}/webhooks`);
    expect(records.status).toBe(200);
    expect(records.body.data.map((h: any) => h.id).sort()).toEqual([hook.id, endpoint.id].sort());
    const described = await call("PATCH", `${B}/${ws}/webhooks/endpoints/${endpoint.id}`, { description: "completed cards" });
    expect(described.status).toBe(200);
    expect((await call("GET", `${B}/${ws}/webhooks/endpoints/${endpoint.id}`)).body).toMatchObject({ description: "completed cards", event_types: ["card.completed"] });

    const sent = await call("POST", `${B}/${ws}/webhooks/endpoints/${endpoint.id}/test`, { event_type: "card.completed" });
    expect(sent.status).toBe(200);
    expect(sent.body).toMatchObject({ succeeded: true, status_code: 200, trigger: "test" });
    const testReq = at("/completed").find((r) => r.headers["webhook-id"] === sent.body.event_id)!;
    expect(verify(endpoint.signing_secret, testReq)).toMatchObject({ id: sent.body.event_id, type: "card.completed", data: { test: true } });

    const rotated = await call("POST", `${B}/${ws}/webhooks/endpoints/${endpoint.id}/rotate-secret`, { grace_hours: 0 });
    expect(rotated.status).toBe(200);
    expect(rotated.body.signing_secret).toMatch(/^whsec_/);
    expect(rotated.body.signing_secret).not.toBe(endpoint.signing_secret);
    expect(rotated.body.previous_secret_expires_at).toBeNull();
    endpoint = { ...endpoint, signing_secret: rotated.body.signing_secret };
  });

  test("cards: create, list with filters and search, read, update, move, batch-move, complete, reopen, comments, activity", async () => {
    cardA = (await call("POST", `${P}/cards`, { title: "Ship billing page", body: "Stripe **checkout**", priority: "high", labels: ["bug"], assignees: ["usr_ann"], due_at: "2026-12-01T09:00:00Z" })).body;
    expect(cardA.id).toMatch(/^card_/);
    expect(cardA).toMatchObject({ list_id: lists.todo, position: 0, title: "Ship billing page", priority: "high", labels: ["bug"], assignees: ["usr_ann"], due_at: "2026-12-01T09:00:00.000Z", completed_at: null });
    const second = await call("POST", `${P}/cards`, { title: "Write changelog", list: "doing" });
    expect(second.status).toBe(201);
    cardB = second.body;
    expect(cardB).toMatchObject({ list_id: lists.doing, position: 0 });

    const listed = await call("GET", `${P}/cards`);
    expect(listed.status).toBe(200);
    expect(listed.body.data.map((c: any) => c.id)).toEqual([cardA.id, cardB.id]);
    expect(listed.body.pagination).toEqual({ total: 2, limit: 50, offset: 0, has_more: false });
    expect((await call("GET", `${P}/cards?label=bug`)).body.data.map((c: any) => c.id)).toEqual([cardA.id]);
    expect((await call("GET", `${P}/cards?q=billing`)).body.data.map((c: any) => c.id)).toEqual([cardA.id]);
    expect((await call("GET", `${P}/cards?q=changel`)).body.data.map((c: any) => c.id)).toEqual([cardB.id]);
    expect((await call("GET", `${P}/cards/${cardA.id}`)).body).toEqual(cardA);

    const updated = await call("PATCH", `${P}/cards/${cardA.id}`, { title: "Ship the billing page", priority: "urgent" });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ title: "Ship the billing page", priority: "urgent", labels: ["bug"] });

    const moved = await call("POST", `${P}/cards/${cardA.id}/move`, { list: "doing", position: 0 });
    expect(moved.status).toBe(200);
    expect(moved.body).toMatchObject({ list_id: lists.doing, position: 0 });
    expect((await call("GET", `${P}/cards?list=doing`)).body.data.map((c: any) => [c.id, c.position])).toEqual([[cardA.id, 0], [cardB.id, 1]]);

    const batch = await call("POST", `${P}/cards/batch-move`, { moves: [{ card_id: cardB.id, list: "done" }, { card_id: cardA.id, list: "done", position: 0 }] });
    expect(batch.status).toBe(200);
    expect(batch.body.moved).toBe(2);
    expect(batch.body.data.map((c: any) => [c.id, c.list_id, c.position])).toEqual([[cardB.id, lists.done, 1], [cardA.id, lists.done, 0]]);
    expect((await call("GET", `${P}/cards?list=done`)).body.data.map((c: any) => c.id)).toEqual([cardA.id, cardB.id]);

    const completed = await call("POST", `${P}/cards/${cardA.id}/complete`);
    expect(completed.status).toBe(200);
    expect(completed.body.completed_at).toMatch(ISO);
    expect((await call("GET", `${P}/cards?completed=true`)).body.data.map((c: any) => c.id)).toEqual([cardA.id]);
    const reopened = await call("POST", `${P}/cards/${cardA.id}/reopen`);
    expect(reopened.status).toBe(200);
    expect(reopened.body.completed_at).toBeNull();
    expect((await call("POST", `${P}/cards/${cardB.id}/complete`)).body.completed_at).toMatch(ISO);

    const comment = await call("POST", `${P}/cards/${cardA.id}/comments`, { body: "Blocked on the **tax** key" });
    expect(comment.status).toBe(201);
    expect(comment.body.id).toMatch(/^cmt_/);
    expect(comment.body).toMatchObject({ card_id: cardA.id, body: "Blocked on the **tax** key" });
    expect((await call("POST", `${P}/cards/${cardA.id}/comments`, { body: "Unblocked" })).status).toBe(201);
    const comments = await call("GET", `${P}/cards/${cardA.id}/comments`);
    expect(comments.status).toBe(200);
    expect(comments.body.data.map((c: any) => c.body)).toEqual(["Blocked on the **tax** key", "Unblocked"]);

    const history = await call("GET", `${P}/cards/${cardA.id}/activity`);
    expect(history.status).toBe(200);
    expect(history.body.data.map((a: any) => a.action)).toEqual(["comment.created", "comment.created", "card.reopened", "card.completed", "card.moved", "card.moved", "card.updated", "card.created"]);
    expect(history.body.data.find((a: any) => a.action === "card.updated").changes).toEqual({ title: { from: "Ship billing page", to: "Ship the billing page" }, priority: { from: "high", to: "urgent" } });
    const movesOnly = await call("GET", `${P}/activity?action=card.moved`);
    expect(movesOnly.status).toBe(200);
    expect(movesOnly.body.pagination.total).toBe(3);
    const project = await call("GET", `${P}/activity?limit=100`);
    expect(project.body.data.at(-1).action).toBe("project.created");
    for (const a of project.body.data) expect(a.timestamp).toMatch(ISO);
  });

  test("deliveries reach the receiver signed; the event log, an event's attempts and a replay", async () => {
    // The card-board record hears every type; the shared endpoint only card.completed.
    const expected = ["card.created", "card.created", "card.updated", "card.moved", "card.moved", "card.moved", "card.completed", "card.reopened", "card.completed", "comment.created", "comment.created"];
    await waitUntil("deliveries to /board", () => at("/board").length >= expected.length);
    await waitUntil("deliveries to /completed", () => typesAt("/completed").filter((t) => t === "card.completed").length >= 3);
    const events = at("/board").map((r) => verify(hook.signing_secret, r)).sort((x, y) => (x.id < y.id ? -1 : 1));
    expect(events.map((e) => e.type)).toEqual(expected);
    expect(events[0].data).toMatchObject({ id: cardA.id, title: "Ship billing page" });
    const completes = at("/completed").filter((r) => JSON.parse(r.body).type === "card.completed" && !JSON.parse(r.body).test);
    expect(completes).toHaveLength(2);
    for (const r of completes) expect(verify(endpoint.signing_secret, r).data.id).toEqual(expect.stringMatching(/^card_/));

    const log = await call("GET", `${B}/${ws}/webhooks/events?type=card.completed`);
    expect(log.status).toBe(200);
    const real = log.body.data.filter((e: any) => !e.is_test);
    expect(real).toHaveLength(2);
    for (const e of real) {
      expect(e.deliveries.map((d: any) => d.endpoint_id).sort()).toEqual([hook.id, endpoint.id].sort());
      expect(e.deliveries.every((d: any) => d.status === "delivered")).toBe(true);
    }
    const detail = await call("GET", `${B}/${ws}/webhooks/events/${real[0].id}`);
    expect(detail.status).toBe(200);
    expect(detail.body.payload).toMatchObject({ id: real[0].id, type: "card.completed" });
    expect(detail.body.attempts.every((a: any) => a.status_code === 200)).toBe(true);

    const before = at("/completed").length;
    const replay = await call("POST", `${B}/${ws}/webhooks/events/${real[0].id}/replay?endpoint_id=${endpoint.id}`);
    expect(replay.status).toBe(200);
    expect(replay.body.data).toEqual([expect.objectContaining({ endpoint_id: endpoint.id, succeeded: true, status_code: 200, trigger: "replay" })]);
    const again = at("/completed").slice(before);
    expect(again).toHaveLength(1);
    expect(again[0].headers["webhook-id"]).toBe(real[0].id);
    expect(verify(endpoint.signing_secret, again[0])).toMatchObject({ id: real[0].id, type: "card.completed" });
  });

  test("archive and delete: card, label, list, webhooks, project, workspace", async () => {
    const archived = await call("DELETE", `${P}/cards/${cardB.id}`);
    expect(archived.status).toBe(200);
    expect(archived.body.archived_at).toMatch(ISO);
    expect((await call("GET", `${P}/cards`)).body.data.map((c: any) => c.id)).toEqual([cardA.id]);
    expect((await call("GET", `${P}/cards?include_archived=true`)).body.pagination.total).toBe(2);

    expect((await call("DELETE", `${B}/${ws}/labels/later`)).status).toBe(204);
    expect((await call("GET", `${B}/${ws}/labels/later`)).status).toBe(404);
    expect((await call("DELETE", `${P}/lists/icebox`)).status).toBe(204);
    expect((await call("GET", `${P}/lists`)).body.data.map((l: any) => l.name)).toEqual(["todo", "doing", "done"]);

    expect((await call("DELETE", `${B}/${ws}/webhooks/endpoints/${endpoint.id}`)).status).toBe(204);
    expect((await call("GET", `${B}/${ws}/webhooks/endpoints/${endpoint.id}`)).status).toBe(404);
    expect((await call("DELETE", `${B}/${ws}/webhooks/${hook.id}`)).status).toBe(204);
    expect((await call("GET", `${B}/${ws}/webhooks`)).body.data).toEqual([]);

    const project = await call("DELETE", P);
    expect(project.status).toBe(200);
    expect(project.body).toMatchObject({ status: "archived", archived_at: expect.stringMatching(ISO) });
    expect((await call("GET", `${B}/${ws}/projects`)).body.data).toEqual([]);
    const workspace = await call("DELETE", `${B}/${ws}`);
    expect(workspace.status).toBe(200);
    expect(workspace.body.archived_at).toMatch(ISO);
    expect((await call("GET", B)).body.data).toEqual([]);
    expect((await call("GET", `${B}?include_archived=true`)).body.data.map((w: any) => w.id)).toEqual([wsId]);
  });
});
