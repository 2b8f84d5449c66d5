/**
 * Sending without a relay: the worker looks up the recipient domain's MX on the loopback DNS
 * server (DNS_SERVERS), which points at 127.0.0.1 where a real SMTP sink with STARTTLS
 * listens on MAIL_MX_PORT (ALLOW_PRIVATE_TARGETS lets the worker connect to loopback).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startSmtpSink, type SmtpSink } from "../../helpers/smtp-sink";
import { LOCALHOST_CERT, LOCALHOST_KEY } from "../../helpers/test-cert";
import { ON_BINARY } from "../../helpers/target";
import { createTemplate, runDelivery, startSendingApp, verifyDkim, workspaceWithDomain, type MailWorkspace, type SendingEnv } from "../../helpers/mail-sending";

let e: SendingEnv;
let mx: SmtpSink;
let w: MailWorkspace;

beforeAll(async () => {
  mx = await startSmtpSink({ tls: { key: LOCALHOST_KEY, cert: LOCALHOST_CERT } });
  e = await startSendingApp({ MAIL_MX_PORT: String(mx.port), ALLOW_PRIVATE_TARGETS: "true" });
  if (!ON_BINARY) e.sending.autoKick = false; // the binary's worker is kicked after each send; runDelivery waits for it
  w = await workspaceWithDomain(e);
  await createTemplate(e, w, { name: "hello", subject: "Hello {{name}}", body_html: "<p>Hi {{name}}</p>" });
  e.dns.set("recipient.test", [
    { type: "MX", exchange: "mx2.recipient.test", priority: 20 },
    { type: "MX", exchange: "mx1.recipient.test", priority: 10 },
  ]);
  e.dns.set("mx1.recipient.test", [{ type: "A", address: "127.0.0.1" }]);
  e.dns.set("mx2.recipient.test", [{ type: "A", address: "127.0.0.2" }]);
});
afterAll(async () => {
  await e.stop();
  await mx.stop();
});

test("delivered to the lowest-preference MX over STARTTLS, DKIM pass; status sent with the transcript", async () => {
  const r = await e.app.call("POST", `${w.base}/templates/hello/send`, { token: w.token, body: { from: `hello@${w.fqdn}`, to: "ada@recipient.test", data: { name: "Ada" } } });
  expect(r.status).toBe(202);
  const id = r.body.message_ids[0];
  await runDelivery(e);
  const got = await mx.waitFor((m) => m.to.includes("ada@recipient.test"));
  expect(got.secure).toBe(true);
  expect(got.from).toBe(`bounces+${id}@${w.fqdn}`);
  expect(got.subject).toBe("Hello Ada");
  const v = await verifyDkim(e, got.raw);
  expect(v.results.map((x: any) => [x.signingDomain, x.selector, x.status.result])).toEqual([[w.fqdn, w.selector, "pass"]]);
  const m = (await e.app.call("GET", `${w.base}/messages/${id}`, { token: w.token })).body;
  expect(m.status).toBe("sent");
  expect(m.smtp_transcript).toContain("mx1.recipient.test (127.0.0.1:");
  expect(m.smtp_transcript).toContain("STARTTLS");
  expect(e.dns.queries).toContain("recipient.test MX");
});

test("a recipient domain with no mail host bounces (and is suppressed)", async () => {
  const r = await e.app.call("POST", `${w.base}/templates/hello/send`, { token: w.token, body: { from: `hello@${w.fqdn}`, to: "bo@nowhere.test", data: { name: "Bo" } } });
  await runDelivery(e);
  const m = (await e.app.call("GET", `${w.base}/messages/${r.body.message_ids[0]}`, { token: w.token })).body;
  expect(m).toMatchObject({ status: "bounced", bounce_code: "550" });
  expect(m.bounce_detail).toContain("no deliverable mail host");
});
