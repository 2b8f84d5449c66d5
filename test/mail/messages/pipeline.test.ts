// source-only: drives the in-process MessageService state machine (queue, claim, outcomes) on the injected clock
/**
 * The send pipeline's state machine on the message log: queue (bodies in the object store
 * unless redacted), claim with a lease, sent / deferred with backoff / failed after 72 h /
 * bounced with a suppression, events in the same transaction, fencing of lost leases.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { HOUR, MINUTE } from "../../../src/core/clock";
import type { MessageService } from "../../../src/services/mail/messages/service";
import { ownerWithKey, startTestApp, type TestApp } from "../../helpers/app";
import { mailEvents, messageService, queueOne } from "../../helpers/mail-messages";

let app: TestApp;
let svc: MessageService;
beforeAll(async () => {
  app = await startTestApp();
  app.webhooks.options.autoKick = false;
  svc = messageService(app);
});
afterAll(async () => {
  await app.stop();
});

/** Claims everything due (other tests' leftovers included) and returns the claim of `id`. */
async function claimOf(id: string, leaseMs?: number) {
  const c = await svc.claim(1000, leaseMs);
  return { owner: c.owner, row: c.messages.find((m) => m.id === id) ?? null, all: c.messages };
}

describe("queue", () => {
  test("queued row with a body object; the body route reads it back", async () => {
    const { token, ws } = await ownerWithKey(app);
    const m = await queueOne(svc, ws.id, { to: "Ada@Example.com", subject: "Welcome", html: "<p>Hi</p>", text: "Hi", data: { name: "Ada" } });
    expect(m.status).toBe("queued");
    expect(m.to_fold).toBe("ada@example.com");
    expect(m.next_attempt_ms).toBe(app.clock.nowMs());
    expect(m.body_key).toBe(`mail/messages/${ws.id}/${m.id}.json`);
    expect(await app.ctx.objects.exists(m.body_key!)).toBe(true);
    expect(JSON.parse(m.send_data!)).toEqual({ name: "Ada" });
    const b = await app.call("GET", `/mail/v1/workspaces/${ws.id}/messages/${m.id}/body`, { token });
    expect(b.status).toBe(200);
    expect(b.body).toEqual({ id: m.id, subject: "Welcome", body_html: "<p>Hi</p>", body_text: "Hi", redacted: false });
  });

  test("redact_bodies: no object is ever written", async () => {
    const { token, ws } = await ownerWithKey(app);
    expect((await app.call("PATCH", `/mail/v1/workspaces/${ws.id}/messages/settings`, { token, body: { redact_bodies: true } })).status).toBe(200);
    const m = await queueOne(svc, ws.id);
    expect(m.body_key).toBeNull();
    expect(await app.ctx.objects.exists(`mail/messages/${ws.id}/${m.id}.json`)).toBe(false);
  });
});

describe("claim and outcomes", () => {
  test("claim leases due messages once; an expired lease is claimed again (at least once)", async () => {
    const { ws } = await ownerWithKey(app);
    const m = await queueOne(svc, ws.id);
    const first = await claimOf(m.id, 5 * MINUTE);
    expect(first.row).toMatchObject({ status: "sending", attempts: 1, lease_owner: first.owner, lease_until_ms: app.clock.nowMs() + 5 * MINUTE, next_attempt_ms: null });
    expect((await claimOf(m.id)).row).toBeNull(); // held
    app.clock.advance(5 * MINUTE);
    const second = await claimOf(m.id);
    expect(second.row).toMatchObject({ status: "sending", attempts: 2 });
    // The first worker lost its lease: its late result is refused, the second one's counts.
    expect(await svc.markSent(m.id, first.owner)).toBeNull();
    expect(await svc.markSent(m.id, second.owner, { transcript: "250 OK" })).toMatchObject({ status: "sent", sent_at: app.clock.iso(), smtp_transcript: "250 OK", lease_owner: null, send_data: null });
    expect((await mailEvents(app, ws.id)).map((e) => e.type)).toEqual(["email.sent"]);
  });

  test("two concurrent claims never take the same message", async () => {
    const { ws } = await ownerWithKey(app);
    const ids = new Set<string>();
    for (let i = 0; i < 20; i++) ids.add((await queueOne(svc, ws.id)).id);
    const claims = await Promise.all([svc.claim(15), svc.claim(15), svc.claim(15)]);
    const mine = claims.flatMap((c) => c.messages.map((m) => m.id)).filter((id) => ids.has(id));
    expect(new Set(mine).size).toBe(mine.length);
    expect(mine.length).toBe(20);
  });

  test("extendLease keeps a claim; a lost one says false", async () => {
    const { ws } = await ownerWithKey(app);
    const m = await queueOne(svc, ws.id);
    const c = await claimOf(m.id, MINUTE);
    expect(await svc.extendLease(m.id, c.owner, 10 * MINUTE)).toBe(true);
    app.clock.advance(2 * MINUTE);
    expect((await claimOf(m.id)).row).toBeNull();
    expect(await svc.extendLease(m.id, "someone-else")).toBe(false);
    expect(await svc.markSent(m.id, c.owner)).not.toBeNull();
  });

  test("4xx: deferred with backoff 1, 5, 30 min, 2 h, 6 h, then 6 h; failed once 72 h have passed", async () => {
    const { ws } = await ownerWithKey(app);
    const m = await queueOne(svc, ws.id);
    const created = Date.parse(m.created_at);
    const delays = [1 * MINUTE, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 6 * HOUR, 6 * HOUR];
    for (const [i, delay] of delays.entries()) {
      const c = await claimOf(m.id);
      expect(c.row?.status).toBe("sending");
      const r = await svc.markDeferred(m.id, c.owner, { code: "4.7.1", detail: "451 4.7.1 Greylisted", transcript: "451" });
      expect(r).toMatchObject({ status: "deferred", deferral_count: i + 1, deferred_at: app.clock.iso(), bounce_code: "4.7.1", next_attempt_ms: app.clock.nowMs() + delay });
      app.clock.advance(delay - 1);
      expect((await claimOf(m.id)).row).toBeNull(); // not due yet
      app.clock.advance(1);
    }
    const ev = await mailEvents(app, ws.id);
    expect(ev.map((e) => e.type)).toEqual(Array(6).fill("email.delivery_delayed"));
    expect(ev[0]!.data).toMatchObject({ id: m.id, status: "deferred", deferral_count: 1, next_attempt_at: new Date(created + MINUTE).toISOString() });
    expect(ev[0]!.data.smtp_transcript).toBeUndefined();
    // Just under 72 h after queueing: still deferred.
    app.clock.set(created + 72 * HOUR - 1);
    let c = await claimOf(m.id);
    expect((await svc.markDeferred(m.id, c.owner, { code: "451", detail: "451 try later" }))?.status).toBe("deferred");
    app.clock.set(created + 72 * HOUR + 6 * HOUR);
    c = await claimOf(m.id);
    const failed = await svc.markDeferred(m.id, c.owner, { code: "451", detail: "451 still later" });
    expect(failed).toMatchObject({ status: "failed", deferral_count: 8, next_attempt_ms: null, failed_at: app.clock.iso() });
    expect(failed!.error).toContain("72 hours");
    const last = (await mailEvents(app, ws.id)).at(-1)!;
    expect(last.type).toBe("email.failed");
    expect(last.data.error).toContain("72 hours");
    expect((await claimOf(m.id)).row).toBeNull();
  });

  test("5xx: bounced, email.bounced and a suppression (suppression.created once per address)", async () => {
    const { token, ws } = await ownerWithKey(app);
    const a = await queueOne(svc, ws.id, { to: "Gone@Example.com" });
    const b = await queueOne(svc, ws.id, { to: "gone@example.com" });
    const c = await claimOf(a.id);
    for (const m of [a, b]) {
      const r = await svc.markBounced(m.id, c.owner, { code: "5.1.1", detail: "550 5.1.1 User unknown", transcript: "550" });
      expect(r).toMatchObject({ status: "bounced", bounce_code: "5.1.1", bounce_detail: "550 5.1.1 User unknown", bounced_at: app.clock.iso() });
    }
    expect((await mailEvents(app, ws.id)).map((e) => e.type)).toEqual(["email.bounced", "suppression.created", "email.bounced"]);
    const list = await app.call("GET", `/mail/v1/workspaces/${ws.id}/suppressions`, { token });
    expect(list.body.data).toEqual([{ email: "gone@example.com", reason: "bounce", source_message_id: a.id, created_at: app.clock.iso() }]);
    expect([...(await svc.suppressed(app.ctx.db, ws.id, ["GONE@example.com", "other@example.com"]))]).toEqual(["gone@example.com"]);
  });

  test("bounce report after sent (owner null), delivered and complained; wrong states are refused", async () => {
    const { ws } = await ownerWithKey(app);
    const m = await queueOne(svc, ws.id, { to: "late@example.com" });
    expect(await svc.markBounced(m.id, null, { code: "5.1.1", detail: "x" })).toBeNull(); // still queued
    const c = await claimOf(m.id);
    await svc.markSent(m.id, c.owner);
    expect(await svc.markBounced(m.id, null, { code: "5.2.2", detail: "552 mailbox full" })).toMatchObject({ status: "bounced" });

    const d = await queueOne(svc, ws.id, { to: "happy@example.com" });
    const c2 = await claimOf(d.id);
    expect(await svc.markDelivered(d.id)).toBeNull(); // not sent yet
    await svc.markSent(d.id, c2.owner);
    expect(await svc.markDelivered(d.id, { dkim: "pass", spf: "pass", dmarc: "pass" })).toMatchObject({ status: "delivered", delivered_at: app.clock.iso(), dkim_result: "pass" });
    expect(await svc.markComplained(d.id)).toMatchObject({ status: "complained" });
    const types = (await mailEvents(app, ws.id)).map((e) => e.type);
    expect(types).toEqual(["email.sent", "email.bounced", "suppression.created", "email.sent", "email.delivered", "email.complained", "suppression.created"]);
  });

  test("failed before sending (owner null) and while sending", async () => {
    const { ws } = await ownerWithKey(app);
    const a = await queueOne(svc, ws.id);
    expect(await svc.markFailed(a.id, null, "domain deleted")).toMatchObject({ status: "failed", error: "domain deleted" });
    const b = await queueOne(svc, ws.id);
    const c = await claimOf(b.id);
    expect(await svc.markFailed(b.id, "not-the-owner", "x")).toBeNull();
    expect(await svc.markFailed(b.id, c.owner, "no MX for domain")).toMatchObject({ status: "failed" });
    expect((await mailEvents(app, ws.id)).map((e) => e.type)).toEqual(["email.failed", "email.failed"]);
  });

  test("an event is written only with its outcome (rolled back together)", async () => {
    const { ws } = await ownerWithKey(app);
    const m = await queueOne(svc, ws.id);
    const c = await claimOf(m.id);
    const before = (await mailEvents(app, ws.id)).length;
    expect(await svc.markSent(m.id, "wrong")).toBeNull();
    expect((await mailEvents(app, ws.id)).length).toBe(before);
    await svc.markSent(m.id, c.owner);
    expect((await mailEvents(app, ws.id)).length).toBe(before + 1);
  });
});
