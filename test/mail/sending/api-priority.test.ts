// source-only: holds requests open inside the in-process app and reads its in-flight counter (app.ctx.metrics) around a hand-run delivery job
/**
 * The delivery worker yields to the API: rendering, DKIM signing and SMTP share the event
 * loop with requests, so while two or more requests are being handled it sends at most
 * CLAIM_BATCH_BUSY messages at a time, and up to CLAIM_BATCH when the API is idle. The
 * requests held open here are real ones (a body that never finishes arriving), counted by
 * the HTTP kernel like any other.
 */
import { afterAll, expect, test } from "bun:test";
import { API_BUSY_REQUESTS, CLAIM_BATCH, CLAIM_BATCH_BUSY } from "../../../src/services/mail/sending/service";
import { createTemplate, runDelivery, startSendingApp, workspaceWithDomain, type SendingEnv } from "../../helpers/mail-sending";
import { startSmtpSink } from "../../helpers/smtp-sink";

const cleanups: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c().catch(() => {});
});

async function queue(e: SendingEnv, n: number) {
  const w = await workspaceWithDomain(e);
  await createTemplate(e, w, { name: "note", subject: "Note {{n}}", body_html: "<p>Note {{n}}</p>" });
  const to = Array.from({ length: n }, (_, i) => `prio${i}@example.test`);
  const sent = await e.app.call("POST", `${w.base}/templates/note/send`, { token: w.token, body: { from: `hello@${w.fqdn}`, to, data: { n: 1 } } });
  expect(sent.status).toBe(202);
}

/** A request whose body never finishes arriving: in flight until `release`. */
function heldRequest(e: SendingEnv) {
  let close!: () => void;
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      c.enqueue(new TextEncoder().encode('{"name":'));
      close = () => c.error(new Error("released"));
    },
  });
  const done = e.app.app
    .handle(new Request("http://localhost/platform/v1/auth/signin", { method: "POST", headers: { "content-type": "application/json" }, body, duplex: "half" } as RequestInit))
    .catch(() => null);
  return { release: () => (close(), done) };
}

test("with the API idle the worker sends a claim's messages at once; with requests in flight, a couple at a time", async () => {
  expect(CLAIM_BATCH_BUSY).toBeLessThan(CLAIM_BATCH);
  const idleSink = await startSmtpSink({ dataDelayMs: 150 });
  const busySink = await startSmtpSink({ dataDelayMs: 150 });
  cleanups.push(() => idleSink.stop(), () => busySink.stop());

  const idle = await startSendingApp({ SMTP_RELAY_URL: idleSink.url });
  cleanups.push(() => idle.stop());
  idle.sending.autoKick = false;
  await queue(idle, 12);
  expect(idle.app.ctx.metrics.requestsInFlight).toBe(0);
  await runDelivery(idle);
  expect(idleSink.messages).toHaveLength(12);
  expect(idleSink.maxConcurrentData).toBeGreaterThan(CLAIM_BATCH_BUSY);

  const busy = await startSendingApp({ SMTP_RELAY_URL: busySink.url });
  cleanups.push(() => busy.stop());
  busy.sending.autoKick = false;
  await queue(busy, 12);
  const held = Array.from({ length: API_BUSY_REQUESTS }, () => heldRequest(busy));
  await Bun.sleep(20);
  expect(busy.app.ctx.metrics.requestsInFlight).toBe(API_BUSY_REQUESTS);
  await runDelivery(busy);
  expect(busySink.messages).toHaveLength(12); // it never stops: all delivered, just fewer at once
  expect(busySink.maxConcurrentData).toBeLessThanOrEqual(CLAIM_BATCH_BUSY);
  await Promise.all(held.map((h) => h.release()));
  // The kernel counts answered requests, failed ones included, out again.
  for (let i = 0; i < 50 && busy.app.ctx.metrics.requestsInFlight; i++) await Bun.sleep(10);
  expect(busy.app.ctx.metrics.requestsInFlight).toBe(0);
}, 60_000);
