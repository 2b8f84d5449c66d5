/**
 * The Auth invite of an approved entry, seen by an API user: the entry's `invite` (pending at
 * approval, then sent or failed with the Auth App's error), the webhook events, and a refusal
 * by the Auth App (the email is already a user) recorded at once instead of retried.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ApiError } from "../../src/core/errors";
import { InviteFailure, NOTIFY_JOB } from "../../src/services/waitlist/entries/notify";
import { ownerWithKey, type TestApp } from "../helpers/app";
import type { Receiver } from "../helpers/http-receiver";
import { ON_BINARY } from "../helpers/target";
import { until } from "../helpers/until";
import { createWaitlist, join, type TestWaitlist } from "../helpers/waitlist";
import { startWebhookTestApp, stopWebhookTestApp } from "../helpers/webhook-app";

let app: TestApp;
let receiver: Receiver;
let owner: { token: string; ws: { id: string; slug: string } };
let appSlug: string;
let w: TestWaitlist;

beforeAll(async () => {
  ({ app, receiver } = await startWebhookTestApp());
  owner = await ownerWithKey(app);
  appSlug = `wl-inv-${Date.now().toString(36)}`;
  expect((await app.call("POST", "/auth/v1/apps", { token: owner.token, body: { workspace_id: owner.ws.id, slug: appSlug, display_name: "Acme App" } })).status).toBe(201);
  const s = await app.call("PUT", `/waitlist/v1/workspaces/${owner.ws.id}/waitlist/settings`, { token: owner.token, body: { default_auth_app_slug: appSlug } });
  expect(s.status).toBe(200);
  expect((await app.call("POST", `/waitlist/v1/workspaces/${owner.ws.id}/webhooks/endpoints`, { token: owner.token, body: { url: `${receiver.url}/wl` } })).status).toBe(201);
  w = await createWaitlist(app, { owner });
});
afterAll(() => stopWebhookTestApp({ app, receiver }));

const entry = async (id: string) => (await app.call("GET", `${w.base}/entries/${id}`, { token: owner.token })).body;

/** The entry once its invite left pending: in-process the test runs the job; the binary kicks it after the approval's commit. */
async function settled(id: string) {
  return until(`invite of ${id} settled`, async () => {
    if (!ON_BINARY) await app.ctx.scheduler.runNow(NOTIFY_JOB);
    const e = await entry(id);
    return e.invite?.status !== "pending" && e;
  });
}

/** The first delivered event of `type` about entry `id` (the test pumps deliveries in-process). */
async function delivered(type: string, id: string) {
  return until(`${type} for ${id} delivered`, async () => {
    if (!ON_BINARY) {
      await app.webhooks.dispatchPending();
      await app.webhooks.deliverDue();
    }
    return receiver.requests.map((r) => JSON.parse(r.body)).find((x) => x.type === type && x.data.id === id);
  });
}

describe("the invite of an approved entry", () => {
  test("the email already a user of the Auth App: failed at once with EMAIL_TAKEN, entry.invite_failed delivered, the approval stands", async () => {
    const user = await app.call("POST", `/auth/${appSlug}/v1/admin/users`, { token: owner.token, body: { email: "ada@example.com", password: "correct horse battery" } });
    expect(user.status).toBe(201);
    const s = await join(app, w, { email: "ada@example.com", name: "Ada" });
    expect(s.status).toBe(201);
    expect((await entry(s.body.id)).invite).toBeNull();

    const a = await app.call("POST", `${w.base}/entries/${s.body.id}/approve`, { token: owner.token });
    expect(a.status).toBe(200);
    expect(a.body.invite).toMatchObject({ status: "pending", app_slug: appSlug, attempts: 0, error: null });

    const e = await settled(s.body.id);
    expect(e).toMatchObject({ status: "approved", invited_at: null, invited_to_app_slug: null });
    expect(e.invite).toMatchObject({ status: "failed", app_slug: appSlug, attempts: 1, error: { code: "EMAIL_TAKEN" } });
    expect(e.invite.error.message).toContain("already exists");
    // The list shows the same.
    const listed = (await app.call("GET", `${w.base}/entries?status=approved&q=ada@`, { token: owner.token })).body.data[0];
    expect(listed.invite).toEqual(e.invite);

    const ev = await delivered("entry.invite_failed", s.body.id);
    expect(ev.data).toMatchObject({ id: s.body.id, status: "approved", invite: { status: "failed", error: { code: "EMAIL_TAKEN" } } });

    if (!ON_BINARY) {
      // Past every backoff: a refusal is not tried again.
      app.clock.advance(3 * 3600_000);
      await app.ctx.scheduler.runNow(NOTIFY_JOB);
      expect((await entry(s.body.id)).invite).toMatchObject({ status: "failed", attempts: 1 });
    }
  });

  test("a successful invite reads sent (the Auth App holds it), and entry.invited carries it", async () => {
    const s = await join(app, w, { email: "grace@example.com", name: "Grace" });
    expect((await app.call("POST", `${w.base}/entries/${s.body.id}/approve`, { token: owner.token })).status).toBe(200);
    const e = await settled(s.body.id);
    expect(e).toMatchObject({ status: "approved", invited_to_app_slug: appSlug });
    expect(typeof e.invited_at).toBe("string");
    expect(e.invite).toEqual({ status: "sent", app_slug: appSlug, attempts: 1, error: null, updated_at: e.invited_at });
    const invites = await app.call("GET", `/auth/${appSlug}/v1/invites`, { token: owner.token });
    expect(invites.body.data.map((i: any) => i.email)).toContain("grace@example.com");
    const ev = await delivered("entry.invited", s.body.id);
    expect(ev.data.invite).toMatchObject({ status: "sent", app_slug: appSlug });
  });

  test("no invite where none applies: a rejected entry, and a workspace without an Auth App", async () => {
    const s = await join(app, w, { email: "linus@example.com" });
    const r = await app.call("POST", `${w.base}/entries/${s.body.id}/reject`, { token: owner.token });
    expect(r.body).toMatchObject({ status: "rejected", invite: null });
    const plain = await createWaitlist(app);
    const p = await join(app, plain, { email: "x@example.com" });
    expect((await app.call("POST", `${plain.base}/entries/${p.body.id}/approve`, { token: plain.token })).body).toMatchObject({ status: "approved", invite: null });
  });

  test("the catalogue lists entry.invite_failed with an example of the failed invite", async () => {
    const types = await app.call("GET", `/waitlist/v1/workspaces/${owner.ws.id}/webhooks/event-types`, { token: owner.token });
    const t = types.body.data.find((x: any) => x.type === "entry.invite_failed");
    expect(t.example.invite).toMatchObject({ status: "failed", error: { code: "EMAIL_TAKEN" } });
  });
});

describe("which failures are retried", () => {
  test("a refusal by the Auth App (4xx but 408 and 429) is permanent; 5xx, 429 and internal errors are retried, the latter without their text", () => {
    expect(InviteFailure.from(new ApiError(409, "EMAIL_TAKEN", "A user with this email already exists"))).toMatchObject({ code: "EMAIL_TAKEN", permanent: true });
    expect(InviteFailure.from(new ApiError(400, "VALIDATION_ERROR", "Invalid invite")).permanent).toBe(true);
    expect(InviteFailure.from(new ApiError(503, "AUTH_UNAVAILABLE", "The Auth service is not mounted"))).toMatchObject({ code: "AUTH_UNAVAILABLE", permanent: false });
    expect(InviteFailure.from(new ApiError(429, "RATE_LIMITED", "Slow down")).permanent).toBe(false);
    const internal = InviteFailure.from(new Error("database is locked"));
    expect(internal).toMatchObject({ code: "INTERNAL_ERROR", permanent: false });
    expect(internal.message).not.toContain("database");
  });
});
