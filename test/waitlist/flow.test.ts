/**
 * The cross-service flow on a real app: settings checked against mail and Auth, sign-up ->
 * welcome mail, approve -> Auth invite (accepted through the Auth API) -> approved mail with the
 * brand in a real SMTP sink, reject -> rejected mail; webhooks received by a real HTTP receiver
 * and verified with standardwebhooks; a failed mail never undoes the approval and is retried.
 */
import { afterAll, beforeAll, describe, expect, setSystemTime, test } from "bun:test";
import { Webhook } from "standardwebhooks";
import { ownerWithKey } from "../helpers/app";
import { startReceiver, type Receiver } from "../helpers/http-receiver";
import { createTemplate, startSendingApp, workspaceWithDomain, type MailWorkspace, type SendingEnv } from "../helpers/mail-sending";
import { startSmtpSink, type SmtpSink } from "../helpers/smtp-sink";
import { inProcess, ON_BINARY } from "../helpers/target";
import { createWaitlist, join, type TestWaitlist } from "../helpers/waitlist";
import { NOTIFY_JOB, notificationsOf } from "../../src/services/waitlist/entries/notify";

let e: SendingEnv;
let sink: SmtpSink;
let receiver: Receiver;
let mail: MailWorkspace;
let owner: { token: string; ws: { id: string; slug: string } };
let appSlug: string;
let w: TestWaitlist;

const tpl = (name: string, subject: string, html: string) => ({ name, subject, body_html: `<html><body>${html}</body></html>` });

beforeAll(async () => {
  sink = await startSmtpSink();
  receiver = startReceiver();
  e = await startSendingApp({ SMTP_RELAY_URL: sink.url, ALLOW_PRIVATE_TARGETS: "true" });
  owner = await ownerWithKey(e.app);
  mail = await workspaceWithDomain(e, owner);
  await createTemplate(e, mail, tpl("wl_welcome", "Welcome to {{waitlist.display_name}}", "<p>Hi {{entry.name}}, your code is {{entry.referral_code}} - {{waitlist_brand.name}}</p>"));
  await createTemplate(e, mail, tpl("wl_approved", "You are in, {{entry.name}}", '<p style="color: {{waitlist_brand.primary_color}}">{{waitlist_brand.name}} invites you: {{invite_link}}</p>'));
  await createTemplate(e, mail, tpl("wl_rejected", "Sorry from {{waitlist_brand.name}}", "<p>Not this time, {{entry.name}}.</p>"));
  appSlug = `wl-app-${Date.now().toString(36)}`;
  const app = await e.app.call("POST", "/auth/v1/apps", { token: owner.token, body: { workspace_id: owner.ws.id, slug: appSlug, display_name: "Acme App" } });
  expect(app.status).toBe(201);
  w = await createWaitlist(e.app, { owner, settings: { invite_accept_url: "https://acme.example/join" } });
});
afterAll(async () => {
  await e.stop();
  await sink.stop();
  await receiver.stop();
});

const settingsPath = () => `/waitlist/v1/workspaces/${owner.ws.id}/waitlist/settings`;
/** In-process the test runs the notification job; the binary's job is kicked after each commit. */
const runNotify = async () => {
  if (!ON_BINARY) await e.app.ctx.scheduler.runNow(NOTIFY_JOB);
};
/** Mail reaches the sink in the background on the binary (notification job, then mail delivery). */
const MAIL_WAIT = ON_BINARY ? 15_000 : 5000;

describe("workspace waitlist settings", () => {
  test("GET before any PUT: defaults with updated_at null; PUT checks every reference (400 lists each problem)", async () => {
    const g = await e.app.call("GET", settingsPath(), { token: owner.token });
    expect(g.body).toMatchObject({ workspace_id: owner.ws.id, notifications_via_mail: false, updated_at: null });
    const bad = await e.app.call("PUT", settingsPath(), {
      token: owner.token,
      body: { default_sender_domain_id: "0192f39e-1b44-7c3d-8e02-6a9b1d7f0c25", default_auth_app_slug: "no-such-app", welcome_template_name: "nope", primary_color: "red" },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.map((d: any) => d.field).sort()).toEqual(["default_auth_app_slug", "default_sender_domain_id", "primary_color", "welcome_template_name"]);
    const missing = await e.app.call("PUT", settingsPath(), { token: owner.token, body: { notifications_via_mail: true } });
    expect(missing.body.error.details.map((d: any) => d.field).sort()).toEqual(["approved_template_name", "default_sender_address", "default_sender_domain_id", "rejected_template_name", "welcome_template_name"]);
    const offDomain = await e.app.call("PUT", settingsPath(), { token: owner.token, body: { default_sender_domain_id: mail.domainId, default_sender_address: "hello@elsewhere.example" } });
    expect(offDomain.body.error.details).toEqual([{ field: "default_sender_address", reason: `must be an address on ${mail.fqdn}` }]);
    // A domain the settings use cannot be deleted (checked after the PUT below).
  });

  test("a complete PUT is stored and returned; the mail domain it uses answers 409 DOMAIN_IN_USE on delete", async () => {
    const ok = await e.app.call("PUT", settingsPath(), {
      token: owner.token,
      body: {
        default_sender_domain_id: mail.domainId, default_sender_address: `hello@${mail.fqdn}`, default_auth_app_slug: appSlug, brand_name: "Acme Rockets", brand_logo_url: "https://acme.example/logo.png",
        primary_color: "#FF6600", notifications_via_mail: true, welcome_template_name: "wl_welcome", approved_template_name: "wl_approved", rejected_template_name: "wl_rejected",
      },
    });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ brand_name: "Acme Rockets", notifications_via_mail: true, default_auth_app_slug: appSlug });
    expect(typeof ok.body.updated_at).toBe("string");
    expect((await e.app.call("DELETE", `${mail.base}/domains/${mail.domainId}`, { token: owner.token })).status).toBe(409);
    const pub = await e.app.call("GET", w.pub);
    expect(pub.body).toMatchObject({ brand_name: "Acme Rockets", brand_logo_url: "https://acme.example/logo.png", primary_color: "#FF6600" });
  });
});

describe("sign-up -> approve -> invite -> mail, with webhooks", () => {
  test("the whole flow", async () => {
    const ep = await e.app.call("POST", `/waitlist/v1/workspaces/${owner.ws.id}/webhooks/endpoints`, { token: owner.token, body: { url: `${receiver.url}/hooks` } });
    expect(ep.status).toBe(201);
    const secret = ep.body.signing_secret ?? ep.body.secret;

    const s = await join(e.app, w, { email: "grace@example.com", name: "Grace" });
    expect(s.status).toBe(201);
    await runNotify();
    const welcome = await sink.waitFor((m) => m.to.includes("grace@example.com") && m.raw.includes("Welcome to"), MAIL_WAIT);
    expect(welcome.raw).toContain(s.body.referral_code);
    expect(welcome.raw).toContain("Acme Rockets");

    const a = await e.app.call("POST", `${w.base}/entries/${s.body.id}/approve`, { token: owner.token });
    expect(a.status).toBe(200);
    await runNotify();
    // The approved mail is sent after the invite is made: once it is here, the entry shows the invite.
    const approved = await sink.waitFor((m) => m.to.includes("grace@example.com") && m.raw.includes("You are in"), MAIL_WAIT);
    const entry = await e.app.call("GET", `${w.base}/entries/${s.body.id}`, { token: owner.token });
    expect(entry.body).toMatchObject({ status: "approved", invited_to_app_slug: appSlug });
    expect(typeof entry.body.invited_at).toBe("string");
    const flat = approved.raw.replace(/=\r?\n/g, "").replace(/=3D/g, "=");
    expect(flat).toContain("Acme Rockets invites you");
    expect(flat).toMatch(/#FF6600/i);
    const code = /invite_code=(inv_[A-Za-z0-9]{32})/.exec(flat)![1]!;

    const accepted = await e.app.call("POST", `/auth/${appSlug}/v1/auth/accept-invite`, { body: { code, password: "correct horse battery staple" } });
    expect(accepted.status).toBe(200);
    expect(typeof accepted.body.access_token).toBe("string");

    if (!ON_BINARY) {
      await e.app.webhooks.dispatchPending();
      await e.app.webhooks.deliverDue();
    }
    // entry.created, entry.approved, entry.invited (in-process the pump also fans out the waitlist's
    // earlier status change, emitted before the endpoint existed; the binary dispatched that one at once).
    const got = await receiver.waitForRequests(3, ON_BINARY ? 15_000 : 5000);
    setSystemTime(e.app.clock.now());
    try {
      const types = got.map((r) => new Webhook(secret).verify(r.body, { "webhook-id": r.headers["webhook-id"]!, "webhook-timestamp": r.headers["webhook-timestamp"]!, "webhook-signature": r.headers["webhook-signature"]! }) as any).map((x) => x.type);
      expect(types).toEqual(expect.arrayContaining(["entry.created", "entry.approved", "entry.invited"]));
    } finally {
      setSystemTime();
    }

    const r = await join(e.app, w, { email: "linus@example.com", name: "Linus" });
    await e.app.call("POST", `${w.base}/entries/${r.body.id}/reject`, { token: owner.token });
    await runNotify();
    await sink.waitFor((m) => m.to.includes("linus@example.com") && m.raw.includes("Sorry from"), MAIL_WAIT);
  });

  inProcess("reads the notification rows from the store (app.ctx.db) and moves the injected clock to the retry")("a failed mail never rolls back the approval and is retried", async () => {
    const s = await join(e.app, w, { email: "retry@example.com", name: "Retry" });
    await runNotify();
    // The approved template disappears: the mail fails, the approval stands.
    expect((await e.app.call("DELETE", `${mail.base}/templates/wl_approved`, { token: owner.token })).status).toBe(204);
    expect((await e.app.call("POST", `${w.base}/entries/${s.body.id}/approve`, { token: owner.token })).status).toBe(200);
    await runNotify();
    const rows = (await notificationsOf(e.app.ctx.db, s.body.id)).filter((x) => x.kind === "approved");
    expect(rows[0]).toMatchObject({ state: "pending", attempts: 1 });
    expect((await e.app.call("GET", `${w.base}/entries/${s.body.id}`, { token: owner.token })).body).toMatchObject({ status: "approved", invited_to_app_slug: appSlug });
    await createTemplate(e, mail, tpl("wl_approved", "You are in, {{entry.name}}", "<p>{{waitlist_brand.name}} invites you: {{invite_link}}</p>"));
    e.app.clock.advance(31_000);
    await runNotify();
    const done = (await notificationsOf(e.app.ctx.db, s.body.id)).filter((x) => x.kind === "approved");
    expect(done[0]).toMatchObject({ state: "done", attempts: 2 });
    const m = await sink.waitFor((x) => x.to.includes("retry@example.com") && x.raw.includes("You are in"));
    // The invite made on the first attempt is the one mailed on the retry.
    expect(m.raw.replace(/=\r?\n/g, "").replace(/=3D/g, "=")).toMatch(/invite_code=inv_[A-Za-z0-9]{32}/);
  });
});
