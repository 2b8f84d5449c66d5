/**
 * The messages part of the mail service: the outbound message log (which is also the send
 * pipeline's queue), message settings, suppressions, the export, the timeline and the
 * deliverability verdict.
 *
 * Send pipeline (used by the send routes and the delivery worker):
 * - queue(): one row per recipient, status queued, due now; the body ({html, text}) goes to
 *   the object store unless the workspace redacts bodies (then it is never written).
 * - claim(): due queued/deferred messages (and sending ones whose lease ran out) become
 *   sending under a lease with an owner token; every later mark must present that token,
 *   so a worker that lost its lease cannot overwrite a newer outcome (at-least-once).
 * - markSent / markDeferred / markBounced / markFailed (and markDelivered / markComplained
 *   for part 2's recipient-side evidence): each writes the outcome and its email.* event in
 *   one transaction. Deferrals back off 1, 5, 30 min, 2 h, 6 h (then every 6 h); a deferral
 *   72 h or more after the message was queued fails it. A bounce or complaint suppresses
 *   the address (suppression.created when it was not suppressed yet).
 *
 * Decisions the spec leaves open: README "Mail" > "Messages".
 */
import { randomBytes } from "node:crypto";
import type { Principal } from "../../../access/principal";
import { DAY, HOUR, MINUTE } from "../../../core/clock";
import { tx, type Sql } from "../../../core/db";
import { ApiError, badRequest, invalidField, notFound } from "../../../core/errors";
import { isUuid, uuid } from "../../../core/ids";
import { buildPage, decodeCursor, parseLimit, type Page } from "../../../core/pagination";
import type { ServiceDeps } from "../../module";
import { csvRow } from "./csv";
import { verdictOf, type DeliverabilityView } from "./deliverability";
import * as store from "./store";
import { MESSAGE_STATUSES, SUPPRESSION_REASONS, type MessageRow, type MessageStatus, type SuppressionReason, type SuppressionRow } from "./store";

export const LIST_DEFAULT = 20;
export const LIST_MAX = 100;
export const SUBJECT_CONTAINS_MAX = 200;
export const RECIPIENT_MAX = 320;
export const TEMPLATE_MAX = 64;
/** Retry delays after the 1st, 2nd, ... deferral; the last repeats. */
export const BACKOFF_MS = [1 * MINUTE, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 6 * HOUR] as const;
/** A message deferred this long after it was queued fails. */
export const GIVE_UP_MS = 72 * HOUR;
export const DEFAULT_LEASE_MS = 5 * MINUTE;
export const EXPORTS_PER_HOUR = 5;
export const EXPORT_LEASE_MS = 15 * MINUTE;
export const EXPORT_PAGE = 500;
export const EXPORT_BUSY_RETRY_S = 5;
export const WINDOW_DEFAULT = 14;
export const WINDOW_MAX = 90;
export const TIMELINE_MAX_BUCKETS = 366;
export const EMAIL_MAX = 254;
const EMAIL_RE = /^[^\s@<>(),;:"\\]+@[^\s@<>(),;:"\\]+\.[^\s@<>(),;:"\\]+$/;

export interface MessageView {
  id: string;
  workspace_id: string;
  domain_id: string | null;
  from_address: string;
  to_address: string;
  subject: string;
  template_name: string | null;
  status: MessageStatus;
  smtp_transcript: string | null;
  spf_result: string | null;
  dkim_result: string | null;
  dmarc_result: string | null;
  bounce_code: string | null;
  bounce_detail: string | null;
  created_at: string;
  sent_at: string | null;
  delivered_at: string | null;
  deferred_at: string | null;
  deferral_count: number;
}

export interface MessageBodyView {
  id: string;
  subject: string;
  body_html: string | null;
  body_text: string | null;
  redacted: boolean;
}

export interface SuppressionView {
  email: string;
  reason: SuppressionReason;
  source_message_id: string | null;
  created_at: string;
}

/** What the send routes hand queue(): one recipient each. */
export interface QueueInput {
  domainId: string | null;
  from: string;
  to: string;
  subject: string;
  templateName?: string | null;
  /** Rendered content; stored in the object store unless bodies are redacted. */
  html?: string | null;
  text?: string | null;
  /** Render input kept for the worker until the message is final (JSON-serialisable). */
  data?: unknown;
  headers?: Record<string, string> | null;
  envelopeFrom?: string | null;
  rfc822MessageId?: string | null;
  idempotencyKey?: string | null;
  batchId?: string | null;
  batchIndex?: number | null;
}

export interface MessageQuery {
  limit?: unknown;
  cursor?: string;
  recipient?: string;
  template?: string;
  status?: string;
  subject_contains?: string;
}

interface Filters {
  recipient: string | null;
  template: string | null;
  status: MessageStatus | null;
  subject: string | null;
}

export interface Claim {
  /** Present it to every mark of these messages. */
  owner: string;
  messages: MessageRow[];
}

export interface SmtpReply {
  /** Enhanced status code (5.1.1) or the reply code (550). */
  code: string | null;
  detail: string | null;
  transcript?: string | null;
}

const isStatus = (v: unknown): v is MessageStatus => typeof v === "string" && (MESSAGE_STATUSES as readonly string[]).includes(v);
const isReason = (v: unknown): v is SuppressionReason => typeof v === "string" && (SUPPRESSION_REASONS as readonly string[]).includes(v);
const likePattern = (q: string) => `%${q.toLowerCase().replace(/[\\%_]/g, (m) => `\\${m}`)}%`;
const badCursor = (reason: string) => badRequest("Malformed cursor", [{ field: "cursor", reason }], "INVALID_CURSOR");
const exportLimit = (message: string, retryAfterS: number) =>
  new ApiError(429, "EXPORT_LIMIT", message, undefined, { "retry-after": String(Math.max(1, retryAfterS)) });
export const bodyKey = (workspaceId: string, id: string) => `mail/messages/${workspaceId}/${id}.json`;
export const foldEmail = (s: string) => s.trim().toLowerCase();

export const EXPORT_COLUMNS = [
  "id", "created_at", "status", "from_address", "to_address", "subject", "template_name", "domain_id", "sent_at", "delivered_at",
  "deferred_at", "deferral_count", "bounce_code", "bounce_detail", "spf_result", "dkim_result", "dmarc_result",
] as const;

export class MessageService {
  constructor(private readonly d: ServiceDeps) {}

  private get ctx() {
    return this.d.ctx;
  }

  view(r: MessageRow): MessageView {
    return {
      id: r.id,
      workspace_id: r.workspace_id,
      domain_id: r.domain_id,
      from_address: r.from_address,
      to_address: r.to_address,
      subject: r.subject,
      template_name: r.template_name,
      status: r.status,
      smtp_transcript: r.smtp_transcript,
      spf_result: r.spf_result,
      dkim_result: r.dkim_result,
      dmarc_result: r.dmarc_result,
      bounce_code: r.bounce_code,
      bounce_detail: r.bounce_detail,
      created_at: r.created_at,
      sent_at: r.sent_at,
      delivered_at: r.delivered_at,
      deferred_at: r.deferred_at,
      deferral_count: Number(r.deferral_count),
    };
  }

  /** The data of an email.* event: the metadata without the SMTP transcript. */
  eventData(r: MessageRow, extra: Record<string, unknown> = {}) {
    const { smtp_transcript: _, ...v } = this.view(r);
    return { ...v, ...extra };
  }

  private suppressionView = (r: SuppressionRow): SuppressionView => ({ email: r.email, reason: r.reason, source_message_id: r.source_message_id, created_at: r.created_at });

  private async workspace(p: Principal, workspaceId: string, action: string) {
    const { workspace } = await this.d.platform.authz.authorizeWorkspace(this.ctx.db, p, { id: workspaceId }, action);
    await this.d.platform.authz.requireService(this.ctx.db, workspace.id, "mail");
    return workspace;
  }

  private emit(t: Sql, workspaceId: string, type: string, data: unknown) {
    return this.d.webhooks.engine.emit(t, { product: "mail", scopeId: workspaceId }, type, data);
  }

  // ================================================================== send pipeline

  /** True for each address (any case) on the workspace's suppression list. */
  async suppressed(db: Sql, workspaceId: string, emails: string[]): Promise<Set<string>> {
    return store.suppressedAmong(db, workspaceId, [...new Set(emails.map(foldEmail))]);
  }

  /**
   * Queues messages (one per input) in one transaction: status queued, due now. Bodies go to
   * the object store first (unless the workspace redacts bodies); a failed insert removes
   * them again. `within` runs in the same transaction (e.g. the send's own bookkeeping).
   */
  async queue(workspaceId: string, inputs: QueueInput[], within?: (t: Sql, rows: MessageRow[]) => Promise<void>): Promise<MessageRow[]> {
    const redact = await store.redactBodies(this.ctx.db, workspaceId);
    const now = this.ctx.clock.iso();
    const nowMs = this.ctx.clock.nowMs();
    const rows: store.NewMessageRow[] = inputs.map((i) => {
      const id = uuid();
      const hasBody = (i.html ?? null) !== null || (i.text ?? null) !== null;
      return {
        id,
        workspace_id: workspaceId,
        domain_id: i.domainId,
        from_address: i.from,
        to_address: i.to,
        to_fold: foldEmail(i.to),
        subject: i.subject,
        subject_fold: i.subject.toLowerCase(),
        template_name: i.templateName ?? null,
        status: "queued",
        created_at: now,
        next_attempt_ms: nowMs,
        envelope_from: i.envelopeFrom ?? null,
        rfc822_message_id: i.rfc822MessageId ?? null,
        headers: i.headers ? JSON.stringify(i.headers) : null,
        send_data: i.data === undefined ? null : JSON.stringify(i.data),
        body_key: !redact && hasBody ? bodyKey(workspaceId, id) : null,
        idempotency_key: i.idempotencyKey ?? null,
        batch_id: i.batchId ?? null,
        batch_index: i.batchIndex ?? null,
      };
    });
    const written: string[] = [];
    try {
      for (const [k, r] of rows.entries()) {
        if (!r.body_key) continue;
        await this.ctx.objects.put(r.body_key, JSON.stringify({ html: inputs[k]!.html ?? null, text: inputs[k]!.text ?? null }), "application/json");
        written.push(r.body_key);
      }
      return await tx(this.ctx.db, async (t) => {
        for (const r of rows) await store.insertMessage(t, r);
        const out: MessageRow[] = [];
        for (const r of rows) out.push((await store.messageById(t, r.id))!);
        await within?.(t, out);
        return out;
      });
    } catch (e) {
      for (const k of written) await this.ctx.objects.delete(k).catch(() => {});
      throw e;
    }
  }

  /** The stored body of a message ({html, text}), or nulls when none was stored or it is gone. */
  /**
   * Inside the workspace-deleting transaction t: its message rows go by foreign key; their
   * bodies in the object store are deleted once that commits (a rollback keeps them).
   */
  async dropWorkspaceBodies(t: Sql, workspaceId: string): Promise<void> {
    const keys = await store.bodyKeysOfWorkspace(t, workspaceId);
    if (!keys.length) return;
    t.afterCommit(async () => {
      for (const k of keys) await this.ctx.objects.delete(k).catch((err) => this.ctx.log.warn("mail body not deleted with its workspace", { key: k, error: String(err) }));
    });
  }

  async readBody(r: MessageRow): Promise<{ html: string | null; text: string | null }> {
    if (!r.body_key) return { html: null, text: null };
    const o = await this.ctx.objects.get(r.body_key);
    if (!o) return { html: null, text: null };
    const v = JSON.parse(new TextDecoder().decode(o.data)) as { html?: string | null; text?: string | null };
    return { html: v.html ?? null, text: v.text ?? null };
  }

  /** Claims up to `limit` due messages for `leaseMs` (they become sending). */
  async claim(limit = 50, leaseMs = DEFAULT_LEASE_MS): Promise<Claim> {
    const owner = randomBytes(12).toString("hex");
    const now = this.ctx.clock.nowMs();
    const messages = await tx(this.ctx.db, (t) => store.claimDue(t, now, now + leaseMs, owner, limit));
    return { owner, messages };
  }

  /** Keeps a long delivery's claim; false when it was lost (stop: another worker has the message). */
  extendLease(id: string, owner: string, leaseMs = DEFAULT_LEASE_MS): Promise<boolean> {
    return store.extendLease(this.ctx.db, id, owner, this.ctx.clock.nowMs() + leaseMs);
  }

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
  ): Promise<MessageRow | null> {
    return tx(this.ctx.db, async (t) => {
      if (!(await store.applyOutcome(t, id, from, owner, o))) return null;
      const r = (await store.messageById(t, id))!;
      await after(t, r);
      return r;
    });
  }

  private static readonly RELEASE = { lease_until_ms: null, lease_owner: null, next_attempt_ms: null } as const;

  /** The relay or MX accepted the message (250): sent, email.sent. */
  markSent(id: string, owner: string, o: { transcript?: string | null; envelopeFrom?: string | null; rfc822MessageId?: string | null } = {}) {
    const now = this.ctx.clock.iso();
    const patch: store.Outcome = { ...MessageService.RELEASE, status: "sent", sent_at: now, smtp_transcript: o.transcript ?? null, send_data: null };
    if (o.envelopeFrom !== undefined) patch.envelope_from = o.envelopeFrom;
    if (o.rfc822MessageId !== undefined) patch.rfc822_message_id = o.rfc822MessageId;
    return this.outcome(id, ["sending"], owner, patch, (t, r) => this.emit(t, r.workspace_id, "email.sent", this.eventData(r)).then(() => {}));
  }

  /**
   * A 4xx reply (or a connection failure): deferred with the next attempt after the backoff,
   * email.delivery_delayed; failed (email.failed) when the message was queued 72 h ago or more.
   */
  async markDeferred(id: string, owner: string, reply: SmtpReply): Promise<MessageRow | null> {
    const cur = await store.messageById(this.ctx.db, id);
    if (!cur) return null;
    const nowMs = this.ctx.clock.nowMs();
    const now = this.ctx.clock.iso();
    const count = Number(cur.deferral_count) + 1;
    const common: store.Outcome = {
      ...MessageService.RELEASE,
      deferral_count: count,
      deferred_at: now,
      bounce_code: reply.code,
      bounce_detail: reply.detail,
      smtp_transcript: reply.transcript ?? null,
    };
    if (nowMs - Date.parse(cur.created_at) >= GIVE_UP_MS) {
      const error = `gave up after ${GIVE_UP_MS / HOUR} hours of deferrals (${count}); last reply: ${reply.detail ?? reply.code ?? "none"}`;
      return this.outcome(id, ["sending"], owner, { ...common, status: "failed", failed_at: now, error, send_data: null }, (t, r) =>
        this.emit(t, r.workspace_id, "email.failed", this.eventData(r, { error, failed_at: now })).then(() => {}),
      );
    }
    const next = nowMs + BACKOFF_MS[Math.min(count - 1, BACKOFF_MS.length - 1)]!;
    return this.outcome(id, ["sending"], owner, { ...common, status: "deferred", next_attempt_ms: next }, (t, r) =>
      this.emit(t, r.workspace_id, "email.delivery_delayed", this.eventData(r, { next_attempt_at: new Date(next).toISOString() })).then(() => {}),
    );
  }

  /** Adds a suppression unless the address has one; emits suppression.created when added. */
  private async suppress(t: Sql, workspaceId: string, email: string, reason: SuppressionReason, sourceMessageId: string | null): Promise<boolean> {
    const row: SuppressionRow = { workspace_id: workspaceId, email: foldEmail(email), reason, source_message_id: sourceMessageId, created_at: this.ctx.clock.iso() };
    if (!(await store.insertSuppression(t, row))) return false;
    await this.emit(t, workspaceId, "suppression.created", { workspace_id: workspaceId, ...this.suppressionView(row) });
    return true;
  }

  /**
   * A permanent refusal: a 5xx reply while sending (pass the claim's owner) or a bounce
   * report after it was sent (owner null: from sent, delivered or deferred). Bounced,
   * email.bounced, and the address is suppressed.
   */
  markBounced(id: string, owner: string | null, reply: SmtpReply) {
    const now = this.ctx.clock.iso();
    const from: MessageStatus[] = owner === null ? ["sent", "delivered", "deferred"] : ["sending"];
    const patch: store.Outcome = { ...MessageService.RELEASE, status: "bounced", bounced_at: now, bounce_code: reply.code, bounce_detail: reply.detail, send_data: null };
    if (reply.transcript !== undefined) patch.smtp_transcript = reply.transcript;
    return this.outcome(id, from, owner, patch, async (t, r) => {
      await this.emit(t, r.workspace_id, "email.bounced", this.eventData(r, { bounce_type: "hard", bounced_at: now }));
      await this.suppress(t, r.workspace_id, r.to_address, "bounce", r.id);
    });
  }

  /** Will not be sent: while sending (owner) or before (owner null: from queued or deferred). email.failed. */
  markFailed(id: string, owner: string | null, error: string, transcript?: string | null) {
    const now = this.ctx.clock.iso();
    const from: MessageStatus[] = owner === null ? ["queued", "deferred"] : ["sending"];
    const patch: store.Outcome = { ...MessageService.RELEASE, status: "failed", failed_at: now, error, send_data: null };
    if (transcript !== undefined) patch.smtp_transcript = transcript;
    return this.outcome(id, from, owner, patch, (t, r) => this.emit(t, r.workspace_id, "email.failed", this.eventData(r, { error, failed_at: now })).then(() => {}));
  }

  /**
   * Recipient-side evidence of delivery (part 2): delivered, email.delivered. From sent, or
   * from deferred when a delay report came after it was sent (sent_at set).
   */
  async markDelivered(id: string, auth: { spf?: string | null; dkim?: string | null; dmarc?: string | null } = {}): Promise<MessageRow | null> {
    const cur = await store.messageById(this.ctx.db, id);
    if (!cur || (cur.status === "deferred" && cur.sent_at === null)) return null;
    const patch: store.Outcome = { status: "delivered", delivered_at: this.ctx.clock.iso() };
    if (auth.spf !== undefined) patch.spf_result = auth.spf;
    if (auth.dkim !== undefined) patch.dkim_result = auth.dkim;
    if (auth.dmarc !== undefined) patch.dmarc_result = auth.dmarc;
    return this.outcome(id, ["sent", "deferred"], null, patch, (t, r) => this.emit(t, r.workspace_id, "email.delivered", this.eventData(r)).then(() => {}));
  }

  /**
   * A delay report (DSN Action: delayed, part 2) for a message that was sent: the receiving
   * side keeps retrying, Bunker does not resend. Deferred (deferral_count + 1, deferred_at,
   * the report's status and diagnostic), email.delivery_delayed with next_attempt_at null.
   */
  async markDelayedByReport(id: string, reply: SmtpReply): Promise<MessageRow | null> {
    const cur = await store.messageById(this.ctx.db, id);
    if (!cur || cur.sent_at === null) return null;
    const now = this.ctx.clock.iso();
    const patch: store.Outcome = { status: "deferred", deferred_at: now, deferral_count: Number(cur.deferral_count) + 1, bounce_code: reply.code, bounce_detail: reply.detail };
    return this.outcome(id, ["sent", "deferred"], null, patch, (t, r) => this.emit(t, r.workspace_id, "email.delivery_delayed", this.eventData(r, { next_attempt_at: null })).then(() => {}));
  }

  /** A spam complaint (feedback loop, part 2): complained, email.complained, and the address is suppressed. */
  markComplained(id: string) {
    const now = this.ctx.clock.iso();
    return this.outcome(id, ["sent", "delivered"], null, { status: "complained", complained_at: now }, async (t, r) => {
      await this.emit(t, r.workspace_id, "email.complained", this.eventData(r, { complained_at: now }));
      await this.suppress(t, r.workspace_id, r.to_address, "complaint", r.id);
    });
  }

  // ================================================================== message log

  private filters(q: MessageQuery): Filters {
    const details: { field: string; reason: string }[] = [];
    const opt = (v: string | undefined) => (v === undefined || v === "" ? null : v);
    const recipient = opt(q.recipient);
    if (recipient !== null && recipient.length > RECIPIENT_MAX) details.push({ field: "recipient", reason: `at most ${RECIPIENT_MAX} characters` });
    const template = opt(q.template);
    if (template !== null && template.length > TEMPLATE_MAX) details.push({ field: "template", reason: `at most ${TEMPLATE_MAX} characters` });
    const status = opt(q.status);
    if (status !== null && !isStatus(status)) details.push({ field: "status", reason: `one of ${MESSAGE_STATUSES.join(", ")}` });
    const subject = opt(q.subject_contains);
    if (subject !== null && Array.from(subject).length > SUBJECT_CONTAINS_MAX) details.push({ field: "subject_contains", reason: `at most ${SUBJECT_CONTAINS_MAX} characters` });
    if (details.length) throw badRequest("Invalid message filters", details);
    return { recipient, template, status: status as MessageStatus | null, subject };
  }

  private filterOf(wsId: string, f: Filters, before: { created_at: string; id: string } | null, limit: number): store.MessageFilter {
    return {
      workspaceId: wsId,
      recipient: f.recipient,
      template: f.template,
      status: f.status,
      subjectPattern: f.subject === null ? null : likePattern(f.subject),
      before,
      limit,
    };
  }

  async list(p: Principal, workspaceId: string, q: MessageQuery): Promise<Page<MessageView>> {
    const ws = await this.workspace(p, workspaceId, "mail.message.read");
    const limit = parseLimit(q.limit, LIST_DEFAULT, LIST_MAX);
    let f = this.filters(q);
    const c = decodeCursor<{ c?: unknown; id?: unknown; f?: unknown }>(q.cursor);
    if (c) {
      const cf = c.f as Filters | undefined;
      if (typeof c.c !== "string" || typeof c.id !== "string" || !cf || typeof cf !== "object") throw badCursor("not a cursor issued by this API");
      // Follow-up pages keep the first page's filters: omitted ones come from the cursor, different ones are refused.
      for (const k of ["recipient", "template", "status", "subject"] as const) {
        if (f[k] !== null && f[k] !== cf[k]) throw badCursor("the cursor belongs to other filters; start again without it");
      }
      f = this.filters({ recipient: cf.recipient ?? undefined, template: cf.template ?? undefined, status: cf.status ?? undefined, subject_contains: cf.subject ?? undefined });
    }
    const rows = await store.listMessages(this.ctx.db, this.filterOf(ws.id, f, c ? { created_at: c.c as string, id: c.id as string } : null, limit + 1));
    return buildPage(rows, limit, (r) => ({ c: r.created_at, id: r.id, f }), (r) => this.view(r));
  }

  private async inWorkspace(db: Sql, workspaceId: string, id: string): Promise<MessageRow> {
    const r = isUuid(id) ? await store.messageInWorkspace(db, workspaceId, id.toLowerCase()) : null;
    if (!r) throw notFound("Message");
    return r;
  }

  async get(p: Principal, workspaceId: string, id: string): Promise<MessageView> {
    const ws = await this.workspace(p, workspaceId, "mail.message.read");
    return this.view(await this.inWorkspace(this.ctx.db, ws.id, id));
  }

  async body(p: Principal, workspaceId: string, id: string): Promise<MessageBodyView> {
    const ws = await this.workspace(p, workspaceId, "mail.message.body.read");
    const r = await this.inWorkspace(this.ctx.db, ws.id, id);
    if (await store.redactBodies(this.ctx.db, ws.id)) return { id: r.id, subject: r.subject, body_html: null, body_text: null, redacted: true };
    const b = await this.readBody(r);
    return { id: r.id, subject: r.subject, body_html: b.html, body_text: b.text, redacted: false };
  }

  /** Right to be forgotten: every message to the address (any case), with its body objects. */
  async forget(p: Principal, workspaceId: string, recipient: string | undefined): Promise<{ deleted: number }> {
    const ws = await this.workspace(p, workspaceId, "mail.message.delete");
    if (recipient === undefined || recipient.trim() === "") throw invalidField("recipient", "required");
    if (recipient.length > RECIPIENT_MAX) throw invalidField("recipient", `at most ${RECIPIENT_MAX} characters`);
    const fold = foldEmail(recipient);
    // Bodies first: a crash in between leaves rows whose bodies read as null, never bodies without rows.
    const doomed = await store.messagesToRecipient(this.ctx.db, ws.id, fold);
    for (const m of doomed) if (m.body_key) await this.ctx.objects.delete(m.body_key);
    const deleted = await tx(this.ctx.db, async (t) => {
      // Messages queued meanwhile: their bodies too.
      for (const m of await store.messagesToRecipient(t, ws.id, fold)) if (m.body_key && !doomed.some((d) => d.id === m.id)) await this.ctx.objects.delete(m.body_key);
      return store.deleteMessagesToRecipient(t, ws.id, fold);
    });
    return { deleted };
  }

  // ------------------------------------------------------------------ settings

  async getSettings(p: Principal, workspaceId: string) {
    const ws = await this.workspace(p, workspaceId, "mail.message.read");
    return { workspace_id: ws.id, redact_bodies: await store.redactBodies(this.ctx.db, ws.id) };
  }

  async patchSettings(p: Principal, workspaceId: string, body: { redact_bodies?: unknown }) {
    const ws = await this.workspace(p, workspaceId, "mail.message.delete");
    if (typeof body.redact_bodies !== "boolean") throw invalidField("redact_bodies", "required boolean");
    await store.setRedactBodies(this.ctx.db, ws.id, body.redact_bodies, this.ctx.clock.iso());
    return { workspace_id: ws.id, redact_bodies: body.redact_bodies };
  }

  // ------------------------------------------------------------------ export

  /**
   * The CSV export of the messages matching the list filters, newest first, streamed page by
   * page. One running export per workspace (a lease row, released when the stream ends or
   * the client goes away) and 5 per sliding hour: 429 EXPORT_LIMIT with Retry-After.
   */
  async exportCsv(p: Principal, workspaceId: string, q: MessageQuery): Promise<Response> {
    const ws = await this.workspace(p, workspaceId, "mail.message.read");
    const f = this.filters(q);
    const holder = randomBytes(12).toString("hex");
    const now = this.ctx.clock.nowMs();
    if (!(await store.takeExportLock(this.ctx.db, ws.id, holder, now, now + EXPORT_LEASE_MS))) {
      throw exportLimit("Another export of this workspace is running; one at a time", EXPORT_BUSY_RETRY_S);
    }
    const release = () => store.releaseExportLock(this.ctx.db, ws.id, holder).then(() => {});
    try {
      const hit = await this.ctx.ratelimit.hit(`mail:export:${ws.id}`, EXPORTS_PER_HOUR, HOUR);
      if (!hit.allowed) throw exportLimit(`At most ${EXPORTS_PER_HOUR} exports per hour per workspace`, Math.ceil(hit.retryAfterMs / 1000));
    } catch (e) {
      await release();
      throw e;
    }
    const db = this.ctx.db;
    const enc = new TextEncoder();
    let before: { created_at: string; id: string } | null = null;
    let started = false;
    let done = false;
    const finish = async () => {
      if (done) return;
      done = true;
      await release();
    };
    const stream = new ReadableStream<Uint8Array>({
      pull: async (controller) => {
        try {
          if (!started) {
            started = true;
            controller.enqueue(enc.encode(csvRow([...EXPORT_COLUMNS])));
            return;
          }
          const rows = await store.listMessages(db, this.filterOf(ws.id, f, before, EXPORT_PAGE));
          if (rows.length) {
            controller.enqueue(enc.encode(rows.map((r) => csvRow(EXPORT_COLUMNS.map((c) => (c === "deferral_count" ? Number(r[c]) : r[c])))).join("")));
            const last = rows[rows.length - 1]!;
            before = { created_at: last.created_at, id: last.id };
          }
          if (rows.length < EXPORT_PAGE) {
            await finish();
            controller.close();
          }
        } catch (e) {
          await finish();
          controller.error(e);
        }
      },
      cancel: () => finish(),
    });
    const day = this.ctx.clock.iso().slice(0, 10);
    return new Response(stream, {
      headers: {
        "content-type": "text/csv; charset=utf-8",
        "content-disposition": `attachment; filename="messages-${day}.csv"`,
        "cache-control": "no-store",
        "x-content-type-options": "nosniff",
      },
    });
  }

  // ------------------------------------------------------------------ timeline and deliverability

  async timeline(p: Principal, workspaceId: string, q: { granularity?: string; since?: string; until?: string; metric?: string }) {
    const ws = await this.workspace(p, workspaceId, "mail.message.read");
    const details: { field: string; reason: string }[] = [];
    if (q.granularity !== "day") details.push({ field: "granularity", reason: "required: day" });
    const metric = q.metric === undefined || q.metric === "" ? "sent" : q.metric;
    if (metric !== "sent" && metric !== "bounced") details.push({ field: "metric", reason: "sent or bounced" });
    const since = parseInstant(q.since);
    const until = parseInstant(q.until);
    if (since === null) details.push({ field: "since", reason: "required: a date (YYYY-MM-DD) or an ISO 8601 date-time" });
    if (until === null) details.push({ field: "until", reason: "required: a date (YYYY-MM-DD) or an ISO 8601 date-time" });
    if (details.length) throw badRequest("Invalid timeline query", details);
    if (until! <= since!) throw invalidField("until", "must be after since");
    const first = Math.floor(since! / DAY) * DAY;
    const buckets = Math.ceil((until! - first) / DAY);
    if (buckets > TIMELINE_MAX_BUCKETS) throw invalidField("until", `at most ${TIMELINE_MAX_BUCKETS} daily buckets (got ${buckets})`);
    const counts = new Map(
      (await store.dailyCounts(this.ctx.db, ws.id, metric === "sent" ? "sent_at" : "bounced_at", new Date(since!).toISOString(), new Date(until!).toISOString())).map((r) => [
        r.day,
        Number(r.n),
      ]),
    );
    const points = Array.from({ length: buckets }, (_, i) => {
      const date = new Date(first + i * DAY).toISOString().slice(0, 10);
      return { date, count: counts.get(date) ?? 0 };
    });
    return { granularity: "day" as const, metric: metric as "sent" | "bounced", points };
  }

  async deliverability(p: Principal, workspaceId: string, q: { window_days?: string }): Promise<DeliverabilityView> {
    const ws = await this.workspace(p, workspaceId, "mail.message.read");
    let days = WINDOW_DEFAULT;
    if (q.window_days !== undefined && q.window_days !== "") {
      days = Number(q.window_days);
      if (!Number.isInteger(days) || days < 1 || days > WINDOW_MAX) throw invalidField("window_days", `integer 1-${WINDOW_MAX}`);
    }
    const now = this.ctx.clock.nowMs();
    const since = new Date(now - days * DAY).toISOString();
    const until = new Date(now + 1).toISOString();
    const counts = Object.fromEntries((await store.statusCounts(this.ctx.db, ws.id, since, until)).map((r) => [r.status, Number(r.n)]));
    const details = await store.negativeDetails(this.ctx.db, ws.id, since, until);
    return verdictOf(days, counts, details);
  }

  // ================================================================== suppressions

  async listSuppressions(p: Principal, workspaceId: string, q: { limit?: unknown; cursor?: string; reason?: string }): Promise<Page<SuppressionView>> {
    const ws = await this.workspace(p, workspaceId, "mail.suppression.read");
    const limit = parseLimit(q.limit, LIST_DEFAULT, LIST_MAX);
    let reason = q.reason === undefined || q.reason === "" ? null : q.reason;
    if (reason !== null && !isReason(reason)) throw invalidField("reason", `one of ${SUPPRESSION_REASONS.join(", ")}`);
    const c = decodeCursor<{ c?: unknown; e?: unknown; r?: unknown }>(q.cursor);
    if (c) {
      if (typeof c.c !== "string" || typeof c.e !== "string" || (c.r !== null && !isReason(c.r))) throw badCursor("not a cursor issued by this API");
      if (reason !== null && reason !== c.r) throw badCursor("the cursor belongs to another reason filter; start again without it");
      reason = c.r as string | null;
    }
    const rows = await store.listSuppressions(this.ctx.db, {
      workspaceId: ws.id,
      reason: reason as SuppressionReason | null,
      before: c ? { created_at: c.c as string, email: c.e as string } : null,
      limit: limit + 1,
    });
    return buildPage(rows, limit, (r) => ({ c: r.created_at, e: r.email, r: reason }), this.suppressionView);
  }

  /** Adds an address (lower-cased); an address already suppressed answers its entry unchanged (created false). */
  async addSuppression(p: Principal, workspaceId: string, body: { email?: unknown; reason?: unknown }): Promise<{ created: boolean; suppression: SuppressionView }> {
    const ws = await this.workspace(p, workspaceId, "mail.suppression.write");
    const details: { field: string; reason: string }[] = [];
    const email = typeof body.email === "string" ? foldEmail(body.email) : "";
    if (!EMAIL_RE.test(email) || email.length > EMAIL_MAX) details.push({ field: "email", reason: "must be an email address" });
    const reason = body.reason === undefined ? "manual" : body.reason;
    if (reason !== "manual" && reason !== "unsubscribe") details.push({ field: "reason", reason: "manual or unsubscribe (bounce and complaint are added by the service)" });
    if (details.length) throw badRequest("Invalid suppression", details);
    return tx(this.ctx.db, async (t) => {
      const created = await this.suppress(t, ws.id, email, reason as SuppressionReason, null);
      return { created, suppression: this.suppressionView((await store.suppression(t, ws.id, email))!) };
    });
  }

  async removeSuppression(p: Principal, workspaceId: string, email: string): Promise<void> {
    const ws = await this.workspace(p, workspaceId, "mail.suppression.write");
    const fold = foldEmail(decodeURIComponentSafe(email));
    await tx(this.ctx.db, async (t) => {
      const r = await store.suppression(t, ws.id, fold);
      if (!r) throw notFound("Suppression");
      await store.deleteSuppression(t, ws.id, fold);
      await this.emit(t, ws.id, "suppression.deleted", { workspace_id: ws.id, ...this.suppressionView(r), deleted_at: this.ctx.clock.iso() });
    });
  }
}

function decodeURIComponentSafe(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/** Epoch ms of a YYYY-MM-DD date (UTC midnight) or an ISO 8601 date-time with a zone; null otherwise. */
export function parseInstant(v: string | undefined): number | null {
  if (v === undefined || v === "") return null;
  if (/^\d{4}-\d{2}-\d{2}$/.test(v)) {
    const ms = Date.parse(`${v}T00:00:00.000Z`);
    return Number.isNaN(ms) || new Date(ms).toISOString().slice(0, 10) !== v ? null : ms;
  }
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/.test(v)) return null;
  const ms = Date.parse(v);
  return Number.isNaN(ms) ? null : ms;
}
