/**
 * The card board's ids and names in paths, queries and bodies: {workspace}, {project},
 * {list}, {label} take the name (a slug) or the id (ws_, proj_, list_, lbl_ and 32 hex
 * digits), {card_id} and the webhook records' {webhook_id} an id. Credential first (401),
 * then a malformed one is 400 VALIDATION_ERROR naming it (before any lookup), then a
 * well-formed one that names nothing is 404.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestApp, type TestApp } from "../helpers/app";
import { B, card, newBoard, type Board } from "./board-helpers";

let app: TestApp;
let b: Board;
let cardId: string;
let labelId: string;
beforeAll(async () => {
  app = await startTestApp();
  b = await newBoard(app);
  cardId = (await card(app, b, { title: "One" })).id;
  labelId = (await app.call("POST", `${B}/${b.ws}/labels`, { token: b.token, body: { name: "bug" } })).body.id;
});
afterAll(() => app.stop());

const zeros = "0".repeat(32);
const fields = (r: { body: any }) => (r.body.error?.details ?? []).map((d: { field: string }) => d.field);

/** Neither a slug nor an id of the kind: upper case, underscore, a trailing '-', too long, another kind's id, short hex. */
const badRefs = (prefix: string, other: string) => ["Web", "has_underscore", "ends-", "a".repeat(65), `${other}_${zeros}`, `${prefix}_${zeros.slice(1)}`, `${prefix}_nope`];

type Route = { method: string; path: string; body?: unknown };

async function check(field: string, routes: (ref: string) => Route[], bad: string[], unknown: string[]) {
  for (const r of routes(bad[0]!)) {
    const anon = await app.call(r.method, r.path, { body: r.body });
    expect([r.method, r.path, anon.status]).toEqual([r.method, r.path, 401]);
  }
  for (const ref of bad) {
    for (const r of routes(encodeURIComponent(ref))) {
      const res = await app.call(r.method, r.path, { token: b.token, body: r.body });
      expect([r.method, r.path, res.status, res.body.error?.code, fields(res)]).toEqual([r.method, r.path, 400, "VALIDATION_ERROR", [field]]);
      // The card-board error body and its headers, as on every other error.
      expect(res.headers.get("x-ratelimit-limit")).not.toBeNull();
    }
  }
  for (const ref of unknown) {
    for (const r of routes(ref)) {
      const res = await app.call(r.method, r.path, { token: b.token, body: r.body });
      expect([r.method, r.path, ref, res.status]).toEqual([r.method, r.path, ref, 404]);
    }
  }
}

describe("path parameters", () => {
  test("{workspace}: a name or ws_ id on the board's routes, the webhook records and the shared webhook routes", async () => {
    await check(
      "workspace_id",
      (ws) => [
        { method: "GET", path: `${B}/${ws}` },
        { method: "PATCH", path: `${B}/${ws}`, body: {} },
        { method: "DELETE", path: `${B}/${ws}` },
        { method: "GET", path: `${B}/${ws}/projects` },
        { method: "POST", path: `${B}/${ws}/projects`, body: { name: "p" } },
        { method: "GET", path: `${B}/${ws}/labels` },
        { method: "GET", path: `${B}/${ws}/projects/web/cards` },
        { method: "GET", path: `${B}/${ws}/webhooks` },
        { method: "GET", path: `${B}/${ws}/webhooks/endpoints` },
        { method: "GET", path: `${B}/${ws}/webhooks/events` },
      ],
      badRefs("ws", "proj"),
      ["ghost", `ws_${zeros}`],
    );
  });

  test("{project}, {list}, {label}: a name or their id", async () => {
    const p = (proj: string) => `${B}/${b.ws}/projects/${proj}`;
    await check(
      "project",
      (proj) => [
        { method: "GET", path: p(proj) },
        { method: "PATCH", path: p(proj), body: {} },
        { method: "GET", path: `${p(proj)}/lists` },
        { method: "GET", path: `${p(proj)}/cards` },
        { method: "GET", path: `${p(proj)}/activity` },
      ],
      badRefs("proj", "ws"),
      ["ghost", `proj_${zeros}`],
    );
    await check(
      "list",
      (list) => [
        { method: "GET", path: `${b.p}/lists/${list}` },
        { method: "PATCH", path: `${b.p}/lists/${list}`, body: {} },
        { method: "DELETE", path: `${b.p}/lists/${list}` },
      ],
      badRefs("list", "lbl"),
      ["ghost", `list_${zeros}`],
    );
    await check(
      "label",
      (label) => [
        { method: "GET", path: `${B}/${b.ws}/labels/${label}` },
        { method: "PATCH", path: `${B}/${b.ws}/labels/${label}`, body: {} },
        { method: "DELETE", path: `${B}/${b.ws}/labels/${label}` },
      ],
      badRefs("lbl", "list"),
      ["ghost", `lbl_${zeros}`],
    );
    // The ids name what the names do.
    expect((await app.call("GET", `${B}/${b.ws}/labels/${labelId}`, { token: b.token })).body.name).toBe("bug");
    expect((await app.call("GET", `${B}/${b.ws}/projects/${b.project}/lists/${b.lists.todo}`, { token: b.token })).body.name).toBe("todo");
  });

  test("{card_id}: card_ and 32 hex digits on every card route (a name is malformed)", async () => {
    const c = (id: string) => `${b.p}/cards/${id}`;
    await check(
      "card_id",
      (id) => [
        { method: "GET", path: c(id) },
        { method: "PATCH", path: c(id), body: {} },
        { method: "DELETE", path: c(id) },
        { method: "POST", path: `${c(id)}/move`, body: { position: 0 } },
        { method: "POST", path: `${c(id)}/complete` },
        { method: "POST", path: `${c(id)}/reopen` },
        { method: "GET", path: `${c(id)}/comments` },
        { method: "POST", path: `${c(id)}/comments`, body: { body: "hi" } },
        { method: "GET", path: `${c(id)}/activity` },
      ],
      ["one", `card_${zeros.slice(1)}`, `card_${zeros.toUpperCase()}A`, `list_${zeros}`],
      [`card_${zeros}`],
    );
    expect((await app.call("GET", `${b.p}/cards/${cardId}`, { token: b.token })).body.title).toBe("One");
  });

  test("{webhook_id} of the webhook records: whk_ or ep_ and 32 hex digits", async () => {
    const w = (id: string) => `${B}/${b.ws}/webhooks/${id}`;
    await check(
      "webhook_id",
      (id) => [
        { method: "GET", path: w(id) },
        { method: "PATCH", path: w(id), body: {} },
        { method: "DELETE", path: w(id) },
      ],
      ["whk_nope", `evt_${zeros}`, `whk_${zeros}0`],
      [`whk_${zeros}`, `ep_${zeros}`],
    );
  });
});

describe("ids in queries and bodies", () => {
  test("list (a name or list_ id) in the card filter, a card create and a move", async () => {
    const filter = await app.call("GET", `${b.p}/cards?list=Not_A_List`, { token: b.token });
    expect([filter.status, fields(filter)]).toEqual([400, ["list"]]);
    const create = await app.call("POST", `${b.p}/cards`, { token: b.token, body: { title: "x", list: "list_nope" } });
    expect([create.status, fields(create)]).toEqual([400, ["list"]]);
    const move = await app.call("POST", `${b.p}/cards/${cardId}/move`, { token: b.token, body: { list: "Doing!" } });
    expect([move.status, fields(move)]).toEqual([400, ["list"]]);
    // Well-formed but unknown: the lookup's 400 naming it, as before.
    const ghost = await app.call("POST", `${b.p}/cards/${cardId}/move`, { token: b.token, body: { list: `list_${zeros}` } });
    expect([ghost.status, fields(ghost)]).toEqual([400, ["list"]]);
    expect((await app.call("GET", `${b.p}/cards?list=${b.lists.todo}&assignee=usr_1`, { token: b.token })).status).toBe(200);
  });

  test("the OpenAPI documents the shapes", async () => {
    const doc = (await app.call("GET", "/docs/json")).body;
    const params = doc.paths["/tack/api/v1/workspaces/{workspace_id}/projects/{project}/cards/{card_id}"].get.parameters;
    const pattern = (name: string) => params.find((p: any) => p.name === name).schema.pattern;
    expect(pattern("card_id")).toBe("^card_[0-9a-f]{32}$");
    expect(new RegExp(pattern("workspace_id")).test("ws_" + zeros)).toBe(true);
    expect(new RegExp(pattern("workspace_id")).test("acme-co")).toBe(true);
    expect(new RegExp(pattern("project")).test("ws_" + zeros)).toBe(false);
    const shared = doc.paths["/tack/api/v1/workspaces/{workspace_id}/webhooks/endpoints/{id}"].get.parameters;
    expect(shared.find((p: any) => p.name === "workspace_id").schema.pattern).toBe(pattern("workspace_id"));
  });
});
