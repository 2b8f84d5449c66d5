/**
 * Every operation of the mail service's OpenAPI, reached the way a user of the product
 * reaches it, over HTTP and SMTP only (in-process, on PostgreSQL and against the compiled
 * binary alike):
 *
 *   webhook endpoint (a real receiver) -> domain -> its DNS records published on a loopback
 *   DNS server -> verify -> brand and templates -> send through a real SMTP relay (DKIM checked
 *   by mailauth against that DNS server) -> message status, body, log -> a mailbox receiving
 *   mail over SMTP (raw, attachment, read, delete) -> a delivery report at the VERP address ->
 *   a bounce, suppressions, forget, settings, timeline, export, deliverability -> the events
 *   log (read, replay), secret rotation -> the deprecated per-workspace webhook surface.
 *
 * Background work (delivery by the outbound worker, webhook deliveries) is waited for by
 * polling with a deadline: in-process the after-commit kicks run it, on the binary the
 * process's own scheduler does. Timestamps are checked for format and order, not against a
 * clock. The tests run in order and share the workspace they build.
 */
import { afterAll, beforeAll, describe, expect, setSystemTime, test } from "bun:test";
import { createHash, createHmac } from "node:crypto";
import { simpleParser } from "mailparser";
import { createTransport } from "nodemailer";
import { Webhook } from "standardwebhooks";
import { ownerWithKey, startTestApp, type TestApp } from "../helpers/app";
import { startDnsServer, type TestDnsServer } from "../helpers/dns-server";
import { startReceiver, type ReceivedRequest, type Receiver } from "../helpers/http-receiver";
import { appMx } from "../helpers/mail-inbound";
import { verifyDkim } from "../helpers/mail-sending";
import { startSmtpSink, type SmtpSink } from "../helpers/smtp-sink";

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
const MAIL_HOST = "mx.bunker.test";

let app: TestApp;
let dns: TestDnsServer;
let relay: SmtpSink;
let receiver: Receiver;
let mx: { port: number; stop(): Promise<void> };
let token: string;
let wsId: string;
let base: string;

/** What the tests build, in order. */
const s = {
  fqdn: "",
  domainId: "",
  selector: "",
  endpointId: "",
  secret: "",
  /** Messages: welcome to ada, the test send, the batch rows. */
  ada: "",
  testSend: "",
  batchOk: "",
  batchGone: "",
};

beforeAll(async () => {
  dns = await startDnsServer();
  // The relay answers 550 for recipients starting with "gone" (a hard bounce), 250 otherwise.
  relay = await startSmtpSink({ rcptReply: (a) => (a.startsWith("gone") ? { code: 550, message: "5.1.1 no such user here" } : null) });
  receiver = startReceiver();
  app = await startTestApp({ DNS_SERVERS: dns.server, MAIL_HOSTNAME: MAIL_HOST, SMTP_RELAY_URL: relay.url, ALLOW_PRIVATE_TARGETS: "true" });
  mx = await appMx(app);
  ({ token, ws: { id: wsId } } = await ownerWithKey(app));
  base = `/mail/v1/workspaces/${wsId}`;
  s.fqdn = `acme${Date.now() % 100000}.every.example`;
  // The senders of inbound mail: SPF lets the loopback client send for sender.example.
  dns.set("sender.example", [{ type: "TXT", data: "v=spf1 ip4:127.0.0.1 -all" }]);
});
afterAll(async () => {
  await mx?.stop();
  await app?.stop();
  await relay?.stop();
  await receiver?.stop();
  await dns?.stop();
});

const call = (method: string, path: string, body?: unknown, headers?: Record<string, string>) => app.call(method, `${base}${path}`, { token, body, headers });

/** Polls `fn` until it returns a truthy value (real time; the binary's scheduler ticks every 1-2 s). */
async function until<T>(what: string, fn: () => Promise<T | null | undefined | false> | T | null | undefined | false, timeoutMs = 20_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(25);
  }
}

const messageStatus = (id: string, status: string) =>
  until(`message ${id} ${status}`, async () => {
    const r = await call("GET", `/messages/${id}`);
    return r.status === 200 && r.body.status === status ? r.body : null;
  });

/** Standard Webhooks verification with the independent library, at the app's time (frozen in-process). */
function verifyStandard(secret: string, req: ReceivedRequest) {
  setSystemTime(app.clock.now());
  try {
    return new Webhook(secret).verify(req.body, { "webhook-id": req.headers["webhook-id"]!, "webhook-timestamp": req.headers["webhook-timestamp"]!, "webhook-signature": req.headers["webhook-signature"]! }) as any;
  } finally {
    setSystemTime();
  }
}

/** Non-test events of `type` received at the shared endpoint, verified with its secret: their envelopes. */
const delivered = (type: string) =>
  receiver.requests
    .filter((r) => r.path === "/shared")
    .map((r) => ({ req: r, env: JSON.parse(r.body) }))
    .filter((x) => x.env.type === type && x.env.test !== true)
    .map((x) => ({ ...verifyStandard(s.secret, x.req), webhookId: x.req.headers["webhook-id"] }));

const waitDelivered = (type: string, pred: (data: any) => boolean = () => true) =>
  until(`a ${type} webhook`, () => delivered(type).find((e) => pred(e.data)));

/** One message to the app's MX (nodemailer over real SMTP). */
async function smtpSend(mail: Record<string, unknown>) {
  const t = createTransport({ host: "127.0.0.1", port: mx.port, secure: false, ignoreTLS: true, name: "client.sender.example", connectionTimeout: 5000, socketTimeout: 10000 } as never);
  try {
    return await t.sendMail(mail as never);
  } finally {
    t.close();
  }
}

/** The character-strings of an instruction's TXT value ("a" "b" zone-file form, or one plain string). */
const txtStrings = (value: string): string[] => (value.startsWith('"') ? [...value.matchAll(/"([^"]*)"/g)].map((m) => m[1]!) : [value]);

function publish(instructions: { type: string; host: string; value: string; priority: number }[]) {
  for (const ins of instructions) {
    if (ins.type === "MX") dns.add(ins.host, { type: "MX", exchange: ins.value, priority: ins.priority });
    else dns.add(ins.host, { type: "TXT", data: txtStrings(ins.value) });
  }
}

describe("mail, every route", () => {
  test("webhooks: the event catalogue, an endpoint on a real receiver (create, list, read, change) and its test send", async () => {
    const types = await call("GET", "/webhooks/event-types");
    expect(types.status).toBe(200);
    const names = types.body.data.map((t: any) => t.type);
    for (const t of ["email.sent", "email.delivered", "email.bounced", "email.received", "suppression.created", "suppression.deleted", "domain.created", "domain.updated", "domain.deleted"]) expect(names).toContain(t);

    const created = await call("POST", "/webhooks/endpoints", { url: `${receiver.url}/shared`, description: "all mail events" });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ url: `${receiver.url}/shared`, description: "all mail events", event_types: [], enabled: true, status: "enabled" });
    expect(created.body.signing_secret).toStartWith("whsec_");
    s.endpointId = created.body.id;
    s.secret = created.body.signing_secret;

    const list = await call("GET", "/webhooks/endpoints");
    expect(list.status).toBe(200);
    expect(list.body.data.map((e: any) => e.id)).toEqual([s.endpointId]);
    expect(list.body.data[0].signing_secret).toBeUndefined();
    const patched = await call("PATCH", `/webhooks/endpoints/${s.endpointId}`, { description: "Acme mail events" });
    expect(patched.status).toBe(200);
    expect(patched.body.description).toBe("Acme mail events");
    const one = await call("GET", `/webhooks/endpoints/${s.endpointId}`);
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({ id: s.endpointId, description: "Acme mail events", signing_secret_hint: s.secret.slice(-4) });

    const t = await call("POST", `/webhooks/endpoints/${s.endpointId}/test`, { event_type: "email.sent" });
    expect(t.status).toBe(200);
    expect(t.body).toMatchObject({ trigger: "test", succeeded: true, status_code: 200, error_class: null });
    const got = receiver.requests.find((r) => r.headers["webhook-id"] === t.body.event_id)!;
    expect(got).toBeDefined();
    expect(verifyStandard(s.secret, got)).toMatchObject({ type: "email.sent", test: true, data: { test: true } });
  }, 30_000);

  test("domains: created pending with its DNS instructions; records published on the DNS server; verify makes it active; read, list, change; another domain rotated and deleted", async () => {
    const created = await call("POST", "/domains", { fqdn: s.fqdn.toUpperCase(), intent: "send_receive" });
    expect(created.status).toBe(201);
    const d = created.body;
    expect(d).toMatchObject({ fqdn: s.fqdn, intent: "send_receive", status: "pending", workspace_id: wsId, verified_at: null });
    expect(d.created_at).toMatch(ISO);
    expect(d.dns_instructions.map((i: any) => i.purpose)).toEqual(["ownership", "spf", "dkim", "dmarc", "mx"]);
    expect(d.dns_instructions.find((i: any) => i.purpose === "mx")).toMatchObject({ type: "MX", host: s.fqdn, value: MAIL_HOST, priority: 10 });
    s.domainId = d.id;
    s.selector = d.dkim_selector;

    // Nothing published yet: still pending, every record reported missing.
    const early = await call("POST", `/domains/${d.id}/verify`);
    expect(early.status).toBe(200);
    expect(early.body.status).toBe("pending");
    expect(early.body.dns_check_results.ownership).toMatchObject({ found: false, required: true });
    expect(early.body.last_dns_check_at).toMatch(ISO);

    publish(d.dns_instructions);
    const v = await call("POST", `/domains/${d.id}/verify`);
    expect(v.status).toBe(200);
    expect(v.body.status).toBe("active");
    expect(v.body.verified_at).toMatch(ISO);
    for (const p of ["ownership", "spf", "dkim", "dmarc", "mx"]) expect([p, v.body.dns_check_results[p].found]).toEqual([p, true]);

    const list = await call("GET", "/domains");
    expect(list.status).toBe(200);
    expect(list.body.data.map((x: any) => [x.id, x.status])).toEqual([[d.id, "active"]]);
    const patched = await call("PATCH", `/domains/${d.id}`, { dns_provider: "  Loopback DNS " });
    expect(patched.status).toBe(200);
    expect(patched.body.dns_provider).toBe("Loopback DNS");
    const read = await call("GET", `/domains/${d.id}`);
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ id: d.id, status: "active", dns_provider: "Loopback DNS", dkim_selector: s.selector });

    // A second domain: its DKIM key rotated while pending (a new selector), then deleted.
    const spare = await call("POST", "/domains", { fqdn: `spare.${s.fqdn}` });
    expect(spare.status).toBe(201);
    const rotated = await call("POST", `/domains/${spare.body.id}/dkim/rotate`);
    expect(rotated.status).toBe(200);
    expect(rotated.body).toMatchObject({ status: "pending", dkim_selector: `${spare.body.dkim_selector}b`, dkim_previous_selector: null });
    expect(rotated.body.dkim_public_key).not.toBe(spare.body.dkim_public_key);
    expect(rotated.body.dns_instructions.find((i: any) => i.purpose === "dkim").host).toBe(`${spare.body.dkim_selector}b._domainkey.spare.${s.fqdn}`);
    expect((await call("DELETE", `/domains/${spare.body.id}`)).status).toBe(204);
    expect((await call("GET", `/domains/${spare.body.id}`)).status).toBe(404);

    // The receiver heard about all of it.
    expect(await waitDelivered("domain.created", (x) => x.id === d.id)).toMatchObject({ data: { fqdn: s.fqdn, status: "pending" } });
    expect(await waitDelivered("domain.updated", (x) => x.id === d.id)).toMatchObject({ data: { status: "active", previous_status: "pending", failed_checks: [] } });
    expect(await waitDelivered("domain.deleted", (x) => x.id === spare.body.id)).toMatchObject({ data: { fqdn: `spare.${s.fqdn}` } });
  }, 40_000);

  test("brand and templates: brand set and read; partial and template saved, listed, tagged, read, their variables, rendered; a draft previewed and linted; a template deleted", async () => {
    const defaults = await call("GET", "/brand");
    expect(defaults.status).toBe(200);
    expect(defaults.body.raw.primary_color).toBeNull();
    const put = await call("PUT", "/brand", { primary_color: "#AA0000", footer_address: "1 Loopback Way" });
    expect(put.status).toBe(200);
    expect(put.body.raw).toMatchObject({ primary_color: "#AA0000", footer_address: "1 Loopback Way" });
    expect((await call("GET", "/brand")).body.resolved).toMatchObject({ primary_color: "#AA0000", footer_address: "1 Loopback Way" });

    const partial = await call("POST", "/templates", { name: "signoff", kind: "partial", subject: "", body_html: "<em>the Acme team</em>" });
    expect(partial.status).toBe(201);
    const welcome = await call("POST", "/templates", {
      name: "welcome",
      subject: "Welcome, {{name}}",
      body_html:
        '<html><head><style>a.btn { color: {{brand.primary_color}}; }</style></head><body><p>Hello {{name}}, from {{> partial.signoff}}</p>' +
        '<p><a class="btn" href="https://acme.example/start">Start here</a></p>{{> bp.footer}}</body></html>',
      variables_schema: { version: 1, vars: { name: { type: "string", required: true } } },
      tags: ["onboarding"],
    });
    expect(welcome.status).toBe(201);
    expect(welcome.body).toMatchObject({ name: "welcome", kind: "template", tags: ["onboarding"] });
    expect(welcome.body.body_text).toContain("Hello {{name}}");

    const list = await call("GET", "/templates");
    expect(list.status).toBe(200);
    expect(list.body.data.map((t: any) => t.name)).toEqual(["signoff", "welcome"]);
    expect((await call("GET", "/templates?kind=partial")).body.data.map((t: any) => t.name)).toEqual(["signoff"]);
    const tags = await call("GET", "/templates/tags");
    expect(tags.status).toBe(200);
    expect(tags.body).toEqual({ data: ["onboarding"] });
    const read = await call("GET", "/templates/welcome");
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ id: welcome.body.id, subject: "Welcome, {{name}}" });
    const vars = await call("GET", "/templates/welcome/variables");
    expect(vars.status).toBe(200);
    expect(vars.body).toEqual({ data: ["name"] });

    const rendered = await call("POST", "/templates/welcome/render", { data: { name: "<Ada>" } });
    expect(rendered.status).toBe(200);
    expect(rendered.body.subject).toBe("Welcome, <Ada>");
    expect(rendered.body.html).toContain("Hello &lt;Ada&gt;, from <em>the Acme team</em>");
    expect(rendered.body.html).toMatch(/style="color: ?#AA0000;?"/);
    expect(rendered.body.html).toContain("1 Loopback Way");
    expect(rendered.body.text).toContain("Start here [https://acme.example/start]");
    expect((await call("POST", "/templates/welcome/render", { data: {} })).status).toBe(400);

    const preview = await call("POST", "/templates/preview", { subject: "Hi {{name}}", body_html: "<p>Hi {{name}}, {{> partial.signoff}}</p>", data: { name: "Bo" } });
    expect(preview.status).toBe(200);
    expect(preview.body.subject).toBe("Hi Bo");
    expect(preview.body.html).toContain("Hi Bo, <em>the Acme team</em>");
    const lint = await call("POST", "/templates/lint", {
      subject: "Your receipt for October",
      body_html: '<p>Thanks for your order. Your receipt is ready and your plan renews next month.</p><p><a href="https://acme.example/receipt">View receipt</a></p>',
      body_text: "Thanks for your order. View receipt: https://acme.example/receipt",
    });
    expect(lint.status).toBe(200);
    expect(lint.body).toEqual({ score: 100, findings: [] });
    const spammy = await call("POST", "/templates/lint", { subject: "FREE MONEY NOW!!!", body_html: "<p>Limited time" });
    expect(spammy.status).toBe(200);
    expect(spammy.body.score).toBeLessThan(70);

    expect((await call("POST", "/templates", { name: "scratch", subject: "x", body_html: "<p>x</p>" })).status).toBe(201);
    expect((await call("DELETE", "/templates/scratch")).status).toBe(204);
    expect((await call("GET", "/templates/scratch")).status).toBe(404);
  }, 30_000);

  test("sending: settings; send (idempotent) through the relay, DKIM-signed, status sent, body and log; test-send; email.sent delivered; deliverability unconfirmed", async () => {
    const settings = await call("GET", "/sending/settings");
    expect(settings.status).toBe(200);
    expect(settings.body).toEqual({ workspace_id: wsId, rate_limit_per_second: 100, custom: false });
    const patched = await call("PATCH", "/sending/settings", { rate_limit_per_second: 40 });
    expect(patched.status).toBe(200);
    expect(patched.body).toEqual({ workspace_id: wsId, rate_limit_per_second: 40, custom: true });

    const body = { from: `Acme <hello@${s.fqdn}>`, to: "ada@recipient.example", data: { name: "Ada" }, headers: { "List-Unsubscribe": "<https://acme.example/u/1>" } };
    const sent = await call("POST", "/templates/welcome/send", body, { "idempotency-key": "welcome-ada" });
    expect(sent.status).toBe(202);
    expect(sent.body).toMatchObject({ accepted: true, from: body.from, to: body.to, subject: "Welcome, Ada" });
    expect(sent.headers.get("x-ratelimit-limit")).toBe("40");
    s.ada = sent.body.message_ids[0];
    const replay = await call("POST", "/templates/welcome/send", body, { "idempotency-key": "welcome-ada" });
    expect(replay.status).toBe(202);
    expect(replay.headers.get("idempotent-replay")).toBe("true");
    expect(replay.body).toEqual(sent.body);

    // At the relay: one message, VERP envelope, DKIM pass for the domain's selector (key read from the DNS server).
    const got = await relay.waitFor((m) => m.to.includes("ada@recipient.example"), 20_000);
    expect(got.from).toBe(`bounces+${s.ada}@${s.fqdn}`);
    expect(got.headerFrom).toBe(`"Acme" <hello@${s.fqdn}>`);
    expect(got.subject).toBe("Welcome, Ada");
    expect(got.raw).toContain(`Message-ID: <${s.ada}@${s.fqdn}>`);
    expect(got.raw).toMatch(/List-Unsubscribe: <https:\/\/acme.example\/u\/1>/);
    expect(got.html).toContain("Hello Ada, from <em>the Acme team</em>");
    expect(got.html).toContain("1 Loopback Way");
    const dkim = await verifyDkim({ dns }, got.raw);
    expect(dkim.results.map((x: any) => [x.signingDomain, x.selector, x.status.result])).toEqual([[s.fqdn, s.selector, "pass"]]);

    const m = await messageStatus(s.ada, "sent");
    expect(m).toMatchObject({ from_address: `hello@${s.fqdn}`, to_address: "ada@recipient.example", template_name: "welcome", domain_id: s.domainId, deferral_count: 0, delivered_at: null });
    expect(m.sent_at).toMatch(ISO);
    expect(Date.parse(m.sent_at)).toBeGreaterThanOrEqual(Date.parse(m.created_at));
    expect(m.smtp_transcript).toContain(`EHLO ${MAIL_HOST}`);
    const stored = await call("GET", `/messages/${s.ada}/body`);
    expect(stored.status).toBe(200);
    expect(stored.body).toMatchObject({ id: s.ada, subject: "Welcome, Ada", redacted: false });
    expect(stored.body.body_html).toContain("Hello Ada");

    const t = await call("POST", "/templates/welcome/test-send", { from: `hello@${s.fqdn}`, to: "qa@recipient.example", data: {} });
    expect(t.status).toBe(202);
    expect(t.body).toMatchObject({ accepted: true, subject: "[TEST] Welcome, [name]" });
    s.testSend = t.body.message_ids[0];
    expect((await relay.waitFor((x) => x.to.includes("qa@recipient.example"), 20_000)).subject).toBe("[TEST] Welcome, [name]");
    await messageStatus(s.testSend, "sent");

    const log = await call("GET", "/messages?template=welcome");
    expect(log.status).toBe(200);
    expect(log.body.data.map((x: any) => x.id).sort()).toEqual([s.ada, s.testSend].sort());
    expect((await call("GET", "/messages?recipient=ada@recipient.example")).body.data.map((x: any) => x.id)).toEqual([s.ada]);

    expect(await waitDelivered("email.sent", (x) => x.id === s.ada)).toMatchObject({ data: { status: "sent", to_address: "ada@recipient.example" } });
    const health = await call("GET", "/deliverability");
    expect(health.status).toBe(200);
    expect(health.body).toMatchObject({ verdict: "unconfirmed", left_queue: 2, queued: 0, confirmed: 0, negative: 0 });
  }, 60_000);

  test("a mailbox receives mail over SMTP: created, listed, changed; the message listed, read with its attachment manifest, raw .eml and attachment, marked read, deleted; email.received delivered; the mailbox deleted", async () => {
    const created = await call("POST", "/mailboxes", { domain_id: s.domainId, local_part: "support", display_name: "Support" });
    expect(created.status).toBe(201);
    const box = created.body;
    expect(box).toMatchObject({ address: `support@${s.fqdn}`, status: "active", retention_days: 30, display_name: "Support" });
    expect((await call("GET", "/mailboxes")).body.data.map((b: any) => b.id)).toEqual([box.id]);
    const patched = await call("PATCH", `/mailboxes/${box.id}`, { retention_days: 7 });
    expect(patched.status).toBe(200);
    expect(patched.body.retention_days).toBe(7);
    expect((await call("GET", `/mailboxes/${box.id}`)).body).toMatchObject({ id: box.id, retention_days: 7, display_name: "Support" });

    const pdf = Buffer.from("%PDF-1.4 an invoice for the every-route test\n");
    const info = await smtpSend({
      from: '"Ada Lovelace" <ada@sender.example>',
      to: `Support@${s.fqdn}`,
      subject: "Invoice 42",
      text: "Hello,\nthe invoice is attached.",
      html: "<p>Hello, the invoice is attached.</p>",
      attachments: [{ filename: "invoice.pdf", content: pdf, contentType: "application/pdf" }],
    });
    expect(info.accepted).toEqual([`Support@${s.fqdn}`]);

    const list = await call("GET", `/mailboxes/${box.id}/messages`);
    expect(list.status).toBe(200);
    expect(list.body.data).toHaveLength(1);
    const m = list.body.data[0];
    expect(m).toMatchObject({ mailbox_id: box.id, from_address: "ada@sender.example", subject: "Invoice 42", spf_result: "pass", quarantined: false, read_at: null });
    expect(m.rfc822_message_id).toBe(info.messageId);
    expect(m.body_preview).toStartWith("Hello,");
    const one = await call("GET", `/mailboxes/${box.id}/messages/${m.id}`);
    expect(one.status).toBe(200);
    expect(one.body.attachments).toEqual([
      { position: 0, filename: "invoice.pdf", content_id: null, content_type: "application/pdf", size_bytes: pdf.length, sha256: createHash("sha256").update(pdf).digest("hex") },
    ]);

    const get = (path: string) => app.handle(new Request(`http://localhost${base}${path}`, { headers: { authorization: `Bearer ${token}` } }));
    const raw = await get(`/mailboxes/${box.id}/messages/${m.id}/raw`);
    expect(raw.status).toBe(200);
    expect(raw.headers.get("content-type")).toBe("message/rfc822");
    const eml = Buffer.from(await raw.arrayBuffer());
    expect(eml.length).toBe(m.size_bytes);
    expect((await simpleParser(eml)).subject).toBe("Invoice 42");
    const att = await get(`/mailboxes/${box.id}/messages/${m.id}/attachments/0`);
    expect(att.status).toBe(200);
    expect(att.headers.get("content-type")).toBe("application/pdf");
    expect(Buffer.from(await att.arrayBuffer()).equals(pdf)).toBe(true);

    expect((await call("POST", `/mailboxes/${box.id}/messages/${m.id}/read`)).status).toBe(204);
    const read = await call("GET", `/mailboxes/${box.id}/messages/${m.id}`);
    expect(read.body.read_at).toMatch(ISO);
    expect((await call("GET", `/mailboxes/${box.id}/messages?unread=true`)).body.data).toEqual([]);

    expect(await waitDelivered("email.received", (x) => x.message_id === m.id)).toMatchObject({ data: { mailbox_id: box.id, from_address: "ada@sender.example", subject: "Invoice 42" } });

    expect((await call("DELETE", `/mailboxes/${box.id}/messages/${m.id}`)).status).toBe(204);
    expect((await call("GET", `/mailboxes/${box.id}/messages/${m.id}`)).status).toBe(404);
    expect((await call("DELETE", `/mailboxes/${box.id}`)).status).toBe(204);
    expect((await call("GET", `/mailboxes/${box.id}`)).status).toBe(404);
    // Mail to a deleted mailbox is refused at RCPT.
    const refused = await smtpSend({ from: "ada@sender.example", to: `support@${s.fqdn}`, subject: "again", text: "x" }).catch((e) => e);
    expect(refused.responseCode).toBe(550);
  }, 60_000);

  test("a delivery report at the VERP address: the message becomes delivered, the report is logged, email.delivered delivered, deliverability healthy", async () => {
    const verp = `bounces+${s.ada}@${s.fqdn}`;
    const b = "dsn-boundary-every";
    const dsn = [
      "From: Mail Delivery Subsystem <MAILER-DAEMON@mx.recipient.example>",
      `To: ${verp}`,
      "Subject: Delivery Status Notification (Success)",
      `Date: ${new Date().toUTCString()}`,
      `Message-ID: <dsn-${Date.now()}@mx.recipient.example>`,
      "MIME-Version: 1.0",
      `Content-Type: multipart/report; report-type=delivery-status; boundary="${b}"`,
      "",
      `--${b}`,
      "Content-Type: text/plain; charset=us-ascii",
      "",
      "Your message was delivered.",
      "",
      `--${b}`,
      "Content-Type: message/delivery-status",
      "",
      "Reporting-MTA: dns; mx.recipient.example",
      "",
      "Final-Recipient: rfc822; ada@recipient.example",
      "Action: delivered",
      "Status: 2.0.0",
      "",
      `--${b}`,
      "Content-Type: text/rfc822-headers",
      "",
      `Message-ID: <${s.ada}@${s.fqdn}>`,
      "Subject: Welcome, Ada",
      "",
      `--${b}--`,
      "",
    ].join("\r\n");
    const info = await smtpSend({ envelope: { from: "", to: [verp] }, raw: dsn });
    expect(info.accepted).toEqual([verp]);

    const m = await messageStatus(s.ada, "delivered");
    expect(m.delivered_at).toMatch(ISO);
    const reports = await call("GET", "/inbound-reports");
    expect(reports.status).toBe(200);
    expect(reports.body.data).toEqual([expect.objectContaining({ message_id: s.ada, kind: "dsn", action: "delivered", status_code: "2.0.0", applied: true })]);
    expect(reports.body.data[0].received_at).toMatch(ISO);
    expect(reports.body.counts).toMatchObject({ window_days: 30, dsn: 1, arf: 0, unparsed: 0, applied: 1 });
    expect(await waitDelivered("email.delivered", (x) => x.id === s.ada)).toMatchObject({ data: { status: "delivered" } });
    expect((await call("GET", "/deliverability")).body).toMatchObject({ verdict: "healthy", left_queue: 2, confirmed: 1, confirmed_rate: 0.5 });
  }, 40_000);

  test("a batch with a hard bounce: suppression made and delivered as events; suppressions added, listed, removed; bodies redacted and back; timeline, export, deliverability at risk; the recipient forgotten", async () => {
    const batch = await call("POST", "/templates/welcome/send-batch", {
      from: `hello@${s.fqdn}`,
      messages: [
        { to: "bo@recipient.example", data: { name: "Bo" } },
        { to: "gone@recipient.example", data: { name: "Gone" } },
        { to: "not-an-address", data: { name: "X" } },
      ],
    });
    expect(batch.status).toBe(202);
    expect(batch.body).toMatchObject({ accepted: 2, rejected: 1 });
    expect(batch.body.data.map((r: any) => [r.index, r.status, r.error?.code ?? null])).toEqual([
      [0, "accepted", null],
      [1, "accepted", null],
      [2, "rejected", "VALIDATION_ERROR"],
    ]);
    s.batchOk = batch.body.data[0].message_id;
    s.batchGone = batch.body.data[1].message_id;
    expect((await relay.waitFor((x) => x.to.includes("bo@recipient.example"), 20_000)).subject).toBe("Welcome, Bo");
    await messageStatus(s.batchOk, "sent");
    const gone = await messageStatus(s.batchGone, "bounced");
    expect(gone).toMatchObject({ bounce_code: "5.1.1" });
    expect(gone.bounce_detail).toContain("no such user");

    // The bounce suppressed the address; a manual suppression comes and goes.
    const sup = await call("GET", "/suppressions");
    expect(sup.status).toBe(200);
    expect(sup.body.data).toEqual([expect.objectContaining({ email: "gone@recipient.example", reason: "bounce", source_message_id: s.batchGone })]);
    const again = await call("POST", "/templates/welcome/send", { from: `hello@${s.fqdn}`, to: "Gone@recipient.example", data: { name: "Gone" } });
    expect([again.status, again.body.error.code]).toEqual([422, "RECIPIENT_SUPPRESSED"]);
    const manual = await call("POST", "/suppressions", { email: "  Blocked@Recipient.example " });
    expect(manual.status).toBe(201);
    expect(manual.body).toMatchObject({ email: "blocked@recipient.example", reason: "manual", source_message_id: null });
    expect((await call("GET", "/suppressions?reason=manual")).body.data.map((x: any) => x.email)).toEqual(["blocked@recipient.example"]);
    expect((await call("DELETE", "/suppressions/blocked@recipient.example")).status).toBe(204);
    expect((await call("GET", "/suppressions")).body.data.map((x: any) => x.email)).toEqual(["gone@recipient.example"]);
    expect(await waitDelivered("email.bounced", (x) => x.id === s.batchGone)).toMatchObject({ data: { status: "bounced", bounce_type: "hard" } });
    await waitDelivered("suppression.created", (x) => x.email === "gone@recipient.example" && x.reason === "bounce");
    await waitDelivered("suppression.deleted", (x) => x.email === "blocked@recipient.example");

    // Message settings: bodies redacted, then shown again.
    expect((await call("GET", "/messages/settings")).body).toEqual({ workspace_id: wsId, redact_bodies: false });
    expect((await call("PATCH", "/messages/settings", { redact_bodies: true })).body).toEqual({ workspace_id: wsId, redact_bodies: true });
    expect((await call("GET", `/messages/${s.batchOk}/body`)).body).toMatchObject({ body_html: null, body_text: null, redacted: true });
    expect((await call("PATCH", "/messages/settings", { redact_bodies: false })).status).toBe(200);
    expect((await call("GET", `/messages/${s.batchOk}/body`)).body.body_html).toContain("Hello Bo");

    // Timeline: the day(s) of the sends, counted from the log itself.
    const all = (await call("GET", "/messages?limit=100")).body.data as any[];
    expect(all.map((x) => x.id).sort()).toEqual([s.ada, s.testSend, s.batchOk, s.batchGone].sort());
    const sentDays = all.filter((x) => x.sent_at).map((x) => x.sent_at.slice(0, 10)).sort();
    const since = sentDays[0];
    const until = new Date(Date.parse(`${sentDays.at(-1)}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);
    const tl = await call("GET", `/messages/timeline?granularity=day&since=${since}&until=${until}`);
    expect(tl.status).toBe(200);
    expect(tl.body).toMatchObject({ granularity: "day", metric: "sent" });
    expect(tl.body.points.reduce((n: number, p: any) => n + p.count, 0)).toBe(sentDays.length);
    expect(sentDays.length).toBe(3);
    const bounced = await call("GET", `/messages/timeline?granularity=day&since=${since}&until=${until}&metric=bounced`);
    expect(bounced.body.points.reduce((n: number, p: any) => n + p.count, 0)).toBe(1);

    const csv = await app.handle(new Request(`http://localhost${base}/messages/export?template=welcome`, { headers: { authorization: `Bearer ${token}` } }));
    expect(csv.status).toBe(200);
    expect(csv.headers.get("content-type")).toBe("text/csv; charset=utf-8");
    const lines = (await csv.text()).trimEnd().split("\r\n");
    expect(lines[0]).toStartWith("id,created_at,status,from_address,to_address,subject");
    expect(lines.slice(1).map((l) => l.split(",")[0]).sort()).toEqual([s.ada, s.testSend, s.batchOk, s.batchGone].sort());

    // One bounce of four messages out: above the 5% that is tolerated.
    expect((await call("GET", "/deliverability?window_days=1")).body).toMatchObject({ verdict: "at_risk", window_days: 1, left_queue: 4, confirmed: 1, bounced: 1, negative: 1 });

    // Right to be forgotten: the messages to the address go, its suppression stays.
    const forget = await call("DELETE", "/messages?recipient=GONE@recipient.example");
    expect(forget.status).toBe(200);
    expect(forget.body).toEqual({ deleted: 1 });
    expect((await call("GET", `/messages/${s.batchGone}`)).status).toBe(404);
    expect((await call("GET", "/suppressions")).body.data.map((x: any) => x.email)).toEqual(["gone@recipient.example"]);
    expect((await call("PATCH", "/sending/settings", { rate_limit_per_second: null })).body).toEqual({ workspace_id: wsId, rate_limit_per_second: 100, custom: false });
  }, 60_000);

  test("the events log: listed with each delivery's state, read with its attempts, replayed to the receiver; the secret rotated; the endpoint deleted", async () => {
    const ev = await until("email.sent delivered in the events log", async () => {
      const r = await call("GET", `/webhooks/events?type=email.sent&endpoint_id=${s.endpointId}`);
      expect(r.status).toBe(200);
      return r.body.data.find((e: any) => e.deliveries.some((d: any) => d.endpoint_id === s.endpointId && d.status === "delivered") && !e.is_test);
    });
    expect(ev.created_at).toMatch(ISO);
    const detail = await call("GET", `/webhooks/events/${ev.id}`);
    expect(detail.status).toBe(200);
    expect(detail.body.payload).toMatchObject({ id: ev.id, type: "email.sent" });
    expect([s.ada, s.testSend, s.batchOk]).toContain(detail.body.payload.data.id);
    expect(detail.body.attempts[0]).toMatchObject({ endpoint_id: s.endpointId, status_code: 200, trigger: "scheduled" });

    const before = receiver.requests.filter((r) => r.headers["webhook-id"] === ev.id).length;
    const replay = await call("POST", `/webhooks/events/${ev.id}/replay`);
    expect(replay.status).toBe(200);
    expect(replay.body.data).toEqual([expect.objectContaining({ endpoint_id: s.endpointId, trigger: "replay", succeeded: true, status_code: 200 })]);
    const copies = receiver.requests.filter((r) => r.headers["webhook-id"] === ev.id);
    expect(copies.length).toBe(before + 1);
    expect(copies.at(-1)!.body).toBe(copies[0]!.body); // the same bytes, freshly signed
    expect(verifyStandard(s.secret, copies.at(-1)!).id).toBe(ev.id);

    const old = s.secret;
    const rotated = await call("POST", `/webhooks/endpoints/${s.endpointId}/rotate-secret`, { grace_hours: 0 });
    expect(rotated.status).toBe(200);
    expect(rotated.body.signing_secret).toStartWith("whsec_");
    expect(rotated.body.signing_secret).not.toBe(old);
    s.secret = rotated.body.signing_secret;
    const t = await call("POST", `/webhooks/endpoints/${s.endpointId}/test`);
    expect(t.body.succeeded).toBe(true);
    const req = receiver.requests.find((r) => r.headers["webhook-id"] === t.body.event_id)!;
    expect(verifyStandard(s.secret, req).id).toBe(t.body.event_id);
    expect(() => verifyStandard(old, req)).toThrow();

    expect((await call("DELETE", `/webhooks/endpoints/${s.endpointId}`)).status).toBe(204);
    expect((await call("GET", `/webhooks/endpoints/${s.endpointId}`)).status).toBe(404);
  }, 40_000);

  test("the deprecated webhook surface: create, list, read, pause and resume, test (both signatures verify), deliveries, rotate, delete", async () => {
    const created = await call("POST", "/webhooks", { url: `${receiver.url}/legacy` });
    expect(created.status).toBe(201);
    expect(created.headers.get("deprecation")).toBe("true");
    const hook = created.body;
    expect(hook).toMatchObject({ workspace_id: wsId, url: `${receiver.url}/legacy`, active: true, failure_count: 0 });
    expect(hook.id).toStartWith("whk_");
    expect((await call("GET", "/webhooks")).body.data.map((h: any) => h.id)).toEqual([hook.id]);
    expect((await call("GET", `/webhooks/${hook.id}`)).body).toMatchObject({ id: hook.id, active: true });
    expect((await call("PATCH", `/webhooks/${hook.id}`, { active: false })).body.active).toBe(false);
    expect((await call("PATCH", `/webhooks/${hook.id}`, { active: true })).body.active).toBe(true);

    const rotated = await call("POST", `/webhooks/${hook.id}/rotate-secret`);
    expect(rotated.status).toBe(201);
    expect(rotated.body.signing_secret).not.toBe(hook.signing_secret);
    const secret = rotated.body.signing_secret as string;

    const t = await call("POST", `/webhooks/${hook.id}/test`);
    expect(t.status).toBe(202);
    expect(t.body).toMatchObject({ accepted: true });
    const req = await until("the legacy test delivery", () => receiver.requests.find((r) => r.path === "/legacy" && r.headers["webhook-id"] === t.body.event_id));
    expect(verifyStandard("whsec_" + Buffer.from(secret, "utf8").toString("base64"), req)).toMatchObject({ id: t.body.event_id, test: true });
    const sig = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(req.headers["x-mail-signature"] ?? "")!;
    expect(sig).not.toBeNull();
    expect(sig[2]).toBe(createHmac("sha256", secret).update(`${sig[1]}.${req.body}`).digest("hex"));

    const attempts = await until("the legacy test attempt", async () => {
      const r = await call("GET", `/webhooks/${hook.id}/deliveries`);
      expect(r.status).toBe(200);
      return r.body.data.length ? r.body.data : null;
    });
    expect(attempts[0]).toMatchObject({ trigger: "test", status_code: 200 });

    expect((await call("DELETE", `/webhooks/${hook.id}`)).status).toBe(204);
    expect((await call("GET", `/webhooks/${hook.id}`)).status).toBe(404);
  }, 30_000);

  test("the brand goes back to the defaults", async () => {
    expect((await call("DELETE", "/brand")).status).toBe(204);
    const b = await call("GET", "/brand");
    expect(b.body.raw).toMatchObject({ primary_color: null, footer_address: null });
    expect(b.body.resolved.primary_color).toBe("#2563EB");
  });
});
