/**
 * One delivery attempt (src/services/mail/sending/smtp-delivery.ts) against real SMTP
 * servers on loopback: a relay, an "MX" with STARTTLS, and answers that defer (451) or
 * bounce (550). Signatures are checked on the receiving side by mailauth, with the DKIM
 * public key as the DNS TXT record mailauth looks up.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { generateKeyPairSync } from "node:crypto";
import { dkimVerify } from "mailauth/lib/dkim/verify";
import { deliver, type DeliveryOptions, type OutboundMail } from "../../../src/services/mail/sending/smtp-delivery";
import { startSmtpSink, type SmtpSink } from "../../helpers/smtp-sink";
import { LOCALHOST_CERT, LOCALHOST_KEY } from "../../helpers/test-cert";

const DOMAIN = "mail.acme.test";
const SELECTOR = "bk202611";
const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
const dkim = { domainName: DOMAIN, keySelector: SELECTOR, privateKey: privateKey.export({ type: "pkcs8", format: "pem" }).toString() };
const publicB64 = publicKey.export({ type: "spki", format: "der" }).toString("base64");

/** What a DNS server would answer for the DKIM record (mailauth's resolver interface). */
const dkimDns = async (name: string, rr: string) => {
  if (rr === "TXT" && name === `${SELECTOR}._domainkey.${DOMAIN}`) return [[`v=DKIM1; k=rsa; p=${publicB64}`]];
  throw Object.assign(new Error(`no ${rr} for ${name}`), { code: "ENOTFOUND" });
};

let relay: SmtpSink;
let mx: SmtpSink;
let n = 0;

beforeAll(async () => {
  relay = await startSmtpSink();
  mx = await startSmtpSink({ tls: { key: LOCALHOST_KEY, cert: LOCALHOST_CERT } });
});
afterAll(async () => {
  await relay.stop();
  await mx.stop();
});

const mail = (over: Partial<OutboundMail> = {}): OutboundMail => {
  const id = `0192f400-0000-7000-8000-${String(++n).padStart(12, "0")}`;
  return {
    id,
    envelopeFrom: `bounces+${id}@${DOMAIN}`,
    from: `Acme <hello@${DOMAIN}>`,
    to: `ada${n}@example.test`,
    subject: `Welcome ${n}`,
    html: `<p style="color:#123456">Hello <a href="https://acme.test/x">there</a></p>`,
    text: "Hello there (https://acme.test/x)",
    headers: { "List-Unsubscribe": "<https://acme.test/unsub>" },
    ...over,
  };
};

const viaMx = (over: Partial<DeliveryOptions> = {}): DeliveryOptions => ({
  relayUrl: null,
  resolveMx: async (d) => (d === "example.test" ? [{ exchange: "mx2.example.test", priority: 20 }, { exchange: "mx1.example.test", priority: 10 }] : []),
  resolveAddresses: async () => ["127.0.0.1"],
  mxPort: mx.port,
  allowPrivateTargets: true,
  requireTls: false,
  verifyTls: false,
  heloName: "bunker.test",
  timeoutMs: 5_000,
  ...over,
});

describe("through the relay", () => {
  test("sent: DKIM passes for the domain's selector, VERP envelope, Message-ID and both parts arrive", async () => {
    const m = mail();
    const out = await deliver(m, dkim, viaMx({ relayUrl: relay.url }));
    expect(out.kind).toBe("sent");
    const got = await relay.waitFor((x) => x.to.includes(m.to));
    expect(got.from).toBe(m.envelopeFrom);
    expect(got.subject).toBe(m.subject);
    expect(got.text.trim()).toBe(m.text!);
    expect(got.html).toContain("Hello");
    expect(got.raw).toContain(`Message-ID: <${m.id}@${DOMAIN}>`);
    expect(got.raw).toMatch(/List-Unsubscribe: <https:\/\/acme.test\/unsub>/);
    const v = await dkimVerify(Buffer.from(got.raw), { resolver: dkimDns as never });
    expect(v.results.map((r) => [r.signingDomain, r.selector, r.status.result])).toEqual([[DOMAIN, SELECTOR, "pass"]]);
  });

  test("the transcript has the conversation but no credentials", async () => {
    const out = await deliver(mail(), dkim, viaMx({ relayUrl: relay.url.replace("smtp://", "smtp://relayuser:s3cret-pass@") }));
    expect(out.kind).toBe("sent");
    expect(out.transcript).toContain("EHLO bunker.test");
    expect(out.transcript).toMatch(/250/);
    expect(out.transcript).not.toContain("s3cret-pass");
    expect(out.transcript).not.toContain(Buffer.from("\u0000relayuser\u0000s3cret-pass").toString("base64"));
    expect(out.transcript).not.toContain("Hello there");
  });
});

describe("to the recipient's MX", () => {
  test("lowest preference first, STARTTLS when offered", async () => {
    const m = mail();
    const out = await deliver(m, dkim, viaMx());
    expect(out).toMatchObject({ kind: "sent", host: "mx1.example.test" });
    const got = await mx.waitFor((x) => x.to.includes(m.to));
    expect(got.secure).toBe(true);
    expect(out.transcript).toContain("STARTTLS");
    const v = await dkimVerify(Buffer.from(got.raw), { resolver: dkimDns as never });
    expect(v.results[0]!.status.result).toBe("pass");
  });

  test("requireTls refuses a hop without STARTTLS: deferred", async () => {
    const out = await deliver(mail(), dkim, viaMx({ mxPort: relay.port, requireTls: true }));
    expect(out.kind).toBe("deferred");
  });

  test("451 defers, 550 bounces with the code and the server's words", async () => {
    const sink = await startSmtpSink({ rcptReply: (a) => (a.startsWith("later") ? { code: 451, message: "4.7.1 try again later" } : a.startsWith("gone") ? { code: 550, message: "5.1.1 no such user" } : null) });
    try {
      const deferred = await deliver(mail({ to: "later@example.test" }), dkim, viaMx({ mxPort: sink.port }));
      expect(deferred).toMatchObject({ kind: "deferred", code: 451 });
      expect(deferred.kind === "deferred" && deferred.detail).toContain("try again later");
      const bounced = await deliver(mail({ to: "gone@example.test" }), dkim, viaMx({ mxPort: sink.port }));
      expect(bounced).toMatchObject({ kind: "bounced", code: 550 });
      expect(bounced.kind === "bounced" && bounced.detail).toContain("no such user");
      expect(sink.messages).toEqual([]);
    } finally {
      await sink.stop();
    }
  });

  test("no reachable host defers; MX hosts on private addresses are never contacted", async () => {
    const closed = await deliver(mail(), dkim, viaMx({ mxPort: 1 }));
    expect(closed.kind).toBe("deferred");
    const before = mx.messages.length;
    const guarded = await deliver(mail(), dkim, viaMx({ allowPrivateTargets: false }));
    expect(guarded).toMatchObject({ kind: "bounced", code: 550 });
    expect(mx.messages.length).toBe(before);
  });

  test("a domain without MX is tried at its own address; a null MX accepts nothing", async () => {
    const m = mail({ to: "someone@plain.test" });
    const out = await deliver(m, dkim, viaMx({ resolveMx: async () => [], resolveAddresses: async (h) => (h === "plain.test" ? ["127.0.0.1"] : []) }));
    expect(out.kind).toBe("sent");
    const nullMx = await deliver(mail(), dkim, viaMx({ resolveMx: async () => [{ exchange: ".", priority: 0 }] }));
    expect(nullMx.kind).toBe("bounced");
  });
});
