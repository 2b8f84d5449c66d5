// The listener's MX rules (issue 14): 550 for everything but mailboxes, test and VERP
// addresses (no open relay), 100 recipients, the size limit, per-address connection cap,
// garbage input, STARTTLS.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { connect, type Socket } from "node:net";
import { SmtpListener } from "../../../src/core/smtp-listener";
import { LOCALHOST_CERT, LOCALHOST_KEY } from "../../helpers/test-cert";
import { inProcess } from "../../helpers/target";
import { createMailbox, receiveWorkspace, sendMail, startInbound, type InboundEnv, type ReceiveWorkspace } from "../../helpers/mail-inbound";

let e: InboundEnv;
let w: ReceiveWorkspace;
beforeAll(async () => {
  e = await startInbound();
  w = await receiveWorkspace(e);
});
afterAll(() => e.stop());

/** A raw SMTP conversation: each command's reply (multi-line replies joined). */
async function converse(port: number, commands: string[]): Promise<string[]> {
  const sock = connect(port, "127.0.0.1");
  let buf = "";
  const waiters: ((line: string) => void)[] = [];
  sock.on("data", (d) => {
    buf += d.toString("latin1");
    for (;;) {
      const m = /^(\d{3}) .*\r\n/m.exec(buf);
      if (!m) break;
      const end = m.index + m[0].length;
      const reply = buf.slice(0, end);
      buf = buf.slice(end);
      waiters.shift()?.(reply.trim());
    }
  });
  const next = () => new Promise<string>((r) => waiters.push(r));
  const out: string[] = [await next()];
  for (const c of commands) {
    const p = next();
    sock.write(`${c}\r\n`);
    out.push(await p);
  }
  sock.destroy();
  return out;
}

const rcptReply = async (to: string) => (await converse(e.port, ["EHLO t.example", "MAIL FROM:<a@sender.example>", `RCPT TO:<${to}>`]))[3]!;

describe("RCPT rules", () => {
  test("mailboxes are accepted; unknown, disabled, deleted and foreign addresses get 550 5.1.1", async () => {
    const box = await createMailbox(e, w, { local_part: "sales" });
    expect(await rcptReply(`sales@${w.fqdn}`)).toStartWith("250");
    expect(await rcptReply(`SALES@${w.fqdn.toUpperCase()}`)).toStartWith("250");
    expect(await rcptReply(`sales+promo@${w.fqdn}`)).toStartWith("250");
    expect(await rcptReply(`nobody@${w.fqdn}`)).toMatch(/^550 5\.1\.1/);
    // Relaying to a foreign domain is refused.
    expect(await rcptReply("victim@gmail.com")).toMatch(/^550 5\.1\.1/);
    expect(await rcptReply(`sales@${w.fqdn}.evil.example`)).toMatch(/^550 5\.1\.1/);
    expect(await rcptReply("sales")).toMatch(/^5/);
    await e.app.call("PATCH", `${w.base}/mailboxes/${box.id}`, { token: w.token, body: { status: "disabled" } });
    expect(await rcptReply(`sales@${w.fqdn}`)).toMatch(/^550 5\.1\.1/);
    await e.app.call("PATCH", `${w.base}/mailboxes/${box.id}`, { token: w.token, body: { status: "active" } });
    expect(await rcptReply(`sales@${w.fqdn}`)).toStartWith("250");
    await e.app.call("DELETE", `${w.base}/mailboxes/${box.id}`, { token: w.token });
    expect(await rcptReply(`sales@${w.fqdn}`)).toMatch(/^550 5\.1\.1/);
    // A relay attempt through nodemailer fails as a whole.
    const err = await sendMail(e, { from: "a@sender.example", to: "victim@gmail.com", subject: "relay?", text: "x" }).catch((x) => x);
    expect(err.responseCode).toBe(550);
  });

  test("a mailbox on a domain that is not active (pending) is refused", async () => {
    const d = await e.app.call("POST", `${w.base}/domains`, { token: w.token, body: { fqdn: `pending${Date.now()}.example`, intent: "receive" } });
    const r = await e.app.call("POST", `${w.base}/mailboxes`, { token: w.token, body: { domain_id: d.body.id, local_part: "early" } });
    expect(r.status).toBe(201);
    expect(await rcptReply(`early@${d.body.fqdn}`)).toMatch(/^550/);
    // Its test address is accepted already (it is how the receive check completes).
    expect(await rcptReply(d.body.test_address)).toStartWith("250");
  });

  test("100 recipients are accepted, the 101st is refused", async () => {
    const box = await createMailbox(e, w);
    const [local, domain] = box.address.split("@");
    const rcpts = Array.from({ length: 101 }, (_, i) => `${local}+${i}@${domain}`);
    const replies = await converse(e.port, ["EHLO t.example", "MAIL FROM:<a@sender.example>", ...rcpts.map((r) => `RCPT TO:<${r}>`), "QUIT"]);
    const rc = replies.slice(3, 3 + 101);
    expect(rc.slice(0, 100).every((r) => r.startsWith("250"))).toBe(true);
    expect(rc[100]).toMatch(/^452/);
  });
});

describe("limits", () => {
  inProcess("starts a listener of its own with a small size limit on the in-process inbound handler (app.inbound)")("size: a message at the limit is accepted, one byte more is refused with 552", async () => {
    const limit = 20_000;
    const small = new SmtpListener({ port: 0, host: "127.0.0.1", log: e.app.ctx.log, maxBytes: limit, closeTimeoutMs: 200 });
    small.setHandler(e.app.inbound!);
    const port = await small.start();
    try {
      const box = await createMailbox(e, w);
      const raw = (n: number) => {
        const head = `From: a@sender.example\r\nTo: ${box.address}\r\nSubject: size\r\nMessage-ID: <s${n}@sender.example>\r\nDate: ${new Date().toUTCString()}\r\n\r\n`;
        // smtp-server counts the DATA bytes without the final CRLF of the terminator.
        return head + "a".repeat(n - head.length - 2) + "\r\n";
      };
      const send = (n: number) => sendMail({ ...e, port }, { envelope: { from: "a@sender.example", to: [box.address] }, raw: raw(n) }).then((i) => i.response as string, (x) => `${x.responseCode} ${x.response}`);
      expect(await send(limit)).toStartWith("250");
      expect(await send(limit + 1)).toStartWith("552");
      const ehlo = await converse(port, ["EHLO t.example"]);
      expect(ehlo[1]).toContain(`SIZE ${limit}`);
      expect(await converse(port, ["EHLO t.example", `MAIL FROM:<a@sender.example> SIZE=${limit + 1}`]).then((r) => r[2])).toMatch(/^552/);
    } finally {
      await small.stop();
    }
  });

  test("a flood of 200 connections from one address: the cap answers 421 and the listener keeps answering", async () => {
    const socks: Socket[] = [];
    const greetings: Promise<string>[] = [];
    for (let i = 0; i < 200; i++) {
      const s = connect(e.port, "127.0.0.1");
      socks.push(s);
      greetings.push(new Promise((r) => s.once("data", (d) => r(d.toString().slice(0, 3)))));
    }
    const codes = await Promise.all(greetings);
    expect(codes.filter((c) => c === "220")).toHaveLength(20);
    expect(codes.filter((c) => c === "421")).toHaveLength(180);
    for (const s of socks) s.destroy();
    await Bun.sleep(100);
    const box = await createMailbox(e, w);
    const info = await sendMail(e, { from: "a@sender.example", to: box.address, subject: "after the flood", text: "ok" });
    expect(info.response).toStartWith("250");
  });

  inProcess("starts a listener of its own with a short idle timeout on the in-process inbound handler (app.inbound)")("an idle session is closed after the idle timeout", async () => {
    const idle = new SmtpListener({ port: 0, host: "127.0.0.1", log: e.app.ctx.log, socketTimeoutMs: 300, closeTimeoutMs: 200 });
    idle.setHandler(e.app.inbound!);
    const port = await idle.start();
    try {
      const s = connect(port, "127.0.0.1");
      let text = "";
      s.on("data", (d) => (text += d.toString()));
      const closed = new Promise<number>((r) => {
        const t0 = performance.now();
        s.on("close", () => r(performance.now() - t0));
      });
      const ms = await closed;
      expect(text).toStartWith("220");
      expect(text).toMatch(/421/);
      expect(ms).toBeGreaterThanOrEqual(250);
    } finally {
      await idle.stop();
    }
  });

  test("garbage input never crashes the listener", async () => {
    const junk = [Buffer.from([0, 255, 1, 2, 3, 13, 10]).toString("latin1"), "HELO", "MAIL FROM:<<<>>>", "RCPT TO:<>", "DATA", "X".repeat(5000), "\u0000\u0001", "BDAT 10", "AUTH PLAIN AGFhAGI="];
    const replies = await converse(e.port, junk);
    expect(replies[0]).toStartWith("220");
    expect(replies.slice(1).every((r) => /^[45]\d\d/.test(r))).toBe(true);
    const box = await createMailbox(e, w);
    expect((await sendMail(e, { from: "a@sender.example", to: box.address, subject: "still up", text: "ok" })).response).toStartWith("250");
  });
});

describe("STARTTLS", () => {
  inProcess("starts a listener of its own with a certificate on the in-process inbound handler (app.inbound)")("offered when a certificate is configured; mail over TLS is stored (ESMTPS)", async () => {
    const tls = new SmtpListener({ port: 0, host: "127.0.0.1", log: e.app.ctx.log, tls: { cert: LOCALHOST_CERT, key: LOCALHOST_KEY }, closeTimeoutMs: 200 });
    tls.setHandler(e.app.inbound!);
    const port = await tls.start();
    try {
      expect((await converse(port, ["EHLO t.example"]))[1]).toContain("STARTTLS");
      expect((await converse(e.port, ["EHLO t.example"]))[1]).not.toContain("STARTTLS");
      const box = await createMailbox(e, w);
      const info = await sendMail({ ...e, port }, { from: "a@sender.example", to: box.address, subject: "over tls", text: "secret" }, { requireTLS: true });
      expect(info.response).toStartWith("250");
      const list = await e.app.call("GET", `${w.base}/mailboxes/${box.id}/messages`, { token: w.token });
      const raw = await e.app.call("GET", `${w.base}/mailboxes/${box.id}/messages/${list.body.data[0].id}/raw`, { token: w.token });
      expect(String(raw.body)).toMatch(/with ESMTPS/);
      // Without a certificate a client that requires TLS cannot send.
      const err = await sendMail(e, { from: "a@sender.example", to: box.address, subject: "x", text: "x" }, { requireTLS: true }).catch((x) => x);
      expect(err).toBeInstanceOf(Error);
    } finally {
      await tls.stop();
    }
  });
});
