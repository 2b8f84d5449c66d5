// Authentication and spam rules of received mail (issue 14): SPF, DKIM and DMARC evaluated
// by mailauth against records on the loopback DNS server; the spam rule set and quarantine.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { generateKeyPairSync } from "node:crypto";
import { dkimSign } from "mailauth/lib/dkim/sign";
import { inProcess } from "../../helpers/target";
import { createMailbox, receiveWorkspace, sendMail, startInbound, type InboundEnv, type ReceiveWorkspace } from "../../helpers/mail-inbound";

let e: InboundEnv;
let w: ReceiveWorkspace;
let box: { id: string; address: string };
const { publicKey, privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048, publicKeyEncoding: { type: "spki", format: "pem" }, privateKeyEncoding: { type: "pkcs8", format: "pem" } });
const p = publicKey.replace(/-----[^-]+-----/g, "").replace(/\s+/g, "");
/** A long TXT value as several character-strings of at most 255 bytes (as publishers split it). */
const chunks = (s: string) => s.match(/.{1,255}/g)!;

beforeAll(async () => {
  e = await startInbound();
  w = await receiveWorkspace(e);
  box = await createMailbox(e, w, { local_part: "auth" });
  // signed.example: SPF allows the loopback client, DKIM key published, DMARC reject.
  e.dns.set("signed.example", [{ type: "TXT", data: "v=spf1 ip4:127.0.0.1 -all" }]);
  e.dns.set("sel1._domainkey.signed.example", [{ type: "TXT", data: chunks(`v=DKIM1; k=rsa; p=${p}`) }]);
  e.dns.set("_dmarc.signed.example", [{ type: "TXT", data: "v=DMARC1; p=reject" }]);
  // strict.example: SPF does not list the client, DMARC reject, no DKIM.
  e.dns.set("strict.example", [{ type: "TXT", data: "v=spf1 ip4:192.0.2.10 -all" }]);
  e.dns.set("_dmarc.strict.example", [{ type: "TXT", data: "v=DMARC1; p=reject" }]);
  // soft.example: softfail, DMARC none.
  e.dns.set("soft.example", [{ type: "TXT", data: "v=spf1 ~all" }]);
  e.dns.set("_dmarc.soft.example", [{ type: "TXT", data: "v=DMARC1; p=none" }]);
});
afterAll(() => e.stop());

const rawMessage = (from: string, over: { subject?: string; body?: string; headers?: string[] } = {}) =>
  [
    `From: ${from}`,
    `To: ${box.address}`,
    `Subject: ${over.subject ?? "Signed hello"}`,
    `Date: ${new Date().toUTCString()}`,
    `Message-ID: <${Math.random().toString(36).slice(2)}@${from.split("@")[1]!.replace(/>$/, "")}>`,
    ...(over.headers ?? []),
    `MIME-Version: 1.0`,
    `Content-Type: text/plain; charset=utf-8`,
    ``,
    over.body ?? "Hello, this message is signed.",
    ``,
  ].join("\r\n");

async function signed(raw: string) {
  const r = await dkimSign(raw, { signatureData: [{ signingDomain: "signed.example", selector: "sel1", privateKey }] } as never);
  return (r as any).signatures + raw;
}

async function latest() {
  const list = await e.app.call("GET", `${w.base}/mailboxes/${box.id}/messages?limit=1`, { token: w.token });
  return list.body.data[0];
}

const deliver = (envFrom: string, raw: string) => sendMail(e, { envelope: { from: envFrom, to: [box.address] }, raw });

describe("SPF, DKIM, DMARC", () => {
  test("DKIM signed by the test: pass; SPF pass; DMARC pass (aligned); clean", async () => {
    await deliver("bounce@signed.example", await signed(rawMessage("Ada <ada@signed.example>")));
    expect(await latest()).toMatchObject({ spf_result: "pass", dkim_result: "pass", dmarc_result: "pass", spam_verdict: "clean", spam_score: 0, quarantined: false });
  });

  test("a tampered signed message: DKIM fail; DMARC still passes on aligned SPF", async () => {
    const raw = (await signed(rawMessage("Ada <ada@signed.example>"))).replace("this message is signed", "this message was CHANGED");
    await deliver("bounce@signed.example", raw);
    const m = await latest();
    expect(m).toMatchObject({ spf_result: "pass", dkim_result: "fail", dmarc_result: "pass", quarantined: false });
    expect(m.spam_rules).toContainEqual({ rule: "DKIM_FAIL", score: 2 });
  });

  test("SPF fail and no DKIM under p=reject: DMARC fail, quarantined", async () => {
    await deliver("ceo@strict.example", rawMessage("CEO <ceo@strict.example>"));
    const m = await latest();
    expect(m).toMatchObject({ spf_result: "fail", dkim_result: "none", dmarc_result: "fail", quarantined: true, spam_verdict: "spam" });
    expect(m.spam_rules.map((r: any) => r.rule)).toEqual(["SPF_FAIL", "DMARC_FAIL", "NO_AUTH"]);
  });

  test("softfail under p=none: not quarantined; SPF none for a domain without a record", async () => {
    await deliver("x@soft.example", rawMessage("x@soft.example"));
    expect(await latest()).toMatchObject({ spf_result: "softfail", dmarc_result: "fail", quarantined: false });
    await deliver("x@unpublished.example", rawMessage("x@unpublished.example"));
    expect(await latest()).toMatchObject({ spf_result: "none", dkim_result: "none", dmarc_result: "none" });
  });
});

describe("DNS answers", () => {
  inProcess("moves the injected clock across the 30-second DNS cache")("are reused for 30 s (injected clock), then asked again", async () => {
    e.dns.set("moving.example", [{ type: "TXT", data: "v=spf1 ip4:127.0.0.1 -all" }]);
    await deliver("x@moving.example", rawMessage("x@moving.example"));
    expect((await latest()).spf_result).toBe("pass");
    e.dns.set("moving.example", [{ type: "TXT", data: "v=spf1 -all" }]);
    e.app.clock.advance(29_000);
    await deliver("x@moving.example", rawMessage("x@moving.example"));
    expect((await latest()).spf_result).toBe("pass");
    e.app.clock.advance(2_000);
    await deliver("x@moving.example", rawMessage("x@moving.example"));
    expect((await latest()).spf_result).toBe("fail");
  });
});

describe("spam rules", () => {
  test("an executable attachment is spam and quarantined", async () => {
    await sendMail(e, {
      envelope: { from: "bounce@signed.example", to: [box.address] },
      from: "ada@signed.example",
      to: box.address,
      subject: "Invoice",
      text: "see attached",
      attachments: [{ filename: "invoice.pdf.exe", content: Buffer.from("MZ fake") }],
    });
    const m = await latest();
    expect(m.spam_rules.map((r: any) => r.rule)).toEqual(expect.arrayContaining(["EXECUTABLE_ATTACHMENT", "DOUBLE_EXTENSION"]));
    expect(m).toMatchObject({ spam_verdict: "spam", quarantined: true });
  });

  test("missing Message-ID and Date, a shouting subject and a spoofing display name add up", async () => {
    const raw = [`From: "support@bank.example" <x@signed.example>`, `To: ${box.address}`, `Subject: URGENT ACCOUNT VERIFICATION`, ``, `click`, ``].join("\r\n");
    await deliver("bounce@signed.example", raw);
    const m = await latest();
    expect(m.spam_rules.map((r: any) => r.rule).sort()).toEqual(["FROM_NAME_SPOOFS_ADDRESS", "MISSING_DATE", "MISSING_MESSAGE_ID", "SUBJECT_ALL_CAPS"].sort());
    expect(m).toMatchObject({ spam_score: 5, spam_verdict: "spam", quarantined: true });
  });

  test("two From headers: suspicious, not quarantined on its own", async () => {
    const raw = rawMessage("ada@signed.example", { headers: ["From: eve@signed.example"] });
    await deliver("bounce@signed.example", raw);
    const m = await latest();
    expect(m.spam_rules.map((r: any) => r.rule)).toContain("MULTIPLE_FROM");
  });
});
