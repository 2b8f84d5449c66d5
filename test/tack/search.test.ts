/**
 * Card list filters, full-text q (prefix matching, relevance ranking, all words required)
 * and offset pagination, on both engines (SQLite FTS5, PostgreSQL tsvector).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestApp, type TestApp } from "../helpers/app";
import { B, card, newBoard, type Board } from "./board-helpers";

let app: TestApp;
let b: Board;
const ids: Record<string, string> = {};

beforeAll(async () => {
  app = await startTestApp();
  b = await newBoard(app);
  for (const name of ["bug", "ui", "api"]) await app.call("POST", `${B}/${b.ws}/labels`, { token: b.token, body: { name } });
  const cards = [
    { key: "login", title: "Fix login redirect", body: "Users bounce back to the sign-in page", labels: ["bug", "ui"], priority: "urgent", assignees: ["usr_ann"] },
    { key: "billing", title: "Billing page", body: "Stripe checkout and invoices", labels: ["ui"], priority: "high", assignees: ["usr_bob"], list: "doing" },
    { key: "invoice", title: "Export invoices as CSV", body: "Finance wants a billing export", labels: ["api"], priority: "medium", assignees: ["usr_ann", "usr_bob"] },
    { key: "docs", title: "Write API docs", body: "Document every endpoint", labels: ["api"], priority: "low", list: "done" },
    { key: "loginapi", title: "Login API rate limits", body: "Throttle sign-in attempts per key", labels: ["api", "bug"], priority: "high", assignees: ["usr_a_b"] },
  ];
  for (const { key, ...body } of cards) ids[key] = (await card(app, b, body)).id;
  await app.call("POST", `${b.p}/cards/${ids.docs}/complete`, { token: b.token });
});
afterAll(() => app.stop());

const list = async (query: string) => {
  const r = await app.call("GET", `${b.p}/cards?${query}`, { token: b.token });
  if (r.status !== 200) throw new Error(`${query}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body as { data: any[]; pagination: any };
};
const keys = (page: { data: any[] }) => page.data.map((c) => Object.keys(ids).find((k) => ids[k] === c.id));

describe("filters", () => {
  test("list, priority, assignee, completed; board order without q", async () => {
    expect(keys(await list(""))).toEqual(["login", "invoice", "loginapi", "billing", "docs"]);
    expect(keys(await list("list=doing"))).toEqual(["billing"]);
    expect(keys(await list(`list=${b.lists.done}`))).toEqual(["docs"]);
    expect(keys(await list("priority=high"))).toEqual(["loginapi", "billing"]);
    expect(keys(await list("assignee=usr_ann"))).toEqual(["login", "invoice"]);
    // usr_a_b must not match usr_ann or usr_bob through LIKE wildcards.
    expect(keys(await list("assignee=usr_a_b"))).toEqual(["loginapi"]);
    expect(keys(await list("completed=true"))).toEqual(["docs"]);
    expect(keys(await list("completed=false&list=todo"))).toEqual(["login", "invoice", "loginapi"]);
  });

  test("label is repeatable and every label must match; unknown label is 400 naming it", async () => {
    expect(keys(await list("label=bug"))).toEqual(["login", "loginapi"]);
    expect(keys(await list("label=bug&label=api"))).toEqual(["loginapi"]);
    expect(keys(await list("label=ui&label=api"))).toEqual([]);
    const r = await app.call("GET", `${b.p}/cards?label=bug&label=nope`, { token: b.token });
    expect(r.status).toBe(400);
    expect(r.body.error.details).toEqual([{ field: "label[1]", reason: 'unknown label "nope" (create it under /labels first)' }]);
  });

  test("bad filter values are 400 listing every field", async () => {
    const r = await app.call("GET", `${b.p}/cards?priority=asap&completed=maybe&assignee=bob&list=ghost`, { token: b.token });
    expect(r.status).toBe(400);
    expect(r.body.error.details.map((d: any) => d.field).sort()).toEqual(["assignee[0]", "completed", "list", "priority"]);
  });

  test("offset pagination: limit default 50, max 100 (101: 400), has_more", async () => {
    const p1 = await list("limit=2");
    expect(p1.pagination).toEqual({ total: 5, limit: 2, offset: 0, has_more: true });
    const p3 = await list("limit=2&offset=4");
    expect(p3.pagination).toEqual({ total: 5, limit: 2, offset: 4, has_more: false });
    expect(p3.data).toHaveLength(1);
    expect((await list("limit=100")).pagination.limit).toBe(100);
    expect((await app.call("GET", `${b.p}/cards?limit=101`, { token: b.token })).status).toBe(400);
    expect((await app.call("GET", `${b.p}/cards?offset=-1`, { token: b.token })).status).toBe(400);
  });
});

describe("full text q", () => {
  test("prefix matching over title and body, case-insensitive", async () => {
    expect(keys(await list("q=invoic")).sort()).toEqual(["billing", "invoice"]);
    expect(keys(await list("q=STRIPE"))).toEqual(["billing"]);
    expect(keys(await list("q=thrott"))).toEqual(["loginapi"]);
    expect(keys(await list("q=zzz"))).toEqual([]);
  });

  test("every word must match; ranked by relevance (title counts more than body)", async () => {
    expect(keys(await list("q=login%20api"))).toEqual(["loginapi"]);
    // "billing" is the title of one card and in the body of another: the title match ranks first.
    expect(keys(await list("q=billing"))).toEqual(["billing", "invoice"]);
    const r = await list("q=sign");
    expect(keys(r).sort()).toEqual(["login", "loginapi"]);
    expect(r.pagination.total).toBe(2);
  });

  test("combines with filters and pages; archived cards only with include_archived", async () => {
    expect(keys(await list("q=login&label=ui"))).toEqual(["login"]);
    expect(keys(await list("q=invoices&list=doing"))).toEqual(["billing"]);
    expect((await list("q=login&limit=1")).pagination).toEqual({ total: 2, limit: 1, offset: 0, has_more: true });
    const c = await card(app, b, { title: "Archived login card" });
    await app.call("DELETE", `${b.p}/cards/${c.id}`, { token: b.token });
    expect((await list("q=archived")).data).toEqual([]);
    expect((await list("q=archived&include_archived=true")).data.map((x) => x.id)).toEqual([c.id]);
  });

  test("edits are searchable at once; punctuation-only q is 400", async () => {
    const c = await card(app, b, { title: "Plain" });
    expect((await list("q=kangaroo")).data).toEqual([]);
    await app.call("PATCH", `${b.p}/cards/${c.id}`, { token: b.token, body: { body: "a kangaroo appears" } });
    expect((await list("q=kanga")).data.map((x) => x.id)).toEqual([c.id]);
    await app.call("PATCH", `${b.p}/cards/${c.id}`, { token: b.token, body: { body: "gone" } });
    expect((await list("q=kanga")).data).toEqual([]);
    const bad = await app.call("GET", `${b.p}/cards?q=${encodeURIComponent('"*:&')}`, { token: b.token });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details[0].field).toBe("q");
    // Operators are plain words: no FTS syntax error.
    expect((await app.call("GET", `${b.p}/cards?q=${encodeURIComponent("login OR NOT (api")}`, { token: b.token })).status).toBe(200);
  });

  test("cards created at once (one commit on SQLite, index rows written together before it) each find their own text", async () => {
    const words = Array.from({ length: 30 }, (_, i) => `zebra${String.fromCharCode(97 + (i % 26))}${String.fromCharCode(97 + Math.floor(i / 26))}x`);
    const made = await Promise.all(words.map((w) => card(app, b, { title: `Concurrent ${w}`, body: `only ${w} here` })));
    for (const [i, w] of words.entries()) expect((await list(`q=${w}`)).data.map((x) => x.id)).toEqual([made[i]!.id]);
    expect((await list("q=zebra&limit=100")).data.length).toBe(30);
    // A card edited in the same burst as others' creates is indexed with its new text.
    await Promise.all([
      app.call("PATCH", `${b.p}/cards/${made[0]!.id}`, { token: b.token, body: { title: "Renamed okapi" } }),
      ...[1, 2, 3].map((i) => card(app, b, { title: `Burst ${i} wombat` })),
    ]);
    expect((await list("q=okapi")).data.map((x) => x.id)).toEqual([made[0]!.id]);
    expect((await list(`q=${words[0]}`)).data.map((x) => x.id)).toEqual([made[0]!.id]); // still in the body
    expect((await list("q=wombat")).data.length).toBe(3);
  });
});
