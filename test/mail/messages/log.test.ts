/**
 * The message log over HTTP: list filters and their limits, cursor paging, isolation between
 * workspaces, metadata and body reads, actions, settings, right to be forgotten.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SECOND } from "../../../src/core/clock";
import type { MessageService } from "../../../src/services/mail/messages/service";
import { ownerWithKey, startTestApp, type TestApp } from "../../helpers/app";
import { messageService, queueOne } from "../../helpers/mail-messages";
import { inProcess, ON_BINARY } from "../../helpers/target";

let app: TestApp;
let svc: MessageService;
beforeAll(async () => {
  app = await startTestApp();
  if (ON_BINARY) return; // the tests that use the message service are source-only
  app.webhooks.options.autoKick = false;
  svc = messageService(app);
});
afterAll(async () => {
  await app.stop();
});

const base = (ws: string) => `/mail/v1/workspaces/${ws}/messages`;

/** A key of the workspace limited to `actions`. */
async function keyWith(session: string, wsSlug: string, actions: string[]) {
  const r = await app.call("POST", `/platform/v1/workspaces/${wsSlug}/api-keys`, { token: session, body: { name: "limited", policy: [{ effect: "allow", actions, resources: ["*"] }] } });
  if (r.status !== 201) throw new Error(JSON.stringify(r.body));
  return r.body.key as string;
}

describe("list", () => {
  inProcess("queues messages through the in-process MessageService and moves the injected clock between them")("newest first, metadata without body; filters recipient (exact), template, status, subject_contains", async () => {
    const { token, ws } = await ownerWithKey(app);
    const c = await queueOne(svc, ws.id, { to: "ada@example.com", subject: "Your 100 discounts", templateName: "receipt" });
    const claim = await svc.claim(1000);
    await svc.markSent(c.id, claim.owner);
    app.clock.advance(SECOND);
    const a = await queueOne(svc, ws.id, { to: "ada@example.com", subject: "Your 100% discount_code", templateName: "promo" });
    app.clock.advance(SECOND);
    const b = await queueOne(svc, ws.id, { to: "bob@example.com", subject: "YOUR receipt", templateName: "receipt" });

    const all = await app.call("GET", base(ws.id), { token });
    expect(all.status).toBe(200);
    expect(all.body.data.map((m: any) => m.id)).toEqual([b.id, a.id, c.id]);
    expect(all.body.pagination).toEqual({ next_cursor: null, has_more: false });
    expect(all.body.data[1]).toEqual({
      id: a.id, workspace_id: ws.id, domain_id: a.domain_id, from_address: "hello@mail.acme.example", to_address: "ada@example.com", subject: "Your 100% discount_code",
      template_name: "promo", status: "queued", smtp_transcript: null, spf_result: null, dkim_result: null, dmarc_result: null, bounce_code: null, bounce_detail: null,
      created_at: a.created_at, sent_at: null, delivered_at: null, deferred_at: null, deferral_count: 0, sandbox: false, delivered_to: null,
    });
    const ids = async (q: string) => {
      const r = await app.call("GET", `${base(ws.id)}?${q}`, { token });
      expect(r.status).toBe(200);
      return r.body.data.map((m: any) => m.id);
    };
    expect(await ids("recipient=ada@example.com")).toEqual([a.id, c.id]);
    expect(await ids("recipient=ADA@example.com")).toEqual([]); // exact
    expect(await ids("recipient=ada@example")).toEqual([]); // whole address only
    expect(await ids("template=receipt")).toEqual([b.id, c.id]);
    expect(await ids("status=sent")).toEqual([c.id]);
    expect(await ids("status=queued&template=receipt")).toEqual([b.id]);
    expect(await ids("subject_contains=your")).toEqual([b.id, a.id, c.id]);
    expect(await ids("subject_contains=100%25")).toEqual([a.id]); // % is literal
    expect(await ids("subject_contains=discount_")).toEqual([a.id]); // _ is literal
    expect(await ids("subject_contains=DISCOUNT")).toEqual([a.id, c.id]);
  });

  test("limits: limit 1-100, subject_contains up to 200 characters, known statuses", async () => {
    const { token, ws } = await ownerWithKey(app);
    const get = (q: string) => app.call("GET", `${base(ws.id)}?${q}`, { token });
    expect((await get("limit=100")).status).toBe(200);
    expect((await get("limit=1")).status).toBe(200);
    for (const bad of ["limit=101", "limit=0", "limit=abc"]) expect((await get(bad)).status).toBe(400);
    expect((await get(`subject_contains=${"x".repeat(200)}`)).status).toBe(200);
    const long = await get(`subject_contains=${"x".repeat(201)}`);
    expect(long.status).toBe(400);
    expect(long.body.error.details).toEqual([{ field: "subject_contains", reason: "at most 200 characters" }]);
    const st = await get("status=lost");
    expect(st.status).toBe(400);
    expect(st.body.error.details[0].field).toBe("status");
    for (const s of ["queued", "sending", "sent", "delivered", "deferred", "bounced", "complained", "failed"]) expect((await get(`status=${s}`)).status).toBe(200);
  });

  inProcess("queues messages through the in-process MessageService")("cursor pages: opaque, keep their filters, malformed is 400", async () => {
    const { token, ws } = await ownerWithKey(app);
    const made: string[] = [];
    for (let i = 0; i < 5; i++) made.unshift((await queueOne(svc, ws.id, { templateName: "paged" })).id); // same created_at: id breaks ties
    await queueOne(svc, ws.id, { templateName: "other" });
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const r: { status: number; body: any } = await app.call("GET", `${base(ws.id)}?limit=2&template=paged${cursor ? `&cursor=${cursor}` : ""}`, { token });
      expect(r.status).toBe(200);
      seen.push(...r.body.data.map((m: any) => m.id));
      cursor = r.body.pagination.next_cursor;
      expect(r.body.pagination.has_more).toBe(cursor !== null);
      pages++;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen).toEqual(made);
    // The cursor carries the filters: without repeating them the next page is the same.
    const first = await app.call("GET", `${base(ws.id)}?limit=2&template=paged`, { token });
    const next = await app.call("GET", `${base(ws.id)}?limit=2&cursor=${first.body.pagination.next_cursor}`, { token });
    expect(next.body.data.map((m: any) => m.id)).toEqual(made.slice(2, 4));
    expect((await app.call("GET", `${base(ws.id)}?template=other&cursor=${first.body.pagination.next_cursor}`, { token })).status).toBe(400);
    expect((await app.call("GET", `${base(ws.id)}?cursor=not-a-cursor!`, { token })).body.error.code).toBe("INVALID_CURSOR");
  });
});

describe("one message", () => {
  inProcess("queues messages through the in-process MessageService")("GET by id; another workspace's id and an unknown id answer 404, a non-uuid 400", async () => {
    const one = await ownerWithKey(app);
    const two = await ownerWithKey(app);
    const m = await queueOne(svc, one.ws.id);
    const r = await app.call("GET", `${base(one.ws.id)}/${m.id}`, { token: one.token });
    expect(r.status).toBe(200);
    expect(r.body.id).toBe(m.id);
    expect(r.body.body_html).toBeUndefined();
    for (const path of [`${base(two.ws.id)}/${m.id}`, `${base(two.ws.id)}/${m.id}/body`]) {
      const x = await app.call("GET", path, { token: two.token });
      expect(x.status).toBe(404);
      expect(x.body.error.code).toBe("NOT_FOUND");
    }
    expect((await app.call("GET", `${base(one.ws.id)}/0192f400-1a2b-7c3d-8e4f-5a6b7c8d9e0f`, { token: one.token })).status).toBe(404);
    expect((await app.call("GET", `${base(one.ws.id)}/nope`, { token: one.token })).status).toBe(400);
    // Another workspace's key can't reach this workspace at all.
    expect((await app.call("GET", `${base(one.ws.id)}/${m.id}`, { token: two.token })).status).toBe(404);
    expect((await app.call("GET", base(one.ws.id), { token: two.token })).status).toBe(404);
    expect((await app.call("GET", base(one.ws.id))).status).toBe(401);
  });

  inProcess("queues messages through the in-process MessageService")("body needs mail.message.body.read; nulls while redact_bodies is on", async () => {
    const { token, session, ws } = await ownerWithKey(app);
    const m = await queueOne(svc, ws.id, { html: "<b>secret</b>", text: "secret" });
    const reader = await keyWith(session, ws.slug, ["mail.message.read"]);
    expect((await app.call("GET", `${base(ws.id)}/${m.id}`, { token: reader })).status).toBe(200);
    expect((await app.call("GET", `${base(ws.id)}/${m.id}/body`, { token: reader })).status).toBe(403);
    expect((await app.call("GET", `${base(ws.id)}/${m.id}/body`, { token })).body.body_html).toBe("<b>secret</b>");
    expect((await app.call("PATCH", `${base(ws.id)}/settings`, { token: reader, body: { redact_bodies: true } })).status).toBe(403);
    const on = await app.call("PATCH", `${base(ws.id)}/settings`, { token, body: { redact_bodies: true } });
    expect(on.body).toEqual({ workspace_id: ws.id, redact_bodies: true });
    expect((await app.call("GET", `${base(ws.id)}/settings`, { token: reader })).body).toEqual({ workspace_id: ws.id, redact_bodies: true });
    expect((await app.call("GET", `${base(ws.id)}/${m.id}/body`, { token })).body).toEqual({ id: m.id, subject: m.subject, body_html: null, body_text: null, redacted: true });
    expect((await app.call("PATCH", `${base(ws.id)}/settings`, { token, body: {} })).status).toBe(400);
    expect((await app.call("PATCH", `${base(ws.id)}/settings`, { token, body: { redact_bodies: "yes" } })).status).toBe(400);
  });

  test("settings default to redact_bodies false", async () => {
    const { token, ws } = await ownerWithKey(app);
    expect((await app.call("GET", `${base(ws.id)}/settings`, { token })).body).toEqual({ workspace_id: ws.id, redact_bodies: false });
  });
});

describe("right to be forgotten", () => {
  inProcess("queues messages through the in-process MessageService and checks their body objects through app.ctx.objects")("deletes rows and body objects of the recipient, case-insensitively; needs mail.message.delete", async () => {
    const { token, session, ws } = await ownerWithKey(app);
    const other = await ownerWithKey(app);
    const a = await queueOne(svc, ws.id, { to: "Erase.Me@Example.com" });
    const b = await queueOne(svc, ws.id, { to: "erase.me@example.com" });
    const keep = await queueOne(svc, ws.id, { to: "keep@example.com" });
    const elsewhere = await queueOne(svc, other.ws.id, { to: "erase.me@example.com" });
    for (const m of [a, b, keep, elsewhere]) expect(await app.ctx.objects.exists(m.body_key!)).toBe(true);

    const reader = await keyWith(session, ws.slug, ["mail.message.read", "mail.message.body.read"]);
    expect((await app.call("DELETE", `${base(ws.id)}?recipient=erase.me@example.com`, { token: reader })).status).toBe(403);
    expect((await app.call("DELETE", base(ws.id), { token })).status).toBe(400);

    const r = await app.call("DELETE", `${base(ws.id)}?recipient=ERASE.ME@example.COM`, { token });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ deleted: 2 });
    for (const m of [a, b]) {
      expect(await app.ctx.objects.exists(m.body_key!)).toBe(false);
      expect((await app.call("GET", `${base(ws.id)}/${m.id}`, { token })).status).toBe(404);
    }
    expect(await app.ctx.objects.exists(keep.body_key!)).toBe(true);
    expect(await app.ctx.objects.exists(elsewhere.body_key!)).toBe(true);
    expect((await app.call("GET", base(ws.id), { token })).body.data.map((m: any) => m.id)).toEqual([keep.id]);
    expect((await app.call("DELETE", `${base(ws.id)}?recipient=erase.me@example.com`, { token })).body).toEqual({ deleted: 0 });
  });
});
