/**
 * One 400 names every bad field of a card-board body, also when the route's schema refuses
 * one of them for its type: the board's own rules (lengths in characters, slugs, priorities,
 * colors, dates) are named beside the type errors, in the board's field names.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestApp, type TestApp } from "../helpers/app";
import { B, card, newBoard, type Board } from "./board-helpers";

let app: TestApp;
let b: Board;
let cardId: string;
beforeAll(async () => {
  app = await startTestApp();
  b = await newBoard(app);
  cardId = (await card(app, b, { title: "One" })).id;
});
afterAll(() => app.stop());

const post = (path: string, body: unknown, method = "POST") => app.call(method, path, { token: b.token, body });
const details = (r: { body: any }) => r.body.error.details as { field: string; reason: string }[];
const fields = (r: { body: any }) => details(r).map((d) => d.field);

describe("a type error does not hide the rules", () => {
  test("card create: a string position (type), a 501-character title and an unknown priority (rules): one 400 naming all three", async () => {
    const r = await post(`${b.p}/cards`, { title: "t".repeat(501), priority: "asap", position: "3" });
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe("VALIDATION_ERROR");
    expect(fields(r).sort()).toEqual(["position", "priority", "title"]);
    expect(r.body.error.message).toBe("Invalid title, priority, position");
    // The rules' own reasons.
    expect(details(r).find((d) => d.field === "title")!.reason).toBe("1-500 characters");
    expect(details(r).find((d) => d.field === "priority")!.reason).toBe("one of urgent, high, medium, low, none");
    expect((await app.call("GET", `${b.p}/cards`, { token: b.token })).body.pagination.total).toBe(1);
  });

  test("a field only the schema checks (list: a number) next to rule errors; a missing required field stays 'required'", async () => {
    const r = await post(`${b.p}/cards`, { list: 5, due_at: "tomorrow", body: "x".repeat(50_001) });
    expect(r.status).toBe(400);
    expect(details(r).find((d) => d.field === "title")!.reason).toBe("required");
    expect(fields(r).sort()).toEqual(["body", "due_at", "list", "title"]);
  });

  test("workspace, project, list, label and comment bodies", async () => {
    const ws = await post(B, { name: "Not A Slug", display_name: 42, metadata: { v: "x".repeat(17 * 1024) } });
    expect([ws.status, fields(ws)]).toEqual([400, ["name", "display_name", "metadata"]]);

    // Nested names in the board's form (lists[1].name), not the schema's (lists.1.name).
    const project = await post(`${B}/${b.ws}/projects`, { name: "p2", display_name: " ", lists: [{ name: "ok" }, { name: 7 }, { name: "Bad!" }] });
    expect(project.status).toBe(400);
    expect(fields(project).sort()).toEqual(["display_name", "lists[1].name", "lists[2].name"]);

    const list = await post(`${b.p}/lists`, { name: "Bad Name", position: -1, display_name: ["x"] });
    expect([list.status, fields(list).sort()]).toEqual([400, ["display_name", "name", "position"]]);

    const label = await post(`${B}/${b.ws}/labels/nothing`, { name: true, color: "red" }, "PATCH");
    expect([label.status, fields(label).sort()]).toEqual([400, ["color", "name"]]);

    const comment = await post(`${b.p}/cards/${cardId}/comments`, { body: 5 });
    expect([comment.status, fields(comment)]).toEqual([400, ["body"]]);
    expect(details(comment)[0]!.reason).toBe("must be a string");
  });

  test("card update and move, and a batch: every item's own checks", async () => {
    const patch = await post(`${b.p}/cards/${cardId}`, { title: "", priority: 1, labels: "bug", due_at: "soon" }, "PATCH");
    expect([patch.status, fields(patch).sort()]).toEqual([400, ["due_at", "labels", "priority", "title"]]);

    const move = await post(`${b.p}/cards/${cardId}/move`, { position: "1" });
    expect([move.status, fields(move)]).toEqual([400, ["position"]]);

    const batch = await post(`${b.p}/cards/batch-move`, { moves: [{ card_id: 5 }, { card_id: cardId, position: -2 }, { card_id: cardId, position: "x" }] });
    expect(batch.status).toBe(400);
    expect(fields(batch).sort()).toEqual(["moves[0].card_id", "moves[1].position", "moves[2].position"]);
    expect((await app.call("GET", `${b.p}/cards/${cardId}`, { token: b.token })).body.title).toBe("One");
  });

  test("lengths are in characters, as the rules count them: 200 emoji are a valid display_name beside a type error", async () => {
    const r = await post(B, { name: "emoji", display_name: "😀".repeat(200), metadata: "x" });
    expect([r.status, fields(r)]).toEqual([400, ["metadata"]]);
    expect((await post(B, { name: "emoji", display_name: "😀".repeat(200) })).status).toBe(201);
  });

  test("without a type error nothing changes: the service's checks, lookups included", async () => {
    const r = await post(`${b.p}/cards`, { title: "", labels: ["nope"], list: "ghost" });
    expect([r.status, fields(r).sort()]).toEqual([400, ["labels[0]", "list", "title"]]);
  });
});
