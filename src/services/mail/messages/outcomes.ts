/**
 * Delivery outcomes of messages: what the delivery worker learns from the SMTP reply (sent,
 * deferred, bounced, failed) and what comes back later in DSN and ARF reports (part 2:
 * delivered, delayed, bounced, complained). Each mark writes the outcome and its email.*
 * event in one transaction.
 *
 * - Marks from the worker present the claim's owner token (send-queue.ts): a worker that
 *   lost its lease writes nothing. Marks from reports pass no owner and accept only the
 *   statuses a report can follow.
 * - Deferrals back off 1, 5, 30 min, 2 h, 6 h (then every 6 h); a deferral 72 h or more
 *   after the message was queued fails it.
 * - A bounce or complaint suppresses the address (suppression.created when it was not
 *   suppressed yet).
 */
import { HOUR, MINUTE } from "../../../core/clock";
import { tx, type Sql } from "../../../core/db";
import type { MailContext } from "../part-context";
import * as store from "./store";
import type { MessageRow, MessageStatus } from "./store";
import type { Suppressions } from "./suppressions";
import { messageEventData as eventData } from "./views";

/** Retry delays after the 1st, 2nd, ... deferral; the last repeats. */
export const BACKOFF_MS = [1 * MINUTE, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 6 * HOUR] as const;
/** A message deferred this long after it was queued fails. */
export const GIVE_UP_MS = 72 * HOUR;

export interface SmtpReply {
  /** Enhanced status code (5.1.1) or the reply code (550). */
  code: string | null;
  detail: string | null;
  transcript?: string | null;
}

/** A final or rescheduled worker outcome gives the claim back. */
const RELEASE = { lease_until_ms: null, lease_owner: null, handover_ms: null, next_attempt_ms: null } as const;

export class DeliveryOutcomes {
  constructor(
    private readonly m: MailContext,
    private readonly suppressions: Suppressions,
  ) {}

  /**
   * Applies an outcome and emits its event in one transaction; null (nothing written, no
   * event) when the message is not in one of `from` or `owner` no longer holds its claim.
   */
  private async outcome(
    id: string,
    from: readonly MessageStatus[],
    owner: string | null,
    o: store.Outcome,
    after: (t: Sql, r: MessageRow) => Promise<void>,
    db: Sql = this.m.ctx.db,
  ): Promise<MessageRow | null> {
    return tx(db, async (t) => {
      if (!(await store.applyOutcome(t, id, from, owner, o))) return null;
      const r = (await store.messageById(t, id))!;
      await after(t, r);
      return r;
    });
  }

  /** The relay or MX accepted the message (250): sent, email.sent. */
  markSent(id: string, owner: string, o: { transcript?: string | null; envelopeFrom?: string | null; rfc822MessageId?: string | null } = {}) {
    const now = this.m.ctx.clock.iso();
    const patch: store.Outcome = { ...RELEASE, status: "sent", sent_at: now, smtp_transcript: o.transcript ?? null, send_data: null };
    if (o.envelopeFrom !== undefined) patch.envelope_from = o.envelopeFrom;
    if (o.rfc822MessageId !== undefined) patch.rfc822_message_id = o.rfc822MessageId;
    return this.outcome(id, ["sending"], owner, patch, (t, r) => this.m.emit(t, r.workspace_id, "email.sent", eventData(r)).then(() => {}));
  }

  /**
   * A sandbox message handled on this instance (sandbox/): delivered into a mailbox here or
   * caught in the dev outbox, never relayed. Delivered with sent_at = delivered_at and
   * delivered_to, email.sent then email.delivered, written in `t` (the transaction that
   * stored the copy, so the copy and the outcome stand or fall together).
   */
  markSandboxDelivered(t: Sql, id: string, owner: string, to: store.DeliveredTo, o: { envelopeFrom: string; rfc822MessageId: string }) {
    const now = this.m.ctx.clock.iso();
    const patch: store.Outcome = {
      ...RELEASE,
      status: "delivered",
      sent_at: now,
      delivered_at: now,
      delivered_to: to,
      smtp_transcript: null,
      send_data: null,
      envelope_from: o.envelopeFrom,
      rfc822_message_id: o.rfc822MessageId,
    };
    return this.outcome(id, ["sending"], owner, patch, async (t2, r) => {
      await this.m.emit(t2, r.workspace_id, "email.sent", eventData(r));
      await this.m.emit(t2, r.workspace_id, "email.delivered", eventData(r));
    }, t);
  }

  /**
   * A 4xx reply (or a connection failure): deferred with the next attempt after the backoff,
   * email.delivery_delayed; failed (email.failed) when the message was queued 72 h ago or more.
   */
  async markDeferred(id: string, owner: string, reply: SmtpReply): Promise<MessageRow | null> {
    const cur = await store.messageById(this.m.ctx.db, id);
    if (!cur) return null;
    const nowMs = this.m.ctx.clock.nowMs();
    const now = this.m.ctx.clock.iso();
    const count = Number(cur.deferral_count) + 1;
    const common: store.Outcome = {
      ...RELEASE,
      deferral_count: count,
      deferred_at: now,
      bounce_code: reply.code,
      bounce_detail: reply.detail,
      smtp_transcript: reply.transcript ?? null,
    };
    if (nowMs - Date.parse(cur.created_at) >= GIVE_UP_MS) {
      const error = `gave up after ${GIVE_UP_MS / HOUR} hours of deferrals (${count}); last reply: ${reply.detail ?? reply.code ?? "none"}`;
      return this.outcome(id, ["sending"], owner, { ...common, status: "failed", failed_at: now, error, send_data: null }, (t, r) =>
        this.m.emit(t, r.workspace_id, "email.failed", eventData(r, { error, failed_at: now })).then(() => {}),
      );
    }
    const next = nowMs + BACKOFF_MS[Math.min(count - 1, BACKOFF_MS.length - 1)]!;
    return this.outcome(id, ["sending"], owner, { ...common, status: "deferred", next_attempt_ms: next }, (t, r) =>
      this.m.emit(t, r.workspace_id, "email.delivery_delayed", eventData(r, { next_attempt_at: new Date(next).toISOString() })).then(() => {}),
    );
  }

  /**
   * A permanent refusal: a 5xx reply while sending (pass the claim's owner) or a bounce
   * report after it was sent (owner null: from sent, delivered or deferred). Bounced,
   * email.bounced, and the address is suppressed.
   */
  markBounced(id: string, owner: string | null, reply: SmtpReply) {
    const now = this.m.ctx.clock.iso();
    const from: MessageStatus[] = owner === null ? ["sent", "delivered", "deferred"] : ["sending"];
    const patch: store.Outcome = { ...RELEASE, status: "bounced", bounced_at: now, bounce_code: reply.code, bounce_detail: reply.detail, send_data: null };
    if (reply.transcript !== undefined) patch.smtp_transcript = reply.transcript;
    return this.outcome(id, from, owner, patch, async (t, r) => {
      await this.m.emit(t, r.workspace_id, "email.bounced", eventData(r, { bounce_type: "hard", bounced_at: now }));
      await this.suppressions.suppress(t, r.workspace_id, r.to_address, "bounce", r.id);
    });
  }

  /** Will not be sent: while sending (owner) or before (owner null: from queued or deferred). email.failed. */
  markFailed(id: string, owner: string | null, error: string, transcript?: string | null) {
    const now = this.m.ctx.clock.iso();
    const from: MessageStatus[] = owner === null ? ["queued", "deferred"] : ["sending"];
    const patch: store.Outcome = { ...RELEASE, status: "failed", failed_at: now, error, send_data: null };
    if (transcript !== undefined) patch.smtp_transcript = transcript;
    return this.outcome(id, from, owner, patch, (t, r) => this.m.emit(t, r.workspace_id, "email.failed", eventData(r, { error, failed_at: now })).then(() => {}));
  }

  /**
   * Recipient-side evidence of delivery (part 2): delivered, email.delivered. From sent, or
   * from deferred when a delay report came after it was sent (sent_at set).
   */
  async markDelivered(id: string, auth: { spf?: string | null; dkim?: string | null; dmarc?: string | null } = {}): Promise<MessageRow | null> {
    const cur = await store.messageById(this.m.ctx.db, id);
    if (!cur || (cur.status === "deferred" && cur.sent_at === null)) return null;
    const patch: store.Outcome = { status: "delivered", delivered_at: this.m.ctx.clock.iso() };
    if (auth.spf !== undefined) patch.spf_result = auth.spf;
    if (auth.dkim !== undefined) patch.dkim_result = auth.dkim;
    if (auth.dmarc !== undefined) patch.dmarc_result = auth.dmarc;
    return this.outcome(id, ["sent", "deferred"], null, patch, (t, r) => this.m.emit(t, r.workspace_id, "email.delivered", eventData(r)).then(() => {}));
  }

  /**
   * A delay report (DSN Action: delayed, part 2) for a message that was sent: the receiving
   * side keeps retrying, Bunker does not resend. Deferred (deferral_count + 1, deferred_at,
   * the report's status and diagnostic), email.delivery_delayed with next_attempt_at null.
   */
  async markDelayedByReport(id: string, reply: SmtpReply): Promise<MessageRow | null> {
    const cur = await store.messageById(this.m.ctx.db, id);
    if (!cur || cur.sent_at === null) return null;
    const now = this.m.ctx.clock.iso();
    const patch: store.Outcome = { status: "deferred", deferred_at: now, deferral_count: Number(cur.deferral_count) + 1, bounce_code: reply.code, bounce_detail: reply.detail };
    return this.outcome(id, ["sent", "deferred"], null, patch, (t, r) => this.m.emit(t, r.workspace_id, "email.delivery_delayed", eventData(r, { next_attempt_at: null })).then(() => {}));
  }

  /** A spam complaint (feedback loop, part 2): complained, email.complained, and the address is suppressed. */
  markComplained(id: string) {
    const now = this.m.ctx.clock.iso();
    return this.outcome(id, ["sent", "delivered"], null, { status: "complained", complained_at: now }, async (t, r) => {
      await this.m.emit(t, r.workspace_id, "email.complained", eventData(r, { complained_at: now }));
      await this.suppressions.suppress(t, r.workspace_id, r.to_address, "complaint", r.id);
    });
  }
}
