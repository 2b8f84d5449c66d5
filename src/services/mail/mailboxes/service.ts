/**
 * Mailboxes (issue 14): addresses on a workspace's receiving domains, and the messages the
 * inbound listener stored in them (../inbound/). Decisions where the spec is silent
 * (docs/mail.md, "Reference" > "Inbound mail"):
 * - local_part: an RFC 5321 dot-string (atext atoms separated by single dots), 1-64
 *   characters; quoted local parts are refused. Unique per domain ignoring case (409
 *   MAILBOX_EXISTS); a soft-deleted mailbox frees its address. Local parts starting with
 *   "bounces+" or "bunker-test-" are reserved (VERP bounce and test addresses).
 * - The domain must have a receive intent (receive or send_receive); it may still be pending
 *   (mail is accepted once it is active).
 * - Actions: mail.mailbox.read (mailboxes, message list and metadata, marking read),
 *   mail.mailbox.write (create, change, delete mailboxes), mail.message.delete (delete a
 *   received message), mail.message.body.read (body_preview, /raw, attachments).
 * - Lists: mailboxes in seq_id order; messages newest first (received_at, id).
 */
import type { RequestMeta } from "../../../access/http";
import { isAllowedByAll } from "../../../access/policy";
import type { Principal } from "../../../access/principal";
import { tx, type Sql } from "../../../core/db";
import { ApiError, badRequest, conflict, invalidField, notFound } from "../../../core/errors";
import { uuid } from "../../../core/ids";
import { buildPage, decodeCursor, parseLimit, type Page } from "../../../core/pagination";
import { isUniqueViolation } from "../../../core/store/sql";
import type { MailContext } from "../part-context";
import { audit } from "../../../kernel/tenancy";
import type { DomainService } from "../domains/service";
import type { MailParts } from "../part";
import { parseMail, type AttachmentInfo } from "../parse";
import * as store from "./store";
import { MAILBOX_STATUSES, type MailboxRow, type MailboxStatus, type ReceivedRow } from "./store";
import { mailboxView, receivedSummaryView, receivedView, type MailboxView, type ReceivedSummaryView, type ReceivedView } from "./views";
import { LOCAL_PART_MAX, DISPLAY_NAME_MAX, RETENTION_MIN, RETENTION_MAX, RETENTION_DEFAULT, LIST_DEFAULT, LIST_MAX, FILTER_MAX } from "./limits";

export const RESERVED_PREFIXES = ["bounces+", "bunker-test-"] as const;
const ATEXT = "A-Za-z0-9!#$%&'*+/=?^_`{|}~-";
const DOT_STRING = new RegExp(`^[${ATEXT}]+(\\.[${ATEXT}]+)*$`);

export type { AttachmentInfo };

export interface ReceivedQuery {
  from?: string;
  subject?: string;
  since?: string;
  until?: string;
  unread?: boolean;
  limit?: unknown;
  cursor?: string;
}

/** Validates a local part (RFC 5321 dot-string); returns it as given. */
export function validLocalPart(v: unknown): string {
  if (typeof v !== "string" || v === "") throw invalidField("local_part", "required");
  if (v.length > LOCAL_PART_MAX) throw invalidField("local_part", `at most ${LOCAL_PART_MAX} characters`);
  if (!DOT_STRING.test(v)) throw invalidField("local_part", "an RFC 5321 dot-string: letters, digits and !#$%&'*+/=?^_`{|}~- in atoms separated by single dots");
  const fold = v.toLowerCase();
  if (RESERVED_PREFIXES.some((p) => fold.startsWith(p))) throw invalidField("local_part", `reserved: local parts starting with ${RESERVED_PREFIXES.join(" or ")} are used by Bunker`);
  return v;
}

const likePattern = (q: string) => `%${q.toLowerCase().replace(/[\\%_]/g, (m) => `\\${m}`)}%`;
const badCursor = (reason: string) => badRequest("Malformed cursor", [{ field: "cursor", reason }], "INVALID_CURSOR");

function parseDateParam(v: string | undefined, field: string): string | null {
  if (v === undefined || v === "") return null;
  let ms = NaN;
  if (/^\d{4}-\d{2}-\d{2}$/.test(v)) ms = Date.parse(`${v}T00:00:00.000Z`);
  else if (/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/.test(v)) ms = Date.parse(v);
  if (Number.isNaN(ms)) throw invalidField(field, "a date (YYYY-MM-DD) or an ISO 8601 date-time with a zone");
  return new Date(ms).toISOString();
}

export class MailboxService {
  constructor(
    private readonly m: MailContext,
    private readonly parts: MailParts,
  ) {}

  /** Mail's mail.domain-in-use check (module.ts provides it): a domain with live mailboxes stays. */
  async domainInUse(t: Sql, domain: { id: string }): Promise<string | null> {
    const n = await store.liveMailboxCount(t, domain.id);
    return n ? `${n} mailbox${n === 1 ? "" : "es"} (delete them first)` : null;
  }

  private get domains(): DomainService {
    return this.parts.domains as DomainService;
  }

  private access(p: Principal, workspaceId: string, action: string) {
    return this.m.tenancy.authz.authorizeService(this.m.ctx.db, p, { id: workspaceId.toLowerCase() }, action, this.m.name);
  }

  /** Ids here passed the route schemas (mail/schemas.ts): UUIDs of any case. */
  private async mailbox(db: Sql, workspaceId: string, id: string): Promise<MailboxRow> {
    const r = await store.mailboxInWorkspace(db, workspaceId, id.toLowerCase());
    if (!r) throw notFound("Mailbox");
    return r;
  }

  private async fqdnOf(db: Sql, workspaceId: string, domainId: string): Promise<string> {
    return (await this.domains.domainById(db, workspaceId, domainId))?.fqdn ?? "";
  }

  // ------------------------------------------------------------------ mailboxes

  private retention(v: unknown): number {
    if (typeof v !== "number" || !Number.isInteger(v) || v < RETENTION_MIN || v > RETENTION_MAX) throw invalidField("retention_days", `integer ${RETENTION_MIN}-${RETENTION_MAX}`);
    return v;
  }

  private displayName(v: unknown): string | null {
    if (v === null) return null;
    if (typeof v !== "string") throw invalidField("display_name", "a string or null");
    const s = v.trim();
    if (s.length > DISPLAY_NAME_MAX || /[\r\n\0]/.test(s)) throw invalidField("display_name", `at most ${DISPLAY_NAME_MAX} characters, one line`);
    return s === "" ? null : s;
  }

  async create(
    p: Principal,
    workspaceId: string,
    input: { domain_id?: unknown; local_part?: unknown; display_name?: unknown; retention_days?: unknown },
    meta?: RequestMeta,
  ): Promise<MailboxView> {
    const { workspace: ws } = await this.access(p, workspaceId, "mail.mailbox.write");
    const local = validLocalPart(input.local_part);
    const display = input.display_name === undefined ? null : this.displayName(input.display_name);
    const retention = input.retention_days === undefined ? RETENTION_DEFAULT : this.retention(input.retention_days);
    const domain = await this.domains.domainById(this.m.ctx.db, ws.id, input.domain_id as string);
    if (!domain) throw notFound("Domain");
    if (domain.intent === "send") throw new ApiError(400, "DOMAIN_NOT_RECEIVING", `The domain ${domain.fqdn} has intent send; mailboxes need intent receive or send_receive`, [{ field: "domain_id", reason: "domain does not receive mail" }]);
    const exists = () => conflict(`${local}@${domain.fqdn} already exists`, "MAILBOX_EXISTS");
    const id = uuid();
    const now = this.m.ctx.clock.iso();
    try {
      await tx(this.m.ctx.db, async (t) => {
        if (await store.liveMailboxAt(t, domain.id, local.toLowerCase())) throw exists();
        await store.insertMailbox(t, {
          id,
          workspace_id: ws.id,
          seq: await store.nextSeq(t, ws.id),
          domain_id: domain.id,
          local_part: local,
          local_fold: local.toLowerCase(),
          display_name: display,
          owner_account_id: p.kind === "api_key" ? p.createdBy : p.accountId,
          retention_days: retention,
          status: "active",
          last_message_seq: 0,
          created_at: now,
          updated_at: now,
          deleted_at: null,
        });
        await audit(t, this.m.ctx, { actor: p, action: "mail.mailbox.create", workspaceId: ws.id, target: { type: "mail_mailbox", id }, meta, metadata: { address: `${local}@${domain.fqdn}` } });
      });
    } catch (e) {
      if (isUniqueViolation(e)) throw exists();
      throw e;
    }
    return mailboxView((await store.mailboxInWorkspace(this.m.ctx.db, ws.id, id))!, domain.fqdn);
  }

  async list(p: Principal, workspaceId: string, q: { limit?: unknown; cursor?: string; domain_id?: string; status?: string }): Promise<Page<MailboxView>> {
    const { workspace: ws } = await this.access(p, workspaceId, "mail.mailbox.read");
    const limit = parseLimit(q.limit, LIST_DEFAULT, LIST_MAX);
    let domainId = q.domain_id === undefined ? null : q.domain_id.toLowerCase();
    let status = q.status === undefined || q.status === "" ? null : q.status;
    if (status !== null && !(MAILBOX_STATUSES as readonly string[]).includes(status)) throw invalidField("status", MAILBOX_STATUSES.join(" or "));
    const c = decodeCursor<{ s?: unknown; d?: unknown; st?: unknown }>(q.cursor);
    if (c) {
      if (typeof c.s !== "number") throw badCursor("not a cursor issued by this API");
      if ((domainId !== null && domainId !== c.d) || (status !== null && status !== c.st)) throw badCursor("the cursor belongs to other filters; start again without it");
      domainId = (c.d as string | null) ?? null;
      status = (c.st as string | null) ?? null;
    }
    const rows = await store.listMailboxes(this.m.ctx.db, { workspaceId: ws.id, domainId, status: status as MailboxStatus | null, afterSeq: c ? (c.s as number) : 0, limit: limit + 1 });
    const fqdns = new Map<string, string>();
    for (const r of rows) if (!fqdns.has(r.domain_id)) fqdns.set(r.domain_id, await this.fqdnOf(this.m.ctx.db, ws.id, r.domain_id));
    return buildPage(rows, limit, (r) => ({ s: r.seq, d: domainId, st: status }), (r) => mailboxView(r, fqdns.get(r.domain_id)!));
  }

  async get(p: Principal, workspaceId: string, id: string): Promise<MailboxView> {
    const { workspace: ws } = await this.access(p, workspaceId, "mail.mailbox.read");
    const r = await this.mailbox(this.m.ctx.db, ws.id, id);
    return mailboxView(r, await this.fqdnOf(this.m.ctx.db, ws.id, r.domain_id));
  }

  async update(p: Principal, workspaceId: string, id: string, input: { display_name?: unknown; retention_days?: unknown; status?: unknown }, meta?: RequestMeta): Promise<MailboxView> {
    const { workspace: ws } = await this.access(p, workspaceId, "mail.mailbox.write");
    const patch: store.MailboxPatch = {};
    if (input.display_name !== undefined) patch.display_name = this.displayName(input.display_name);
    if (input.retention_days !== undefined) patch.retention_days = this.retention(input.retention_days);
    if (input.status !== undefined) {
      if (typeof input.status !== "string" || !(MAILBOX_STATUSES as readonly string[]).includes(input.status)) throw invalidField("status", MAILBOX_STATUSES.join(" or "));
      patch.status = input.status as MailboxStatus;
    }
    return tx(this.m.ctx.db, async (t) => {
      const r = await this.mailbox(t, ws.id, id);
      if (Object.keys(patch).length) {
        await store.updateMailbox(t, r.id, patch, this.m.ctx.clock.iso());
        await audit(t, this.m.ctx, { actor: p, action: "mail.mailbox.update", workspaceId: ws.id, target: { type: "mail_mailbox", id: r.id }, meta, metadata: { fields: Object.keys(patch) } });
      }
      return mailboxView((await store.mailboxInWorkspace(t, ws.id, r.id))!, await this.fqdnOf(t, ws.id, r.domain_id));
    });
  }

  /** Soft delete: refuses mail at once; its messages stay until retention purges them (then the row goes). */
  async remove(p: Principal, workspaceId: string, id: string, meta?: RequestMeta): Promise<void> {
    const { workspace: ws } = await this.access(p, workspaceId, "mail.mailbox.write");
    await tx(this.m.ctx.db, async (t) => {
      const r = await this.mailbox(t, ws.id, id);
      const now = this.m.ctx.clock.iso();
      await store.updateMailbox(t, r.id, { deleted_at: now }, now);
      await audit(t, this.m.ctx, { actor: p, action: "mail.mailbox.delete", workspaceId: ws.id, target: { type: "mail_mailbox", id: r.id }, meta, metadata: {} });
    });
  }

  // ------------------------------------------------------------------ received messages

  async listMessages(p: Principal, workspaceId: string, mailboxId: string, q: ReceivedQuery): Promise<Page<ReceivedSummaryView>> {
    const access = await this.access(p, workspaceId, "mail.mailbox.read");
    const box = await this.mailbox(this.m.ctx.db, access.workspace.id, mailboxId);
    const withBody = isAllowedByAll(access.policies, "mail.message.body.read", `workspace/${access.workspace.id}`);
    const limit = parseLimit(q.limit, LIST_DEFAULT, LIST_MAX);
    type F = { from: string | null; subject: string | null; since: string | null; until: string | null; unread: boolean | null };
    const parse = (x: ReceivedQuery): F => {
      const details: { field: string; reason: string }[] = [];
      const opt = (v: string | undefined, field: string) => {
        if (v === undefined || v === "") return null;
        if (Array.from(v).length > FILTER_MAX) details.push({ field, reason: `at most ${FILTER_MAX} characters` });
        return v;
      };
      const from = opt(x.from, "from");
      const subject = opt(x.subject, "subject");
      const unread: boolean | null = x.unread ?? null;
      if (details.length) throw badRequest("Invalid message filters", details);
      const since = parseDateParam(x.since, "since");
      const until = parseDateParam(x.until, "until");
      if (since !== null && until !== null && until <= since) throw invalidField("until", "must be after since");
      return { from, subject, since, until, unread };
    };
    let f = parse(q);
    const c = decodeCursor<{ r?: unknown; id?: unknown; f?: unknown }>(q.cursor);
    if (c) {
      const cf = c.f as F | undefined;
      if (typeof c.r !== "string" || typeof c.id !== "string" || !cf || typeof cf !== "object") throw badCursor("not a cursor issued by this API");
      for (const k of ["from", "subject", "since", "until", "unread"] as const) {
        if (f[k] !== null && f[k] !== cf[k]) throw badCursor("the cursor belongs to other filters; start again without it");
      }
      f = { from: cf.from ?? null, subject: cf.subject ?? null, since: cf.since ?? null, until: cf.until ?? null, unread: cf.unread ?? null };
    }
    const rows = await store.listReceived(this.m.ctx.db, {
      mailboxId: box.id,
      fromPattern: f.from === null ? null : likePattern(f.from),
      subjectPattern: f.subject === null ? null : likePattern(f.subject),
      since: f.since,
      until: f.until,
      unread: f.unread,
      before: c ? { received_at: c.r as string, id: c.id as string } : null,
      limit: limit + 1,
    });
    return buildPage(rows, limit, (r) => ({ r: r.received_at, id: r.id, f }), (r) => receivedSummaryView(r, withBody));
  }

  private async message(p: Principal, workspaceId: string, mailboxId: string, id: string, action: string) {
    const access = await this.access(p, workspaceId, action);
    const box = await this.mailbox(this.m.ctx.db, access.workspace.id, mailboxId);
    const r = await store.receivedInMailbox(this.m.ctx.db, box.id, id.toLowerCase());
    if (!r) throw notFound("Message");
    return { access, box, r };
  }

  async getMessage(p: Principal, workspaceId: string, mailboxId: string, id: string): Promise<ReceivedView> {
    const { access, r } = await this.message(p, workspaceId, mailboxId, id, "mail.mailbox.read");
    return receivedView(r, isAllowedByAll(access.policies, "mail.message.body.read", `workspace/${access.workspace.id}`));
  }

  async deleteMessage(p: Principal, workspaceId: string, mailboxId: string, id: string): Promise<void> {
    const { r } = await this.message(p, workspaceId, mailboxId, id, "mail.message.delete");
    await store.softDeleteReceived(this.m.ctx.db, r.id, this.m.ctx.clock.iso());
  }

  async markRead(p: Principal, workspaceId: string, mailboxId: string, id: string): Promise<void> {
    const { r } = await this.message(p, workspaceId, mailboxId, id, "mail.mailbox.read");
    await store.markRead(this.m.ctx.db, r.id, this.m.ctx.clock.iso());
  }

  /** The stored .eml (body access). */
  async raw(p: Principal, workspaceId: string, mailboxId: string, id: string): Promise<{ row: ReceivedRow; data: Uint8Array }> {
    await this.access(p, workspaceId, "mail.message.body.read");
    const { r } = await this.message(p, workspaceId, mailboxId, id, "mail.mailbox.read");
    const o = await this.m.ctx.objects.get(r.raw_object_key);
    if (!o) throw new ApiError(410, "GONE", "The raw message is no longer stored");
    return { row: r, data: o.data };
  }

  /** One attachment of a stored message, read back from the .eml (body access). */
  async attachment(p: Principal, workspaceId: string, mailboxId: string, id: string, position: string): Promise<{ filename: string | null; contentType: string; data: Uint8Array }> {
    const pos = Number(position);
    const { row, data } = await this.raw(p, workspaceId, mailboxId, id);
    const manifest = JSON.parse(row.attachments) as AttachmentInfo[];
    const info = manifest.find((a) => a.position === pos);
    if (!info) throw notFound("Attachment");
    const parsed = await parseMail(data);
    const a = parsed.attachments[pos];
    if (!a || a.sha256 !== info.sha256) throw new ApiError(410, "GONE", "The attachment could not be read back from the stored message");
    return { filename: info.filename, contentType: info.content_type, data: new Uint8Array(a.content) };
  }
}

/** A Content-Disposition attachment header with an ASCII fallback and the RFC 5987 UTF-8 name. */
export function contentDisposition(filename: string | null, fallback: string): string {
  const name = (filename ?? "").replace(/[\r\n\0]/g, "").replace(/[\\/]/g, "_").trim() || fallback;
  const ascii = name.replace(/[^\x20-\x7e]/g, "_").replace(/["\\;%]/g, "_").slice(0, 150);
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(name).slice(0, 600)}`;
}
