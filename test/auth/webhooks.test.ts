/**
 * Auth webhooks end to end: endpoints of an App on the shared webhook routes
 * (/auth/v1/apps/{app_id}/webhooks/...), real deliveries to a loopback receiver, signatures
 * checked with the independent standardwebhooks library.
 */
import { afterAll, beforeAll, describe, expect, setSystemTime, test } from "bun:test";
import { Webhook } from "standardwebhooks";
import { ownerWithKey, startTestApp, type TestApp } from "../helpers/app";
import { claimsOf, createAuthApp, signupEndUser, type TestAuthApp } from "../helpers/auth";
import type { ReceivedRequest, Receiver } from "../helpers/http-receiver";
import { startWebhookTestApp, stopWebhookTestApp } from "../helpers/webhook-app";
import { inProcess } from "../helpers/target";

let app: TestApp;
let receiver: Receiver;
beforeAll(async () => {
  ({ app, receiver } = await startWebhookTestApp());
});
afterAll(() => stopWebhookTestApp({ app, receiver }));

const base = (a: { id: string }) => `/auth/v1/apps/${a.id}/webhooks`;

async function createEndpoint(a: TestAuthApp, path: string, event_types?: string[]) {
  const r = await app.call("POST", `${base(a)}/endpoints`, { token: a.key, body: { url: `${receiver.url}${path}`, ...(event_types ? { event_types } : {}) } });
  expect(r.status).toBe(201);
  expect(r.body.signing_secret).toMatch(/^whsec_/);
  return r.body as { id: string; signing_secret: string };
}

/** Fans the outbox out and sends everything due, as the scheduler would. */
async function deliver() {
  while ((await app.webhooks.dispatchPending()) > 0);
  await app.webhooks.deliverDue();
}

/** Verifies a received request with standardwebhooks at the app's clock; returns the payload. */
function verify(secret: string, req: ReceivedRequest): any {
  setSystemTime(app.clock.now());
  try {
    return new Webhook(secret).verify(req.body, {
      "webhook-id": req.headers["webhook-id"],
      "webhook-timestamp": req.headers["webhook-timestamp"],
      "webhook-signature": req.headers["webhook-signature"],
    });
  } finally {
    setSystemTime();
  }
}

const arrivedAt = (path: string) => receiver.requests.filter((r) => r.path === path);

describe("deliveries", () => {
  inProcess("drives the webhook engine by hand (app.webhooks.dispatchPending/deliverDue) to assert the exact set delivered at that point, absences included; deliveries by the binary's scheduler are checked in auth/every-route")("sign-up and sign-in reach the App's endpoints as user.created and user.signed_in, validly signed", async () => {
    const a = await createAuthApp(app);
    const all = await createEndpoint(a, `/${a.slug}/all`);
    const signins = await createEndpoint(a, `/${a.slug}/signins`, ["user.signed_in"]);

    const u = await signupEndUser(app, a);
    const userId = claimsOf(u.access).sub;
    const s = await app.call("POST", a.path("/auth/signin"), { body: { identifier: u.username, password: u.password }, headers: { "user-agent": "webhook-test" } });
    expect(s.status).toBe(200);
    await deliver();

    const got = arrivedAt(`/${a.slug}/all`);
    const events = got.map((r) => verify(all.signing_secret, r));
    // Sign-up also starts a session, but only the explicit sign-in is a user.signed_in.
    expect(events.map((e) => e.type).sort()).toEqual(["user.created", "user.signed_in"]);
    const created = events.find((e) => e.type === "user.created");
    expect(created.data).toMatchObject({ id: userId, app_id: a.id, username: u.username, email: u.email, signup_method: "password" });
    expect(JSON.stringify(created)).not.toContain(u.password);
    const signedIn = events.find((e) => e.type === "user.signed_in");
    expect(signedIn.data).toMatchObject({ user_id: userId, method: "password", mfa: false, user_agent: "webhook-test" });
    for (const [req, e] of got.map((r, i) => [r, events[i]] as const)) {
      expect(req.method).toBe("POST");
      expect(req.headers["webhook-id"]).toBe(e.id);
      expect(typeof e.created_at).toBe("string");
    }

    // The filtered endpoint got only its type.
    const only = arrivedAt(`/${a.slug}/signins`);
    expect(only.map((r) => verify(signins.signing_secret, r).type)).toEqual(["user.signed_in"]);
    // Each endpoint signs with its own secret: the other's secret does not verify.
    expect(() => verify(all.signing_secret, only[0])).toThrow();

    // The events log of the App shows both, delivered.
    const log = await app.call("GET", `${base(a)}/events`, { token: a.key });
    expect(log.status).toBe(200);
    const byType = Object.fromEntries(log.body.data.map((e: any) => [e.type, e.deliveries.map((d: any) => d.status)]));
    expect(byType["user.created"]).toEqual(["delivered"]);
    expect(byType["user.signed_in"].sort()).toEqual(["delivered", "delivered"]);
  });

  inProcess("drives the webhook engine by hand (app.webhooks.dispatchPending/deliverDue) to assert the exact set delivered at that point, absences included; deliveries by the binary's scheduler are checked in auth/every-route")("another App's events, in the same workspace, never reach this App's endpoints", async () => {
    const a = await createAuthApp(app);
    await createEndpoint(a, `/${a.slug}/iso`);
    const b = await app.call("POST", "/auth/v1/apps", { token: a.key, body: { slug: `${a.slug}-other`, display_name: "Other" } });
    expect(b.status).toBe(201);
    const other: TestAuthApp = { ...a, id: b.body.id, slug: b.body.slug, publishable_key: b.body.publishable_key, path: (p) => `/auth/${b.body.slug}/v1${p}` };
    await signupEndUser(app, other);
    await deliver();
    expect(arrivedAt(`/${a.slug}/iso`)).toHaveLength(0);
    await signupEndUser(app, a);
    await deliver();
    expect(arrivedAt(`/${a.slug}/iso`)).toHaveLength(1);
  });
});

describe("routes", () => {
  test("event-types lists the Auth catalogue", async () => {
    const a = await createAuthApp(app);
    const r = await app.call("GET", `${base(a)}/event-types`, { token: a.key });
    expect(r.status).toBe(200);
    const types = r.body.data.map((e: any) => e.type);
    expect(types).toEqual(expect.arrayContaining(["user.created", "user.signed_in", "user.email_verified", "user.deleted", "role.assigned", "role.removed", "tenant.created", "tenant.member.added"]));
    expect(types).not.toContain("email.delivered");
    for (const e of r.body.data) {
      expect(typeof e.description).toBe("string");
      expect(typeof e.example).toBe("object");
    }
  });

  test("another workspace's key gets 404 on the App's webhook routes", async () => {
    const a = await createAuthApp(app);
    const ep = await createEndpoint(a, `/${a.slug}/x`);
    const stranger = await ownerWithKey(app);
    const tries: [string, string, unknown?][] = [
      ["GET", `${base(a)}/event-types`],
      ["GET", `${base(a)}/endpoints`],
      ["POST", `${base(a)}/endpoints`, { url: `${receiver.url}/steal` }],
      ["GET", `${base(a)}/endpoints/${ep.id}`],
      ["PATCH", `${base(a)}/endpoints/${ep.id}`, { enabled: false }],
      ["POST", `${base(a)}/endpoints/${ep.id}/rotate-secret`, {}],
      ["DELETE", `${base(a)}/endpoints/${ep.id}`],
      ["GET", `${base(a)}/events`],
    ];
    for (const [method, path, body] of tries) {
      const r = await app.call(method, path, { token: stranger.token, body });
      expect([method, path, r.status]).toEqual([method, path, 404]);
    }
    // Nothing changed: the endpoint is still there and enabled for its owner.
    const still = await app.call("GET", `${base(a)}/endpoints/${ep.id}`, { token: a.key });
    expect(still.status).toBe(200);
    expect(still.body.enabled).toBe(true);
    expect((await app.call("GET", `${base(a)}/endpoints`, { token: a.key })).body.data).toHaveLength(1);
  });
});
