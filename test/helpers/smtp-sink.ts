/**
 * A real SMTP server on 127.0.0.1 that accepts every message and parses it: the relay of
 * mailer tests. Plain SMTP only (no STARTTLS), auth optional (any credentials accepted and
 * recorded), so `smtp://127.0.0.1:<port>` and `smtp://user:pass@127.0.0.1:<port>` both work.
 */
import { simpleParser } from "mailparser";
import { SMTPServer } from "smtp-server";

export interface SinkMessage {
  /** Envelope sender (MAIL FROM). */
  from: string;
  /** Envelope recipients (RCPT TO). */
  to: string[];
  /** The From header as written. */
  headerFrom: string;
  subject: string;
  text: string;
  html?: string;
  /** The AUTH user of the session, if the client logged in. */
  user?: string;
  /** The session ran over TLS (STARTTLS). */
  secure: boolean;
  raw: string;
}

export interface SmtpSink {
  port: number;
  url: string;
  messages: SinkMessage[];
  /** Most DATA transfers that were in progress at once (a measure of the sender's concurrency). */
  readonly maxConcurrentData: number;
  /** DATA transfers in progress now (received or being received, not yet answered). */
  readonly inData: number;
  waitFor(pred: (m: SinkMessage) => boolean, timeoutMs?: number): Promise<SinkMessage>;
  stop(): Promise<void>;
}

export interface SmtpSinkOptions {
  /** Listen on this port, e.g. to bring a sink back on the address a relay URL already names. */
  port?: number;
  /** Recipients to refuse with "550 5.1.1 mailbox unavailable" at RCPT TO. */
  rejectRecipient?: (address: string) => boolean;
  /** Any other answer at RCPT TO (e.g. 451 to defer, 552, 554): null accepts. Read at each RCPT, so a test may change it. */
  rcptReply?: (address: string) => { code: number; message: string } | null;
  /** Offer STARTTLS with this certificate (test/helpers/test-cert.ts). */
  tls?: { key: string; cert: string };
  /** Wait this long before answering each DATA (a slow receiver: messages in flight). */
  dataDelayMs?: number;
}

export async function startSmtpSink(opts: SmtpSinkOptions = {}): Promise<SmtpSink> {
  const messages: SinkMessage[] = [];
  const waiters = new Set<(m: SinkMessage) => void>();
  let inData = 0;
  let maxConcurrentData = 0;

  const server = new SMTPServer({
    secure: false,
    ...(opts.tls ? { key: opts.tls.key, cert: opts.tls.cert } : { disabledCommands: ["STARTTLS"] }),
    authOptional: true,
    allowInsecureAuth: true,
    logger: false,
    closeTimeout: 1000,
    onAuth(auth, _session, cb) {
      cb(null, { user: auth.username });
    },
    onRcptTo(address, _session, cb) {
      if (opts.rejectRecipient?.(address.address)) {
        const err = Object.assign(new Error("5.1.1 mailbox unavailable"), { responseCode: 550 });
        return cb(err);
      }
      const reply = opts.rcptReply?.(address.address);
      if (reply) return cb(Object.assign(new Error(reply.message), { responseCode: reply.code }));
      cb();
    },
    onData(stream, session, cb) {
      maxConcurrentData = Math.max(maxConcurrentData, ++inData);
      const done = cb;
      let finished = false;
      cb = (err?: Error | null) => {
        if (!finished) inData--;
        finished = true;
        done(err);
      };
      const chunks: Buffer[] = [];
      stream.on("data", (c: Buffer) => chunks.push(c));
      stream.on("error", (e: Error) => cb(e));
      stream.on("end", async () => {
        try {
          const raw = Buffer.concat(chunks);
          const parsed = await simpleParser(raw);
          const mailFrom = session.envelope.mailFrom;
          const msg: SinkMessage = {
            from: mailFrom ? mailFrom.address : "",
            to: session.envelope.rcptTo.map((r) => r.address),
            headerFrom: parsed.from?.text ?? "",
            subject: parsed.subject ?? "",
            text: parsed.text ?? "",
            html: typeof parsed.html === "string" ? parsed.html : undefined,
            user: typeof session.user === "string" ? session.user : undefined,
            secure: !!session.secure,
            raw: raw.toString("utf8"),
          };
          if (opts.dataDelayMs) await Bun.sleep(opts.dataDelayMs);
          messages.push(msg);
          for (const w of waiters) w(msg);
          cb();
        } catch (e) {
          cb(e as Error);
        }
      });
    },
  });

  // A client that dies mid-conversation (the crash tests SIGKILL senders) is a connection
  // error, as for any MTA: the session ends, the sink keeps serving.
  server.on("error", () => {});

  const port = await new Promise<number>((resolve, reject) => {
    server.server.once("error", reject);
    server.listen(opts.port ?? 0, "127.0.0.1", () => {
      server.server.off("error", reject);
      resolve((server.server.address() as { port: number }).port);
    });
  });

  return {
    port,
    url: `smtp://127.0.0.1:${port}`,
    messages,
    get inData() {
      return inData;
    },
    get maxConcurrentData() {
      return maxConcurrentData;
    },
    waitFor(pred, timeoutMs = 5000) {
      const found = messages.find(pred);
      if (found) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`smtp sink: no matching message after ${timeoutMs} ms (${messages.length} received)`));
        }, timeoutMs);
        const check = (m: SinkMessage) => {
          if (!pred(m)) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve(m);
        };
        waiters.add(check);
      });
    },
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
