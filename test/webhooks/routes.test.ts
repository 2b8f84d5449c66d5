import { afterAll, afterEach, beforeAll, describe, expect, setSystemTime, test } from "bun:test";
import { Webhook } from "standardwebhooks";
import { DAY, HOUR } from "../../src/core/clock";
import { ownerWithKey, startTestApp, type TestApp } from "../helpers/app";
import { startReceiver, type ReceivedRequest, type Receiver } from "../helpers/http-receiver";
import { startWebhookTestApp, stopWebhookTestApp } from "../helpers/webhook-app";
import { addMember, BUILTIN } from "../helpers/members";
import { inProcess } from "../helpers/target";

let app: TestApp;
let receiver: Receiver;
let receiver2: Receiver;
beforeAll(async () => {
  ({ app, receiver } = await startWebhookTestApp());
  receiver2 = startReceiver();
});
afterAll(async () => {
  await stopWebhookTestApp({ app, receiver });
  await receiver2.stop();
});
afterEach(() => {
  receiver.setHandler(() => new Response("ok"));
  receiver2.setHandler(() => new Response("ok"));
});

const base = (wsId: string, product = "mail") => `/${product}/v1/workspaces/${wsId}/webhooks`;

const owner = () => ownerWithKey(app);

async function createEndpoint(token: string, wsId: string, body: Record<string, unknown> = {}, product = "mail", r: Receiver = receiver) {
  const res = await app.call("POST", `${base(wsId, product)}/endpoints`, { token, body: { url: `${r.url}/hook`, ...body } });
  if (res.status !== 201) throw new Error(`endpoint create failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as { id: string; signing_secret: string };
}

/** Verifies a received request with the independent standardwebhooks library, at the app's clock. */
function verify(secret: string, req: ReceivedRequest) {
  setSystemTime(app.clock.now());
  try {
    return new Webhook(secret).verify(req.body, { "webhook-id": req.headers["webhook-id"], "webhook-timestamp": req.headers["webhook-timestamp"], "webhook-signature": req.headers["webhook-signature"] });
  } finally {
    setSystemTime();
  }
}

const requestsSince = (r: Receiver, n: number) => r.requests.slice(n);
/** Requests carrying one event (other tests' retries reach the same receivers). */
const requestsFor = (r: Receiver, eventId: string) => r.requests.filter((q) => q.headers["webhook-id"] === eventId);

describe("event types", () => {
  test("each product lists its own catalogue with description and example", async () => {
    const { token, ws } = await owner();
    const mail = await app.call("GET", `${base(ws.id)}/event-types`, { token });
    expect(mail.status).toBe(200);
    const types = mail.body.data.map((e: any) => e.type);
    expect(types).toContain("email.delivered");
    expect(types).not.toContain("entry.created");
    for (const e of mail.body.data) {
      expect(typeof e.description).toBe("string");
      expect(typeof e.example).toBe("object");
    }
    const waitlist = await app.call("GET", `${base(ws.id, "waitlist")}/event-types`, { token });
    expect(waitlist.body.data.map((e: any) => e.type)).toEqual(expect.arrayContaining(["entry.created", "entry.approved", "entry.rejected"]));
    const trawl = await app.call("GET", `${base(ws.id, "trawl")}/event-types`, { token });
    expect(trawl.status).toBe(200);
    expect(trawl.body.data.length).toBeGreaterThan(0);
  });
});

describe("test send", () => {
  inProcess("the attempt's created_at equals the frozen injected clock")("hits the real receiver synchronously, signed; shows in the log with trigger test; never retried", async () => {
    const { token, ws } = await owner();
    const ep = await createEndpoint(token, ws.id, { event_types: ["email.sent"] });
    const n = receiver.requests.length;
    receiver.setHandler(() => new Response("thanks", { status: 200 }));
    const r = await app.call("POST", `${base(ws.id)}/endpoints/${ep.id}/test`, { token, body: { event_type: "email.bounced" } });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ succeeded: true, status_code: 200, trigger: "test", response_body: "thanks", error_class: null });
    expect(typeof r.body.latency_ms).toBe("number");
    // Synchronous: the receiver already has it.
    const got = requestsSince(receiver, n);
    expect(got).toHaveLength(1);
    const req = got[0];
    expect(req.method).toBe("POST");
    expect(req.path).toBe("/hook");
    const payload = verify(ep.signing_secret, req) as any;
    expect(payload).toMatchObject({ id: r.body.event_id, type: "email.bounced", test: true, data: { test: true } });
    expect(req.headers["webhook-id"]).toBe(r.body.event_id);
    expect(req.headers["webhook-signature"].split(" ")).toHaveLength(1);
    expect(() => verify("whsec_" + Buffer.from("x".repeat(24)).toString("base64"), req)).toThrow();

    const log = await app.call("GET", `${base(ws.id)}/events`, { token });
    expect(log.body.data[0]).toMatchObject({ id: r.body.event_id, type: "email.bounced", is_test: true, deliveries: [{ endpoint_id: ep.id, status: "delivered", attempts: 1, last_status_code: 200, next_attempt_at: null }] });
    const one = await app.call("GET", `${base(ws.id)}/events/${r.body.event_id}`, { token });
    expect(one.status).toBe(200);
    expect(one.body.payload).toEqual(payload);
    expect(one.body.attempts).toEqual([
      { endpoint_id: ep.id, attempt_number: expect.any(Number), trigger: "test", status_code: 200, latency_ms: expect.any(Number), error_class: null, response_body: "thanks", created_at: app.clock.iso() },
    ]);
  });

  inProcess("moves the injected clock and pumps the in-process webhook engine to show the test send is never retried")("a failing receiver: succeeded false with what it answered, and no retry ever", async () => {
    const { token, ws } = await owner();
    const ep = await createEndpoint(token, ws.id);
    receiver.setHandler(() => new Response("nope", { status: 503 }));
    const n = receiver.requests.length;
    const r = await app.call("POST", `${base(ws.id)}/endpoints/${ep.id}/test`, { token, body: {} });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ succeeded: false, status_code: 503, response_body: "nope", trigger: "test", error_class: "http_status" });
    const types = (await app.call("GET", `${base(ws.id)}/event-types`, { token })).body.data.map((e: any) => e.type);
    expect(JSON.parse(requestsSince(receiver, n)[0].body).type).toBe(types[0]); // default: the first type
    for (let i = 0; i < 4; i++) {
      app.clock.advance(7 * HOUR);
      await app.webhooks.dispatchPending();
      await app.webhooks.deliverDue();
    }
    expect(requestsFor(receiver, r.body.event_id)).toHaveLength(1);
    const log = await app.call("GET", `${base(ws.id)}/events?status=failed`, { token });
    expect(log.body.data.map((e: any) => e.id)).toEqual([r.body.event_id]);
    expect(log.body.data[0].deliveries[0]).toMatchObject({ status: "failed", attempts: 1, last_status_code: 503, next_attempt_at: null });
    // The endpoint's health is untouched by a test.
    expect((await app.call("GET", `${base(ws.id)}/endpoints/${ep.id}`, { token })).body).toMatchObject({ consecutive_failures: 0, status: "enabled" });
  });

  test("unknown event type 400 listing the valid ones; unreachable receiver answers 200 with succeeded false", async () => {
    const { token, ws } = await owner();
    const ep = await createEndpoint(token, ws.id);
    const bad = await app.call("POST", `${base(ws.id)}/endpoints/${ep.id}/test`, { token, body: { event_type: "entry.created" } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toContain("email.sent");
    const dead = startReceiver();
    const url = `${dead.url}/gone`;
    await dead.stop();
    await app.call("PATCH", `${base(ws.id)}/endpoints/${ep.id}`, { token, body: { url } });
    const r = await app.call("POST", `${base(ws.id)}/endpoints/${ep.id}/test`, { token });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ succeeded: false, status_code: null, error_class: "connection", response_body: null });
  });

  inProcess("moves the injected clock past the rotation grace period")("during a rotation grace period both secrets verify; after grace 0 only the new one", async () => {
    const { token, ws } = await owner();
    const ep = await createEndpoint(token, ws.id);
    const rotated = (await app.call("POST", `${base(ws.id)}/endpoints/${ep.id}/rotate-secret`, { token, body: { grace_hours: 24 } })).body;
    let n = receiver.requests.length;
    await app.call("POST", `${base(ws.id)}/endpoints/${ep.id}/test`, { token });
    let req = requestsSince(receiver, n)[0];
    expect(req.headers["webhook-signature"].split(" ")).toHaveLength(2);
    expect(verify(rotated.signing_secret, req)).toBeTruthy();
    expect(verify(ep.signing_secret, req)).toBeTruthy();

    // The grace ends on the clock.
    app.clock.advance(24 * HOUR + 1000);
    n = receiver.requests.length;
    await app.call("POST", `${base(ws.id)}/endpoints/${ep.id}/test`, { token });
    req = requestsSince(receiver, n)[0];
    expect(verify(rotated.signing_secret, req)).toBeTruthy();
    expect(() => verify(ep.signing_secret, req)).toThrow();

    const again = (await app.call("POST", `${base(ws.id)}/endpoints/${ep.id}/rotate-secret`, { token, body: { grace_hours: 0 } })).body;
    n = receiver.requests.length;
    await app.call("POST", `${base(ws.id)}/endpoints/${ep.id}/test`, { token });
    req = requestsSince(receiver, n)[0];
    expect(req.headers["webhook-signature"].split(" ")).toHaveLength(1);
    expect(verify(again.signing_secret, req)).toBeTruthy();
    expect(() => verify(rotated.signing_secret, req)).toThrow();
  });
});

describe("events log and replay", () => {
  inProcess("emits through the in-process webhook engine (app.webhooks.emit) and pumps it by hand and moves the injected clock past the 30-day window")("filters, pagination, detail, 30-day window, other scope 404", async () => {
    const { token, ws } = await owner();
    const a = await createEndpoint(token, ws.id, { event_types: ["email.sent"] });
    const b = await createEndpoint(token, ws.id, {}, "mail", receiver2);
    const scope = { product: "mail" as const, scopeId: ws.id };
    const old = await app.webhooks.emit(app.ctx.db, scope, "email.sent", { id: "m0" });
    await app.webhooks.dispatchPending();
    app.clock.advance(31 * DAY);

    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      ids.push((await app.webhooks.emit(app.ctx.db, scope, i % 2 === 0 ? "email.sent" : "email.delivered", { id: `m${i + 1}` })).id);
      app.clock.advance(1000);
    }
    await app.webhooks.dispatchPending();
    receiver2.setHandler(() => new Response("down", { status: 500 }));
    await app.webhooks.deliverDue();

    const all = await app.call("GET", `${base(ws.id)}/events`, { token });
    expect(all.status).toBe(200);
    // Newest first; the 31-day-old event is outside the window.
    expect(all.body.data.map((e: any) => e.id)).toEqual([...ids].reverse());
    const sent = all.body.data.find((e: any) => e.id === ids[0]);
    expect(sent.is_test).toBe(false);
    expect(sent.deliveries).toHaveLength(2);
    const latest = (trigger: string, status_code: number, error_class: string | null) => ({
      attempt_number: 1,
      trigger,
      status_code,
      error_class,
      latency_ms: expect.any(Number),
      created_at: app.clock.iso(),
    });
    expect(sent.deliveries.find((d: any) => d.endpoint_id === a.id)).toEqual({
      endpoint_id: a.id,
      status: "delivered",
      attempts: 1,
      last_status_code: 200,
      latest_attempt: latest("scheduled", 200, null),
      next_attempt_at: null,
    });
    expect(sent.deliveries.find((d: any) => d.endpoint_id === b.id)).toEqual({
      endpoint_id: b.id,
      status: "pending",
      attempts: 1,
      last_status_code: 500,
      latest_attempt: latest("scheduled", 500, "http_status"),
      next_attempt_at: new Date(app.clock.nowMs() + 60_000).toISOString(),
    });
    const delivered = all.body.data.find((e: any) => e.id === ids[1]);
    expect(delivered.deliveries.map((d: any) => d.endpoint_id)).toEqual([b.id]);

    const byType = await app.call("GET", `${base(ws.id)}/events?type=email.delivered`, { token });
    expect(byType.body.data.map((e: any) => e.id)).toEqual([ids[3], ids[1]]);
    const byEndpoint = await app.call("GET", `${base(ws.id)}/events?endpoint_id=${a.id}`, { token });
    expect(byEndpoint.body.data.map((e: any) => e.id)).toEqual([ids[4], ids[2], ids[0]]);
    const pending = await app.call("GET", `${base(ws.id)}/events?status=pending`, { token });
    expect(pending.body.data).toHaveLength(5);
    expect((await app.call("GET", `${base(ws.id)}/events?status=pending&endpoint_id=${a.id}`, { token })).body.data).toEqual([]);
    expect((await app.call("GET", `${base(ws.id)}/events?status=delivered&endpoint_id=${a.id}`, { token })).body.data).toHaveLength(3);
    expect((await app.call("GET", `${base(ws.id)}/events?status=bogus`, { token })).status).toBe(400);
    expect((await app.call("GET", `${base(ws.id)}/events?limit=0`, { token })).status).toBe(400);
    expect((await app.call("GET", `${base(ws.id)}/events?limit=101`, { token })).status).toBe(400);
    expect((await app.call("GET", `${base(ws.id)}/events?cursor=abc`, { token })).status).toBe(400);

    const p1 = await app.call("GET", `${base(ws.id)}/events?limit=2`, { token });
    expect(p1.body.pagination.has_more).toBe(true);
    const p2 = await app.call("GET", `${base(ws.id)}/events?limit=2&cursor=${p1.body.pagination.next_cursor}`, { token });
    const p3 = await app.call("GET", `${base(ws.id)}/events?limit=2&cursor=${p2.body.pagination.next_cursor}`, { token });
    expect(p3.body.pagination).toEqual({ next_cursor: null, has_more: false });
    expect([...p1.body.data, ...p2.body.data, ...p3.body.data].map((e: any) => e.id)).toEqual([...ids].reverse());

    const one = await app.call("GET", `${base(ws.id)}/events/${ids[0]}`, { token });
    expect(one.body.payload).toMatchObject({ id: ids[0], type: "email.sent", data: { id: "m1" } });
    expect(one.body.attempts.map((x: any) => [x.endpoint_id, x.trigger, x.status_code]).sort()).toEqual(
      [
        [a.id, "scheduled", 200],
        [b.id, "scheduled", 500],
      ].sort(),
    );
    expect(one.body.attempts.find((x: any) => x.endpoint_id === b.id).response_body).toBe("down");

    expect((await app.call("GET", `${base(ws.id)}/events/${old.id}`, { token })).status).toBe(404);
    expect((await app.call("GET", `${base(ws.id)}/events/evt_${"0".repeat(32)}`, { token })).status).toBe(404);
    expect((await app.call("GET", `${base(ws.id, "waitlist")}/events/${ids[0]}`, { token })).status).toBe(404);
    const other = await owner();
    expect((await app.call("GET", `${base(other.ws.id)}/events/${ids[0]}`, { token: other.token })).status).toBe(404);
    expect((await app.call("POST", `${base(other.ws.id)}/events/${ids[0]}/replay`, { token: other.token })).status).toBe(404);
    expect((await app.call("GET", `${base(other.ws.id)}/events`, { token: other.token })).body.data).toEqual([]);
  });

  inProcess("emits through the in-process webhook engine (app.webhooks.emit) and pumps it by hand and moves the injected clock")("replay resends the same body and webhook-id and returns what the receiver answered", async () => {
    const { token, ws } = await owner();
    const a = await createEndpoint(token, ws.id);
    const b = await createEndpoint(token, ws.id, {}, "mail", receiver2);
    const c = await createEndpoint(token, ws.id, { event_types: ["email.failed"] });
    const { id } = await app.webhooks.emit(app.ctx.db, { product: "mail", scopeId: ws.id }, "email.sent", { id: "m9" });
    await app.webhooks.dispatchPending();
    receiver2.setHandler(() => new Response("busy", { status: 500 }));
    const n1 = receiver.requests.length;
    const n2 = receiver2.requests.length;
    await app.webhooks.deliverDue();
    const original = requestsSince(receiver, n1)[0];
    expect(requestsSince(receiver2, n2)).toHaveLength(1);

    // To every endpoint that had the event (a and b, not c).
    app.clock.advance(10_000);
    receiver.setHandler(() => new Response("again ok", { status: 202 }));
    receiver2.setHandler(() => new Response("fixed", { status: 200 }));
    const all = await app.call("POST", `${base(ws.id)}/events/${id}/replay`, { token });
    expect(all.status).toBe(200);
    expect(all.body.data).toHaveLength(2);
    expect(all.body.data.find((x: any) => x.endpoint_id === a.id)).toMatchObject({ succeeded: true, status_code: 202, response_body: "again ok", trigger: "replay" });
    expect(all.body.data.find((x: any) => x.endpoint_id === b.id)).toMatchObject({ succeeded: true, status_code: 200, response_body: "fixed", trigger: "replay" });
    const replayed = requestsSince(receiver, n1)[1];
    expect(replayed.body).toBe(original.body);
    expect(replayed.headers["webhook-id"]).toBe(id);
    expect(replayed.headers["webhook-timestamp"]).not.toBe(original.headers["webhook-timestamp"]);
    expect(verify(a.signing_secret, replayed)).toBeTruthy();
    expect(requestsSince(receiver2, n2)[1].body).toBe(original.body);

    // b's delivery was pending a retry: the successful replay settled it.
    const ev = await app.call("GET", `${base(ws.id)}/events/${id}`, { token });
    expect(ev.body.deliveries.find((d: any) => d.endpoint_id === b.id)).toMatchObject({ status: "delivered", next_attempt_at: null });
    expect(ev.body.attempts.filter((x: any) => x.trigger === "replay")).toHaveLength(2);
    app.clock.advance(HOUR);
    const before = requestsFor(receiver2, id).length;
    await app.webhooks.deliverDue();
    expect(requestsFor(receiver2, id).length).toBe(before);

    // To one endpoint, also one that never had the event.
    const n3 = receiver.requests.length;
    receiver.setHandler(() => new Response("teapot", { status: 418 }));
    const one = await app.call("POST", `${base(ws.id)}/events/${id}/replay?endpoint_id=${c.id}`, { token });
    expect(one.body.data).toEqual([{ endpoint_id: c.id, succeeded: false, status_code: 418, latency_ms: expect.any(Number), error_class: "http_status", response_body: "teapot", trigger: "replay" }]);
    expect(requestsSince(receiver, n3)).toHaveLength(1);
    expect(requestsSince(receiver, n3)[0].body).toBe(original.body);
    const filtered = await app.call("GET", `${base(ws.id)}/events?endpoint_id=${c.id}`, { token });
    expect(filtered.body.data[0].deliveries.find((d: any) => d.endpoint_id === c.id)).toMatchObject({ status: "failed", attempts: 1, last_status_code: 418 });

    const other = await owner();
    const foreign = await createEndpoint(other.token, other.ws.id);
    expect((await app.call("POST", `${base(ws.id)}/events/${id}/replay?endpoint_id=${foreign.id}`, { token })).status).toBe(404);
    expect((await app.call("POST", `${base(ws.id)}/events/evt_${"0".repeat(32)}/replay`, { token })).status).toBe(404);
  });
});

describe("replay and endpoint health", () => {
  inProcess("emits through the in-process webhook engine (app.webhooks.emit) and pumps it by hand; compares the attempt's created_at with the injected clock after moving it")("the events list shows the replay as the latest attempt of a delivered event, like the event detail", async () => {
    const { token, ws } = await owner();
    const a = await createEndpoint(token, ws.id);
    const { id } = await app.webhooks.emit(app.ctx.db, { product: "mail", scopeId: ws.id }, "email.sent", { id: "m1" });
    await app.webhooks.dispatchPending();
    await app.webhooks.deliverDue();
    const listed = async () => (await app.call("GET", `${base(ws.id)}/events?endpoint_id=${a.id}`, { token })).body.data.find((e: any) => e.id === id).deliveries[0];
    expect(await listed()).toMatchObject({ status: "delivered", attempts: 1, last_status_code: 200, latest_attempt: { attempt_number: 1, trigger: "scheduled", status_code: 200 } });

    app.clock.advance(60_000);
    receiver.setHandler(() => new Response("accepted", { status: 202 }));
    expect((await app.call("POST", `${base(ws.id)}/events/${id}/replay`, { token })).body.data[0]).toMatchObject({ succeeded: true, status_code: 202 });
    const fresh = { status: "delivered", attempts: 2, last_status_code: 202, latest_attempt: { attempt_number: 2, trigger: "replay", status_code: 202, error_class: null, created_at: app.clock.iso() } };
    expect(await listed()).toMatchObject(fresh);
    const detail = (await app.call("GET", `${base(ws.id)}/events/${id}`, { token })).body;
    expect(detail.deliveries[0]).toEqual(await listed());
    expect(detail.attempts.at(-1)).toMatchObject({ attempt_number: 2, trigger: "replay", status_code: 202 });

    // A failed replay of a delivered event: still delivered, and the failure is the latest attempt.
    app.clock.advance(60_000);
    receiver.setHandler(() => new Response("nope", { status: 500 }));
    await app.call("POST", `${base(ws.id)}/events/${id}/replay?endpoint_id=${a.id}`, { token });
    expect(await listed()).toMatchObject({ status: "delivered", attempts: 3, last_status_code: 500, latest_attempt: { attempt_number: 3, trigger: "replay", error_class: "http_status" } });
  });

  inProcess("emits through the in-process webhook engine (app.webhooks.emit) and pumps it by hand and moves the injected clock to the retry")("a successful replay clears consecutive_failures and first_failure_at; a failed one does not add to them", async () => {
    const { token, ws } = await owner();
    const ep = await createEndpoint(token, ws.id);
    receiver.setHandler(() => new Response("down", { status: 503 }));
    const { id } = await app.webhooks.emit(app.ctx.db, { product: "mail", scopeId: ws.id }, "email.sent", { id: "m1" });
    await app.webhooks.dispatchPending();
    await app.webhooks.deliverDue();
    app.clock.advance(60_000);
    await app.webhooks.deliverDue();
    const read = async () => (await app.call("GET", `${base(ws.id)}/endpoints/${ep.id}`, { token })).body;
    const failing = await read();
    expect(failing).toMatchObject({ consecutive_failures: 2, first_failure_at: expect.any(String), status: "enabled" });

    expect((await app.call("POST", `${base(ws.id)}/events/${id}/replay`, { token })).body.data[0].succeeded).toBe(false);
    expect(await read()).toMatchObject({ consecutive_failures: 2, first_failure_at: failing.first_failure_at });

    receiver.setHandler(() => new Response("ok"));
    expect((await app.call("POST", `${base(ws.id)}/events/${id}/replay`, { token })).body.data[0].succeeded).toBe(true);
    expect(await read()).toMatchObject({ consecutive_failures: 0, first_failure_at: null, status: "enabled", enabled: true });
  });

  inProcess("emits through the in-process webhook engine (app.webhooks.emit) and pumps it by hand")("a successful test send clears the streak too (it is a delivery that reached the receiver)", async () => {
    const { token, ws } = await owner();
    const ep = await createEndpoint(token, ws.id);
    receiver.setHandler(() => new Response("down", { status: 500 }));
    await app.webhooks.emit(app.ctx.db, { product: "mail", scopeId: ws.id }, "email.sent", { id: "m1" });
    await app.webhooks.dispatchPending();
    await app.webhooks.deliverDue();
    expect((await app.call("GET", `${base(ws.id)}/endpoints/${ep.id}`, { token })).body.consecutive_failures).toBe(1);
    expect((await app.call("POST", `${base(ws.id)}/endpoints/${ep.id}/test`, { token, body: {} })).body.succeeded).toBe(false);
    expect((await app.call("GET", `${base(ws.id)}/endpoints/${ep.id}`, { token })).body.consecutive_failures).toBe(1);
    receiver.setHandler(() => new Response("ok"));
    expect((await app.call("POST", `${base(ws.id)}/endpoints/${ep.id}/test`, { token, body: {} })).body.succeeded).toBe(true);
    expect((await app.call("GET", `${base(ws.id)}/endpoints/${ep.id}`, { token })).body).toMatchObject({ consecutive_failures: 0, first_failure_at: null });
  });
});

describe("authorization", () => {
  const allow = (...actions: string[]) => [{ effect: "allow", actions, resources: ["*"] }];

  inProcess("reads the queued invitation mail (app.ctx.mailer) to add a member")("a plain member may read webhook configuration but not change it; an admin may write", async () => {
    const { token, session, ws } = await owner();
    const ep = await createEndpoint(token, ws.id);
    const member = await addMember(app, session, ws.slug);
    const w = await app.call("POST", `${base(ws.id)}/endpoints`, { token: member.token, body: { url: `${receiver.url}/x` } });
    expect(w.status).toBe(403);
    expect((await app.call("PATCH", `${base(ws.id)}/endpoints/${ep.id}`, { token: member.token, body: { description: "x" } })).status).toBe(403);
    expect((await app.call("DELETE", `${base(ws.id)}/endpoints/${ep.id}`, { token: member.token })).status).toBe(403);
    const read = await app.call("GET", `${base(ws.id)}/endpoints`, { token: member.token });
    expect(read.status).toBe(200);
    expect(read.body.data.map((e: any) => e.id)).toEqual([ep.id]);
    expect(read.body.data[0].signing_secret).toBeUndefined();
    const admin = await addMember(app, session, ws.slug, BUILTIN.admin);
    expect((await app.call("POST", `${base(ws.id)}/endpoints`, { token: admin.token, body: { url: `${receiver.url}/x` } })).status).toBe(201);
    expect((await app.call("GET", `${base(ws.id)}/endpoints`)).status).toBe(401);
  });

  test("API key with mail.webhooks.read only: reads yes, writes 403; other products 403; other workspace 404", async () => {
    const { session: token, ws } = await owner();
    const ep = await createEndpoint(token, ws.id);
    const minted = await app.call("POST", `/platform/v1/workspaces/${ws.slug}/api-keys`, { token, body: { name: "reader", policy: allow("mail.webhooks.read") } });
    expect(minted.status).toBe(201);
    const key = minted.body.key as string;
    expect((await app.call("GET", `${base(ws.id)}/endpoints`, { token: key })).status).toBe(200);
    expect((await app.call("GET", `${base(ws.id)}/endpoints/${ep.id}`, { token: key })).status).toBe(200);
    expect((await app.call("GET", `${base(ws.id)}/events`, { token: key })).status).toBe(200);
    const create = await app.call("POST", `${base(ws.id)}/endpoints`, { token: key, body: { url: `${receiver.url}/x` } });
    expect(create.status).toBe(403);
    expect((await app.call("POST", `${base(ws.id)}/endpoints/${ep.id}/test`, { token: key, body: {} })).status).toBe(403);
    expect((await app.call("POST", `${base(ws.id)}/endpoints/${ep.id}/rotate-secret`, { token: key, body: {} })).status).toBe(403);
    expect((await app.call("GET", `${base(ws.id, "waitlist")}/endpoints`, { token: key })).status).toBe(403);

    const writer = await app.call("POST", `/platform/v1/workspaces/${ws.slug}/api-keys`, { token, body: { name: "writer", policy: allow("mail.webhooks.read", "mail.webhooks.write") } });
    const wkey = writer.body.key as string;
    const made = await app.call("POST", `${base(ws.id)}/endpoints`, { token: wkey, body: { url: `${receiver.url}/x` }, headers: { "idempotency-key": "k1" } });
    expect(made.status).toBe(201);
    expect(made.body.signing_secret).toMatch(/^whsec_/);

    const other = await owner();
    expect((await app.call("GET", `${base(other.ws.id)}/endpoints`, { token: key })).status).toBe(404);
  });

  test("a product switched off for the workspace answers 403 SERVICE_NOT_ENABLED", async () => {
    const { session: token, ws } = await owner();
    expect((await app.call("DELETE", `/platform/v1/workspaces/${ws.slug}/services/mail`, { token })).status).toBe(200);
    const r = await app.call("GET", `${base(ws.id)}/endpoints`, { token });
    expect(r.status).toBe(403);
    expect(r.body.error.code).toBe("SERVICE_NOT_ENABLED");
    expect((await app.call("POST", `${base(ws.id)}/endpoints`, { token, body: { url: `${receiver.url}/x` } })).body.error.code).toBe("SERVICE_NOT_ENABLED");
    expect((await app.call("GET", `${base(ws.id, "waitlist")}/endpoints`, { token })).status).toBe(200);
    await app.call("PUT", `/platform/v1/workspaces/${ws.slug}/services/mail`, { token });
    expect((await app.call("GET", `${base(ws.id)}/endpoints`, { token })).status).toBe(200);
  });

  inProcess("reads the action catalogue (app.ctx.actions)")("the webhook actions are registered (policies can name them)", () => {
    for (const p of ["mail", "waitlist", "trawl"]) {
      expect(app.ctx.actions.has(`${p}.webhooks.read`)).toBe(true);
      expect(app.ctx.actions.has(`${p}.webhooks.write`)).toBe(true);
    }
  });
});

describe("OpenAPI", () => {
  test("per-service documents list the webhook routes with tags and summaries", async () => {
    for (const product of ["mail", "waitlist", "trawl"]) {
      const r = await app.call("GET", `/${product}/openapi.json`);
      expect(r.status).toBe(200);
      const paths = Object.keys(r.body.paths);
      const prefix = `/${product}/v1/workspaces/{workspace_id}/webhooks`;
      expect(paths).toEqual(
        expect.arrayContaining([
          `${prefix}/event-types`,
          `${prefix}/endpoints`,
          `${prefix}/endpoints/{id}`,
          `${prefix}/endpoints/{id}/test`,
          `${prefix}/endpoints/{id}/rotate-secret`,
          `${prefix}/events`,
          `${prefix}/events/{id}`,
          `${prefix}/events/{id}/replay`,
        ]),
      );
      for (const p of paths.filter((x) => x.startsWith(prefix))) {
        for (const op of Object.values(r.body.paths[p]) as any[]) {
          expect(op.tags?.length).toBeGreaterThan(0);
          expect(op.summary).toBeTruthy();
        }
      }
      expect(paths.some((p) => p.startsWith("/platform/"))).toBe(false);
    }
  });
});
