/**
 * Sending end to end over HTTP, relay mode (SMTP_RELAY_URL = a real SMTP sink on loopback):
 * a domain made active through POST /domains/{id}/verify against a loopback DNS server, a
 * template, POST /send -> the delivery job -> the sink, DKIM verified by mailauth with the
 * record served by that DNS server; 451 then success on retry (injected clock), 550 ->
 * bounced + suppression -> 422; idempotency; send-batch; test-send; the rate limit at its
 * boundary; redacted bodies re-rendered by the worker.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { MINUTE, SECOND } from "../../../src/core/clock";
import { startSmtpSink, type SmtpSink } from "../../helpers/smtp-sink";
import { inProcess, ON_BINARY } from "../../helpers/target";
import { createTemplate, runDelivery, startSendingApp, verifyDkim, workspaceWithDomain, type MailWorkspace, type SendingEnv } from "../../helpers/mail-sending";

let e: SendingEnv;
let sink: SmtpSink;
/** Recipients the relay answers 451 to while listed here; "gone..." gets 550. */
const deferring = new Set<string>();
let w: MailWorkspace;
let n = 0;
const rcpt = (prefix = "ada") => `${prefix}${++n}@example.test`;

const WELCOME = {
  name: "welcome",
  subject: "Welcome, {{name}}",
  body_html: '<html><head><style>p { color: #123456; }</style></head><body><p>Hello {{name}}, <a href="https://acme.example/start">start here</a>.</p></body></html>',
  variables_schema: { version: 1, vars: { name: { type: "string", required: true } } },
};

beforeAll(async () => {
  sink = await startSmtpSink({
    rcptReply: (a) => (deferring.has(a) ? { code: 451, message: "4.7.1 greylisted, try again later" } : a.startsWith("gone") ? { code: 550, message: "5.1.1 no such user here" } : null),
  });
  e = await startSendingApp({ SMTP_RELAY_URL: sink.url });
  if (!ON_BINARY) e.sending.autoKick = false; // the binary's worker is kicked after each send; runDelivery waits for it
  w = await workspaceWithDomain(e);
  await createTemplate(e, w, WELCOME);
});
afterAll(async () => {
  await e.stop();
  await sink.stop();
});

const send = (ws: MailWorkspace, body: Record<string, unknown>, headers: Record<string, string> = {}, name = "welcome") =>
  e.app.call("POST", `${ws.base}/templates/${name}/send`, { token: ws.token, body, headers });
const message = async (ws: MailWorkspace, id: string) => (await e.app.call("GET", `${ws.base}/messages/${id}`, { token: ws.token })).body;

describe("send through the relay", () => {
  inProcess("asserts the queued state before delivery (the binary's worker is kicked right after the send, so the message cannot be seen queued) and sent_at equal to the injected clock")("202, queued; the job delivers it DKIM-signed (pass for the domain's selector) with CSS inlined, VERP envelope, Message-ID; status sent with a transcript", async () => {
    const to = rcpt();
    const from = `Acme <hello@${w.fqdn}>`;
    const r = await send(w, { from, to, data: { name: "Ada" }, headers: { "List-Unsubscribe": "<https://acme.example/u/1>" } });
    expect(r.status).toBe(202);
    expect(r.body).toMatchObject({ accepted: true, from, to, subject: "Welcome, Ada" });
    expect(r.headers.get("x-ratelimit-limit")).toBe("100");
    const [id] = r.body.message_ids;
    expect((await message(w, id)).status).toBe("queued");

    await runDelivery(e);
    const got = await sink.waitFor((m) => m.to.includes(to));
    expect(got.from).toBe(`bounces+${id}@${w.fqdn}`);
    expect(got.headerFrom).toBe(`"Acme" <hello@${w.fqdn}>`);
    expect(got.subject).toBe("Welcome, Ada");
    expect(got.raw).toContain(`Message-ID: <${id}@${w.fqdn}>`);
    expect(got.raw).toMatch(/List-Unsubscribe: <https:\/\/acme.example\/u\/1>/);
    expect(got.html).toMatch(/<p style="color: ?#123456;?">Hello Ada/);
    expect(got.html).not.toContain("<style>");
    expect(got.text).toContain("Hello Ada");
    expect(got.text).toContain("https://acme.example/start");
    const v = await verifyDkim(e, got.raw);
    expect(v.results.map((x: any) => [x.signingDomain, x.selector, x.status.result])).toEqual([[w.fqdn, w.selector, "pass"]]);

    const m = await message(w, id);
    expect(m).toMatchObject({ status: "sent", from_address: `hello@${w.fqdn}`, to_address: to, template_name: "welcome", domain_id: w.domainId, deferral_count: 0 });
    expect(m.sent_at).toBe(e.app.clock.iso());
    expect(m.delivered_at).toBeNull();
    expect(m.smtp_transcript).toContain("EHLO mx.bunker.test");
    expect(m.smtp_transcript).toContain("RCPT TO:<");
    expect(m.smtp_transcript).not.toContain("Hello Ada");
  });

  test("one message per recipient; no List-Unsubscribe unless given; subject override used literally", async () => {
    const to = [rcpt(), rcpt(), rcpt()];
    const r = await send(w, { from: `hello@${w.fqdn}`, to, subject: "Your {{literal}} news", data: { name: "Bo" } });
    expect(r.status).toBe(202);
    expect(r.body.message_ids).toHaveLength(3);
    expect(r.body.subject).toBe("Your {{literal}} news");
    await runDelivery(e);
    for (const a of to) {
      const got = await sink.waitFor((m) => m.to.includes(a));
      expect(got.to).toEqual([a]);
      expect(got.raw).toContain(`To: ${a}`);
      expect(got.subject).toBe("Your {{literal}} news");
      expect(got.raw).not.toContain("List-Unsubscribe");
    }
  });

  inProcess("switches the in-process worker's after-send kick on and off (the binary also delivers on its 2-second schedule, so it would not show the kick)")("the kick after a send delivers without waiting for the schedule", async () => {
    e.sending.autoKick = true;
    try {
      const to = rcpt();
      expect((await send(w, { from: `hello@${w.fqdn}`, to, data: { name: "Kick" } })).status).toBe(202);
      await sink.waitFor((m) => m.to.includes(to));
    } finally {
      e.sending.autoKick = false;
    }
  });

  test("redacted bodies: nothing stored, the worker re-renders from the send data", async () => {
    const ws = await workspaceWithDomain(e);
    await createTemplate(e, ws, WELCOME);
    expect((await e.app.call("PATCH", `${ws.base}/messages/settings`, { token: ws.token, body: { redact_bodies: true } })).status).toBe(200);
    const to = rcpt();
    const r = await send(ws, { from: `hello@${ws.fqdn}`, to, data: { name: "Secret" } });
    expect(r.status).toBe(202);
    const body = await e.app.call("GET", `${ws.base}/messages/${r.body.message_ids[0]}/body`, { token: ws.token });
    expect(body.body).toMatchObject({ body_html: null, redacted: true });
    await runDelivery(e);
    const got = await sink.waitFor((m) => m.to.includes(to));
    expect(got.html).toContain("Hello Secret");
    expect((await verifyDkim(e, got.raw)).results[0].status.result).toBe("pass");
    expect((await message(ws, r.body.message_ids[0])).status).toBe("sent");
  });
});

describe("send validation", () => {
  test("from must be on an active sending domain of the workspace: 422 SENDER_NOT_VERIFIED", async () => {
    const other = await workspaceWithDomain(e);
    for (const from of ["hello@unknown.example", `hello@${other.fqdn}`, `Acme <x@${w.fqdn.replace("mail", "other")}>`]) {
      const r = await send(w, { from, to: rcpt(), data: { name: "A" } });
      expect(r.status).toBe(422);
      expect(r.body.error.code).toBe("SENDER_NOT_VERIFIED");
    }
    // A pending domain of the workspace is not verified either.
    const pending = await e.app.call("POST", `${w.base}/domains`, { token: w.token, body: { fqdn: `pending${Date.now() % 100000}.example` } });
    const r = await send(w, { from: `hello@${pending.body.fqdn}`, to: rcpt(), data: { name: "A" } });
    expect(r.body.error.code).toBe("SENDER_NOT_VERIFIED");
    const bad = await send(w, { from: "not an address", to: rcpt(), data: { name: "A" } });
    expect(bad.status).toBe(400);
  });

  test("to: one address or 1-50; 51 is 400; malformed addresses are named", async () => {
    const many = Array.from({ length: 51 }, () => rcpt("many"));
    const r51 = await send(w, { from: `hello@${w.fqdn}`, to: many, data: { name: "A" } });
    expect(r51.status).toBe(400);
    const bad = await send(w, { from: `hello@${w.fqdn}`, to: ["ok@example.test", "nope"], data: { name: "A" } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details).toEqual([{ field: "to[1]", reason: "must be an email address" }]);
    const ws = await workspaceWithDomain(e);
    await createTemplate(e, ws, WELCOME);
    const r50 = await send(ws, { from: `hello@${ws.fqdn}`, to: many.slice(0, 50), data: { name: "A" } });
    expect(r50.status).toBe(202);
    expect(r50.body.message_ids).toHaveLength(50);
  });

  test("data is validated against variables_schema (400 with details); unknown template 404; reserved headers 400", async () => {
    const r = await send(w, { from: `hello@${w.fqdn}`, to: rcpt(), data: { name: 42 } });
    expect(r.status).toBe(400);
    expect(r.body.error.details).toEqual([{ field: "data.name", reason: expect.any(String) }]);
    const missing = await send(w, { from: `hello@${w.fqdn}`, to: rcpt(), data: {} });
    expect(missing.body.error.details).toEqual([{ field: "data.name", reason: "required" }]);
    expect((await send(w, { from: `hello@${w.fqdn}`, to: rcpt(), data: { name: "A" } }, {}, "nope")).status).toBe(404);
    const h = await send(w, { from: `hello@${w.fqdn}`, to: rcpt(), data: { name: "A" }, headers: { "Message-ID": "<x@y>", "X-Ok": "a\r\nBcc: x" } });
    expect(h.status).toBe(400);
    expect(h.body.error.details.map((d: any) => d.field).sort()).toEqual(["headers.Message-ID", "headers.X-Ok"]);
  });

  test("another workspace's id answers 404", async () => {
    const other = await workspaceWithDomain(e);
    const r = await e.app.call("POST", `${other.base}/templates/welcome/send`, { token: w.token, body: { from: `hello@${w.fqdn}`, to: rcpt(), data: { name: "A" } } });
    expect(r.status).toBe(404);
  });
});

describe("deferral and bounce", () => {
  inProcess("moves the injected clock past the retry backoff and compares deferred_at with it")("451: deferred with backoff; not retried before it is due; sent on the retry after 1 minute", async () => {
    const to = rcpt("later");
    deferring.add(to);
    const r = await send(w, { from: `hello@${w.fqdn}`, to, data: { name: "Later" } });
    const id = r.body.message_ids[0];
    await runDelivery(e);
    let m = await message(w, id);
    expect(m).toMatchObject({ status: "deferred", deferral_count: 1, bounce_code: "4.7.1", deferred_at: e.app.clock.iso() });
    expect(m.bounce_detail).toContain("greylisted");
    expect(m.smtp_transcript).toContain("451");

    deferring.delete(to);
    e.app.clock.advance(30 * SECOND);
    await runDelivery(e);
    expect((await message(w, id)).status).toBe("deferred");
    e.app.clock.advance(30 * SECOND);
    await runDelivery(e);
    m = await message(w, id);
    expect(m).toMatchObject({ status: "sent", deferral_count: 1 });
    const got = await sink.waitFor((x) => x.to.includes(to));
    expect((await verifyDkim(e, got.raw)).results[0].status.result).toBe("pass");
  });

  test("550: bounced with the code and suppressed; the next send to the address is 422 RECIPIENT_SUPPRESSED; test-send bypasses", async () => {
    const to = rcpt("gone");
    const r = await send(w, { from: `hello@${w.fqdn}`, to, data: { name: "Gone" } });
    const id = r.body.message_ids[0];
    await runDelivery(e);
    const m = await message(w, id);
    expect(m).toMatchObject({ status: "bounced", bounce_code: "5.1.1" });
    expect(m.bounce_detail).toContain("no such user");
    const sup = await e.app.call("GET", `${w.base}/suppressions`, { token: w.token });
    expect(sup.body.data).toContainEqual(expect.objectContaining({ email: to, reason: "bounce", source_message_id: id }));

    const again = await send(w, { from: `hello@${w.fqdn}`, to: [rcpt(), to.toUpperCase()], data: { name: "Gone" } });
    expect(again.status).toBe(422);
    expect(again.body.error).toMatchObject({ code: "RECIPIENT_SUPPRESSED", details: [{ field: "to[1]", reason: "suppressed" }] });
    const test = await e.app.call("POST", `${w.base}/templates/welcome/test-send`, { token: w.token, body: { from: `hello@${w.fqdn}`, to, data: {} } });
    expect(test.status).toBe(202);
  });
});

describe("idempotency", () => {
  test("a replay answers the original 202 with Idempotent-Replay: true and queues nothing; another body is 409", async () => {
    const to = rcpt();
    const body = { from: `hello@${w.fqdn}`, to, data: { name: "Once" } };
    const key = `send-${n}`;
    const first = await send(w, body, { "idempotency-key": key });
    expect(first.status).toBe(202);
    expect(first.headers.get("idempotent-replay")).toBeNull();
    const again = await send(w, body, { "idempotency-key": key });
    expect(again.status).toBe(202);
    expect(again.headers.get("idempotent-replay")).toBe("true");
    expect(again.body).toEqual(first.body);
    const other = await send(w, { ...body, data: { name: "Twice" } }, { "idempotency-key": key });
    expect(other.status).toBe(409);
    expect(other.body.error.code).toBe("IDEMPOTENCY_KEY_REUSE");
    const list = await e.app.call("GET", `${w.base}/messages?recipient=${encodeURIComponent(to)}`, { token: w.token });
    expect(list.body.data).toHaveLength(1);
  });
});

describe("send-batch", () => {
  const batch = (ws: MailWorkspace, body: Record<string, unknown>) => e.app.call("POST", `${ws.base}/templates/welcome/send-batch`, { token: ws.token, body });

  inProcess("asserts a batch row's message is still queued (the binary's worker is kicked right after the send, so the message cannot be seen queued)")("100 rows accepted; 101 is 400", async () => {
    const ws = await workspaceWithDomain(e);
    await createTemplate(e, ws, WELCOME);
    const rows = Array.from({ length: 101 }, (_, i) => ({ to: rcpt("batch"), data: { name: `R${i}` } }));
    const over = await batch(ws, { from: `hello@${ws.fqdn}`, messages: rows });
    expect(over.status).toBe(400);
    expect(over.body.error.code).toBe("VALIDATION_ERROR");
    const ok = await batch(ws, { from: `hello@${ws.fqdn}`, messages: rows.slice(0, 100) });
    expect(ok.status).toBe(202);
    expect(ok.body).toMatchObject({ accepted: 100, rejected: 0 });
    expect(ok.body.data.map((r: any) => r.index)).toEqual(Array.from({ length: 100 }, (_, i) => i));
    expect(ok.body.data.every((r: any) => r.status === "accepted" && typeof r.message_id === "string" && r.error === null)).toBe(true);
    const m = await message(ws, ok.body.data[7].message_id);
    expect(m).toMatchObject({ status: "queued", subject: "Welcome, R7", to_address: rows[7]!.to });
  });

  test("per-row outcomes: suppressed, unverified sender, bad data rejected; idempotency_key rows are not sent twice", async () => {
    const ws = await workspaceWithDomain(e);
    await createTemplate(e, ws, WELCOME);
    const blocked = rcpt("blocked");
    await e.app.call("POST", `${ws.base}/suppressions`, { token: ws.token, body: { email: blocked } });
    const rows = [
      { to: rcpt(), data: { name: "A" }, idempotency_key: "row-a" },
      { to: blocked, data: { name: "B" } },
      { to: rcpt(), data: { name: "C" }, from: "x@unverified.example" },
      { to: rcpt(), data: {} },
      { to: rcpt(), data: { name: "E" }, idempotency_key: "row-a" },
      { to: "not-an-address", data: { name: "F" } },
    ];
    const r = await batch(ws, { from: `hello@${ws.fqdn}`, messages: rows });
    expect(r.status).toBe(202);
    expect(r.body.data.map((x: any) => [x.status, x.error?.code ?? null])).toEqual([
      ["accepted", null],
      ["rejected", "RECIPIENT_SUPPRESSED"],
      ["rejected", "SENDER_NOT_VERIFIED"],
      ["rejected", "VALIDATION_ERROR"],
      ["accepted", null],
      ["rejected", "VALIDATION_ERROR"],
    ]);
    expect(r.body).toMatchObject({ accepted: 2, rejected: 4 });
    expect(r.body.data[4].message_id).toBe(r.body.data[0].message_id);
    // The same key in a later batch: the earlier message, nothing new queued.
    const again = await batch(ws, { from: `hello@${ws.fqdn}`, messages: [{ to: rows[0]!.to, data: { name: "A" }, idempotency_key: "row-a" }] });
    expect(again.body.data[0]).toMatchObject({ status: "accepted", message_id: r.body.data[0].message_id });
    const list = await e.app.call("GET", `${ws.base}/messages?recipient=${encodeURIComponent(rows[0]!.to)}`, { token: ws.token });
    expect(list.body.data).toHaveLength(1);
    // An unknown template fails the whole batch.
    const none = await e.app.call("POST", `${ws.base}/templates/nope/send-batch`, { token: ws.token, body: { from: `hello@${ws.fqdn}`, messages: rows.slice(0, 1) } });
    expect(none.status).toBe(404);
  });
});

describe("test-send", () => {
  test("202; subject prefixed [TEST]; missing variables render as [varname]; delivered", async () => {
    const to = rcpt();
    const r = await e.app.call("POST", `${w.base}/templates/welcome/test-send`, { token: w.token, body: { from: `hello@${w.fqdn}`, to, data: {} } });
    expect(r.status).toBe(202);
    expect(r.body).toMatchObject({ accepted: true, to, subject: "[TEST] Welcome, [name]" });
    await runDelivery(e);
    const got = await sink.waitFor((m) => m.to.includes(to));
    expect(got.subject).toBe("[TEST] Welcome, [name]");
    expect(got.html).toContain("Hello [name]");
    expect((await verifyDkim(e, got.raw)).results[0].status.result).toBe("pass");
    const unverified = await e.app.call("POST", `${w.base}/templates/welcome/test-send`, { token: w.token, body: { from: "x@unverified.example", to, data: {} } });
    expect(unverified.body.error.code).toBe("SENDER_NOT_VERIFIED");
  });
});

describe("rate limit", () => {
  inProcess("moves the injected clock one second to open the rate window (on the real clock the window could slide mid-test)")("per workspace, in messages per second: the last message that fits is 202, the next is 429 with Retry-After and X-RateLimit-*; test-send bypasses; a second later it passes", async () => {
    const ws = await workspaceWithDomain(e);
    await createTemplate(e, ws, WELCOME);
    const settings = `${ws.base}/sending/settings`;
    expect((await e.app.call("GET", settings, { token: ws.token })).body).toEqual({ workspace_id: ws.wsId, rate_limit_per_second: 100, custom: false });
    expect((await e.app.call("PATCH", settings, { token: ws.token, body: { rate_limit_per_second: 0 } })).status).toBe(400);
    expect((await e.app.call("PATCH", settings, { token: ws.token, body: { rate_limit_per_second: 3 } })).body).toMatchObject({ rate_limit_per_second: 3, custom: true });

    const from = `hello@${ws.fqdn}`;
    const four = await send(ws, { from, to: [rcpt(), rcpt(), rcpt(), rcpt()], data: { name: "A" } });
    expect(four.status).toBe(429);
    const two = await send(ws, { from, to: [rcpt(), rcpt()], data: { name: "A" } });
    expect(two.status).toBe(202);
    expect([two.headers.get("x-ratelimit-limit"), two.headers.get("x-ratelimit-remaining")]).toEqual(["3", "1"]);
    const third = await send(ws, { from, to: rcpt(), data: { name: "A" } });
    expect(third.status).toBe(202);
    expect(third.headers.get("x-ratelimit-remaining")).toBe("0");
    const denied = await send(ws, { from, to: rcpt(), data: { name: "A" } });
    expect(denied.status).toBe(429);
    expect(denied.body.error.code).toBe("RATE_LIMITED");
    expect([denied.headers.get("retry-after"), denied.headers.get("x-ratelimit-limit"), denied.headers.get("x-ratelimit-remaining"), denied.headers.get("x-ratelimit-reset")]).toEqual(["1", "3", "0", "1"]);
    const batchDenied = await e.app.call("POST", `${ws.base}/templates/welcome/send-batch`, { token: ws.token, body: { from, messages: [{ to: rcpt(), data: { name: "A" } }] } });
    expect(batchDenied.status).toBe(429);
    // A denied request with an Idempotency-Key can be retried with it.
    const keyed = await send(ws, { from, to: "keyed@example.test", data: { name: "A" } }, { "idempotency-key": "rate-keyed" });
    expect(keyed.status).toBe(429);
    const test = await e.app.call("POST", `${ws.base}/templates/welcome/test-send`, { token: ws.token, body: { from, to: rcpt(), data: {} } });
    expect(test.status).toBe(202);

    e.app.clock.advance(SECOND);
    const later = await send(ws, { from, to: "keyed@example.test", data: { name: "A" } }, { "idempotency-key": "rate-keyed" });
    expect(later.status).toBe(202);
    expect(later.headers.get("idempotent-replay")).toBeNull();
    // Another workspace has its own budget.
    expect((await send(w, { from: `hello@${w.fqdn}`, to: rcpt(), data: { name: "A" } })).status).toBe(202);
  });
});

inProcess("sets the domain's status to failed through app.ctx.db and moves the injected clock")("a message whose domain stopped being active fails instead of going out unsigned", async () => {
  const ws = await workspaceWithDomain(e);
  await createTemplate(e, ws, WELCOME);
  const r = await send(ws, { from: `hello@${ws.fqdn}`, to: rcpt(), data: { name: "A" } });
  await e.app.ctx.db.run("UPDATE mail_domains SET status = 'failed' WHERE id = ?", ws.domainId);
  e.app.clock.advance(MINUTE);
  await runDelivery(e);
  expect(await message(ws, r.body.message_ids[0])).toMatchObject({ status: "failed" });
});
