/** Webhook events of the waitlist scope, and sign-up rules that need a real client address. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Server } from "bun";
import { postFrom } from "../helpers/from-address";
import { startWebhookTestApp, stopWebhookTestApp } from "../helpers/webhook-app";
import type { TestApp } from "../helpers/app";
import type { Receiver } from "../helpers/http-receiver";
import { ON_BINARY } from "../helpers/target";
import { createWaitlist, join } from "../helpers/waitlist";

let app: TestApp;
let receiver: Receiver;
let server: Server<unknown>;
let origin: string;
beforeAll(async () => {
  ({ app, receiver } = await startWebhookTestApp({ WAITLIST_SIGNUPS_PER_IP_PER_MINUTE: "3" }));
  server = app.listen(0, "127.0.0.1");
  origin = `http://127.0.0.1:${server.port}`;
});
afterAll(async () => {
  await server.stop(true);
  await stopWebhookTestApp({ app, receiver });
});

async function delivered(count: number) {
  // Referral counts' entry.updated events come from their job (referrals.ts). In-process the
  // test runs it and pumps the engine; the binary's scheduler does both on its own.
  if (!ON_BINARY) {
    await app.ctx.scheduler.runNow("waitlist.referrals");
    await app.webhooks.dispatchPending();
    await app.webhooks.deliverDue();
  }
  return (await receiver.waitForRequests(count, ON_BINARY ? 15_000 : 5000)).map((r) => JSON.parse(r.body));
}

describe("events", () => {
  test("entry.created, entry.updated (referral count), entry.approved, entry.rejected, entry.deleted, waitlist.status_changed; catalogue lists them", async () => {
    const w = await createWaitlist(app, { open: false });
    const types = await app.call("GET", `/waitlist/v1/workspaces/${w.ws.id}/webhooks/event-types`, { token: w.token });
    expect(types.body.data.map((x: any) => x.type)).toEqual(expect.arrayContaining(["entry.created", "entry.updated", "entry.approved", "entry.rejected", "entry.invited", "entry.deleted", "waitlist.status_changed"]));
    const ep = await app.call("POST", `/waitlist/v1/workspaces/${w.ws.id}/webhooks/endpoints`, { token: w.token, body: { url: `${receiver.url}/wl` } });
    expect(ep.status).toBe(201);
    await app.call("PATCH", `${w.base}/status`, { token: w.token, body: { status: "open" } });
    const a = await join(app, w, { email: "a@example.com", name: "A" });
    const b = await join(app, w, { email: "b@example.com", referral_code: a.body.referral_code });
    await app.call("POST", `${w.base}/entries/${a.body.id}/approve`, { token: w.token });
    await app.call("POST", `${w.base}/entries/${b.body.id}/reject`, { token: w.token });
    await app.call("DELETE", `${w.base}/entries/${b.body.id}`, { token: w.token });
    const events = await delivered(8);
    const byType = (t: string) => events.filter((e) => e.type === t);
    expect(byType("waitlist.status_changed")[0].data).toMatchObject({ id: w.id, status: "open", previous_status: "draft" });
    expect(byType("entry.created").map((e) => e.data.email)).toEqual(["a@example.com", "b@example.com"]);
    expect(byType("entry.created")[1].data).toMatchObject({ referred_by_entry_id: a.body.id, position: 2, status: "pending" });
    const updates = byType("entry.updated").map((e) => e.data.changes.referral_count);
    // Both come from one run of the referrals job; concurrent deliveries may arrive in either order.
    expect(updates).toHaveLength(2);
    expect(updates).toEqual(expect.arrayContaining([{ from: 0, to: 1 }, { from: 1, to: 0 }]));
    expect(byType("entry.approved")[0].data).toMatchObject({ id: a.body.id, status: "approved", position: null });
    expect(byType("entry.rejected")[0].data).toMatchObject({ id: b.body.id, status: "rejected" });
    expect(byType("entry.deleted")[0].data).toMatchObject({ id: b.body.id, email: "b@example.com" });
  });

  test("approval_required false: sign-ups are approved at once", async () => {
    const w = await createWaitlist(app, { settings: { approval_required: false } });
    const r = await join(app, w, { email: "now@example.com" });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ status: "approved", position: null });
  });
});

describe("client addresses (real sockets)", () => {
  test("the per-address limit counts each address apart (3 per minute here: the 4th is 429); a burst is flagged in metadata.risk", async () => {
    const w = await createWaitlist(app);
    const url = `${origin}${w.pub}/entries`;
    const from2 = [];
    for (let i = 1; i <= 3; i++) from2.push(await postFrom("127.0.0.2", url, { email: `two${i}@example.com` }));
    expect(from2.map((r) => r.status)).toEqual([201, 201, 201]);
    const fourth = await postFrom("127.0.0.2", url, { email: "two4@example.com" });
    expect(fourth.status).toBe(429);
    expect(Number(fourth.headers["retry-after"])).toBeGreaterThan(0);
    expect((await postFrom("127.0.0.3", url, { email: "three1@example.com" })).status).toBe(201);

    const risk = async (id: string) => (await app.call("GET", `${w.base}/entries/${id}`, { token: w.token })).body.metadata.risk;
    expect(await risk(from2[0]!.body.id)).toBeUndefined();
    expect(await risk(from2[1]!.body.id)).toBeUndefined();
    expect(await risk(from2[2]!.body.id)).toEqual({ burst: true, signups_from_client_10m: 3 });
  });
});
