/**
 * Cards over HTTP: create with server-computed positions, update with activity `changes`,
 * move and batch-move (atomic, 100/101), complete/reopen, archive, comments and activity.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestApp, type TestApp } from "../helpers/app";
import { B, card, column, newBoard } from "./board-helpers";
import { inProcess } from "../helpers/target";

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.stop());

describe("create and read", () => {
  inProcess("created_at/updated_at equal the frozen injected clock")("defaults, record shape, first list by default, list by name or id, target index clamped", async () => {
    const b = await newBoard(app);
    expect((await app.call("POST", `${B}/${b.ws}/labels`, { token: b.token, body: { name: "ui" } })).status).toBe(201);
    const c = await card(app, b, { title: "Ship billing", body: "Stripe **checkout**", priority: "high", assignees: ["usr_a1", "usr_a1", "usr_b2"], labels: ["ui"], due_at: "2026-12-01T10:00:00+01:00", metadata: { k: 1 } });
    expect(c.id).toMatch(/^card_[0-9a-f]{32}$/);
    const { id: _id, ...rest } = c;
    expect(rest).toEqual({
      workspace_id: expect.any(String),
      project_id: b.project,
      list_id: b.lists.todo,
      title: "Ship billing",
      body: "Stripe **checkout**",
      priority: "high",
      position: 0,
      assignees: ["usr_a1", "usr_b2"],
      labels: ["ui"],
      due_at: "2026-12-01T09:00:00.000Z",
      completed_at: null,
      metadata: { k: 1 },
      archived_at: null,
      created_at: app.clock.iso(),
      updated_at: app.clock.iso(),
    });
    expect((await app.call("GET", `${b.p}/cards/${c.id}`, { token: b.token })).body).toEqual(c);
    expect((await card(app, b, { title: "b", list: "doing" })).list_id).toBe(b.lists.doing);
    expect((await card(app, b, { title: "c", list: b.lists.doing, position: 0 })).position).toBe(0);
    expect((await card(app, b, { title: "d", list: "doing", position: 99 })).position).toBe(2);
    expect((await card(app, b, { title: "e", list: "doing", position: 1 })).position).toBe(1);
    expect(await column(app, b, "doing")).toEqual(["c", "e", "b", "d"]);
  });

  test("validation names every bad field; unknown labels and lists are 400 naming them", async () => {
    const b = await newBoard(app);
    const r = await app.call("POST", `${b.p}/cards`, { token: b.token, body: { title: "", priority: "asap", assignees: ["bob"], labels: ["nope"], due_at: "tomorrow", list: "ghost" } });
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe("VALIDATION_ERROR");
    expect(r.body.error.details.map((d: any) => d.field).sort()).toEqual(["assignees[0]", "due_at", "labels[0]", "list", "priority", "title"].sort());
    expect(r.body.error.details.find((d: any) => d.field === "labels[0]").reason).toContain('"nope"');
    expect((await app.call("GET", `${b.p}/cards`, { token: b.token })).body.pagination.total).toBe(0);
    const big = await app.call("POST", `${b.p}/cards`, { token: b.token, body: { title: "x", metadata: { v: "x".repeat(16 * 1024) } } });
    expect(big.body.error.details).toEqual([{ field: "metadata", reason: "at most 16384 bytes as JSON" }]);
    const noLists = await newBoard(app, []);
    const none = await app.call("POST", `${noLists.p}/cards`, { token: noLists.token, body: { title: "x" } });
    expect(none.body.error.details[0].field).toBe("list");
  });

  test("concurrent creates (grouped into one commit on SQLite): a failing one rolls back alone, positions stay contiguous", async () => {
    const b = await newBoard(app);
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => app.call("POST", `${b.p}/cards`, { token: b.token, body: i === 7 ? { title: "bad", labels: ["ghost"] } : { title: `c${i}` } })),
    );
    expect(results.map((r) => r.status).filter((s) => s === 201)).toHaveLength(19);
    expect(results[7]!.status).toBe(400);
    expect(results[7]!.body.error.details[0].field).toBe("labels[0]");
    const titles = await column(app, b, "todo");
    expect(titles.sort()).toEqual(Array.from({ length: 20 }, (_, i) => `c${i}`).filter((t) => t !== "c7").sort());
    const activity = await app.call("GET", `${b.p}/activity?action=card.created`, { token: b.token });
    expect(activity.body.pagination.total).toBe(19);
  });

  test("Idempotency-Key: a retried create answers the first card (Idempotent-Replay), another body is 409", async () => {
    const b = await newBoard(app);
    const send = (body: object) => app.call("POST", `${b.p}/cards`, { token: b.token, body, headers: { "idempotency-key": "agent-run-1:card-1" } });
    const first = await send({ title: "Once" });
    expect(first.status).toBe(201);
    const again = await send({ title: "Once" });
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotent-replay")).toBe("true");
    expect(again.body).toEqual(first.body);
    expect(again.headers.get("x-ratelimit-limit")).toBe("200");
    expect((await send({ title: "Other" })).body.error.code).toBe("IDEMPOTENCY_KEY_REUSE");
    expect(await column(app, b, "todo")).toEqual(["Once"]);
  });

  test("another workspace's card id is 404; archived cards still answer GET", async () => {
    const a = await newBoard(app);
    const b = await newBoard(app);
    const c = await card(app, a, { title: "mine" });
    expect((await app.call("GET", `${b.p}/cards/${c.id}`, { token: b.token })).status).toBe(404);
    expect((await app.call("GET", `${a.p.replace(a.ws, b.ws)}/cards/${c.id}`, { token: a.token })).status).toBe(404);
  });
});

describe("update and activity", () => {
  inProcess("compares updated_at and the activity timestamp with the injected clock after moving it")("PATCH records changes {field: {from, to}} in the same transaction; no-op patches record nothing", async () => {
    const b = await newBoard(app);
    await app.call("POST", `${B}/${b.ws}/labels`, { token: b.token, body: { name: "ui" } });
    await app.call("POST", `${B}/${b.ws}/labels`, { token: b.token, body: { name: "api" } });
    const c = await card(app, b, { title: "Old", labels: ["ui"] });
    app.clock.advance(5000);
    const r = await app.call("PATCH", `${b.p}/cards/${c.id}`, { token: b.token, body: { title: "New", priority: "urgent", labels: ["api", "ui"], due_at: null, assignees: ["usr_x"] } });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ title: "New", priority: "urgent", labels: ["api", "ui"], assignees: ["usr_x"], updated_at: app.clock.iso() });
    const act = await app.call("GET", `${b.p}/cards/${c.id}/activity`, { token: b.token });
    expect(act.body.data.map((a: any) => a.action)).toEqual(["card.updated", "card.created"]);
    expect(act.body.data[0].changes).toEqual({
      title: { from: "Old", to: "New" },
      priority: { from: "none", to: "urgent" },
      labels: { from: ["ui"], to: ["api", "ui"] },
      assignees: { from: [], to: ["usr_x"] },
    });
    expect(act.body.data[0]).toMatchObject({ project_id: b.project, card_id: c.id, timestamp: app.clock.iso() });
    expect(act.body.data[0].id).toMatch(/^act_/);
    await app.call("PATCH", `${b.p}/cards/${c.id}`, { token: b.token, body: { title: "New" } });
    expect((await app.call("GET", `${b.p}/cards/${c.id}/activity`, { token: b.token })).body.pagination.total).toBe(2);
  });

  inProcess("moves the injected clock to put the since boundary between two activities")("project activity: filters action and since, offset pages, newest first", async () => {
    const b = await newBoard(app);
    const c1 = await card(app, b, { title: "one" });
    app.clock.advance(60_000);
    const since = app.clock.iso();
    await card(app, b, { title: "two" });
    await app.call("POST", `${b.p}/cards/${c1.id}/move`, { token: b.token, body: { list: "done" } });
    const all = await app.call("GET", `${b.p}/activity`, { token: b.token });
    expect(all.body.data.map((a: any) => a.action)).toEqual(["card.moved", "card.created", "card.created", "project.created"]);
    const moved = await app.call("GET", `${b.p}/activity?action=card.moved`, { token: b.token });
    expect(moved.body.data).toHaveLength(1);
    expect(moved.body.data[0].changes).toEqual({ list_id: { from: b.lists.todo, to: b.lists.done }, position: { from: 0, to: 0 } });
    expect((await app.call("GET", `${b.p}/activity?since=${since}`, { token: b.token })).body.pagination.total).toBe(2);
    expect((await app.call("GET", `${b.p}/activity?limit=1&offset=1`, { token: b.token })).body.pagination).toEqual({ total: 4, limit: 1, offset: 1, has_more: true });
    expect((await app.call("GET", `${b.p}/activity?since=yesterday`, { token: b.token })).status).toBe(400);
  });
});

describe("move", () => {
  test("within a list and across lists the positions stay contiguous; index clamped to the end", async () => {
    const b = await newBoard(app);
    const ids: Record<string, string> = {};
    for (const t of ["a", "b", "c", "d"]) ids[t] = (await card(app, b, { title: t })).id;
    const mv = (id: string, body: object) => app.call("POST", `${b.p}/cards/${id}/move`, { token: b.token, body });
    expect((await mv(ids.a, { position: 2 })).body.position).toBe(2);
    expect(await column(app, b, "todo")).toEqual(["b", "c", "a", "d"]);
    expect((await mv(ids.d, { position: 0 })).body.position).toBe(0);
    expect(await column(app, b, "todo")).toEqual(["d", "b", "c", "a"]);
    expect((await mv(ids.b, { list: "doing" })).body).toMatchObject({ list_id: b.lists.doing, position: 0 });
    expect((await mv(ids.c, { list: b.lists.doing, position: 0 })).body.position).toBe(0);
    expect((await mv(ids.a, { list: "doing", position: 50 })).body.position).toBe(2);
    expect(await column(app, b, "todo")).toEqual(["d"]);
    expect(await column(app, b, "doing")).toEqual(["c", "b", "a"]);
    expect((await mv(ids.c, { position: 99 })).body.position).toBe(2);
    const bad = await mv(ids.c, { list: "nowhere" });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details).toEqual([{ field: "list", reason: 'no list "nowhere" in this project' }]);
    expect((await mv(ids.c, {})).status).toBe(400);
    // PATCH list/position moves too.
    expect((await app.call("PATCH", `${b.p}/cards/${ids.d}`, { token: b.token, body: { list: "doing", position: 1 } })).body).toMatchObject({ list_id: b.lists.doing, position: 1 });
    expect(await column(app, b, "doing")).toEqual(["b", "d", "a", "c"]);
  });

  inProcess("compares archived_at with the frozen injected clock")("archiving closes the gap; archived cards can't be moved (409) and show with include_archived", async () => {
    const b = await newBoard(app);
    const ids: string[] = [];
    for (const t of ["a", "b", "c"]) ids.push((await card(app, b, { title: t })).id);
    const arch = await app.call("DELETE", `${b.p}/cards/${ids[0]}`, { token: b.token });
    expect(arch.body.archived_at).toBe(app.clock.iso());
    expect(await column(app, b, "todo")).toEqual(["b", "c"]);
    expect((await app.call("POST", `${b.p}/cards/${ids[0]}/move`, { token: b.token, body: { position: 0 } })).status).toBe(409);
    expect((await app.call("GET", `${b.p}/cards?include_archived=true`, { token: b.token })).body.pagination.total).toBe(3);
    expect((await app.call("GET", `${b.p}/cards/${ids[0]}`, { token: b.token })).status).toBe(200);
    expect((await card(app, b, { title: "d" })).position).toBe(2);
  });
});

describe("batch-move", () => {
  test("applies in order in one transaction and answers {data, moved}", async () => {
    const b = await newBoard(app);
    const ids: Record<string, string> = {};
    for (const t of ["a", "b", "c"]) ids[t] = (await card(app, b, { title: t })).id;
    const r = await app.call("POST", `${b.p}/cards/batch-move`, {
      token: b.token,
      body: { moves: [{ card_id: ids.c, list: "done", position: 0 }, { card_id: ids.a, list: "done", position: 0 }, { card_id: ids.b, position: 5 }] },
    });
    expect(r.status).toBe(200);
    expect(r.body.moved).toBe(3);
    expect(r.body.data.map((c: any) => [c.title, c.list_id === b.lists.done ? "done" : "todo", c.position])).toEqual([["c", "done", 1], ["a", "done", 0], ["b", "todo", 0]]);
    expect(await column(app, b, "done")).toEqual(["a", "c"]);
    expect(await column(app, b, "todo")).toEqual(["b"]);
  });

  test("one invalid item: 400 with per-item details and nothing moved", async () => {
    const b = await newBoard(app);
    const a = await card(app, b, { title: "a" });
    const c = await card(app, b, { title: "c" });
    const other = await card(app, await newBoard(app), { title: "foreign" });
    const r = await app.call("POST", `${b.p}/cards/batch-move`, {
      token: b.token,
      body: { moves: [{ card_id: a.id, list: "done" }, { card_id: other.id, list: "done" }, { card_id: c.id, list: "ghost" }, { card_id: a.id, list: "doing" }] },
    });
    expect(r.status).toBe(400);
    expect(r.body.error.details.map((d: any) => d.field)).toEqual(["moves[1].card_id", "moves[2].list", "moves[3].card_id"]);
    expect(await column(app, b, "todo")).toEqual(["a", "c"]);
    expect(await column(app, b, "done")).toEqual([]);
  });

  test("100 moves are fine, 101 are 400", async () => {
    const b = await newBoard(app);
    const a = await card(app, b, { title: "a" });
    const moves = (n: number) => Array.from({ length: n }, (_, i) => ({ card_id: i === 0 ? a.id : `card_missing${i}`, position: 0 }));
    const over = await app.call("POST", `${b.p}/cards/batch-move`, { token: b.token, body: { moves: moves(101) } });
    expect(over.status).toBe(400);
    expect(over.body.error.details).toEqual([{ field: "moves", reason: "at most 100 moves per request" }]);
    const ids: string[] = [];
    for (let i = 0; i < 99; i++) ids.push((await card(app, b, { title: `c${i}` })).id);
    const all = [a.id, ...ids].map((card_id) => ({ card_id, list: "doing", position: 0 }));
    const ok = await app.call("POST", `${b.p}/cards/batch-move`, { token: b.token, body: { moves: all } });
    expect(ok.status).toBe(200);
    expect(ok.body.moved).toBe(100);
    const doing = await column(app, b, "doing");
    expect(doing[0]).toBe("c98");
    expect(doing[99]).toBe("a");
  }, 30_000);
});

describe("complete, reopen, comments", () => {
  inProcess("compares completed_at with the frozen injected clock and moves it")("complete sets completed_at once (idempotent), reopen clears it; both recorded", async () => {
    const b = await newBoard(app);
    const c = await card(app, b, { title: "x" });
    const done = await app.call("POST", `${b.p}/cards/${c.id}/complete`, { token: b.token });
    expect(done.body.completed_at).toBe(app.clock.iso());
    app.clock.advance(1000);
    expect((await app.call("POST", `${b.p}/cards/${c.id}/complete`, { token: b.token })).body.completed_at).toBe(done.body.completed_at);
    expect((await app.call("POST", `${b.p}/cards/${c.id}/reopen`, { token: b.token })).body.completed_at).toBeNull();
    const acts = (await app.call("GET", `${b.p}/cards/${c.id}/activity`, { token: b.token })).body.data.map((a: any) => a.action);
    expect(acts).toEqual(["card.reopened", "card.completed", "card.created"]);
  });

  inProcess("compares created_at with the frozen injected clock and moves it")("comments: append-only, 1-10,000 chars, oldest first, author is the key, offset pages", async () => {
    const b = await newBoard(app);
    const c = await card(app, b, { title: "x" });
    const C = `${b.p}/cards/${c.id}/comments`;
    const first = await app.call("POST", C, { token: b.token, body: { body: "Blocked on **tax** key" } });
    expect(first.status).toBe(201);
    expect(first.body).toEqual({ id: expect.stringMatching(/^cmt_/), card_id: c.id, author_id: expect.any(String), body: "Blocked on **tax** key", created_at: app.clock.iso() });
    app.clock.advance(1000);
    expect((await app.call("POST", C, { token: b.token, body: { body: "x".repeat(10_000) } })).status).toBe(201);
    const tooLong = await app.call("POST", C, { token: b.token, body: { body: "x".repeat(10_001) } });
    expect(tooLong.body.error.details).toEqual([{ field: "body", reason: "1-10000 characters" }]);
    expect((await app.call("POST", C, { token: b.token, body: { body: "" } })).status).toBe(400);
    const list = await app.call("GET", `${C}?limit=1`, { token: b.token });
    expect(list.body.data[0].body).toBe("Blocked on **tax** key");
    expect(list.body.pagination).toEqual({ total: 2, limit: 1, offset: 0, has_more: true });
    expect((await app.call("GET", `${b.p}/cards/${c.id}/activity?action=comment.created`, { token: b.token })).body.pagination.total).toBe(2);
  });
});
