/**
 * The messages part of the mail service: the outbound message log (which is also the send
 * pipeline's queue), delivery outcomes, message settings, suppressions, the export, the
 * timeline and the deliverability verdict.
 *
 * MessageService is the one object the routes and the other mail parts (sending, inbound)
 * hold; each feature lives in a module of its own and this class only hands calls on:
 * - send-queue.ts: queue, claim and lease of the send pipeline; bodies.ts: bodies in the
 *   object store;
 * - outcomes.ts: sent / deferred / bounced / failed from the worker, delivered / delayed /
 *   bounced / complained from DSN and ARF reports;
 * - log.ts: list, get, body, forget, settings; export.ts: the CSV export; stats.ts: timeline
 *   and deliverability; suppressions.ts: the suppression list.
 *
 * Decisions the spec leaves open: docs/mail.md, "Reference" > "The message log, suppressions, deliverability".
 */
import type { Principal } from "../../../access/principal";
import type { Sql } from "../../../core/db";
import { dropWorkspaceBodies, readBody } from "./bodies";
import type { MailContext } from "../part-context";
import { MessageExport } from "./export";
import { MessageLog } from "./log";
import { DeliveryOutcomes, type SmtpReply } from "./outcomes";
import type { MessageQuery } from "./query";
import { SendQueue, type QueueInput } from "./send-queue";
import { MessageStats } from "./stats";
import * as store from "./store";
import type { MessageRow } from "./store";
import { Suppressions } from "./suppressions";

export type { MessageQuery } from "./query";
export type { Claim, QueueInput } from "./send-queue";
export type { SmtpReply } from "./outcomes";
export type { MessageBodyView, MessageView, SuppressionView } from "./views";

export class MessageService {
  private readonly sendQueue: SendQueue;
  private readonly outcomes: DeliveryOutcomes;
  private readonly suppressions: Suppressions;
  private readonly log: MessageLog;
  private readonly exporter: MessageExport;
  private readonly stats: MessageStats;

  constructor(private readonly m: MailContext) {
    this.sendQueue = new SendQueue(this.m);
    this.suppressions = new Suppressions(this.m);
    this.outcomes = new DeliveryOutcomes(this.m, this.suppressions);
    this.log = new MessageLog(this.m);
    this.exporter = new MessageExport(this.m);
    this.stats = new MessageStats(this.m);
  }

  // ------------------------------------------------------------------ send pipeline (send-queue.ts, bodies.ts)

  suppressed(db: Sql, workspaceId: string, emails: string[]) {
    return this.suppressions.suppressed(db, workspaceId, emails);
  }

  queue(workspaceId: string, inputs: QueueInput[], within?: (t: Sql, rows: MessageRow[]) => Promise<void>) {
    return this.sendQueue.queue(workspaceId, inputs, within);
  }

  claim(limit?: number, leaseMs?: number) {
    return this.sendQueue.claim(limit, leaseMs);
  }

  extendLease(id: string, owner: string, leaseMs?: number) {
    return this.sendQueue.extendLease(id, owner, leaseMs);
  }

  reclaimInterrupted() {
    return this.sendQueue.reclaimInterrupted();
  }

  markHandover(id: string, owner: string) {
    return this.sendQueue.markHandover(id, owner);
  }

  /** The workspace's redact_bodies setting (bodies are never stored while it is on). */
  redactsBodies(db: Sql, workspaceId: string) {
    return store.redactBodies(db, workspaceId);
  }

  readBody(r: MessageRow) {
    return readBody(this.m.ctx, r);
  }

  dropWorkspaceBodies(t: Sql, workspaceId: string) {
    return dropWorkspaceBodies(this.m.ctx, t, workspaceId);
  }

  // ------------------------------------------------------------------ delivery outcomes (outcomes.ts)

  markSent(id: string, owner: string, o?: { transcript?: string | null; envelopeFrom?: string | null; rfc822MessageId?: string | null }) {
    return this.outcomes.markSent(id, owner, o);
  }

  markDeferred(id: string, owner: string, reply: SmtpReply) {
    return this.outcomes.markDeferred(id, owner, reply);
  }

  markBounced(id: string, owner: string | null, reply: SmtpReply) {
    return this.outcomes.markBounced(id, owner, reply);
  }

  markFailed(id: string, owner: string | null, error: string, transcript?: string | null) {
    return this.outcomes.markFailed(id, owner, error, transcript);
  }

  markSandboxDelivered(t: Sql, id: string, owner: string, to: "mailbox" | "outbox", o: { envelopeFrom: string; rfc822MessageId: string }) {
    return this.outcomes.markSandboxDelivered(t, id, owner, to, o);
  }

  markDelivered(id: string, auth?: { spf?: string | null; dkim?: string | null; dmarc?: string | null }) {
    return this.outcomes.markDelivered(id, auth);
  }

  markDelayedByReport(id: string, reply: SmtpReply) {
    return this.outcomes.markDelayedByReport(id, reply);
  }

  markComplained(id: string) {
    return this.outcomes.markComplained(id);
  }

  // ------------------------------------------------------------------ message log and settings (log.ts)

  list(p: Principal, workspaceId: string, q: MessageQuery) {
    return this.log.list(p, workspaceId, q);
  }

  get(p: Principal, workspaceId: string, id: string) {
    return this.log.get(p, workspaceId, id);
  }

  body(p: Principal, workspaceId: string, id: string) {
    return this.log.body(p, workspaceId, id);
  }

  forget(p: Principal, workspaceId: string, recipient: string | undefined) {
    return this.log.forget(p, workspaceId, recipient);
  }

  getSettings(p: Principal, workspaceId: string) {
    return this.log.getSettings(p, workspaceId);
  }

  patchSettings(p: Principal, workspaceId: string, body: { redact_bodies?: unknown }) {
    return this.log.patchSettings(p, workspaceId, body);
  }

  // ------------------------------------------------------------------ export, timeline, deliverability (export.ts, stats.ts)

  exportCsv(p: Principal, workspaceId: string, q: MessageQuery) {
    return this.exporter.exportCsv(p, workspaceId, q);
  }

  timeline(p: Principal, workspaceId: string, q: { granularity?: string; since?: string; until?: string; metric?: string }) {
    return this.stats.timeline(p, workspaceId, q);
  }

  deliverability(p: Principal, workspaceId: string, q: { window_days?: number }) {
    return this.stats.deliverability(p, workspaceId, q);
  }

  // ------------------------------------------------------------------ suppressions (suppressions.ts)

  listSuppressions(p: Principal, workspaceId: string, q: { limit?: unknown; cursor?: string; reason?: string }) {
    return this.suppressions.list(p, workspaceId, q);
  }

  addSuppression(p: Principal, workspaceId: string, body: { email?: unknown; reason?: unknown }) {
    return this.suppressions.add(p, workspaceId, body);
  }

  removeSuppression(p: Principal, workspaceId: string, email: string) {
    return this.suppressions.remove(p, workspaceId, email);
  }
}
