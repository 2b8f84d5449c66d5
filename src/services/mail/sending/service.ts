/**
 * The sending part of the mail service: POST /templates/{name}/send, /send-batch and
 * /test-send (validate, render, check suppressions and the rate limit, queue), the
 * per-workspace send settings, and the delivery worker (job mail.messages.deliver) that claims queued
 * and due messages and hands each to smtp-delivery.ts's deliver().
 *
 * Decisions the spec leaves open (also in docs/mail.md, "Reference" > "Sending"):
 * - One message (one row, one Message-ID, one SMTP transaction) per recipient: a send to
 *   three addresses queues three messages, each showing only its own address in To.
 * - `from` is "addr@domain" or "Display Name <addr@domain>"; the domain must be an active
 *   send or send_receive domain of the workspace (422 SENDER_NOT_VERIFIED otherwise).
 *   from_address in the log is the bare address; the display name travels in send_data.
 * - `subject` overrides the template's rendered subject literally (it is not a template).
 * - `headers` (optional, like Resend): up to 20 extra headers, e.g. List-Unsubscribe; the
 *   ones the pipeline writes itself (From, To, Subject, Message-ID, Date, MIME and
 *   Content-*, DKIM-Signature, Return-Path, Received...) are refused with 400.
 * - Rate limit: per workspace, counted in messages (recipients, batch rows), sliding window
 *   of one second, default 100/s, set per workspace with PATCH /sending/settings. A request
 *   whose messages do not all fit is refused whole (429 RATE_LIMITED, Retry-After and
 *   X-RateLimit-Limit/Remaining/Reset in seconds); accepted ones carry the headers too.
 * - send-batch body: {from?, subject?, headers?, messages: [{to, data, from?, subject?,
 *   headers?, idempotency_key?}]} (1-100; the top-level fields are the rows' defaults). A
 *   row with an idempotency_key already used by a message of the workspace in the last 24 h
 *   is accepted with that message's id and not queued again.
 * - Bodies: rendered at send time (so a bad template is a 400 there, not a failed message
 *   later) and stored by the messages part unless the workspace redacts bodies; then the
 *   worker re-renders from send_data (template, data), which is dropped once final.
 */
import { Resolver } from "node:dns/promises";
import type { Principal } from "../../../access/principal";
import { HOUR, MINUTE, SECOND } from "../../../core/clock";
import type { Sql } from "../../../core/db";
import { ApiError, badRequest, invalidField, type ErrorDetail } from "../../../core/errors";
import { uuid } from "../../../core/ids";
import { validateIdempotencyKey } from "../../../core/idempotency";
import type { MailContext } from "../part-context";
import { renderForSend, sendRenderer } from "../content/part";
import type { DomainService, SendDomain } from "../domains/part";
import type { MessageRow, MessageService, QueueInput } from "../messages";
import type { MailParts } from "../part";
import { mailSettings } from "../settings";
import { deliver, type DeliveryOutcome, type DkimKey, type OutboundMail } from "./smtp-delivery";
import * as store from "./store";

/** Not "mail.deliver": that is the system mailer's outbox job (app.ts). */
export const DELIVER_JOB = "mail.messages.deliver";
export const TO_MAX = 50;
export const BATCH_MAX = 100;
export const DEFAULT_RATE_PER_SECOND = 100;
export const RATE_MAX = 10_000;
export const HEADERS_MAX = 20;
export const SUBJECT_MAX = 998;
export const EMAIL_MAX = 254;
export const CLAIM_BATCH = 20;
/** Messages per claim while the API is busy: at least API_BUSY_REQUESTS requests in flight. */
export const CLAIM_BATCH_BUSY = 2;
export const API_BUSY_REQUESTS = 2;
/** While the API is busy, the worker pauses this many times as long as each round took (at most BUSY_PAUSE_MAX_MS). */
export const BUSY_PAUSE_FACTOR = 3;
export const BUSY_PAUSE_MAX_MS = 250;
/** Rounds of claims per run of the job (each up to CLAIM_BATCH messages). */
export const CLAIM_ROUNDS = 10;
export const LEASE_MS = 5 * MINUTE;
export const SMTP_TIMEOUT_MS = 30 * SECOND;
export const ROW_IDEMPOTENCY_MS = 24 * HOUR;
export const TEST_PREFIX = "[TEST] ";

const EMAIL_RE = /^[^\s@<>(),;:"\\]+@[^\s@<>(),;:"\\]+\.[^\s@<>(),;:"\\]+$/;
const HEADER_NAME_RE = /^[A-Za-z0-9][A-Za-z0-9-]{0,63}$/;
const RESERVED_HEADERS = new Set([
  "from", "to", "cc", "bcc", "subject", "message-id", "date", "sender", "return-path", "received", "dkim-signature",
  "mime-version", "content-type", "content-transfer-encoding", "content-disposition", "content-id",
]);

export interface SendBody {
  from?: unknown;
  to?: unknown;
  subject?: unknown;
  data?: unknown;
  headers?: unknown;
}

export interface BatchRowInput extends SendBody {
  idempotency_key?: unknown;
}

export interface BatchBody {
  from?: unknown;
  subject?: unknown;
  headers?: unknown;
  messages?: unknown;
}

export interface SendResult {
  accepted: true;
  from: string;
  to: string | string[];
  subject: string;
  message_ids: string[];
}

export interface BatchRowResult {
  index: number;
  status: "accepted" | "rejected";
  message_id: string | null;
  error: { code: string; message: string; details?: ErrorDetail[] } | null;
}

export interface BatchResult {
  data: BatchRowResult[];
  accepted: number;
  rejected: number;
}

export interface SendSettings {
  workspace_id: string;
  rate_limit_per_second: number;
  /** False while the workspace uses the default. */
  custom: boolean;
}

/** What the worker needs besides the stored body (kept in send_data until the message is final). */
interface SendData {
  template: string;
  data: Record<string, unknown>;
  missing: "error" | "placeholder";
  subject_prefix?: string;
  subject?: string | null;
  from_name?: string | null;
}

/**
 * Where the worker hands a sandbox domain's message instead of SMTP: the sandbox part's
 * service. Declared here because that part builds on this one (it composes the message
 * with smtp-delivery.ts), so this one must not import it back.
 */
export interface SandboxDelivery {
  deliver(owner: string, m: MessageRow, mail: OutboundMail, dkim: DkimKey): Promise<void>;
}

interface Sender {
  name: string | null;
  address: string;
  domain: SendDomain;
}

/** "addr" or "Name <addr>" (the name optionally quoted); null when malformed. */
export function parseFrom(v: string): { name: string | null; address: string } | null {
  const s = v.trim();
  const m = /^(?:"?([^"<>]*?)"?\s*)?<([^<>\s]+)>$/.exec(s);
  const name = m ? (m[1]?.trim() || null) : null;
  const address = (m ? m[2]! : s).trim();
  if (!EMAIL_RE.test(address) || address.length > EMAIL_MAX) return null;
  if (name !== null && /[\r\n]/.test(name)) return null;
  return { name, address };
}

const domainOf = (address: string) => address.slice(address.lastIndexOf("@") + 1).toLowerCase();
const fold = (s: string) => s.trim().toLowerCase();
const isApiError = (e: unknown): e is ApiError => e instanceof ApiError;
const errorOf = (e: ApiError) => ({ code: e.code, message: e.message, ...(e.details?.length ? { details: e.details } : {}) });
/** The enhanced status code (5.1.1) in a reply, else the reply code. */
const statusCode = (code: number | null, detail: string) => /\b([245]\.\d{1,3}\.\d{1,3})\b/.exec(detail)?.[1] ?? (code === null ? null : String(code));

export class SendService {
  /** After a send commits, run the delivery job at once (tests may turn it off to step the worker themselves). */
  autoKick = true;
  private readonly addresses: Resolver;
  /** The first run's take-back of the claims this node's previous process died holding. */
  private reclaimed: Promise<unknown> | null = null;

  constructor(
    private readonly m: MailContext,
    private readonly parts: MailParts,
  ) {
    this.addresses = new Resolver({ timeout: 3000, tries: 2 });
    const { dnsServers } = mailSettings(m);
    if (dnsServers?.length) this.addresses.setServers(dnsServers);
  }
  private get domains() {
    return this.parts.domains as DomainService;
  }
  private get messages() {
    return this.parts.messages as MessageService;
  }
  /** A later part (created after this one): looked up when a sandbox message is delivered. */
  private get sandbox() {
    return this.parts.sandbox as SandboxDelivery;
  }

  // ================================================================== validation

  private async sender(wsId: string, v: unknown, field: string, cache?: Map<string, SendDomain | null>): Promise<Sender> {
    if (typeof v !== "string" || v.trim() === "") throw invalidField(field, "required: an address on an active sending domain of the workspace");
    const f = parseFrom(v);
    if (!f) throw invalidField(field, 'must be an email address, optionally as "Name <address>"');
    const name = domainOf(f.address);
    let domain = cache?.get(name);
    if (domain === undefined) {
      domain = await this.domains.activeSendDomain(this.m.ctx.db, wsId, name);
      cache?.set(name, domain);
    }
    if (!domain) {
      throw new ApiError(422, "SENDER_NOT_VERIFIED", `${name} is not an active sending domain of this workspace (add it with POST /domains and verify its DNS records)`, [
        { field, reason: "the domain is not verified for sending" },
      ]);
    }
    return { name: f.name, address: f.address, domain };
  }

  private recipients(v: unknown, field = "to", max = TO_MAX): string[] {
    const list = typeof v === "string" ? [v] : Array.isArray(v) ? v : null;
    if (!list || list.length === 0) throw invalidField(field, `required: an email address or a list of 1-${max}`);
    if (list.length > max) throw invalidField(field, `at most ${max} recipients (got ${list.length})`);
    const details: ErrorDetail[] = [];
    const out: string[] = [];
    const seen = new Set<string>();
    list.forEach((a, i) => {
      const f = typeof v === "string" ? field : `${field}[${i}]`;
      if (typeof a !== "string" || !EMAIL_RE.test(a.trim()) || a.trim().length > EMAIL_MAX) details.push({ field: f, reason: "must be an email address" });
      else if (!seen.has(fold(a))) {
        seen.add(fold(a));
        out.push(a.trim());
      }
    });
    if (details.length) throw badRequest("Invalid recipients", details);
    return out;
  }

  private subject(v: unknown, field = "subject"): string | null {
    if (v === undefined || v === null) return null;
    if (typeof v !== "string" || v.trim() === "" || v.length > SUBJECT_MAX || /[\r\n]/.test(v)) throw invalidField(field, `a non-empty single line of at most ${SUBJECT_MAX} characters`);
    return v;
  }

  private headers(v: unknown, field = "headers"): Record<string, string> | null {
    if (v === undefined || v === null) return null;
    if (typeof v !== "object" || Array.isArray(v)) throw invalidField(field, "must be an object of header name -> value");
    const entries = Object.entries(v as Record<string, unknown>);
    const details: ErrorDetail[] = [];
    if (entries.length > HEADERS_MAX) details.push({ field, reason: `at most ${HEADERS_MAX} headers` });
    for (const [k, val] of entries) {
      if (!HEADER_NAME_RE.test(k)) details.push({ field: `${field}.${k}`, reason: "header names are letters, digits and hyphens (at most 64)" });
      else if (RESERVED_HEADERS.has(k.toLowerCase()) || k.toLowerCase().startsWith("x-bunker-")) details.push({ field: `${field}.${k}`, reason: "set by the mail service; not allowed" });
      if (typeof val !== "string" || val.length > SUBJECT_MAX || /[\r\n]/.test(val)) details.push({ field: `${field}.${k}`, reason: `a single-line string of at most ${SUBJECT_MAX} characters` });
    }
    if (details.length) throw badRequest("Invalid headers", details);
    return entries.length ? (Object.fromEntries(entries) as Record<string, string>) : null;
  }

  private data(v: unknown, required: boolean, field = "data"): Record<string, unknown> {
    if (v === undefined || v === null) {
      if (required) throw invalidField(field, "required: an object of template variables");
      return {};
    }
    if (typeof v !== "object" || Array.isArray(v)) throw invalidField(field, "must be an object");
    return v as Record<string, unknown>;
  }

  // ================================================================== rate limit

  async rateLimit(wsId: string): Promise<number> {
    return (await store.ratePerSecond(this.m.ctx.db, wsId)) ?? DEFAULT_RATE_PER_SECOND;
  }

  /** Takes `n` slots of the workspace's per-second budget, or throws 429 RATE_LIMITED; returns the X-RateLimit headers. */
  private async takeSlots(wsId: string, n: number): Promise<Record<string, string>> {
    const limit = await this.rateLimit(wsId);
    const key = `mail:send:${wsId}`;
    const refuse = (retryMs: number, remaining: number, why: string) => {
      const s = String(Math.max(1, Math.ceil(retryMs / 1000)));
      return new ApiError(429, "RATE_LIMITED", why, undefined, {
        "retry-after": s,
        "x-ratelimit-limit": String(limit),
        "x-ratelimit-remaining": String(Math.max(0, remaining)),
        "x-ratelimit-reset": s,
      });
    };
    if (n > limit) throw refuse(SECOND, limit, `This request has ${n} messages; the workspace may send at most ${limit} per second (split it)`);
    // All n slots in one statement (all or none).
    const hit = await this.m.ctx.ratelimit.hitMany(key, n, limit, SECOND);
    if (!hit.allowed) throw refuse(hit.retryAfterMs, limit - hit.count, `Send rate limit: at most ${limit} messages per second per workspace`);
    return { "x-ratelimit-limit": String(limit), "x-ratelimit-remaining": String(Math.max(0, limit - hit.count)), "x-ratelimit-reset": "1" };
  }

  // ================================================================== send routes

  private async rejectSuppressed(wsId: string, to: string[]): Promise<void> {
    const hit = await this.messages.suppressed(this.m.ctx.db, wsId, to);
    if (!hit.size) return;
    throw new ApiError(
      422,
      "RECIPIENT_SUPPRESSED",
      `${[...hit].join(", ")} ${hit.size === 1 ? "is" : "are"} on the workspace's suppression list (DELETE /suppressions/{email} to send again)`,
      to.map((a, i) => ({ a, i })).filter(({ a }) => hit.has(fold(a))).map(({ i }) => ({ field: to.length === 1 ? "to" : `to[${i}]`, reason: "suppressed" })),
    );
  }

  private input(s: Sender, to: string, subject: string, html: string, text: string, sd: SendData, extra: Partial<QueueInput>): QueueInput {
    return { domainId: s.domain.id, from: s.address, to, subject, templateName: sd.template, html, text, data: sd, headers: extra.headers ?? null, sandbox: s.domain.sandbox, ...extra };
  }

  private kick(): void {
    if (!this.autoKick) return;
    this.m.ctx.scheduler.runNow(DELIVER_JOB).catch((e: Error) => this.m.ctx.log.warn("mail delivery run failed", { error: e.message }));
  }

  /** POST /templates/{name}/send. */
  async send(p: Principal, workspaceId: string, name: string, body: SendBody, idempotencyKey: string | null): Promise<{ result: SendResult; headers: Record<string, string> }> {
    const ws = await this.m.guard(p, workspaceId, "mail.send");
    const to = this.recipients(body.to);
    const subject = this.subject(body.subject);
    const headers = this.headers(body.headers);
    const data = this.data(body.data, true);
    // The path's template first: an unknown one is 404 before checks of other records (the sender's domain).
    const renderer = await sendRenderer(this.m.ctx.db, ws.id, name);
    const s = await this.sender(ws.id, body.from, "from");
    const r = renderer(data, { missing: "error" });
    await this.rejectSuppressed(ws.id, to);
    const rate = await this.takeSlots(ws.id, to.length);
    const finalSubject = subject ?? r.subject;
    const sd: SendData = { template: r.template_name, data, missing: "error", subject, from_name: s.name };
    const batchId = uuid();
    const rows = await this.messages.queue(
      ws.id,
      to.map((a, i) => this.input(s, a, finalSubject, r.html, r.text, sd, { headers, idempotencyKey, batchId, batchIndex: i })),
    );
    this.kick();
    return { result: { accepted: true, from: body.from as string, to: body.to as string | string[], subject: finalSubject, message_ids: rows.map((m) => m.id) }, headers: rate };
  }

  /**
   * For other services (the waitlist's notifications): sends template `name` of the workspace
   * to one recipient as POST /templates/{name}/send would (active sender domain, rendering,
   * suppression list, the workspace's rate limit), without a caller principal. Same errors.
   */
  async sendForService(workspaceId: string, name: string, body: { from: string; to: string; data: Record<string, unknown> }): Promise<{ message_id: string }> {
    const to = this.recipients(body.to);
    const s = await this.sender(workspaceId, body.from, "from");
    const r = await renderForSend(this.m.ctx.db, workspaceId, name, body.data, { missing: "error" });
    await this.rejectSuppressed(workspaceId, to);
    await this.takeSlots(workspaceId, 1);
    const sd: SendData = { template: r.template_name, data: body.data, missing: "error", subject: null, from_name: s.name };
    const rows = await this.messages.queue(workspaceId, [this.input(s, to[0]!, r.subject, r.html, r.text, sd, {})]);
    this.kick();
    return { message_id: rows[0]!.id };
  }

  /** POST /templates/{name}/test-send: [TEST] subject, placeholders for missing variables, no suppression or rate checks. */
  async testSend(p: Principal, workspaceId: string, name: string, body: SendBody): Promise<SendResult> {
    const ws = await this.m.guard(p, workspaceId, "mail.send");
    const to = this.recipients(body.to);
    const data = this.data(body.data, false);
    const renderer = await sendRenderer(this.m.ctx.db, ws.id, name);
    const s = await this.sender(ws.id, body.from, "from");
    const r = renderer(data, { missing: "placeholder" });
    const subject = `${TEST_PREFIX}${r.subject}`;
    const sd: SendData = { template: r.template_name, data, missing: "placeholder", subject_prefix: TEST_PREFIX, from_name: s.name };
    const batchId = uuid();
    const rows = await this.messages.queue(ws.id, to.map((a, i) => this.input(s, a, subject, r.html, r.text, sd, { batchId, batchIndex: i })));
    this.kick();
    return { accepted: true, from: body.from as string, to: body.to as string | string[], subject, message_ids: rows.map((m) => m.id) };
  }

  /** POST /templates/{name}/send-batch: each row accepted or rejected on its own; 429 when the accepted rows do not fit the rate. */
  async sendBatch(p: Principal, workspaceId: string, name: string, body: BatchBody): Promise<{ result: BatchResult; headers: Record<string, string> }> {
    const ws = await this.m.guard(p, workspaceId, "mail.send");
    const list = body.messages;
    if (!Array.isArray(list) || list.length === 0) throw invalidField("messages", `required: 1-${BATCH_MAX} rows`);
    if (list.length > BATCH_MAX) throw invalidField("messages", `at most ${BATCH_MAX} rows (got ${list.length})`);
    // Defaults are checked once: a malformed default is the request's fault, not a row's.
    const defSubject = this.subject(body.subject);
    const defHeaders = this.headers(body.headers);
    const domains = new Map<string, SendDomain | null>();
    const since = new Date(this.m.ctx.clock.nowMs() - ROW_IDEMPOTENCY_MS).toISOString();
    const results: BatchRowResult[] = [];
    const pending: { index: number; input: QueueInput; key: string | null }[] = [];
    const seenKeys = new Map<string, number>();
    // The template, layouts, partials and brand read once, before the rows: an unknown template is a 404 for the whole batch.
    const renderer = await sendRenderer(this.m.ctx.db, ws.id, name);
    const renderRow = (data: Record<string, unknown>) => renderer(data, { missing: "error" });
    const replayOf = new Map<number, number>();
    for (const [index, raw] of list.entries()) {
      try {
        if (!raw || typeof raw !== "object" || Array.isArray(raw)) throw invalidField(`messages[${index}]`, "must be an object");
        const row = raw as BatchRowInput;
        let key: string | null = null;
        if (row.idempotency_key !== undefined && row.idempotency_key !== null) {
          if (typeof row.idempotency_key !== "string") throw invalidField("idempotency_key", "must be a string");
          validateIdempotencyKey(row.idempotency_key);
          key = `row:${row.idempotency_key}`;
        }
        if (typeof row.to !== "string") throw invalidField("to", "required: one email address");
        const [to] = this.recipients(row.to, "to", 1);
        const subject = row.subject !== undefined ? this.subject(row.subject) : defSubject;
        const headers = row.headers !== undefined ? this.headers(row.headers) : defHeaders;
        const data = this.data(row.data, true);
        const s = await this.sender(ws.id, row.from ?? body.from, row.from !== undefined ? "from" : "from (batch default)", domains);
        const r = await renderRow(data);
        // A key seen before (earlier in this batch, or by a message of the last 24 h): that message, nothing new.
        if (key) {
          const earlier = seenKeys.get(key);
          if (earlier !== undefined) {
            replayOf.set(index, earlier);
            results.push({ index, status: "accepted", message_id: null, error: null });
            continue;
          }
          const existing = await store.messageByIdempotencyKey(this.m.ctx.db, ws.id, key, since);
          if (existing) {
            results.push({ index, status: "accepted", message_id: existing.id, error: null });
            continue;
          }
        }
        const sd: SendData = { template: r.template_name, data, missing: "error", subject, from_name: s.name };
        if (key) seenKeys.set(key, index);
        pending.push({ index, key, input: this.input(s, to!, subject ?? r.subject, r.html, r.text, sd, { headers, idempotencyKey: key, batchIndex: index }) });
        results.push({ index, status: "accepted", message_id: null, error: null });
      } catch (e) {
        if (!isApiError(e) || e.status === 404 || e.status >= 500) throw e; // an unknown template fails the whole batch
        results.push({ index, status: "rejected", message_id: null, error: errorOf(e) });
      }
    }
    // Suppressions in one query for the rows still in.
    const hit = await this.messages.suppressed(this.m.ctx.db, ws.id, pending.map((x) => x.input.to));
    const queued = pending.filter((x) => {
      if (!hit.has(fold(x.input.to))) return true;
      results[x.index] = {
        index: x.index,
        status: "rejected",
        message_id: null,
        error: { code: "RECIPIENT_SUPPRESSED", message: `${x.input.to} is on the workspace's suppression list`, details: [{ field: "to", reason: "suppressed" }] },
      };
      if (x.key) seenKeys.delete(x.key);
      return false;
    });
    let rate: Record<string, string> = {};
    if (queued.length) {
      rate = await this.takeSlots(ws.id, queued.length);
      const batchId = uuid();
      const rows = await this.messages.queue(ws.id, queued.map((x) => ({ ...x.input, batchId })));
      rows.forEach((m, i) => (results[queued[i]!.index]!.message_id = m.id));
      this.kick();
    }
    // Rows repeating a key of an earlier row in this batch share its outcome.
    for (const [index, earlier] of replayOf) results[index] = { ...results[earlier]!, index };
    const accepted = results.filter((r) => r.status === "accepted").length;
    return { result: { data: results, accepted, rejected: results.length - accepted }, headers: rate };
  }

  // ================================================================== settings

  async getSettings(p: Principal, workspaceId: string): Promise<SendSettings> {
    const ws = await this.m.guard(p, workspaceId, "mail.message.read");
    const custom = await store.ratePerSecond(this.m.ctx.db, ws.id);
    return { workspace_id: ws.id, rate_limit_per_second: custom ?? DEFAULT_RATE_PER_SECOND, custom: custom !== null };
  }

  async patchSettings(p: Principal, workspaceId: string, body: { rate_limit_per_second?: unknown }): Promise<SendSettings> {
    const ws = await this.m.guard(p, workspaceId, "mail.message.delete");
    const v = body.rate_limit_per_second;
    if (v === undefined) throw invalidField("rate_limit_per_second", `required: an integer 1-${RATE_MAX}, or null for the default (${DEFAULT_RATE_PER_SECOND})`);
    if (v !== null && (typeof v !== "number" || !Number.isInteger(v) || v < 1 || v > RATE_MAX)) throw invalidField("rate_limit_per_second", `an integer 1-${RATE_MAX}, or null for the default`);
    await store.setRatePerSecond(this.m.ctx.db, ws.id, v as number | null, this.m.ctx.clock.iso());
    return { workspace_id: ws.id, rate_limit_per_second: (v as number | null) ?? DEFAULT_RATE_PER_SECOND, custom: v !== null };
  }

  // ================================================================== delivery worker

  /** One run of the job: claims due messages and delivers them, until none are due (bounded). Returns how many were tried. */
  async deliverDue(): Promise<number> {
    // A node restarted after a crash sends what its previous process was sending now, not
    // once that process's leases (5 minutes) ran out.
    this.reclaimed ??= this.messages.reclaimInterrupted().catch((e: unknown) => {
      this.reclaimed = null;
      throw e;
    });
    await this.reclaimed;
    let total = 0;
    for (let round = 0; round < CLAIM_ROUNDS; round++) {
      // The API first: rendering, DKIM signing and SMTP share the event loop (and the CPU)
      // with requests. While several requests are being handled the worker sends only a
      // couple at a time and then pauses for BUSY_PAUSE_FACTOR times as long as the round took,
      // so it takes about a quarter of the loop. It never stops: the queue keeps moving under
      // sustained load and catches up at full speed once the API is quiet.
      const busy = this.m.ctx.metrics.requestsInFlight >= API_BUSY_REQUESTS;
      const batch = busy ? CLAIM_BATCH_BUSY : CLAIM_BATCH;
      const started = performance.now();
      const { owner, messages } = await this.messages.claim(batch, LEASE_MS);
      total += messages.length;
      await Promise.all(
        messages.map((m) =>
          this.deliverOne(owner, m).catch((e: Error) => this.m.ctx.log.warn("mail delivery failed", { message_id: m.id, error: e.message })),
        ),
      );
      if (messages.length < batch) return total;
      if (busy) await Bun.sleep(Math.min(BUSY_PAUSE_MAX_MS, (performance.now() - started) * BUSY_PAUSE_FACTOR));
    }
    // Still more due after the bounded rounds: run again right after this run instead of
    // waiting for the next tick (which is skipped while a run is in progress anyway).
    this.kick();
    return total;
  }

  private async resolveAddresses(host: string): Promise<string[]> {
    const [a, aaaa] = await Promise.all([this.addresses.resolve4(host).catch(() => [] as string[]), this.addresses.resolve6(host).catch(() => [] as string[])]);
    return [...a, ...aaaa];
  }

  /** The body to send: the stored one, or re-rendered from send_data (redacted workspaces). */
  private async bodyOf(m: MessageRow, sd: SendData | null): Promise<{ html: string | null; text: string | null }> {
    const stored = await this.messages.readBody(m);
    if (stored.html !== null || stored.text !== null || !sd) return stored;
    const r = await renderForSend(this.m.ctx.db, m.workspace_id, sd.template, sd.data, { missing: sd.missing });
    return { html: r.html, text: r.text };
  }

  async deliverOne(owner: string, m: MessageRow): Promise<void> {
    const db: Sql = this.m.ctx.db;
    const sd = m.send_data ? (JSON.parse(m.send_data) as SendData) : null;
    const dom = m.domain_id ? await this.domains.domainById(db, m.workspace_id, m.domain_id) : null;
    const domain = dom ? await this.domains.activeSendDomain(db, m.workspace_id, dom.fqdn) : null;
    if (!domain) {
      await this.messages.markFailed(m.id, owner, "the sending domain is no longer active for sending");
      return;
    }
    let body: { html: string | null; text: string | null };
    try {
      body = await this.bodyOf(m, sd);
    } catch (e) {
      await this.messages.markFailed(m.id, owner, `could not render the message: ${(e as Error).message}`.slice(0, 500));
      return;
    }
    if (body.html === null && body.text === null) {
      await this.messages.markFailed(m.id, owner, "the message body is gone (deleted or never stored)");
      return;
    }
    const envelopeFrom = `bounces+${m.id}@${domain.fqdn}`;
    const dkim: DkimKey = { domainName: domain.fqdn, keySelector: domain.dkim_selector, privateKey: domain.dkim_private_key_pem };
    const from = sd?.from_name ? `"${sd.from_name.replace(/["\\]/g, "")}" <${m.from_address}>` : m.from_address;
    const cfg = this.m.ctx.config;
    // Recorded before the SMTP conversation starts: if this process dies before the outcome is,
    // the next claim knows the message may have been accepted (see send-queue.ts).
    if (!(await this.messages.markHandover(m.id, owner))) return;
    const mail: OutboundMail = { id: m.id, envelopeFrom, from, to: m.to_address, subject: m.subject, html: body.html, text: body.text, headers: m.headers ? (JSON.parse(m.headers) as Record<string, string>) : {} };
    // The sandbox domain's mail never leaves this instance: a mailbox here or the dev outbox.
    if (domain.sandbox) return this.sandbox.deliver(owner, m, mail, dkim);
    const out: DeliveryOutcome = await deliver(
      mail,
      dkim,
      {
        relayUrl: cfg.smtpRelayUrl,
        resolveMx: (name) => this.domains.resolver.resolveMx(name),
        resolveAddresses: (host) => this.resolveAddresses(host),
        mxPort: mailSettings(this.m).mxPort,
        allowPrivateTargets: cfg.allowPrivateTargets,
        requireTls: mailSettings(this.m).requireTls,
        // A relay is a known service with a real certificate; MX hosts rarely have one for their name.
        verifyTls: cfg.smtpRelayUrl !== null,
        heloName: cfg.mailHostname,
        timeoutMs: SMTP_TIMEOUT_MS,
      },
    );
    if (out.kind === "sent") {
      await this.messages.markSent(m.id, owner, { transcript: out.transcript, envelopeFrom, rfc822MessageId: `<${m.id}@${domain.fqdn}>` });
    } else if (out.kind === "deferred") {
      await this.messages.markDeferred(m.id, owner, { code: statusCode(out.code, out.detail), detail: out.detail, transcript: out.transcript });
    } else {
      await this.messages.markBounced(m.id, owner, { code: statusCode(out.code, out.detail), detail: out.detail, transcript: out.transcript });
    }
  }
}
