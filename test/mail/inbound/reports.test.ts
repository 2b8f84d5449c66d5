// source-only: drives outbound messages to sent through the in-process MessageService (queue, claim, markSent) and the webhook engine by hand
// Bounces (RFC 3464 DSNs), complaints (RFC 5965 ARF) and provider-style bounce texts at the
// VERP address of an outbound message (issue 14): statuses, suppressions, events delivered
// to a webhook receiver and verified with standardwebhooks.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Webhook } from "standardwebhooks";
import { startReceiver, type Receiver } from "../../helpers/http-receiver";
import { mailEvents, receiveWorkspace, sendMail, startInbound, type InboundEnv, type ReceiveWorkspace } from "../../helpers/mail-inbound";
import { messageService } from "../../helpers/mail-messages";
import type { MessageService } from "../../../src/services/mail/messages/service";

let e: InboundEnv;
let w: ReceiveWorkspace;
let svc: MessageService;
let receiver: Receiver;
beforeAll(async () => {
  e = await startInbound();
  w = await receiveWorkspace(e, "send_receive");
  svc = messageService(e.app);
  receiver = startReceiver();
});
afterAll(async () => {
  await e.stop();
  await receiver.stop();
});

let n = 0;
/** An outbound message of the workspace in status sent, with its VERP address. */
async function sentMessage(to = `rcpt${++n}@remote.example`) {
  const [row] = await svc.queue(w.wsId, [{ domainId: w.domainId, from: `hello@${w.fqdn}`, to, subject: `Hello ${n}`, html: "<p>x</p>", text: "x" }]);
  const c = await svc.claim(1000);
  const verp = `bounces+${row!.id}@${w.fqdn}`;
  await svc.markSent(row!.id, c.owner, { envelopeFrom: verp, rfc822MessageId: `<${row!.id}@${w.fqdn}>` });
  return { id: row!.id, to, verp };
}

const msg = async (id: string) => (await e.app.call("GET", `${w.base}/messages/${id}`, { token: w.token })).body;

/** An RFC 3464 delivery status notification for `rcpt`. */
function dsn(o: { verp: string; rcpt: string; action: string; status: string; diagnostic?: string; messageId: string }) {
  const b = "dsn-boundary-1";
  return [
    `From: Mail Delivery Subsystem <MAILER-DAEMON@mx.remote.example>`,
    `To: ${o.verp}`,
    `Subject: Delivery Status Notification`,
    `Date: ${new Date().toUTCString()}`,
    `Message-ID: <dsn-${Math.random().toString(36).slice(2)}@mx.remote.example>`,
    `MIME-Version: 1.0`,
    `Content-Type: multipart/report; report-type=delivery-status; boundary="${b}"`,
    ``,
    `--${b}`,
    `Content-Type: text/plain; charset=us-ascii`,
    ``,
    `This is the mail system at host mx.remote.example.`,
    ``,
    `--${b}`,
    `Content-Type: message/delivery-status`,
    ``,
    `Reporting-MTA: dns; mx.remote.example`,
    `Arrival-Date: ${new Date().toUTCString()}`,
    ``,
    `Final-Recipient: rfc822; ${o.rcpt}`,
    `Original-Recipient: rfc822;${o.rcpt}`,
    `Action: ${o.action}`,
    `Status: ${o.status}`,
    ...(o.diagnostic ? [`Diagnostic-Code: smtp; ${o.diagnostic}`] : []),
    ``,
    `--${b}`,
    `Content-Type: text/rfc822-headers`,
    ``,
    `Message-ID: ${o.messageId}`,
    `Subject: Hello`,
    ``,
    `--${b}--`,
    ``,
  ].join("\r\n");
}

/** An RFC 5965 abuse report about the message. */
function arf(o: { verp: string; rcpt: string; messageId: string }) {
  const b = "arf-boundary-1";
  return [
    `From: <fbl@isp.example>`,
    `To: ${o.verp}`,
    `Subject: FW: Hello`,
    `Date: ${new Date().toUTCString()}`,
    `Message-ID: <arf-${Math.random().toString(36).slice(2)}@isp.example>`,
    `MIME-Version: 1.0`,
    `Content-Type: multipart/report; report-type=feedback-report; boundary="${b}"`,
    ``,
    `--${b}`,
    `Content-Type: text/plain; charset="US-ASCII"`,
    ``,
    `This is an email abuse report for an email message received from IP 192.0.2.1.`,
    ``,
    `--${b}`,
    `Content-Type: message/feedback-report`,
    ``,
    `Feedback-Type: abuse`,
    `User-Agent: SomeGenerator/1.0`,
    `Version: 1`,
    `Original-Rcpt-To: <${o.rcpt}>`,
    `Source-IP: 192.0.2.1`,
    ``,
    `--${b}`,
    `Content-Type: message/rfc822`,
    ``,
    `From: <hello@${w.fqdn}>`,
    `To: <${o.rcpt}>`,
    `Subject: Hello`,
    `Message-ID: ${o.messageId}`,
    ``,
    `body`,
    `--${b}--`,
    ``,
  ].join("\r\n");
}

const deliverReport = (verp: string, raw: string) => sendMail(e, { envelope: { from: "", to: [verp] }, raw });

describe("reports at VERP addresses", () => {
  test("DSN delayed -> deferred, then delivered -> delivered (recipient-side evidence)", async () => {
    const m = await sentMessage();
    await deliverReport(m.verp, dsn({ verp: m.verp, rcpt: m.to, action: "delayed", status: "4.4.7", diagnostic: "451 4.4.7 Greylisted", messageId: `<${m.id}@${w.fqdn}>` }));
    expect(await msg(m.id)).toMatchObject({ status: "deferred", deferral_count: 1, deferred_at: e.app.clock.iso(), bounce_code: "4.4.7", bounce_detail: "451 4.4.7 Greylisted" });
    await deliverReport(m.verp, dsn({ verp: m.verp, rcpt: m.to, action: "delivered", status: "2.0.0", messageId: `<${m.id}@${w.fqdn}>` }));
    expect(await msg(m.id)).toMatchObject({ status: "delivered", delivered_at: e.app.clock.iso() });
    const types = (await mailEvents(e.app, w.wsId)).filter((x) => x.data.id === m.id).map((x) => x.type);
    expect(types).toEqual(["email.sent", "email.delivery_delayed", "email.delivered"]);
    // The delivery worker does not pick the deferred-by-report message up again.
    expect((await svc.claim(1000)).messages.map((x) => x.id)).not.toContain(m.id);
  });

  test("DSN failed 5.x.x -> bounced with code and detail, suppression bounce; events verify with standardwebhooks", async () => {
    const hook = await e.app.call("POST", `${w.base}/webhooks/endpoints`, { token: w.token, body: { url: `${receiver.url}/mail`, event_types: ["email.bounced", "suppression.created", "email.complained"] } });
    expect(hook.status).toBe(201);
    const m = await sentMessage("Gone@Remote.example");
    await deliverReport(m.verp, dsn({ verp: m.verp, rcpt: m.to, action: "failed", status: "5.1.1", diagnostic: "550 5.1.1 <gone@remote.example>: Recipient address rejected: User unknown", messageId: `<${m.id}@${w.fqdn}>` }));
    expect(await msg(m.id)).toMatchObject({ status: "bounced", bounce_code: "5.1.1", bounce_detail: "550 5.1.1 <gone@remote.example>: Recipient address rejected: User unknown" });
    const sup = await e.app.call("GET", `${w.base}/suppressions`, { token: w.token });
    expect(sup.body.data).toContainEqual({ email: "gone@remote.example", reason: "bounce", source_message_id: m.id, created_at: e.app.clock.iso() });

    await e.app.webhooks.dispatchPending();
    await e.app.webhooks.deliverDue();
    const reqs = await receiver.waitForRequests(2);
    const verified = reqs.map((r) => new Webhook(hook.body.signing_secret).verify(r.body, { "webhook-id": r.headers["webhook-id"]!, "webhook-timestamp": r.headers["webhook-timestamp"]!, "webhook-signature": r.headers["webhook-signature"]! }) as any);
    expect(verified.map((v) => v.type).sort()).toEqual(["email.bounced", "suppression.created"]);
    expect(verified.find((v) => v.type === "email.bounced").data).toMatchObject({ id: m.id, status: "bounced", bounce_code: "5.1.1", bounce_type: "hard" });

    // ARF complaint on another message.
    const c = await sentMessage("annoyed@remote.example");
    await deliverReport(c.verp, arf({ verp: c.verp, rcpt: c.to, messageId: `<${c.id}@${w.fqdn}>` }));
    expect(await msg(c.id)).toMatchObject({ status: "complained" });
    const sup2 = await e.app.call("GET", `${w.base}/suppressions?reason=complaint`, { token: w.token });
    expect(sup2.body.data.map((s: any) => s.email)).toEqual(["annoyed@remote.example"]);
    await e.app.webhooks.dispatchPending();
    await e.app.webhooks.deliverDue();
    const all = await receiver.waitForRequests(4);
    const last = all.slice(2).map((r) => new Webhook(hook.body.signing_secret).verify(r.body, { "webhook-id": r.headers["webhook-id"]!, "webhook-timestamp": r.headers["webhook-timestamp"]!, "webhook-signature": r.headers["webhook-signature"]! }) as any);
    expect(last.map((v) => v.type).sort()).toEqual(["email.complained", "suppression.created"]);
  });

  test("provider-style bounce texts without a report part; unparseable reports are kept and counted", async () => {
    const m = await sentMessage();
    const text = [
      `From: Mail Delivery System <MAILER-DAEMON@mx.remote.example>`,
      `To: ${m.verp}`,
      `Subject: Undelivered Mail Returned to Sender`,
      `Date: ${new Date().toUTCString()}`,
      ``,
      `This message was created automatically by mail delivery software.`,
      ``,
      `A message that you sent could not be delivered to one or more of its recipients.`,
      `  ${m.to}`,
      `    host mx.remote.example [192.0.2.1]`,
      `    SMTP error from remote mail server after RCPT TO:<${m.to}>:`,
      `    550 5.2.1 The email account that you tried to reach is disabled.`,
      ``,
    ].join("\r\n");
    await deliverReport(m.verp, text);
    expect(await msg(m.id)).toMatchObject({ status: "bounced", bounce_code: "5.2.1" });

    const u = await sentMessage();
    await deliverReport(u.verp, `From: someone@remote.example\r\nTo: ${u.verp}\r\nSubject: Re: Hello\r\n\r\nThanks, got it!\r\n`);
    expect(await msg(u.id)).toMatchObject({ status: "sent" });
    const rows = await e.app.ctx.db.all<{ kind: string; applied: number; raw_object_key: string | null }>("SELECT kind, applied, raw_object_key FROM mail_inbound_reports WHERE message_id = ?", u.id);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ kind: "unparsed" });
    expect(Number(rows[0]!.applied)).toBe(0);
    expect(await e.app.ctx.objects.exists(rows[0]!.raw_object_key!)).toBe(true);

    // The report log: newest first, counted by kind.
    const log = await e.app.call("GET", `${w.base}/inbound-reports?limit=1`, { token: w.token });
    expect(log.status).toBe(200);
    expect(log.body.data).toEqual([expect.objectContaining({ message_id: u.id, kind: "unparsed", applied: false })]);
    expect(log.body.counts).toMatchObject({ window_days: 30, unparsed: 1, arf: 1 });
    expect(log.body.counts.dsn).toBeGreaterThanOrEqual(4);
    const next = await e.app.call("GET", `${w.base}/inbound-reports?limit=1&cursor=${log.body.pagination.next_cursor}`, { token: w.token });
    expect(next.body.data[0]).toMatchObject({ message_id: m.id, kind: "dsn", action: "failed", status_code: "5.2.1", applied: true });
    const unparsed = await e.app.call("GET", `${w.base}/inbound-reports?kind=unparsed`, { token: w.token });
    expect(unparsed.body.data).toHaveLength(1);
    expect((await e.app.call("GET", `${w.base}/inbound-reports?kind=spam`, { token: w.token })).status).toBe(400);
  });

  test("VERP addresses: unknown ids, other domains and malformed ids get 550", async () => {
    const m = await sentMessage();
    const err = await sendMail(e, { envelope: { from: "", to: [`bounces+0192f3ff-0a1b-7c2d-8e3f-4a5b6c7d8e9f@${w.fqdn}`] }, raw: "Subject: x\r\n\r\nx\r\n" }).catch((x) => x);
    expect(err.responseCode).toBe(550);
    const other = await receiveWorkspace(e, "send_receive");
    const err2 = await sendMail(e, { envelope: { from: "", to: [`bounces+${m.id}@${other.fqdn}`] }, raw: "Subject: x\r\n\r\nx\r\n" }).catch((x) => x);
    expect(err2.responseCode).toBe(550);
    const err3 = await sendMail(e, { envelope: { from: "", to: [`bounces+nope@${w.fqdn}`] }, raw: "Subject: x\r\n\r\nx\r\n" }).catch((x) => x);
    expect(err3.responseCode).toBe(550);
  });

  test("deliverability: unconfirmed until a delivered DSN, then healthy", async () => {
    const w0 = w;
    w = await receiveWorkspace(e, "send_receive");
    try {
      const m = await sentMessage();
      const before = await e.app.call("GET", `${w.base}/deliverability`, { token: w.token });
      expect(before.body.verdict).toBe("unconfirmed");
      await deliverReport(m.verp, dsn({ verp: m.verp, rcpt: m.to, action: "delivered", status: "2.0.0", messageId: `<${m.id}@${w.fqdn}>` }));
      const after = await e.app.call("GET", `${w.base}/deliverability`, { token: w.token });
      expect(after.body).toMatchObject({ verdict: "healthy", confirmed: 1 });
    } finally {
      w = w0;
    }
  });
});
