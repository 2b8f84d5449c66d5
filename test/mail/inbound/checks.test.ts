// Parsing and authentication on worker threads (issue 32): what the check pool answers is
// what parseMail, authenticateMessage and examine answer on the event loop, message by message under
// concurrency; the workers' DNS questions go through the one cached resolver, whose answers a
// worker reuses exactly as long as that cache keeps them; a stopped pool fails what it still
// holds (the SMTP reply is then 451).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { generateKeyPairSync } from "node:crypto";
import { dkimSign } from "mailauth/lib/dkim/sign";
import MailComposer from "nodemailer/lib/mail-composer";
import { createLogger } from "../../../src/core/log";
import { authenticateMessage, DNS_CACHE_MS, mailauthResolver, type CachedLookup } from "../../../src/services/mail/inbound/auth";
import { CheckPool } from "../../../src/services/mail/inbound/checks";
import { examine } from "../../../src/services/mail/inbound/examine";
import { parseMail } from "../../../src/services/mail/parse";
import { startDnsServer, type TestDnsServer } from "../../helpers/dns-server";

let dns: TestDnsServer;
let asked: string[];
let resolver: CachedLookup;
let pool: CheckPool;
const { publicKey, privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048, publicKeyEncoding: { type: "spki", format: "pem" }, privateKeyEncoding: { type: "pkcs8", format: "pem" } });
const auth = { ip: "127.0.0.1", helo: "client.pool.example", sender: "ada@pool.example", mta: "mx.bunker.test" };
const NOW = Date.parse("2026-11-29T12:00:00Z");
const ask = (o: { auth?: boolean; report?: boolean; sender?: string } = {}) => ({ auth: o.auth === false ? null : { ...auth, sender: o.sender ?? auth.sender }, nowMs: NOW, report: o.report ?? false });

beforeAll(async () => {
  dns = await startDnsServer();
  dns.set("pool.example", [{ type: "TXT", data: "v=spf1 ip4:127.0.0.1 -all" }]);
  dns.set("_dmarc.pool.example", [{ type: "TXT", data: "v=DMARC1; p=reject" }]);
  dns.set("s1._domainkey.pool.example", [{ type: "TXT", data: `v=DKIM1; k=rsa; p=${publicKey.replace(/-----[^-]+-----/g, "").replace(/\s+/g, "")}`.match(/.{1,255}/g)! }]);
  asked = [];
  resolver = counted(mailauthResolver([dns.server]));
  pool = new CheckPool(resolver, createLogger("silent"), 2);
});
afterAll(async () => {
  pool.stop();
  await dns.stop();
});

/** The resolver the pool is handed: the service's cached one, with a record of what it was asked. */
const counted = (cached: CachedLookup): CachedLookup =>
  Object.assign(
    (name: string, rrtype: string) => {
      asked.push(`${rrtype} ${name}`);
      return cached(name, rrtype);
    },
    { until: cached.until },
  );

const compose = (mail: Record<string, unknown>) => new Promise<Buffer>((resolve, reject) => new MailComposer(mail as never).compile().build((e, m) => (e ? reject(e) : resolve(m))));
const signed = async (raw: Buffer) => Buffer.concat([Buffer.from(((await dkimSign(raw, { signatureData: [{ signingDomain: "pool.example", selector: "s1", privateKey }] } as never)) as { signatures: string }).signatures), raw]);
const bytes = (b: Buffer) => new Uint8Array(b);

describe("the check pool", () => {
  test("answers what parseMail, authenticateMessage and examine answer in this thread: fields, attachments, spam, reports", async () => {
    const messages = [
      await signed(await compose({ from: '"Ada" <ada@pool.example>', to: "in@bunker.test", cc: "G: a@x.example, b@x.example;", subject: "Signed", text: "signed body", messageId: "<s1@pool.example>" })),
      await compose({
        from: "ada@pool.example",
        to: "in@bunker.test",
        subject: "Attachments",
        html: "<p>Only <b>html</b></p>",
        attachments: [
          { filename: "report.pdf", content: Buffer.from("%PDF-1.4 x") },
          { filename: "run.exe", content: Buffer.from([0x4d, 0x5a, 0, 1]), cid: "x@y" },
        ],
      }),
      Buffer.from(
        "From: MAILER-DAEMON@remote.example\r\nTo: bounces+1@bunker.test\r\nSubject: Undelivered\r\nMIME-Version: 1.0\r\n" +
          'Content-Type: multipart/report; report-type=delivery-status; boundary="b"\r\n\r\n--b\r\nContent-Type: text/plain\r\n\r\nIt failed.\r\n' +
          "--b\r\nContent-Type: message/delivery-status\r\n\r\nReporting-MTA: dns; remote.example\r\n\r\nFinal-Recipient: rfc822; x@remote.example\r\nAction: failed\r\nStatus: 5.1.1\r\n--b--\r\n",
      ),
    ].map(bytes);
    // MAIL_INBOUND_THREADS=0: the same checks on the event loop.
    const inline = new CheckPool(resolver, createLogger("silent"), 0);
    for (const raw of messages) {
      const here = examine(await parseMail(raw), await authenticateMessage(raw, { ...auth, resolver }), NOW, true);
      expect(await pool.check(raw, ask({ report: true }))).toEqual(here);
      expect(await inline.check(raw, ask({ report: true }))).toEqual(here);
      expect(await pool.check(raw, ask({ auth: false }))).toEqual(examine(await parseMail(raw), null, NOW, false));
    }
    const [plain, attached, dsn] = await Promise.all(messages.map((raw) => pool.check(raw, ask({ report: true }))));
    expect(plain!.auth).toEqual({ spf: "pass", dkim: "pass", dmarc: "pass", dmarcPolicy: "reject" });
    // MIME order: the inline (cid) part comes first.
    expect(attached!.attachments.map((a) => a.filename)).toEqual(["run.exe", "report.pdf"]);
    expect(attached!.spam.rules.map((r) => r.rule)).toContain("EXECUTABLE_ATTACHMENT");
    expect(dsn!.report).toMatchObject({ kind: "dsn", action: "failed", statusCode: "5.1.1" });
  });

  test("without authentication asked: the parse only, no DNS question", async () => {
    const before = asked.length;
    const r = await pool.check(bytes(await compose({ from: "ada@pool.example", to: "t@bunker.test", subject: "Test address" })), ask({ auth: false }));
    expect(r.auth).toEqual({ spf: "none", dkim: "none", dmarc: "none", dmarcPolicy: null });
    expect(r.subject).toBe("Test address");
    expect(r.report).toBeNull();
    expect(asked.length).toBe(before);
  });

  test("many messages at once: each gets its own answer; DNS through the one cache (each name asked of the server once)", async () => {
    dns.set("many.example", [{ type: "TXT", data: "v=spf1 ip4:192.0.2.1 -all" }]);
    const queries = dns.queries.length;
    const raws = await Promise.all(Array.from({ length: 40 }, (_, i) => compose({ from: `n${i}@many.example`, to: "in@bunker.test", subject: `Message ${i}`, text: `body ${i}` })));
    const results = await Promise.all(raws.map((raw, i) => pool.check(bytes(raw), ask({ sender: `n${i}@many.example` }))));
    expect(results.map((r) => r.subject)).toEqual(raws.map((_, i) => `Message ${i}`));
    expect(results.map((r) => r.preview?.trim())).toEqual(raws.map((_, i) => `body ${i}`));
    for (const r of results) expect(r.auth).toMatchObject({ spf: "fail", dkim: "none", dmarc: "none" });
    const served = dns.queries.slice(queries);
    expect(served.filter((q) => q === "many.example TXT")).toHaveLength(1);
    expect(new Set(served).size).toBe(served.length);
  });

  test("a worker reuses an answer until the service's cache lets it go (the message's receiving time, the injected clock), then asks again", async () => {
    let clock = NOW;
    const own = new CheckPool(counted(mailauthResolver([dns.server], 3000, DNS_CACHE_MS, () => clock)), createLogger("silent"), 1);
    try {
      dns.set("moving.example", [{ type: "TXT", data: "v=spf1 ip4:127.0.0.1 -all" }]);
      const raw = bytes(await compose({ from: "x@moving.example", to: "in@bunker.test", subject: "Moving" }));
      const at = (ms: number) => own.check(raw, { auth: { ...auth, sender: "x@moving.example" }, nowMs: ms, report: false });
      expect((await at(clock)).auth.spf).toBe("pass");
      const first = asked.filter((q) => q === "TXT moving.example").length;
      expect(first).toBe(1);
      dns.set("moving.example", [{ type: "TXT", data: "v=spf1 -all" }]);
      clock = NOW + DNS_CACHE_MS - 1000;
      expect((await at(clock)).auth.spf).toBe("pass");
      // Kept by the worker: the event loop was not asked again.
      expect(asked.filter((q) => q === "TXT moving.example").length).toBe(first);
      clock = NOW + DNS_CACHE_MS + 1000;
      expect((await at(clock)).auth.spf).toBe("fail");
      expect(asked.filter((q) => q === "TXT moving.example").length).toBe(first + 1);
    } finally {
      own.stop();
    }
  });

  test("a stopped pool fails the messages it holds and every later one", async () => {
    const own = new CheckPool(resolver, createLogger("silent"), 1);
    const raw = bytes(await compose({ from: "ada@pool.example", to: "in@bunker.test", subject: "Late", text: "x".repeat(200_000) }));
    expect((await own.check(raw, ask({ auth: false }))).subject).toBe("Late");
    const held = own.check(raw, ask());
    own.stop();
    await expect(held).rejects.toThrow("inbound checks stopped");
    await expect(own.check(raw, ask({ auth: false }))).rejects.toThrow("inbound checks stopped");
  });
});
