/**
 * Card board structure over HTTP: board workspaces, projects (with lists in one
 * transaction), lists with contiguous positions, labels; name-or-id parameters, archive
 * semantics, the card-board error body, ownership (404 across platform workspaces) and
 * tack.* policy actions.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ownerWithKey, startTestApp, type TestApp } from "../helpers/app";
import { B, card, newBoard } from "./board-helpers";
import { inProcess } from "../helpers/target";

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.stop());

async function mintKey(session: string, slug: string, actions: string[]) {
  const r = await app.call("POST", `/platform/v1/workspaces/${slug}/api-keys`, { token: session, body: { name: "limited", policy: [{ effect: "allow", actions, resources: ["*"] }] } });
  expect(r.status).toBe(201);
  return r.body.key as string;
}

describe("workspaces", () => {
  inProcess("compares created_at/updated_at with the injected clock and moves it")("create, read by name or id, list with offset pages, update, 409 NAME_TAKEN", async () => {
    const { token } = await ownerWithKey(app);
    const created = await app.call("POST", B, { token, body: { name: "acme", display_name: "Acme Inc", metadata: { plan: "pro" } } });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.stringMatching(/^ws_[0-9a-f]{32}$/),
      name: "acme",
      display_name: "Acme Inc",
      metadata: { plan: "pro" },
      archived_at: null,
      created_at: app.clock.iso(),
      updated_at: app.clock.iso(),
    });
    expect((await app.call("GET", `${B}/acme`, { token })).body).toEqual(created.body);
    expect((await app.call("GET", `${B}/${created.body.id}`, { token })).body).toEqual(created.body);
    const dup = await app.call("POST", B, { token, body: { name: "acme" } });
    expect(dup.status).toBe(409);
    expect(dup.body.error.code).toBe("NAME_TAKEN");
    expect(dup.body.error.details).toEqual([]);

    for (const name of ["b1", "b2", "b3"]) expect((await app.call("POST", B, { token, body: { name } })).status).toBe(201);
    const page = await app.call("GET", `${B}?limit=2&offset=1`, { token });
    expect(page.body.data.map((w: any) => w.name)).toEqual(["b1", "b2"]);
    expect(page.body.pagination).toEqual({ total: 4, limit: 2, offset: 1, has_more: true });
    expect((await app.call("GET", `${B}`, { token })).body.pagination).toEqual({ total: 4, limit: 50, offset: 0, has_more: false });
    expect((await app.call("GET", `${B}?limit=100`, { token })).status).toBe(200);
    const over = await app.call("GET", `${B}?limit=101`, { token });
    expect(over.status).toBe(400);
    expect(over.body.error.details).toEqual([{ field: "limit", reason: "an integer from 1 to 100" }]);

    app.clock.advance(1000);
    const patched = await app.call("PATCH", `${B}/acme`, { token, body: { name: "acme-co", metadata: { plan: "team" } } });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ name: "acme-co", display_name: "Acme Inc", metadata: { plan: "team" }, updated_at: app.clock.iso() });
    expect((await app.call("GET", `${B}/acme`, { token })).status).toBe(404);
    expect((await app.call("PATCH", `${B}/b1`, { token, body: { name: "acme-co" } })).body.error.code).toBe("NAME_TAKEN");
  });

  test("validation lists every bad field in the card-board error body", async () => {
    const { token } = await ownerWithKey(app);
    const r = await app.call("POST", B, { token, body: { name: "Bad Name", display_name: "", metadata: { big: "x".repeat(17 * 1024) } } });
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe("VALIDATION_ERROR");
    expect(r.body.error.details.map((d: any) => d.field)).toEqual(["name", "display_name", "metadata"]);
    // 16 KB of metadata is fine.
    const ok = await app.call("POST", B, { token, body: { name: "meta", metadata: { big: "x".repeat(16 * 1024 - 20) } } });
    expect(ok.status).toBe(201);
  });

  inProcess("compares archived_at with the frozen injected clock")("archive is soft: gone from lists unless include_archived, GET still answers, writes 409 ARCHIVED", async () => {
    const b = await newBoard(app);
    const archived = await app.call("DELETE", `${B}/${b.ws}`, { token: b.token });
    expect(archived.status).toBe(200);
    expect(archived.body.archived_at).toBe(app.clock.iso());
    expect((await app.call("GET", B, { token: b.token })).body.data).toEqual([]);
    expect((await app.call("GET", `${B}?include_archived=true`, { token: b.token })).body.data.map((w: any) => w.name)).toEqual([b.ws]);
    expect((await app.call("GET", `${B}/${b.ws}`, { token: b.token })).body.archived_at).not.toBeNull();
    const write = await app.call("POST", `${b.p}/cards`, { token: b.token, body: { title: "x" } });
    expect(write.status).toBe(409);
    expect(write.body.error.code).toBe("ARCHIVED");
    expect((await app.call("DELETE", `${B}/${b.ws}`, { token: b.token })).status).toBe(200);
  });

  test("ownership: another platform workspace's key sees 404; sessions are refused; policy actions are enforced", async () => {
    const b = await newBoard(app);
    const other = await ownerWithKey(app);
    for (const path of [`${B}/${b.ws}`, b.p, `${b.p}/cards`, `${B}/${b.ws}/labels`]) {
      const r = await app.call("GET", path, { token: other.token });
      expect({ path, status: r.status }).toEqual({ path, status: 404 });
    }
    expect((await app.call("GET", B, { token: other.token })).body.data).toEqual([]);
    // The same name is free in another platform workspace.
    expect((await app.call("POST", B, { token: other.token, body: { name: b.ws } })).status).toBe(201);

    const anonymous = await app.call("GET", B);
    expect(anonymous.status).toBe(401);
    expect(anonymous.body.error.details).toEqual([]);
    const session = await app.call("GET", B, { token: b.session });
    expect(session.status).toBe(403);
    expect(session.body.error.code).toBe("API_KEY_REQUIRED");

    const reader = await mintKey(b.session, b.platformWs.slug, ["tack.workspace.read", "tack.project.read", "tack.card.read"]);
    expect((await app.call("GET", b.p, { token: reader })).status).toBe(200);
    expect((await app.call("GET", `${b.p}/cards`, { token: reader })).status).toBe(200);
    const denied = await app.call("POST", `${b.p}/cards`, { token: reader, body: { title: "x" } });
    expect(denied.status).toBe(403);
    const writer = await mintKey(b.session, b.platformWs.slug, ["tack.card.write"]);
    expect((await app.call("POST", `${b.p}/cards`, { token: writer, body: { title: "x" } })).status).toBe(201);
    expect((await app.call("GET", `${b.p}/cards`, { token: writer })).status).toBe(403);
  });

  inProcess("reads the action catalogue (app.ctx.actions)")("the tack actions are registered with the policy system", async () => {
    for (const a of ["tack.workspace.write", "tack.card.write", "tack.comment.write", "tack.activity.read"]) expect(app.ctx.actions.has(a)).toBe(true);
  });
});

describe("projects", () => {
  inProcess("compares archived_at with the frozen injected clock")("create with lists in one transaction; a bad list creates nothing; name or id; archive", async () => {
    const { token } = await ownerWithKey(app);
    expect((await app.call("POST", B, { token, body: { name: "pw" } })).status).toBe(201);
    const bad = await app.call("POST", `${B}/pw/projects`, { token, body: { name: "web", lists: [{ name: "todo" }, { name: "Bad" }, { name: "todo" }] } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.map((d: any) => d.field)).toEqual(["lists[1].name", "lists[2].name"]);
    expect((await app.call("GET", `${B}/pw/projects`, { token })).body.pagination.total).toBe(0);

    const r = await app.call("POST", `${B}/pw/projects`, { token, body: { name: "web", display_name: "Website", lists: [{ name: "todo", display_name: "To do" }, { name: "done" }] } });
    expect(r.status).toBe(201);
    expect(r.body.id).toMatch(/^proj_[0-9a-f]{32}$/);
    expect(r.body).toMatchObject({ name: "web", display_name: "Website", status: "active", archived_at: null });
    expect(r.body.lists.map((l: any) => [l.name, l.display_name, l.position])).toEqual([["todo", "To do", 0], ["done", "done", 1]]);
    expect((await app.call("GET", `${B}/pw/projects/${r.body.id}`, { token })).body).toEqual(r.body);
    expect((await app.call("POST", `${B}/pw/projects`, { token, body: { name: "web" } })).status).toBe(409);

    const renamed = await app.call("PATCH", `${B}/pw/projects/web`, { token, body: { display_name: "Site" } });
    expect(renamed.body.display_name).toBe("Site");
    const archived = await app.call("DELETE", `${B}/pw/projects/web`, { token });
    expect(archived.body).toMatchObject({ status: "archived", archived_at: app.clock.iso() });
    expect((await app.call("GET", `${B}/pw/projects`, { token })).body.data).toEqual([]);
    expect((await app.call("GET", `${B}/pw/projects?include_archived=true`, { token })).body.data).toHaveLength(1);
    expect((await app.call("GET", `${B}/pw/projects/web`, { token })).status).toBe(200);
    expect((await app.call("PATCH", `${B}/pw/projects/web`, { token, body: { display_name: "x" } })).status).toBe(409);
  });
});

describe("lists", () => {
  test("positions stay 0-based and contiguous through create, reposition and delete", async () => {
    const b = await newBoard(app, ["a", "b", "c"]);
    const names = async () => (await app.call("GET", `${b.p}/lists`, { token: b.token })).body.data.map((l: any) => `${l.name}:${l.position}`);
    expect((await app.call("POST", `${b.p}/lists`, { token: b.token, body: { name: "x", position: 1 } })).body.position).toBe(1);
    expect(await names()).toEqual(["a:0", "x:1", "b:2", "c:3"]);
    expect((await app.call("POST", `${b.p}/lists`, { token: b.token, body: { name: "y", position: 99 } })).body.position).toBe(4);
    expect((await app.call("PATCH", `${b.p}/lists/a`, { token: b.token, body: { position: 3 } })).body.position).toBe(3);
    expect(await names()).toEqual(["x:0", "b:1", "c:2", "a:3", "y:4"]);
    expect((await app.call("PATCH", `${b.p}/lists/y`, { token: b.token, body: { position: 0, name: "yy" } })).body).toMatchObject({ name: "yy", position: 0 });
    expect(await names()).toEqual(["yy:0", "x:1", "b:2", "c:3", "a:4"]);
    expect((await app.call("DELETE", `${b.p}/lists/b`, { token: b.token })).status).toBe(204);
    expect(await names()).toEqual(["yy:0", "x:1", "c:2", "a:3"]);
    expect((await app.call("GET", `${b.p}/lists`, { token: b.token })).body.pagination).toEqual({ total: 4, limit: 50, offset: 0, has_more: false });
    expect((await app.call("GET", `${b.p}/lists/${b.lists.c}`, { token: b.token })).body.name).toBe("c");
    expect((await app.call("PATCH", `${b.p}/lists/c`, { token: b.token, body: { name: "x" } })).body.error.code).toBe("NAME_TAKEN");
  });

  test("deleting a list that holds cards is 409 LIST_NOT_EMPTY; archived cards do not hold it", async () => {
    const b = await newBoard(app);
    const c = await card(app, b, { title: "one", list: "doing" });
    const r = await app.call("DELETE", `${b.p}/lists/doing`, { token: b.token });
    expect(r.status).toBe(409);
    expect(r.body.error).toMatchObject({ code: "LIST_NOT_EMPTY", details: [] });
    expect((await app.call("DELETE", `${b.p}/cards/${c.id}`, { token: b.token })).status).toBe(200);
    expect((await app.call("DELETE", `${b.p}/lists/doing`, { token: b.token })).status).toBe(204);
    expect((await app.call("GET", `${b.p}/lists/doing`, { token: b.token })).status).toBe(404);
  });
});

describe("labels", () => {
  test("CRUD by name or id; cards show renames; delete removes it from cards", async () => {
    const b = await newBoard(app);
    const L = `${B}/${b.ws}/labels`;
    const made = await app.call("POST", L, { token: b.token, body: { name: "bug", color: "#FF0000" } });
    expect(made.status).toBe(201);
    expect(made.body.id).toMatch(/^lbl_[0-9a-f]{32}$/);
    expect(made.body).toMatchObject({ name: "bug", color: "#ff0000" });
    expect((await app.call("POST", L, { token: b.token, body: { name: "bug" } })).status).toBe(409);
    const bad = await app.call("POST", L, { token: b.token, body: { name: "UI", color: "red" } });
    expect(bad.body.error.details.map((d: any) => d.field)).toEqual(["name", "color"]);
    const c = await card(app, b, { title: "crash", labels: ["bug"] });
    expect(c.labels).toEqual(["bug"]);
    expect((await app.call("PATCH", `${L}/${made.body.id}`, { token: b.token, body: { name: "defect" } })).body.name).toBe("defect");
    expect((await app.call("GET", `${b.p}/cards/${c.id}`, { token: b.token })).body.labels).toEqual(["defect"]);
    expect((await app.call("GET", `${L}/defect`, { token: b.token })).body.id).toBe(made.body.id);
    expect((await app.call("GET", L, { token: b.token })).body.pagination.total).toBe(1);
    expect((await app.call("DELETE", `${L}/defect`, { token: b.token })).status).toBe(204);
    expect((await app.call("GET", `${b.p}/cards/${c.id}`, { token: b.token })).body.labels).toEqual([]);
    expect((await app.call("GET", `${L}/defect`, { token: b.token })).status).toBe(404);
  });
});
