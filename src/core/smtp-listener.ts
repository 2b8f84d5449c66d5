/**
 * Inbound SMTP listener (the MX side of Bunker), on SMTP_PORT (default 2525).
 *
 * Protocol decisions:
 * - No AUTH (it receives mail for local mailboxes, like any MX). STARTTLS is offered when a
 *   certificate is configured (opts.tls), plain otherwise; ESMTP with SIZE, 8BITMIME,
 *   PIPELINING and enhanced status codes (RFC 2034/3463).
 * - At most maxConnectionsPerIp simultaneous sessions per client address (more get
 *   `421 4.7.0` at connect); idle sessions are closed after socketTimeoutMs.
 * - Recipients are decided at RCPT TO by the registered InboundHandler. Without a handler
 *   (mail service not running) every recipient gets `550 5.1.1 No such mailbox`: mail is
 *   refused by protocol, never accepted and dropped. A handler error answers
 *   `451 4.3.0` so the sending MTA retries later.
 * - Messages over maxBytes (default 25 MiB, advertised in EHLO as SIZE) answer 552: at
 *   MAIL FROM when the client declares SIZE, otherwise at the end of DATA. Bytes past the
 *   limit are read and discarded, never buffered.
 * - The null reverse-path (`MAIL FROM:<>`, used by bounces and DSNs) is accepted and
 *   delivered with from = "".
 * - A `Received:` trace header is prepended to every accepted message (RFC 5321 4.4).
 * - deliver() errors answer 451 (or the error's own 4xx/5xx `responseCode`, so a handler
 *   can reject permanently, e.g. a mailbox over quota with 552).
 */
import { hostname } from "node:os";
import { SMTPServer, type SMTPServerDataStream, type SMTPServerSession } from "smtp-server";
import type { Logger } from "./log";

export interface InboundMessage {
  /** Envelope sender (MAIL FROM); "" for the null reverse-path of bounces. */
  from: string;
  /** Envelope recipients the handler accepted (RCPT TO). */
  to: string[];
  /** The message as received (dot-unstuffed), with Bunker's Received header prepended. */
  raw: Uint8Array;
  /** IP address of the sending client. */
  remoteAddress: string;
  /** The name the client gave in EHLO/HELO ("" when none). */
  helo?: string;
  /** True when the session was upgraded with STARTTLS. */
  secure?: boolean;
}

export interface InboundHandler {
  acceptsRecipient(address: string): boolean | Promise<boolean>;
  deliver(msg: InboundMessage): Promise<void>;
}

export interface SmtpListenerOptions {
  port: number;
  host: string;
  log: Logger;
  /** Maximum message size in bytes; default 25 MiB. */
  maxBytes?: number;
  /** Name in the greeting and Received headers; default the machine's host name. */
  name?: string;
  /** How long stop() lets open sessions finish before closing them (ms); default 5000. */
  closeTimeoutMs?: number;
  /** PEM certificate chain and key: STARTTLS is offered when set. */
  tls?: { cert: string | Buffer; key: string | Buffer } | null;
  /** Simultaneous sessions per client address; default 20. */
  maxConnectionsPerIp?: number;
  /** Idle time before a session is closed (ms); default 60000. */
  socketTimeoutMs?: number;
}

export const DEFAULT_MAX_BYTES = 25 * 1024 * 1024;

/** An Error smtp-server turns into a reply line `<code> <enhanced> <message>`. */
function smtpError(code: number, message: string): Error {
  return Object.assign(new Error(message), { responseCode: code });
}

/** Keeps header-safe characters of a client-supplied value (HELO name). */
function headerSafe(v: unknown): string {
  return String(v ?? "").replace(/[^A-Za-z0-9.\-_:\[\]]/g, "").slice(0, 255);
}

/** RFC 5322 date-time in UTC, e.g. "Sat, 21 Nov 2026 12:00:00 +0000". */
function rfc5322Date(d: Date): string {
  return d.toUTCString().replace(/GMT$/, "+0000");
}

export class SmtpListener {
  private handler: InboundHandler | null = null;
  private server: SMTPServer | null = null;
  private readonly maxBytes: number;
  private readonly name: string;
  private readonly log: Logger;
  /** Open sessions by client address (the per-address cap). */
  private readonly perIp = new Map<string, Set<string>>();

  constructor(private readonly opts: SmtpListenerOptions) {
    this.maxBytes = opts.maxBytes ?? DEFAULT_MAX_BYTES;
    this.name = opts.name ?? hostname();
    this.log = opts.log;
  }

  /** Registers (or, with null, removes) the component that owns inbound mail. */
  setHandler(h: InboundHandler | null) {
    this.handler = h;
  }

  /** Starts listening; resolves with the bound port (useful with port 0). */
  async start(): Promise<number> {
    if (this.server) throw new Error("smtp listener already started");
    const server = this.createServer();
    // Without an "error" listener an unexpected socket error would crash the process.
    server.on("error", (err: Error) => this.log.warn("smtp server error", { error: err.message }));
    const port = await new Promise<number>((resolve, reject) => {
      const onError = (err: Error) => reject(err);
      server.server.once("error", onError);
      server.listen(this.opts.port, this.opts.host, () => {
        server.server.off("error", onError);
        resolve((server.server.address() as { port: number }).port);
      });
    });
    this.server = server;
    this.log.info("smtp listening", { host: this.opts.host, port, max_bytes: this.maxBytes });
    return port;
  }

  /**
   * Stops accepting connections. Sessions between transactions are closed at once with
   * `421 4.4.2`; a session in the middle of one (MAIL FROM .. end of DATA) gets up to
   * closeTimeoutMs to finish it, then it is closed too.
   */
  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = null;
    const closeIdle = () => {
      for (const conn of server.connections) {
        const c = conn as unknown as { session?: SMTPServerSession; _dataStream?: unknown; _closing?: boolean; send(code: number, msg: string): void; close(): void };
        if (c._closing || c._dataStream || c.session?.envelope?.mailFrom) continue;
        c.send(421, "Server shutting down");
        c.close();
      }
    };
    const sweep = setInterval(closeIdle, 100);
    try {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        closeIdle();
      });
    } finally {
      clearInterval(sweep);
    }
    this.log.info("smtp stopped");
  }

  private createServer(): SMTPServer {
    return new SMTPServer({
      name: this.name,
      banner: "Bunker ESMTP",
      secure: false,
      disabledCommands: this.opts.tls ? ["AUTH"] : ["AUTH", "STARTTLS"],
      ...(this.opts.tls ? { key: this.opts.tls.key, cert: this.opts.tls.cert } : {}),
      socketTimeout: this.opts.socketTimeoutMs ?? 60_000,
      authOptional: true,
      hideENHANCEDSTATUSCODES: false,
      size: this.maxBytes,
      rejectOversized: true,
      // RFC 5321 4.5.3.1.8: a server must accept at least 100 recipients.
      maxRecipients: 100,
      closeTimeout: this.opts.closeTimeoutMs ?? 5000,
      logger: false,
      onConnect: (session, cb) => {
        const ip = session.remoteAddress;
        const open = this.perIp.get(ip) ?? new Set<string>();
        if (open.size >= (this.opts.maxConnectionsPerIp ?? 20)) {
          this.log.info("smtp connection refused", { remote: ip, reason: "too many connections from this address", open: open.size });
          return cb(smtpError(421, "Too many connections from your address, try again later"));
        }
        open.add(session.id);
        this.perIp.set(ip, open);
        this.log.debug("smtp session opened", { session: session.id, remote: session.remoteAddress });
        cb();
      },
      onClose: (session) => {
        const open = this.perIp.get(session.remoteAddress);
        if (open?.delete(session.id) && open.size === 0) this.perIp.delete(session.remoteAddress);
        this.log.debug("smtp session closed", { session: session.id, remote: session.remoteAddress, transactions: session.transaction });
      },
      onRcptTo: (address, session, cb) => {
        this.checkRecipient(address.address, session).then(() => cb(), (err: Error) => cb(err));
      },
      onData: (stream, session, cb) => this.receive(stream, session, cb),
    } as ConstructorParameters<typeof SMTPServer>[0]);
  }

  private async checkRecipient(address: string, session: SMTPServerSession): Promise<void> {
    const from = session.envelope.mailFrom ? session.envelope.mailFrom.address : "";
    const handler = this.handler;
    let ok = false;
    if (handler) {
      try {
        ok = await handler.acceptsRecipient(address);
      } catch (e) {
        this.log.warn("smtp recipient check failed", { session: session.id, to: address, error: (e as Error).message });
        throw smtpError(451, "Temporary failure, try again later");
      }
    }
    if (!ok) {
      this.log.info("smtp recipient rejected", { session: session.id, remote: session.remoteAddress, from, to: address, reason: handler ? "unknown mailbox" : "no inbound handler" });
      throw smtpError(550, "No such mailbox");
    }
  }

  private receive(stream: SMTPServerDataStream, session: SMTPServerSession, cb: (err?: Error | null, message?: string) => void) {
    const chunks: Buffer[] = [];
    let done = false;
    const finish = (err?: Error | null, message?: string) => {
      if (done) return;
      done = true;
      cb(err, message);
    };
    stream.on("data", (c: Buffer) => {
      // Past the limit the rest is drained and dropped; the reply will be 552.
      if (!stream.sizeExceeded) chunks.push(c);
    });
    stream.on("error", (e: Error) => finish(e));
    stream.on("end", () => {
      const from = session.envelope.mailFrom ? session.envelope.mailFrom.address : "";
      const to = session.envelope.rcptTo.map((r) => r.address);
      const meta = { session: session.id, remote: session.remoteAddress, from, to, bytes: stream.byteLength };
      if (stream.sizeExceeded) {
        this.log.info("smtp message rejected", { ...meta, reason: "too large", max_bytes: this.maxBytes });
        return finish(smtpError(552, `Message exceeds fixed maximum message size ${this.maxBytes}`));
      }
      const handler = this.handler;
      if (!handler) {
        this.log.info("smtp message rejected", { ...meta, reason: "no inbound handler" });
        return finish(smtpError(451, "Temporary failure, try again later"));
      }
      const raw = this.withReceived(Buffer.concat(chunks), session);
      handler.deliver({ from, to, raw, remoteAddress: session.remoteAddress, helo: String(session.hostNameAppearsAs ?? ""), secure: !!session.secure }).then(
        () => {
          this.log.info("smtp message accepted", meta);
          finish(null, "OK: message queued");
        },
        (e: unknown) => {
          const code = Number((e as { responseCode?: unknown })?.responseCode);
          const permanent = Number.isInteger(code) && code >= 400 && code < 600;
          this.log.info("smtp message rejected", { ...meta, reason: "delivery failed", error: (e as Error)?.message });
          finish(permanent ? smtpError(code, (e as Error).message) : smtpError(451, "Temporary failure, try again later"));
        },
      );
    });
  }

  private withReceived(body: Buffer, session: SMTPServerSession): Uint8Array {
    const helo = headerSafe(session.hostNameAppearsAs) || "unknown";
    const rcpt = session.envelope.rcptTo.length === 1 ? `\r\n\tfor <${session.envelope.rcptTo[0]!.address}>` : "";
    const header =
      `Received: from ${helo} ([${headerSafe(session.remoteAddress)}])\r\n` +
      `\tby ${headerSafe(this.name) || "localhost"} (Bunker) with ${session.transmissionType || "ESMTP"} id ${headerSafe(session.id)}${rcpt};\r\n` +
      `\t${rfc5322Date(new Date())}\r\n`;
    return new Uint8Array(Buffer.concat([Buffer.from(header, "latin1"), body]));
  }
}
