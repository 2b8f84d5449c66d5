/**
 * Every OpenAPI operation of the waitlist service, reached over HTTP with a success status
 * along its main flow: a workspace with an active mail domain (DNS records on a loopback DNS
 * server) and the three notification templates, an Auth app; the workspace's waitlist
 * settings; webhooks (the shared endpoints and the legacy records, test sends, rotated
 * secrets); a waitlist created, opened and given a second variant; public sign-ups (one by
 * referral) that get a welcome mail in a real SMTP sink; the admin side reading, counting,
 * exporting and editing entries, approving one (an Auth invite, accepted through the Auth API,
 * and the approved mail with the invite link), rejecting one, approving in bulk, deleting one;
 * analytics; the entry events delivered to a real receiver and verified with the independent
 * `standardwebhooks` package; the event log read and an event replayed; then the cleanup.
 *
 * Runs unchanged in-process (`npx bun test`, SQLite or PostgreSQL) and against the binary
 * (`npm run test:bin`). Notifications, mail delivery, referral counts and webhook deliveries
 * are the scheduler's: the binary's process runs its own; in-process, the one line below
 * starts the app's scheduler as `bunker serve` does. Either way the test waits for results
 * over HTTP (or at the sink and the receiver) with a deadline. Timestamps are checked for
 * shape and order, not against a clock.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHmac } from "node:crypto";
import { parse } from "csv-parse/sync";
import { ownerWithKey, startTestApp, type TestApp } from "../helpers/app";
import { startDnsServer, type TestDnsServer } from "../helpers/dns-server";
import { startReceiver, type ReceivedRequest, type Receiver } from "../helpers/http-receiver";
import { activeDomain } from "../helpers/mail-sending";
import { startSmtpSink, type SinkMessage, type SmtpSink } from "../helpers/smtp-sink";
import { ON_BINARY } from "../helpers/target";
import { until, verifyDelivery } from "../helpers/until";

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

let app: TestApp;
let dns: TestDnsServer;
let sink: SmtpSink;
let receiver: Receiver;
let owner: { token: string; ws: { id: string; slug: string } };

beforeAll(async () => {
  dns = await startDnsServer();
  sink = await startSmtpSink();
  receiver = startReceiver();
  app = await startTestApp({ ALLOW_PRIVATE_TARGETS: "true", DNS_SERVERS: dns.server, MAIL_HOSTNAME: "mx.bunker.test", SMTP_RELAY_URL: sink.url });
  // The process of `bunker serve` runs its scheduler; the in-process app starts it the same way.
  if (!ON_BINARY) app.ctx.scheduler.start();
  owner = await ownerWithKey(app);
});
afterAll(async () => {
  await app?.stop();
  await receiver?.stop();
  await sink?.stop();
  await dns?.stop();
});

const call = (method: string, path: string, body?: unknown, headers?: Record<string, string>) => app.call(method, path, { token: owner.token, body, headers });
const W = () => `/waitlist/v1/workspaces/${owner.ws.id}`;

const mailTo = (to: string, subject: string): Promise<SinkMessage> => sink.waitFor((m) => m.to.includes(to) && m.subject.includes(subject), 20_000);
/** The body of a mail as text (quoted-printable soft breaks and =3D undone). */
const flat = (m: SinkMessage) => m.raw.replace(/=\r?\n/g, "").replace(/=3D/g, "=");

const verify = (secret: string, req: ReceivedRequest) => verifyDelivery(app, secret, req);
const asWhsec = (legacySecret: string) => "whsec_" + Buffer.from(legacySecret, "utf8").toString("base64");
/** X-Waitlist-Signature, recomputed: `t=<unix>,v1=<hex HMAC-SHA256 of "<t>.<body>" keyed by the secret string>`. */
function legacySigned(secret: string, req: ReceivedRequest) {
  const m = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(req.headers["x-waitlist-signature"] ?? "");
  return !!m && m[2] === createHmac("sha256", secret).update(`${m[1]}.${req.body}`).digest("hex");
}
const at = (path: string) => receiver.requests.filter((r) => r.path === path);
const envelopes = (path: string) => at(path).map((r) => JSON.parse(r.body) as { id: string; type: string; data: any; test?: boolean });

// State carried through the flow.
let domain: { id: string; fqdn: string };
let appSlug: string;
let endpoint: { id: string; signing_secret: string };
let legacy: { id: string; signing_secret: string };
let wl: { id: string; slug: string; base: string; pub: string };
let bold: { id: string };
let ada: any;
let bob: any;
let carol: any;
let dave: any;

describe("waitlist, every route", () => {
  test("the workspace: mail domain and templates, an Auth app, then the waitlist settings that use them", async () => {
    const mailBase = `/mail/v1/workspaces/${owner.ws.id}`;
    const fqdn = `wl${Date.now() % 100000}.every-route.example`;
    const d = await activeDomain({ app, dns }, owner.token, mailBase, { fqdn });
    domain = { id: d.id, fqdn };
    const templates = [
      { name: "wl_welcome", subject: "Welcome to {{waitlist.display_name}}", body_html: "<p>Hi {{entry.name}}, your code is {{entry.referral_code}} - {{waitlist_brand.name}}</p>" },
      { name: "wl_approved", subject: "You are in, {{entry.name}}", body_html: "<p>{{waitlist_brand.name}} invites you: {{invite_link}}</p>" },
      { name: "wl_rejected", subject: "Sorry from {{waitlist_brand.name}}", body_html: "<p>Not this time, {{entry.name}}.</p>" },
    ];
    for (const t of templates) expect((await call("POST", `${mailBase}/templates`, t)).status).toBe(201);
    appSlug = `wl-every-${Date.now().toString(36)}`;
    expect((await call("POST", "/auth/v1/apps", { workspace_id: owner.ws.id, slug: appSlug, display_name: "Acme App" })).status).toBe(201);

    const defaults = await call("GET", `${W()}/waitlist/settings`);
    expect(defaults.status).toBe(200);
    expect(defaults.body).toMatchObject({ workspace_id: owner.ws.id, notifications_via_mail: false, updated_at: null });
    const settings = {
      default_sender_domain_id: domain.id,
      default_sender_address: `hello@${fqdn}`,
      default_auth_app_slug: appSlug,
      brand_name: "Acme Rockets",
      brand_logo_url: "https://acme.example/logo.png",
      primary_color: "#FF6600",
      notifications_via_mail: true,
      welcome_template_name: "wl_welcome",
      approved_template_name: "wl_approved",
      rejected_template_name: "wl_rejected",
    };
    const put = await call("PUT", `${W()}/waitlist/settings`, settings);
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject(settings);
    expect(put.body.updated_at).toMatch(ISO);
    expect((await call("GET", `${W()}/waitlist/settings`)).body).toEqual(put.body);
  });

  test("webhooks: a shared endpoint and a legacy record, event types, test sends, rotated secrets", async () => {
    const types = await call("GET", `${W()}/webhooks/event-types`);
    expect(types.status).toBe(200);
    expect(types.body.data.map((t: any) => t.type)).toEqual(expect.arrayContaining(["entry.created", "entry.updated", "entry.approved", "entry.rejected", "entry.invited", "entry.deleted", "waitlist.status_changed"]));

    const ep = await call("POST", `${W()}/webhooks/endpoints`, { url: `${receiver.url}/all`, description: "everything" }, { "idempotency-key": "every-route:ep" });
    expect(ep.status).toBe(201);
    expect(ep.body.id).toMatch(/^ep_/);
    expect(ep.body).toMatchObject({ event_types: [], enabled: true, status: "enabled" });
    endpoint = ep.body;
    const patched = await call("PATCH", `${W()}/webhooks/endpoints/${endpoint.id}`, { description: "every waitlist event" });
    expect(patched.status).toBe(200);
    expect((await call("GET", `${W()}/webhooks/endpoints/${endpoint.id}`)).body.description).toBe("every waitlist event");
    const rotated = await call("POST", `${W()}/webhooks/endpoints/${endpoint.id}/rotate-secret`, { grace_hours: 0 });
    expect(rotated.status).toBe(200);
    expect(rotated.body.signing_secret).toMatch(/^whsec_/);
    endpoint = { ...endpoint, signing_secret: rotated.body.signing_secret };
    const probe = await call("POST", `${W()}/webhooks/endpoints/${endpoint.id}/test`, { event_type: "entry.approved" });
    expect(probe.status).toBe(200);
    expect(probe.body).toMatchObject({ succeeded: true, status_code: 200, trigger: "test" });
    expect(verify(endpoint.signing_secret, at("/all").find((r) => r.headers["webhook-id"] === probe.body.event_id)!)).toMatchObject({ type: "entry.approved", data: { test: true } });

    const made = await call("POST", `${W()}/webhooks`, { url: `${receiver.url}/legacy-old` });
    expect(made.status).toBe(201);
    expect(made.headers.get("deprecation")).toBe("true");
    expect(made.body.id).toMatch(/^whk_/);
    legacy = made.body;
    const moved = await call("PATCH", `${W()}/webhooks/${legacy.id}`, { url: `${receiver.url}/legacy` });
    expect(moved.status).toBe(200);
    expect((await call("GET", `${W()}/webhooks/${legacy.id}`)).body).toMatchObject({ url: `${receiver.url}/legacy`, active: true });
    expect((await call("GET", `${W()}/webhooks`)).body.data.map((h: any) => h.id)).toEqual([legacy.id]);
    const rot = await call("POST", `${W()}/webhooks/${legacy.id}/rotate-secret`);
    expect(rot.status).toBe(201);
    legacy = { ...legacy, signing_secret: rot.body.signing_secret };
    const sent = await call("POST", `${W()}/webhooks/${legacy.id}/test`, { event_type: "entry.created" });
    expect(sent.status).toBe(202);
    const testReq = await until("the legacy test send", () => at("/legacy").find((r) => r.headers["webhook-id"] === sent.body.event_id));
    expect(verify(asWhsec(legacy.signing_secret), testReq)).toMatchObject({ type: "entry.created", data: { test: true } });
    expect(legacySigned(legacy.signing_secret, testReq)).toBe(true);
    const deliveries = await until("the test send in the deliveries", async () => {
      const d = await call("GET", `${W()}/webhooks/${legacy.id}/deliveries`);
      expect(d.status).toBe(200);
      return d.body.data.length ? d.body.data : null;
    });
    expect(deliveries[0]).toMatchObject({ event_id: sent.body.event_id, trigger: "test", status_code: 200 });
    const all = await call("GET", `${W()}/webhooks/endpoints`);
    expect(all.status).toBe(200);
    expect(all.body.data.map((e: any) => e.id).sort()).toEqual([endpoint.id, legacy.id].sort());
  });

  test("a waitlist: created (Idempotency-Key replayed), listed, read, updated, opened; a second variant; the public page", async () => {
    const body = { slug: "rockets", display_name: "Rocket beta", description: "Early access", settings: { referral_boost: 2, invite_accept_url: "https://acme.example/join", custom_fields: [{ name: "company", type: "text" }] } };
    const created = await call("POST", `${W()}/waitlists`, body, { "idempotency-key": "every-route:wl" });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ slug: "rockets", workspace_slug: owner.ws.slug, status: "draft", settings: { referral_boost: 2, approval_required: true, invite_accept_url: "https://acme.example/join" } });
    const replay = await call("POST", `${W()}/waitlists`, body, { "idempotency-key": "every-route:wl" });
    expect(replay.headers.get("idempotent-replay")).toBe("true");
    expect(replay.body.id).toBe(created.body.id);
    wl = { id: created.body.id, slug: "rockets", base: `${W()}/waitlists/${created.body.id}`, pub: `/waitlist/v1/waitlists/${owner.ws.slug}/rockets` };
    const drafts = await call("GET", `${W()}/waitlists?status=draft`);
    expect(drafts.status).toBe(200);
    expect(drafts.body.data.map((w: any) => w.id)).toEqual([wl.id]);
    const patched = await call("PATCH", wl.base, { description: "Early access to the rocket", settings: { max_entries: 100 } });
    expect(patched.status).toBe(200);
    expect(patched.body.settings).toMatchObject({ referral_boost: 2, max_entries: 100 });
    expect((await call("GET", wl.base)).body.description).toBe("Early access to the rocket");
    const opened = await call("PATCH", `${wl.base}/status`, { status: "open" });
    expect(opened.status).toBe(200);
    expect(opened.body.status).toBe("open");

    const variants = await call("GET", `${wl.base}/variants`);
    expect(variants.status).toBe(200);
    expect(variants.body.data.map((v: any) => v.name)).toEqual(["default"]);
    const b = await call("POST", `${wl.base}/variants`, { name: "bold", display_name: "Join the future", cta_text: "Get early access", weight: 1 });
    expect(b.status).toBe(201);
    bold = b.body;
    const weighted = await call("PATCH", `${wl.base}/variants/${bold.id}`, { weight: 3 });
    expect(weighted.status).toBe(200);
    expect(weighted.body).toMatchObject({ name: "bold", weight: 3, active: true });

    const page = await app.call("GET", `${wl.pub}?visitor=every-route`);
    expect(page.status).toBe(200);
    expect(page.body).toMatchObject({ slug: "rockets", display_name: "Rocket beta", status: "open", brand_name: "Acme Rockets", primary_color: "#FF6600" });
    expect(["default", "bold"]).toContain(page.body.variant.name);
    expect((await app.call("GET", `${wl.pub}?visitor=every-route`)).body.variant.id).toBe(page.body.variant.id);
  });

  test("public sign-ups (one by referral) get the welcome mail; the admin side lists, counts, reads, edits and exports them", async () => {
    const join = (body: Record<string, unknown>) => app.call("POST", `${wl.pub}/entries`, { body });
    const a = await join({ email: "ada@example.com", name: "Ada", custom_fields: { company: "Analytical" }, utm: { source: "hn" } });
    expect(a.status).toBe(201);
    ada = a.body;
    // The public answer: the entry's place and referral code, not its data.
    expect(ada).toMatchObject({ position: 1, status: "pending", referral_count: 0 });
    expect(ada.referral_code).toMatch(/^[A-Za-z0-9]{8}$/);
    expect(ada.email).toBeUndefined();
    const again = await join({ email: "ada@example.com" });
    expect(again.status).toBe(200);
    expect(again.body.id).toBe(ada.id);
    bob = (await join({ email: "bob@example.com", name: "Bob", referral_code: ada.referral_code, variant_id: bold.id })).body;
    expect(bob).toMatchObject({ position: 2, status: "pending" });
    carol = (await join({ email: "carol@example.com", name: "Carol" })).body;
    dave = (await join({ email: "dave@example.com", name: "Dave" })).body;

    const welcome = await mailTo("ada@example.com", "Welcome to Rocket beta");
    expect(flat(welcome)).toContain(ada.referral_code);
    expect(flat(welcome)).toContain("Acme Rockets");
    expect(welcome.headerFrom).toContain(`hello@${domain.fqdn}`);

    // Ada's referral counts once the referrals job has run.
    const adaRead = await until("ada's referral count", async () => {
      const r = await call("GET", `${wl.base}/entries/${ada.id}`);
      expect(r.status).toBe(200);
      return r.body.referral_count === 1 ? r.body : null;
    });
    expect(adaRead).toMatchObject({ email: "ada@example.com", name: "Ada", status: "pending" });
    expect((await call("GET", `${wl.base}/entries/${bob.id}`)).body.referred_by_entry_id).toBe(ada.id);

    const pending = await call("GET", `${wl.base}/entries?status=pending`);
    expect(pending.status).toBe(200);
    expect(pending.body.data.map((e: any) => e.email)).toEqual(["ada@example.com", "bob@example.com", "carol@example.com", "dave@example.com"]);
    const count = await call("GET", `${wl.base}/entries/count`);
    expect(count.status).toBe(200);
    expect(count.body).toEqual({ total: 4, pending: 4, approved: 0, rejected: 0 });
    const edited = await call("PATCH", `${wl.base}/entries/${carol.id}`, { name: "Carol C.", metadata: { vip: true } });
    expect(edited.status).toBe(200);
    expect(edited.body).toMatchObject({ name: "Carol C.", metadata: { vip: true } });

    const csv = await app.call("GET", `${wl.base}/entries/export.csv`, { token: owner.token });
    expect(csv.status).toBe(200);
    expect(csv.headers.get("content-type")).toContain("text/csv");
    const rows = parse(csv.body as string, { columns: true }) as Record<string, string>[];
    expect(rows.map((r) => r.email)).toEqual(["ada@example.com", "bob@example.com", "carol@example.com", "dave@example.com"]);
    expect(rows[0]).toMatchObject({ name: "Ada", "custom.company": "Analytical", utm_source: "hn", status: "pending" });
  });

  test("approve (Auth invite, accepted through the Auth API; the approved mail), reject, bulk approve, delete; analytics", async () => {
    const approved = await call("POST", `${wl.base}/entries/${ada.id}/approve`);
    expect(approved.status).toBe(200);
    expect(approved.body).toMatchObject({ id: ada.id, status: "approved", position: null });
    const mail = await mailTo("ada@example.com", "You are in, Ada");
    expect(flat(mail)).toContain("Acme Rockets invites you");
    // The invite link points at the waitlist's invite_accept_url with the Auth invite's code.
    expect(flat(mail)).toContain("https://acme.example/join?");
    const code = /invite_code=(inv_[A-Za-z0-9]{32})/.exec(flat(mail))?.[1];
    expect(code).toBeDefined();
    const invited = await call("GET", `${wl.base}/entries/${ada.id}`);
    expect(invited.body).toMatchObject({ status: "approved", invited_to_app_slug: appSlug });
    expect(invited.body.invited_at).toMatch(ISO);
    const accepted = await app.call("POST", `/auth/${appSlug}/v1/auth/accept-invite`, { body: { code, password: "correct horse battery staple" } });
    expect(accepted.status).toBe(200);
    expect(typeof accepted.body.access_token).toBe("string");

    const rejected = await call("POST", `${wl.base}/entries/${carol.id}/reject`);
    expect(rejected.status).toBe(200);
    expect(rejected.body.status).toBe("rejected");
    await mailTo("carol@example.com", "Sorry from Acme Rockets");

    const bulk = await call("POST", `${wl.base}/entries/bulk`, { action: "approve", entry_ids: [bob.id] });
    expect(bulk.status).toBe(200);
    expect(bulk.body.count).toBe(1);
    await mailTo("bob@example.com", "You are in, Bob");

    expect((await call("DELETE", `${wl.base}/entries/${dave.id}`)).status).toBe(204);
    expect((await call("GET", `${wl.base}/entries/${dave.id}`)).status).toBe(404);
    expect((await call("GET", `${wl.base}/entries/count`)).body).toEqual({ total: 3, pending: 0, approved: 2, rejected: 1 });
    expect((await call("GET", `${wl.base}/entries?status=approved`)).body.data.map((e: any) => e.email).sort()).toEqual(["ada@example.com", "bob@example.com"]);

    const stats = await call("GET", `${wl.base}/analytics`);
    expect(stats.status).toBe(200);
    expect(stats.body.daily).toHaveLength(30);
    expect(stats.body.totals).toMatchObject({ approvals: 2, rejections: 1, referrals: 1 });
    expect(stats.body.totals.signups).toBeGreaterThanOrEqual(3);
    expect(stats.body.top_referrers).toEqual([expect.objectContaining({ entry_id: ada.id, referral_count: 1 })]);
    const shown = stats.body.variants.filter((v: any) => v.variant_id).map((v: any) => [v.name, v.signups]);
    expect(shown).toContainEqual(["bold", 1]);
    expect(shown.map(([name]: [string]) => name).sort()).toEqual(["bold", "default"]);
  });

  test("the entry events reach both webhooks signed; the event log, one event's attempts and a replay", async () => {
    // The real events (the test send of the first test carried test: true), as they arrive.
    const real = () => envelopes("/all").filter((e) => !e.test);
    const has = (type: string, id: string) => real().some((e) => e.type === type && e.data?.id === id);
    await until("the waitlist events at /all", () =>
      has("waitlist.status_changed", wl.id) &&
      [ada, bob, carol, dave].every((e) => has("entry.created", e.id)) &&
      real().some((e) => e.type === "entry.updated" && e.data?.id === ada.id && e.data.changes?.referral_count) &&
      has("entry.approved", ada.id) && has("entry.approved", bob.id) && has("entry.invited", ada.id) &&
      has("entry.rejected", carol.id) && has("entry.deleted", dave.id),
    );
    const byType = (t: string) => at("/all").filter((r) => JSON.parse(r.body).type === t && !JSON.parse(r.body).test).map((r) => verify(endpoint.signing_secret, r));
    expect(byType("waitlist.status_changed")[0].data).toMatchObject({ id: wl.id, status: "open", previous_status: "draft" });
    expect(byType("entry.created").map((e) => e.data.email).sort()).toEqual(["ada@example.com", "bob@example.com", "carol@example.com", "dave@example.com"]);
    expect(byType("entry.updated").map((e) => e.data)).toContainEqual(expect.objectContaining({ id: ada.id, changes: { referral_count: { from: 0, to: 1 } } }));
    expect(byType("entry.approved").map((e) => e.data.id).sort()).toEqual([ada.id, bob.id].sort());
    expect(byType("entry.invited").map((e) => e.data.id)).toContain(ada.id);
    expect(byType("entry.rejected")[0].data).toMatchObject({ id: carol.id, status: "rejected" });
    expect(byType("entry.deleted")[0].data).toMatchObject({ id: dave.id, email: "dave@example.com" });
    // The legacy record hears the same events, with both signature schemes.
    const legacyCreated = await until("entry.created at the legacy record", () => at("/legacy").find((r) => JSON.parse(r.body).type === "entry.created"));
    expect(verify(asWhsec(legacy.signing_secret), legacyCreated).type).toBe("entry.created");
    expect(legacySigned(legacy.signing_secret, legacyCreated)).toBe(true);

    const log = await call("GET", `${W()}/webhooks/events?type=entry.rejected`);
    expect(log.status).toBe(200);
    expect(log.body.data).toHaveLength(1);
    const ev = log.body.data[0];
    await until("the rejected event delivered to both", async () => {
      const e = (await call("GET", `${W()}/webhooks/events/${ev.id}`)).body;
      return e.deliveries.length === 2 && e.deliveries.every((d: any) => d.status === "delivered");
    });
    const detail = await call("GET", `${W()}/webhooks/events/${ev.id}`);
    expect(detail.status).toBe(200);
    expect(detail.body.payload).toMatchObject({ id: ev.id, type: "entry.rejected", data: { id: carol.id } });
    expect(detail.body.attempts.map((a: any) => a.status_code)).toEqual([200, 200]);

    const before = at("/all").length;
    const replay = await call("POST", `${W()}/webhooks/events/${ev.id}/replay?endpoint_id=${endpoint.id}`);
    expect(replay.status).toBe(200);
    expect(replay.body.data).toEqual([expect.objectContaining({ endpoint_id: endpoint.id, succeeded: true, status_code: 200, trigger: "replay" })]);
    const resent = at("/all").slice(before);
    expect(resent).toHaveLength(1);
    expect(resent[0]!.headers["webhook-id"]).toBe(ev.id);
    expect(verify(endpoint.signing_secret, resent[0]!)).toMatchObject({ id: ev.id, type: "entry.rejected" });
  });

  test("cleanup: a variant, the webhooks, the waitlist", async () => {
    expect((await call("DELETE", `${wl.base}/variants/${bold.id}`)).status).toBe(204);
    expect((await call("GET", `${wl.base}/variants`)).body.data.map((v: any) => v.name)).toEqual(["default"]);
    expect((await call("DELETE", `${W()}/webhooks/endpoints/${endpoint.id}`)).status).toBe(204);
    expect((await call("GET", `${W()}/webhooks/endpoints/${endpoint.id}`)).status).toBe(404);
    const gone = await call("DELETE", `${W()}/webhooks/${legacy.id}`);
    expect(gone.status).toBe(204);
    expect(gone.headers.get("deprecation")).toBe("true");
    expect((await call("DELETE", wl.base)).status).toBe(204);
    expect((await call("GET", wl.base)).status).toBe(404);
    expect((await app.call("GET", wl.pub)).status).toBe(404);
    expect((await call("GET", `${W()}/waitlists`)).body.data).toEqual([]);
  });
});
