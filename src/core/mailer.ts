/**
 * The system mailer: password-reset codes, invites, verification links.
 *
 * A request never waits for SMTP: `enqueue` is one synchronous insert (callable inside the
 * request's transaction, so the mail exists exactly when the change that asked for it
 * does), and the scheduled job `deliverPending` sends.
 * - With a relay (SMTP_RELAY_URL, smtp:// or smtps://, credentials and nodemailer options
 *   such as ?requireTLS=true in the URL), messages go out through nodemailer. A failed
 *   attempt stays queued with a backoff (30 s doubling, capped at 1 h); after 8 attempts,
 *   or on a permanent 5xx refusal of the recipient, the message is `failed`.
 * - Without a relay (dev mode), each message is written to the log at info level (to,
 *   subject, text) so a developer can read the code from the console, and marked `logged`.
 * Delivery is at-least-once: a crash after the relay accepted but before the row was
 * updated sends the message again after the claim lease (10 min).
 */
import type { Transporter } from "nodemailer";
import { lazy } from "./lazy";
import type { Clock } from "./clock";
import { MINUTE, SECOND, HOUR } from "./clock";
import type { Db, Sql } from "./db";
import { invalidField } from "./errors";
import { prefixedId } from "./ids";
import type { Logger } from "./log";
import type { Metrics } from "./metrics";
import * as store from "./store/mailer";

// Loaded by the first mail relayed, not at start-up (lazy.ts).
const nodemailer = lazy(() => require("nodemailer") as typeof import("nodemailer"));

export type { SystemMailStatus } from "./store/mailer";

export interface SystemMailMessage {
  to: string;
  subject: string;
  text: string;
  html?: string;
  /** Defaults to the mailer's `from` (MAIL_FROM). */
  from?: string;
}

export interface SystemMailRecord {
  id: string;
  from: string;
  to: string;
  subject: string;
  text: string;
  html: string | null;
  status: store.SystemMailStatus;
  attempts: number;
  next_attempt_at: string;
  last_error: string | null;
  message_id: string | null;
  created_at: string;
  sent_at: string | null;
}

export interface SystemMailerOptions {
  db: Db;
  clock: Clock;
  log: Logger;
  /** smtp://user:pass@host:port or smtps://...; null = dev mode (log, don't send). */
  relayUrl: string | null;
  /** Default sender, e.g. "Bunker <no-reply@example.com>". */
  from: string;
  /** Queue gauge and outcome counter (optional: unit tests build a bare mailer). */
  metrics?: Metrics;
}

export const MAX_ATTEMPTS = 8;
const FIRST_RETRY = 30 * SECOND;
const MAX_RETRY = HOUR;
const CLAIM_LEASE = 10 * MINUTE;

/** Delay before attempt n+1 after n failed attempts: 30 s, 1 min, 2 min, ... capped at 1 h. */
export const retryDelay = (attempts: number) => Math.min(FIRST_RETRY * 2 ** Math.max(0, attempts - 1), MAX_RETRY);

// One address, no display name, no list: it goes into RCPT TO as is.
const ADDRESS = /^[^\s@<>(),;:"[\]\\]+@[^\s@<>(),;:"[\]\\]+$/;
const singleLine = (s: string) => s.replace(/[\r\n]+/g, " ").trim();

const toRecord = (r: store.MailRow): SystemMailRecord => ({
  id: r.id,
  from: r.from_addr,
  to: r.to_addr,
  subject: r.subject,
  text: r.text_body,
  html: r.html_body,
  status: r.status,
  attempts: r.attempts,
  next_attempt_at: r.next_attempt_at,
  last_error: r.last_error,
  message_id: r.message_id,
  created_at: r.created_at,
  sent_at: r.sent_at,
});

interface SmtpError {
  message?: string;
  code?: string;
  responseCode?: number;
  command?: string;
}

/** The relay itself is unreachable or refuses us: the rest of the batch would fail the same way. */
const isRelayDown = (e: SmtpError) => ["ECONNECTION", "ETIMEDOUT", "ESOCKET", "EDNS", "EAUTH", "ETLS", "EPROTOCOL", "ECONNREFUSED"].includes(e.code ?? "");
/** The relay refused this recipient or message for good (5xx at RCPT/DATA). */
const isPermanent = (e: SmtpError) => (e.responseCode ?? 0) >= 500 && !isRelayDown(e);

export class SystemMailer {
  private readonly db: Db;
  private readonly clock: Clock;
  private readonly log: Logger;
  private readonly relayUrl: string | null;
  private readonly from: string;
  private transport: Transporter | null = null;
  private readonly outcome: (outcome: "sent" | "logged" | "retry" | "failed") => void;

  constructor(opts: SystemMailerOptions) {
    this.db = opts.db;
    this.clock = opts.clock;
    this.log = opts.log.child({ component: "system-mailer" });
    this.relayUrl = opts.relayUrl;
    this.from = opts.from;
    const metrics = opts.metrics;
    metrics?.gauge("bunker_system_mail_queued", "System mails (reset codes, invitations) waiting to be sent, retries included.", () => store.countQueued(this.db));
    this.outcome = (outcome) => metrics?.count("bunker_system_mail_total", "System mail delivery outcomes (logged = dev mode, not sent).", { outcome });
  }

  /** True when there is no relay and messages are only logged. */
  get devMode(): boolean {
    return this.relayUrl === null;
  }

  /** Inserts the message (status queued) on `t`: pass the transaction of the change it belongs to. */
  async enqueue(t: Sql, msg: SystemMailMessage): Promise<{ id: string }> {
    const to = (msg.to ?? "").trim();
    if (!ADDRESS.test(to) || to.length > 320) throw invalidField("to", "must be one email address");
    const from = msg.from === undefined ? this.from : msg.from;
    if (!from || /[\r\n]/.test(from)) throw invalidField("from", "must be a single-line address");
    if (typeof msg.text !== "string") throw invalidField("text", "is required");
    const id = prefixedId("sysmail");
    await store.insertMail(t, {
      id,
      from_addr: from,
      to_addr: to,
      // Header values are one line; a stray newline from a template must not break it.
      subject: singleLine(msg.subject ?? ""),
      text_body: msg.text,
      html_body: msg.html ?? null,
      created_at: this.clock.iso(),
    });
    return { id };
  }

  /**
   * The scheduled job. `sent` counts messages handed to the relay (or logged in dev mode),
   * `failed` counts failed attempts (retried later or given up).
   */
  async deliverPending(limit = 50): Promise<{ sent: number; failed: number }> {
    let sent = 0;
    let failed = 0;
    const due = await store.selectDue(this.db, this.clock.iso(), limit);
    for (const row of due) {
      const now = this.clock.iso();
      if (!(await store.claimMail(this.db, row.id, now, new Date(this.clock.nowMs() + CLAIM_LEASE).toISOString()))) continue;
      const attempts = row.attempts + 1;

      if (this.relayUrl === null) {
        this.log.info("system mail (dev mode: no SMTP_RELAY_URL, not sent)", { id: row.id, to: row.to_addr, subject: row.subject, text: row.text_body });
        await store.markDone(this.db, row.id, "logged", this.clock.iso(), null);
        this.outcome("logged");
        sent++;
        continue;
      }

      try {
        const info = await this.getTransport().sendMail({
          from: row.from_addr,
          to: row.to_addr,
          subject: row.subject,
          text: row.text_body,
          ...(row.html_body !== null ? { html: row.html_body } : {}),
        });
        await store.markDone(this.db, row.id, "sent", this.clock.iso(), info.messageId ?? null);
        this.outcome("sent");
        sent++;
      } catch (e) {
        failed++;
        const err = e as SmtpError;
        const reason = `${err.code ? err.code + ": " : ""}${err.message ?? String(e)}`.slice(0, 1000);
        const at = this.clock.iso();
        if (attempts >= MAX_ATTEMPTS || isPermanent(err)) {
          await store.markFailed(this.db, row.id, reason, at);
          this.outcome("failed");
          this.log.error("system mail failed for good", { id: row.id, to: row.to_addr, attempts, error: reason });
        } else {
          const next = new Date(this.clock.nowMs() + retryDelay(attempts)).toISOString();
          await store.markRetry(this.db, row.id, next, reason, at);
          this.outcome("retry");
          this.log.warn("system mail attempt failed, will retry", { id: row.id, attempts, next_attempt_at: next, error: reason });
        }
        // The others stay due and untouched; trying them now would only wait on the same
        // dead relay and burn their attempts.
        if (isRelayDown(err)) break;
      }
    }
    return { sent, failed };
  }

  async get(id: string): Promise<SystemMailRecord | null> {
    const row = await store.selectMail(this.db, id);
    return row ? toRecord(row) : null;
  }

  /** Newest first, for the dev/admin view. */
  async list(limit = 50): Promise<SystemMailRecord[]> {
    return (await store.selectRecent(this.db, Math.min(Math.max(1, Math.floor(limit)), 500))).map(toRecord);
  }

  /**
   * Deletes finished messages (sent, logged, failed) last updated before `cutoffMs` (epoch
   * ms). They hold reset codes and links in clear text: keep them no longer than needed.
   */
  purgeFinishedBefore(cutoffMs: number): Promise<number> {
    return store.deleteFinishedBefore(this.db, new Date(cutoffMs).toISOString());
  }

  close(): void {
    this.transport?.close();
    this.transport = null;
  }

  private getTransport(): Transporter {
    // Short timeouts: the defaults (2 min to connect) would hold the job, and the
    // messages behind it, on a dead relay.
    this.transport ??= nodemailer().createTransport({
      url: this.relayUrl!,
      connectionTimeout: 10 * SECOND,
      greetingTimeout: 10 * SECOND,
      socketTimeout: 30 * SECOND,
    });
    return this.transport;
  }
}
