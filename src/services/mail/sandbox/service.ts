/**
 * The sandbox sending domain and the dev outbox: mail a newcomer can try on a fresh instance
 * without a DNS server of their own (like Mailgun's and Resend's sandbox domains). For trying
 * Bunker out, not for production.
 *
 * - POST /domains/sandbox gives the workspace its one sandbox domain: 201 the first time, 200
 *   with the same domain afterwards. Named <6 hex>.sandbox.<MAIL_HOSTNAME> (with the default
 *   MAIL_HOSTNAME, e.g. 3fa9c2.sandbox.localhost: never resolvable on the internet), intent
 *   send_receive, active from the start, no DNS records and never checked. No other domain
 *   may take a name under sandbox.<MAIL_HOSTNAME>. It is deleted like any domain.
 * - Sending from it goes through the ordinary send routes (rendering, suppressions, rate
 *   limit, recipient limits). The delivery worker (sending/) hands its messages here instead
 *   of to SMTP: a recipient that is an active mailbox of this instance gets the DKIM-signed
 *   message through the inbound path (parsed, spam rules, stored, email.received); any other
 *   recipient's message is caught in the workspace's dev outbox. Nothing is relayed out.
 *   The message log shows both as delivered, with sandbox: true and delivered_to mailbox or
 *   outbox; the copy and that outcome are written in one transaction.
 * - The outbox keeps the newest 1,000 messages per workspace (older ones go as new ones
 *   arrive); a captured message goes with its message (right to be forgotten) and its
 *   workspace. Bodies are not kept when the workspace redacts message bodies.
 */
import type { RequestMeta } from "../../../access/http";
import { isAllowedByAll } from "../../../access/policy";
import type { Principal } from "../../../access/principal";
import { tx, type Sql } from "../../../core/db";
import { notFound } from "../../../core/errors";
import { randomHex, uuid } from "../../../core/ids";
import { buildPage, decodeCursor, parseLimit, type Page } from "../../../core/pagination";
import { isUniqueViolation } from "../../../core/store/sql";
import type { MailContext } from "../part-context";
import type { DomainService, DomainView } from "../domains/service";
import type { InboundService } from "../inbound/service";
import type { AuthResults } from "../inbound/spam";
import { badCursor, type MessageRow, type MessageService } from "../messages";
import { compose, type DkimKey, type OutboundMail } from "../sending/smtp-delivery";
import type { SandboxDelivery } from "../sending/service";
import * as store from "./store";

/** Captured messages kept per workspace (the newest). */
export const OUTBOX_KEEP = 1000;
export const OUTBOX_LIST_DEFAULT = 20;
export const OUTBOX_LIST_MAX = 100;
/** Tries at a free random name before giving up (6 hex digits: a clash is already rare). */
const NAME_TRIES = 5;
/** A sandbox message never crossed a network: no SPF, DKIM or DMARC check applies to it. */
const LOCAL_AUTH: AuthResults = { spf: "none", dkim: "none", dmarc: "none", dmarcPolicy: null };

export interface OutboxItem {
  id: string;
  message_id: string;
  domain_id: string | null;
  from: string;
  to: string;
  subject: string;
  created_at: string;
}

export interface OutboxMessage extends OutboxItem {
  headers: Record<string, string>;
  html: string | null;
  text: string | null;
  /** The workspace redacts message bodies: none were kept. */
  redacted: boolean;
  /** The caller may read bodies (mail.message.body.read); html and text are null otherwise. */
  body_visible: boolean;
}

/** The worker lost its claim on the message while delivering it: the copy is rolled back. */
class ClaimLost extends Error {}
/** The workspace got its sandbox domain meanwhile, or another workspace's has the name drawn. */
class NameTaken extends Error {}

export class SandboxService implements SandboxDelivery {
  constructor(
    private readonly m: MailContext,
    private readonly domains: DomainService,
    private readonly messages: MessageService,
    private readonly inbound: InboundService,
  ) {}

  // ------------------------------------------------------------------ the sandbox domain

  /** POST /domains/sandbox: the workspace's sandbox domain, created when it has none. */
  async createDomain(p: Principal, workspaceId: string, meta?: RequestMeta): Promise<{ created: boolean; domain: DomainView }> {
    const ws = await this.m.guard(p, workspaceId, "mail.domain.write");
    const existing = await this.domains.sandboxOf(this.m.ctx.db, ws.id);
    if (existing) return { created: false, domain: existing };
    for (let i = 0; i < NAME_TRIES; i++) {
      const fqdn = `${randomHex(3)}.sandbox.${this.m.ctx.config.mailHostname.toLowerCase()}`;
      try {
        await this.domains.insert(p, ws.id, { fqdn, intent: "send_receive", sandbox: true }, meta, async (t) => {
          if ((await this.domains.sandboxOf(t, ws.id)) || (await this.domains.sandboxNameTaken(t, fqdn))) throw new NameTaken();
        });
        this.m.ctx.log.warn("mail sandbox domain created: for trying Bunker out, not for production (its mail never leaves this instance)", { workspace_id: ws.id, fqdn });
        return { created: true, domain: (await this.domains.sandboxOf(this.m.ctx.db, ws.id))! };
      } catch (e) {
        if (!(e instanceof NameTaken) && !isUniqueViolation(e)) throw e;
      }
      // Another request gave the workspace its sandbox meanwhile: that one (else the name was taken: another name).
      const made = await this.domains.sandboxOf(this.m.ctx.db, ws.id);
      if (made) return { created: false, domain: made };
    }
    throw new Error("no free sandbox domain name after several tries");
  }

  // ------------------------------------------------------------------ delivery (the worker's)

  /**
   * Delivers a claimed message of the sandbox domain on this instance (see the module
   * comment): into a mailbox here, or into the dev outbox. Never a network hop.
   */
  async deliver(owner: string, m: MessageRow, mail: OutboundMail, dkim: DkimKey): Promise<void> {
    const ids = { envelopeFrom: mail.envelopeFrom, rfc822MessageId: `<${m.id}@${dkim.domainName}>` };
    const mark = async (t: Sql, to: "mailbox" | "outbox") => {
      if (!(await this.messages.markSandboxDelivered(t, m.id, owner, to, ids))) throw new ClaimLost();
    };
    try {
      const envelope = { from: mail.envelopeFrom, to: [mail.to], remoteAddress: "127.0.0.1", helo: this.m.ctx.config.mailHostname };
      if (await this.inbound.deliverLocal(envelope, () => compose(mail, dkim), LOCAL_AUTH, (t) => mark(t, "mailbox"))) return;
      const redact = await this.messages.redactsBodies(this.m.ctx.db, m.workspace_id);
      await tx(this.m.ctx.db, async (t) => {
        await store.insertOutbox(t, {
          id: uuid(),
          workspace_id: m.workspace_id,
          message_id: m.id,
          domain_id: m.domain_id,
          from_address: mail.from,
          to_address: mail.to,
          subject: mail.subject,
          headers: mail.headers && Object.keys(mail.headers).length ? JSON.stringify(mail.headers) : null,
          html: redact ? null : mail.html,
          text: redact ? null : mail.text,
          created_at: this.m.ctx.clock.iso(),
        });
        await store.pruneOutbox(t, m.workspace_id, OUTBOX_KEEP);
        await mark(t, "outbox");
      });
    } catch (e) {
      // Another worker holds the message now: it delivers it (this copy was rolled back).
      if (e instanceof ClaimLost) return;
      throw e;
    }
  }

  // ------------------------------------------------------------------ the dev outbox

  /** GET /outbox: captured messages, newest first. */
  async list(p: Principal, workspaceId: string, q: { limit?: unknown; cursor?: string }): Promise<Page<OutboxItem>> {
    const ws = await this.m.guard(p, workspaceId, "mail.message.read");
    const limit = parseLimit(q.limit, OUTBOX_LIST_DEFAULT, OUTBOX_LIST_MAX);
    const c = decodeCursor<{ c?: unknown; id?: unknown }>(q.cursor);
    if (c && (typeof c.c !== "string" || typeof c.id !== "string")) throw badCursor("not a cursor issued by this API");
    const rows = await store.listOutbox(this.m.ctx.db, ws.id, c ? { created_at: c.c as string, id: c.id as string } : null, limit + 1);
    return buildPage(rows, limit, (r) => ({ c: r.created_at, id: r.id }), (r) => itemView(r));
  }

  /** GET /outbox/{id}: one captured message; its bodies only for callers who may read bodies. */
  async get(p: Principal, workspaceId: string, id: string): Promise<OutboxMessage> {
    const access = await this.m.tenancy.authz.authorizeService(this.m.ctx.db, p, { id: workspaceId.toLowerCase() }, "mail.message.read", this.m.name);
    const r = await store.outboxInWorkspace(this.m.ctx.db, access.workspace.id, id.toLowerCase());
    if (!r) throw notFound("Outbox message");
    const visible = isAllowedByAll(access.policies, "mail.message.body.read", `workspace/${access.workspace.id}`);
    return {
      ...itemView(r),
      headers: r.headers ? (JSON.parse(r.headers) as Record<string, string>) : {},
      html: visible ? r.html : null,
      text: visible ? r.text : null,
      redacted: r.html === null && r.text === null,
      body_visible: visible,
    };
  }
}

const itemView = (r: store.OutboxRow): OutboxItem => ({
  id: r.id,
  message_id: r.message_id,
  domain_id: r.domain_id,
  from: r.from_address,
  to: r.to_address,
  subject: r.subject,
  created_at: r.created_at,
});
