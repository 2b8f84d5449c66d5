/**
 * An endpoint auto-disabled by 20 consecutive failures (a real receiver answering 500) reads
 * disabled in every view until it is re-enabled: the shared record (enabled false, status
 * auto_disabled), the deprecated legacy record and the card board's record (active false), the
 * events log (no queued retry left), and nothing more is delivered to it. Events come from
 * ordinary API calls (job and card creates); in-process the test pumps the engine, on the
 * binary its own scheduler delivers.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ownerWithKey, type TestApp } from "../helpers/app";
import { ON_BINARY } from "../helpers/binary";
import type { Receiver } from "../helpers/http-receiver";
import { until } from "../helpers/until";
import { startWebhookTestApp, stopWebhookTestApp } from "../helpers/webhook-app";
import { card, newBoard } from "../tack/board-helpers";
import { createJob } from "../trawl/helpers";

let app: TestApp;
let receiver: Receiver;
beforeAll(async () => {
  ({ app, receiver } = await startWebhookTestApp());
  // /down is the failing receiver, anything else answers 200.
  receiver.setHandler((req) => (new URL(req.url).pathname === "/down" ? new Response("down", { status: 500 }) : new Response("ok")));
});
afterAll(() => stopWebhookTestApp({ app, receiver }));

const FAILURES = 20;

/** One pump step in-process; on the binary the process's scheduler delivers by itself. */
async function deliver() {
  if (ON_BINARY) return;
  await app.webhooks.dispatchPending();
  await app.webhooks.deliverDue();
}

/** Pumps until the shared record of the endpoint reads auto_disabled. */
function untilAutoDisabled(token: string, endpointUrl: string) {
  return until(`${endpointUrl} auto-disabled`, async () => {
    await deliver();
    const r = await app.call("GET", endpointUrl, { token });
    return r.body.status === "auto_disabled" ? r.body : null;
  });
}

/** Requests that reached `path` carrying an event whose data.id is `id`. */
const deliveredTo = (path: string, id: string) => receiver.requests.filter((q) => q.path === path && JSON.parse(q.body).data?.id === id);

describe("auto-disable after 20 consecutive failures", () => {
  test("extraction-job scope: the shared and the legacy records read disabled, no retry stays queued, nothing is delivered until PATCH active:true", async () => {
    const { token, ws } = await ownerWithKey(app);
    const S = `/trawl/v1/workspaces/${ws.id}/webhooks`;
    const legacy = await app.call("POST", S, { token, body: { url: `${receiver.url}/down` } });
    expect(legacy.status).toBe(201);
    const id = legacy.body.id as string;
    // A healthy endpoint of the same scope shows when an event has been fanned out.
    expect((await app.call("POST", `${S}/endpoints`, { token, body: { url: `${receiver.url}/ok` } })).status).toBe(201);

    for (let i = 0; i < FAILURES; i++) await createJob(app, token, ws.id);
    const shared = await untilAutoDisabled(token, `${S}/endpoints/${id}`);
    expect(shared).toMatchObject({ id, enabled: false, status: "auto_disabled", disabled_reason: "failing" });
    expect(shared.consecutive_failures).toBeGreaterThanOrEqual(FAILURES);

    const listed = (await app.call("GET", `${S}/endpoints`, { token })).body.data.find((e: any) => e.id === id);
    expect(listed).toEqual(shared);
    const record = (await app.call("GET", `${S}/${id}`, { token })).body;
    expect(record).toMatchObject({ id, active: false, last_status_code: 500 });
    expect(record.auto_disabled_at).toEqual(expect.any(String));
    expect(record.failure_count).toBe(shared.consecutive_failures);
    expect((await app.call("GET", S, { token })).body.data).toEqual([record]);
    // Queued retries were dropped: no delivery to it is pending any more.
    const pending = await app.call("GET", `${S}/events?endpoint_id=${id}&status=pending`, { token });
    expect(pending.status).toBe(200);
    expect(pending.body.data).toEqual([]);
    const failed = await app.call("GET", `${S}/events?endpoint_id=${id}&limit=100`, { token });
    expect(failed.body.data.length).toBeGreaterThanOrEqual(FAILURES);
    for (const e of failed.body.data) {
      const d = e.deliveries.find((x: any) => x.endpoint_id === id);
      expect(["failed", "not_sent"]).toContain(d.status);
      expect(d.next_attempt_at).toBeNull();
    }

    // A new event reaches the healthy endpoint and not the disabled one.
    const during = await createJob(app, token, ws.id);
    await until("the healthy endpoint got job.queued", async () => {
      await deliver();
      return deliveredTo("/ok", during.id).length > 0;
    });
    expect(deliveredTo("/down", during.id)).toEqual([]);
    const duringEvent = JSON.parse(deliveredTo("/ok", during.id)[0]!.body).id as string;
    const detail = await app.call("GET", `${S}/events/${duringEvent}`, { token });
    expect(detail.body.deliveries.map((d: any) => d.endpoint_id)).not.toContain(id);

    const on = await app.call("PATCH", `${S}/${id}`, { token, body: { active: true } });
    expect(on.status).toBe(200);
    expect(on.body).toMatchObject({ id, active: true, failure_count: 0, first_failure_at: null, auto_disabled_at: null });
    expect((await app.call("GET", `${S}/endpoints/${id}`, { token })).body).toMatchObject({ enabled: true, status: "enabled", disabled_reason: null, consecutive_failures: 0 });

    // Delivered again (the receiver still fails: the attempt is what matters).
    const after = await createJob(app, token, ws.id);
    await until("the re-enabled endpoint got job.queued", async () => {
      await deliver();
      return deliveredTo("/down", after.id).length > 0;
    });
  }, 60_000);

  test("card board: the board's record reads active false and the shared record enabled false until PATCH enabled:true", async () => {
    const b = await newBoard(app);
    const W = `/tack/api/v1/workspaces/${b.ws}/webhooks`;
    const reg = await app.call("POST", W, { token: b.token, body: { url: `${receiver.url}/down` } });
    expect(reg.status).toBe(201);
    const id = reg.body.id as string;

    for (let i = 0; i < FAILURES; i++) await card(app, b, { title: `card ${i}` });
    const shared = await untilAutoDisabled(b.token, `${W}/endpoints/${id}`);
    expect(shared).toMatchObject({ id, enabled: false, status: "auto_disabled", disabled_reason: "failing" });
    const record = (await app.call("GET", `${W}/${id}`, { token: b.token })).body;
    expect(record).toMatchObject({ id, active: false, status: "auto_disabled", disabled_reason: "failing" });
    expect((await app.call("GET", W, { token: b.token })).body.data).toEqual([record]);
    expect((await app.call("GET", `${W}/endpoints`, { token: b.token })).body.data).toEqual([shared]);

    const on = await app.call("PATCH", `${W}/endpoints/${id}`, { token: b.token, body: { enabled: true } });
    expect(on.status).toBe(200);
    expect(on.body).toMatchObject({ id, enabled: true, status: "enabled", disabled_reason: null, consecutive_failures: 0, first_failure_at: null });
    expect((await app.call("GET", `${W}/${id}`, { token: b.token })).body).toMatchObject({ active: true, status: "enabled", disabled_reason: null });
  }, 60_000);
});
