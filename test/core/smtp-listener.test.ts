/**
 * The inbound SMTP listener over real loopback SMTP, driven by nodemailer as an
 * independent client.
 */
import { afterEach, expect, test } from "bun:test";
import nodemailer from "nodemailer";
import { createLogger } from "../../src/core/log";
import { SmtpListener, type InboundHandler, type InboundMessage } from "../../src/core/smtp-listener";

/** A real mailbox directory: knows some addresses and stores what it receives. */
class MemoryMailboxes implements InboundHandler {
  received: InboundMessage[] = [];
  constructor(private readonly known: string[]) {}
  acceptsRecipient(address: string) {
    return this.known.includes(address.toLowerCase());
  }
  async deliver(msg: InboundMessage) {
    this.received.push(msg);
  }
}

const listeners: SmtpListener[] = [];
afterEach(async () => {
  await Promise.all(listeners.splice(0).map((l) => l.stop()));
});

async function start(opts: { maxBytes?: number } = {}) {
  const logs: any[] = [];
  const log = createLogger("debug", {}, (line) => logs.push(JSON.parse(line)));
  const listener = new SmtpListener({ port: 0, host: "127.0.0.1", log, name: "mx.test", ...opts });
  listeners.push(listener);
  const port = await listener.start();
  const transport = nodemailer.createTransport({ host: "127.0.0.1", port, secure: false, ignoreTLS: true, name: "client.test" });
  return { listener, port, transport, logs };
}

test("without a handler every recipient is refused with 550 5.1.1", async () => {
  const { transport, logs } = await start();
  const err: any = await transport
    .sendMail({ from: "alice@example.org", to: "bob@bunker.test", subject: "hello", text: "hi" })
    .then(() => null, (e) => e);
  expect(err).not.toBeNull();
  expect(err.responseCode).toBe(550);
  expect(err.response).toContain("550 5.1.1 No such mailbox");
  expect(err.rejected).toEqual(["bob@bunker.test"]);
  expect(logs.some((l) => l.level === "info" && l.msg === "smtp recipient rejected" && l.to === "bob@bunker.test")).toBe(true);
  expect(logs.some((l) => l.level === "debug" && l.msg === "smtp session opened")).toBe(true);
});

test("a registered handler receives the raw message", async () => {
  const { listener, transport, logs } = await start();
  const boxes = new MemoryMailboxes(["bob@bunker.test"]);
  listener.setHandler(boxes);
  const info = await transport.sendMail({
    from: "alice@example.org",
    to: "bob@bunker.test",
    subject: "Quarterly numbers",
    text: "line one\n.line starting with a dot\n",
  });
  expect(info.accepted).toEqual(["bob@bunker.test"]);
  expect(info.response).toMatch(/^250 2\.6\.0 /);
  expect(boxes.received).toHaveLength(1);
  const msg = boxes.received[0]!;
  expect(msg.raw).toBeInstanceOf(Uint8Array);
  expect(msg.from).toBe("alice@example.org");
  expect(msg.to).toEqual(["bob@bunker.test"]);
  expect(msg.remoteAddress).toBe("127.0.0.1");
  const raw = Buffer.from(msg.raw).toString("utf8");
  expect(raw.startsWith("Received: from client.test ([127.0.0.1])\r\n\tby mx.test (Bunker) with ESMTP id ")).toBe(true);
  expect(raw).toContain("Subject: Quarterly numbers");
  // Dot-stuffing is undone on the way in.
  expect(raw).toContain("\r\n.line starting with a dot");
  expect(logs.some((l) => l.level === "info" && l.msg === "smtp message accepted" && l.to?.[0] === "bob@bunker.test")).toBe(true);
});

test("unknown recipients are refused while known ones get the message", async () => {
  const { listener, transport } = await start();
  const boxes = new MemoryMailboxes(["bob@bunker.test", "carol@bunker.test"]);
  listener.setHandler(boxes);
  const info = await transport.sendMail({
    from: "alice@example.org",
    to: ["bob@bunker.test", "nobody@bunker.test", "carol@bunker.test"],
    subject: "partial",
    text: "x",
  });
  expect(info.accepted).toEqual(["bob@bunker.test", "carol@bunker.test"]);
  expect(info.rejected).toEqual(["nobody@bunker.test"]);
  expect((info as any).rejectedErrors[0].response).toContain("550 5.1.1 No such mailbox");
  expect(boxes.received).toHaveLength(1);
  expect(boxes.received[0]!.to).toEqual(["bob@bunker.test", "carol@bunker.test"]);
});

test("bounces with the null sender are accepted", async () => {
  const { listener, transport } = await start();
  const boxes = new MemoryMailboxes(["bounces@bunker.test"]);
  listener.setHandler(boxes);
  await transport.sendMail({ envelope: { from: "", to: ["bounces@bunker.test"] }, raw: "From: MAILER-DAEMON@example.org\r\nSubject: Undelivered\r\n\r\nsorry\r\n" });
  expect(boxes.received[0]!.from).toBe("");
});

test("a message over the size limit is refused with 552 and not delivered", async () => {
  const { listener, transport, logs } = await start({ maxBytes: 4096 });
  const boxes = new MemoryMailboxes(["bob@bunker.test"]);
  listener.setHandler(boxes);
  const err: any = await transport
    .sendMail({ from: "alice@example.org", to: "bob@bunker.test", subject: "big", text: "x".repeat(20_000) })
    .then(() => null, (e) => e);
  expect(err).not.toBeNull();
  expect(err.responseCode).toBe(552);
  expect(boxes.received).toHaveLength(0);
  expect(logs.some((l) => l.msg === "smtp message rejected" && l.reason === "too large")).toBe(true);

  // The same session state is clean afterwards: a small message still goes through.
  await transport.sendMail({ from: "alice@example.org", to: "bob@bunker.test", subject: "small", text: "ok" });
  expect(boxes.received).toHaveLength(1);
});

test("a declared SIZE over the limit is refused at MAIL FROM", async () => {
  const { port } = await start({ maxBytes: 4096 });
  const replies = await smtpDialog(port, ["EHLO client.test", "MAIL FROM:<a@example.org> SIZE=999999", "QUIT"]);
  expect(replies[1]).toMatch(/\r\n250[- ]SIZE 4096\r\n/);
  expect(replies[2]).toMatch(/^552 /);
});

test("a handler failure answers 451 so the sender retries", async () => {
  const { listener, transport } = await start();
  listener.setHandler({
    acceptsRecipient: () => true,
    deliver: async () => {
      throw new Error("disk full");
    },
  });
  const err: any = await transport.sendMail({ from: "a@example.org", to: "b@bunker.test", subject: "s", text: "t" }).then(() => null, (e) => e);
  expect(err.responseCode).toBe(451);
  expect(err.response).not.toContain("disk full");
});

test("stop() closes the port", async () => {
  const { listener, port } = await start();
  await listener.stop();
  const ok = await Bun.connect({ hostname: "127.0.0.1", port, socket: { data() {} } }).then((s) => (s.end(), true), () => false);
  expect(ok).toBe(false);
});

/** Minimal raw SMTP client: sends each command after the previous reply, returns replies. */
async function smtpDialog(port: number, commands: string[]): Promise<string[]> {
  const replies: string[] = [];
  let buf = "";
  let next = 0;
  return new Promise((resolve, reject) => {
    Bun.connect({
      hostname: "127.0.0.1",
      port,
      socket: {
        data(sock, data) {
          buf += Buffer.from(data).toString();
          // A reply is complete when its last line has a space after the code.
          const m = buf.match(/(?:^|\r\n)\d{3} [^\r\n]*\r\n$/);
          if (!m) return;
          replies.push(buf);
          buf = "";
          if (next < commands.length) sock.write(commands[next++] + "\r\n");
          else sock.end();
        },
        close() {
          resolve(replies);
        },
        error(_s, e) {
          reject(e);
        },
      },
    }).catch(reject);
  });
}
