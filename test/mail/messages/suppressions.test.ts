/** Suppressions over HTTP: add (manual, unsubscribe), list with reason filter and cursor, delete, events, actions, isolation. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SECOND } from "../../../src/core/clock";
import { ownerWithKey, startTestApp, type TestApp } from "../../helpers/app";
import { mailEvents } from "../../helpers/mail-messages";
import { inProcess, ON_BINARY } from "../../helpers/target";

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
  if (!ON_BINARY) app.webhooks.options.autoKick = false;
});
afterAll(async () => {
  await app.stop();
});

const base = (ws: string) => `/mail/v1/workspaces/${ws}/suppressions`;

describe("suppressions", () => {
  inProcess("compares created_at with the injected clock, moves it, and reads the events from the outbox through app.ctx.db")("POST 201 (lower-cased, manual by default), again 200 unchanged; GET lists newest first; DELETE 204 then 404", async () => {
    const { token, ws } = await ownerWithKey(app);
    const r = await app.call("POST", base(ws.id), { token, body: { email: "  Ada@Example.COM " } });
    expect(r.status).toBe(201);
    expect(r.body).toEqual({ email: "ada@example.com", reason: "manual", source_message_id: null, created_at: app.clock.iso() });
    app.clock.advance(SECOND);
    const again = await app.call("POST", base(ws.id), { token, body: { email: "ada@example.com", reason: "unsubscribe" } });
    expect(again.status).toBe(200);
    expect(again.body).toEqual(r.body);
    const u = await app.call("POST", base(ws.id), { token, body: { email: "bob@example.com", reason: "unsubscribe" } });
    expect(u.status).toBe(201);
    const list = await app.call("GET", base(ws.id), { token });
    expect(list.body.data.map((s: any) => s.email)).toEqual(["bob@example.com", "ada@example.com"]);
    expect((await app.call("GET", `${base(ws.id)}?reason=unsubscribe`, { token })).body.data.map((s: any) => s.email)).toEqual(["bob@example.com"]);
    expect((await app.call("GET", `${base(ws.id)}?reason=spam`, { token })).status).toBe(400);

    expect((await app.call("DELETE", `${base(ws.id)}/ADA@example.com`, { token })).status).toBe(204);
    expect((await app.call("DELETE", `${base(ws.id)}/ada@example.com`, { token })).status).toBe(404);
    expect((await app.call("GET", base(ws.id), { token })).body.data.map((s: any) => s.email)).toEqual(["bob@example.com"]);
    const ev = await mailEvents(app, ws.id);
    expect(ev.map((e) => e.type)).toEqual(["suppression.created", "suppression.created", "suppression.deleted"]);
    expect(ev[2]!.data).toEqual({ workspace_id: ws.id, email: "ada@example.com", reason: "manual", source_message_id: null, created_at: r.body.created_at, deleted_at: app.clock.iso() });
  });

  test("validation: an address, reason manual or unsubscribe only", async () => {
    const { token, ws } = await ownerWithKey(app);
    for (const body of [{ email: "nope" }, { email: "" }, { email: `${"a".repeat(250)}@example.com` }, { email: "a@example.com", reason: "bounce" }, { email: "a@example.com", reason: "complaint" }]) {
      const r = await app.call("POST", base(ws.id), { token, body });
      expect({ body, status: r.status }).toEqual({ body, status: 400 });
    }
    expect((await app.call("POST", base(ws.id), { token, body: {} })).status).toBe(400);
  });

  inProcess("moves the injected clock a second between suppressions so that their order is fixed")("cursor pages", async () => {
    const { token, ws } = await ownerWithKey(app);
    for (let i = 0; i < 5; i++) {
      await app.call("POST", base(ws.id), { token, body: { email: `p${i}@example.com` } });
      app.clock.advance(SECOND);
    }
    const first = await app.call("GET", `${base(ws.id)}?limit=3`, { token });
    expect(first.body.data.map((s: any) => s.email)).toEqual(["p4@example.com", "p3@example.com", "p2@example.com"]);
    expect(first.body.pagination.has_more).toBe(true);
    const second = await app.call("GET", `${base(ws.id)}?limit=3&cursor=${first.body.pagination.next_cursor}`, { token });
    expect(second.body.data.map((s: any) => s.email)).toEqual(["p1@example.com", "p0@example.com"]);
    expect(second.body.pagination).toEqual({ next_cursor: null, has_more: false });
    expect((await app.call("GET", `${base(ws.id)}?limit=101`, { token })).status).toBe(400);
    expect((await app.call("GET", `${base(ws.id)}?limit=100`, { token })).status).toBe(200);
  });

  test("actions mail.suppression.read / write; another workspace is 404", async () => {
    const { token, session, ws } = await ownerWithKey(app);
    const other = await ownerWithKey(app);
    const minted = await app.call("POST", `/platform/v1/workspaces/${ws.slug}/api-keys`, { token: session, body: { name: "r", policy: [{ effect: "allow", actions: ["mail.suppression.read"], resources: ["*"] }] } });
    const reader = minted.body.key as string;
    expect((await app.call("GET", base(ws.id), { token: reader })).status).toBe(200);
    expect((await app.call("POST", base(ws.id), { token: reader, body: { email: "x@example.com" } })).status).toBe(403);
    await app.call("POST", base(ws.id), { token, body: { email: "x@example.com" } });
    expect((await app.call("DELETE", `${base(ws.id)}/x@example.com`, { token: reader })).status).toBe(403);
    expect((await app.call("DELETE", `${base(ws.id)}/x@example.com`, { token: other.token })).status).toBe(404);
    expect((await app.call("DELETE", `${base(other.ws.id)}/x@example.com`, { token: other.token })).status).toBe(404);
    expect((await app.call("GET", base(ws.id), { token: other.token })).status).toBe(404);
  });
});
