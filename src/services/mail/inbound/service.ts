/**
 * The mail service as the MX (issue 14): the InboundHandler the SMTP listener calls.
 *
 * RCPT TO is accepted for (1) an active mailbox on an active receiving domain (exact local
 * part, case-insensitive; "local+tag" reaches "local" when no mailbox has the whole local
 * part), (2) a domain's test_address, (3) a VERP bounce address bounces+<message id>@<fqdn>
 * of a message sent from a domain of that name. Everything else: 550 5.1.1 (no relaying).
 *
 * deliver(): one SMTP message may reach several of them. Mailbox copies: the raw message is
 * written to the object store (one object per workspace) while a worker thread (checks.ts)
 * parses it (mailparser) and authenticates it (mailauth: SPF for the client IP and MAIL
 * FROM, DKIM, DMARC); it is scored by the spam rules (spam.ts), and every copy plus its
 * email.received event is written in one
 * transaction; the SMTP reply waits for the commit (a failure answers 451: the sender
 * retries, nothing is half-stored). Test addresses set the domain's test_received_at in the
 * same transaction. VERP addresses: the message is read as a bounce or complaint report
 * (reports.ts) and applied to the outbound message.
 */
import { domainToASCII } from "node:url";
import type { Principal } from "../../../access/principal";
import type { Sql } from "../../../core/db";
import { badRequest, invalidField } from "../../../core/errors";
import { buildPage, decodeCursor, parseLimit } from "../../../core/pagination";
import { tx } from "../../../core/db";
import { DAY } from "../../../core/clock";
import { isUuid, uuid } from "../../../core/ids";
import type { InboundHandler, InboundMessage } from "../../../core/smtp-listener";
import type { DomainService } from "../domains/service";
import * as mailboxes from "../mailboxes";
import type { MessageService } from "../messages";
import type { MailParts } from "../part";
import { mailSettings } from "../settings";
import { DNS_CACHE_MS, mailauthResolver } from "./auth";
import { CheckPool } from "./checks";
import { examine, type Examined } from "./examine";
import { parseMail, splitAddress } from "../parse";
import type { ReportOutcome } from "./reports";
import type { AuthResults } from "./spam";
import * as store from "./store";
import type { MailContext } from "../part-context";

export const PURGE_JOB = "mail.inbound.retention";
/** Bounce/complaint report rows (and their raw messages) are kept this long. */
export const REPORT_RETENTION_DAYS = 90;
const PURGE_BATCH = 500;
export const REPORT_KINDS = ["dsn", "arf", "unparsed"] as const;

type Target =
  | { kind: "mailbox"; address: string; boxes: mailboxes.MailboxTarget[] }
  | { kind: "test"; address: string; domains: { id: string; workspace_id: string }[] }
  | { kind: "verp"; address: string; message: { id: string; workspace_id: string } };

export class InboundService {
  private readonly checks: CheckPool;

  constructor(
    private readonly m: MailContext,
    private readonly parts: MailParts,
  ) {
    const resolver = mailauthResolver(mailSettings(m).dnsServers, 3000, DNS_CACHE_MS, () => m.ctx.clock.nowMs());
    this.checks = new CheckPool(resolver, m.ctx.log, mailSettings(m).inboundThreads);
  }

  /** Ends the check workers (the module stops). */
  async stop(): Promise<void> {
    this.checks.stop();
  }

  private get domains(): DomainService {
    return this.parts.domains as DomainService;
  }

  private get messages(): MessageService {
    return this.parts.messages as MessageService;
  }

  /** What the SMTP listener calls. */
  handler(): InboundHandler {
    return {
      acceptsRecipient: async (address) => (await this.classify(address)) !== null,
      deliver: (msg) => this.deliver(msg),
    };
  }

  /** The target of one RCPT TO address, or null (550). */
  async classify(address: string): Promise<Target | null> {
    const at = address.lastIndexOf("@");
    if (at < 1 || at === address.length - 1 || address.length > 320) return null;
    const local = address.slice(0, at).toLowerCase();
    // Domains are stored in ASCII (IDNA A-labels): an SMTPUTF8 client may name them in Unicode.
    const domain = address.slice(at + 1).replace(/\.$/, "");
    const fqdn = (/^[\x00-\x7f]*$/.test(domain) ? domain : domainToASCII(domain)).toLowerCase();
    if (!fqdn) return null;
    const db = this.m.ctx.db;
    if (local.startsWith("bounces+")) {
      const id = local.slice("bounces+".length);
      if (!isUuid(id)) return null;
      const m = await store.verpMessage(db, id, fqdn);
      return m ? { kind: "verp", address, message: m } : null;
    }
    if (local.startsWith("bunker-test-")) {
      const domains = await mailboxes.testAddressDomains(db, fqdn, local.slice("bunker-test-".length));
      return domains.length ? { kind: "test", address, domains } : null;
    }
    let boxes = await mailboxes.mailboxTargets(db, fqdn, local);
    const plus = local.indexOf("+");
    if (!boxes.length && plus > 0) boxes = await mailboxes.mailboxTargets(db, fqdn, local.slice(0, plus));
    return boxes.length ? { kind: "mailbox", address, boxes } : null;
  }

  async deliver(msg: InboundMessage): Promise<void> {
    const targets: Target[] = [];
    for (const a of msg.to) {
      const t = await this.classify(a);
      if (t) targets.push(t);
    }
    // A mailbox reached by two RCPT addresses gets one copy (the first address).
    const boxes = new Map<string, { box: mailboxes.MailboxTarget; envelopeTo: string }>();
    const tests = new Map<string, { id: string; workspace_id: string }>();
    const verps = new Map<string, { id: string; workspace_id: string }>();
    for (const t of targets) {
      if (t.kind === "mailbox") for (const b of t.boxes) if (!boxes.has(b.id)) boxes.set(b.id, { box: b, envelopeTo: t.address });
      if (t.kind === "test") for (const d of t.domains) tests.set(d.id, d);
      if (t.kind === "verp") verps.set(t.message.id, t.message);
    }
    if (!boxes.size && !tests.size && !verps.size) return; // every recipient went away since RCPT
    // Only mailbox copies record SPF, DKIM and DMARC; test addresses need the parse, VERP addresses the report.
    const auth = boxes.size ? { ip: msg.remoteAddress, helo: msg.helo ?? "", sender: msg.from, mta: this.m.ctx.config.mailHostname } : null;
    const checked = this.checks.check(msg.raw, { auth, nowMs: this.m.ctx.clock.nowMs(), report: verps.size > 0 });
    if (boxes.size || tests.size) await this.store(msg, checked, [...boxes.values()], [...tests.values()]);
    const { report } = await checked;
    for (const m of verps.values()) await this.report(msg, report!, m);
  }

  private rawKey(workspaceId: string, id: string) {
    const day = this.m.ctx.clock.iso().slice(0, 10).replace(/-/g, "/");
    return `mail/inbound/${workspaceId}/${day}/${id}.eml`;
  }

  /**
   * A message this instance writes itself (the sandbox domain's, ../sandbox/) for `msg.to[0]`:
   * when that is an active mailbox here, the message is built (`build`, only then) and stored
   * like one received over SMTP (parsed, spam rules, email.received) with `auth` as its
   * authentication results (it never crossed a network: there is nothing to look up), and
   * `within` runs in the storing transaction. False (nothing built or stored) when the address
   * is no mailbox of this instance.
   */
  async deliverLocal(envelope: Omit<InboundMessage, "raw">, build: () => Promise<Uint8Array>, auth: AuthResults, within: (t: Sql) => Promise<void>): Promise<boolean> {
    const target = await this.classify(envelope.to[0] ?? "");
    if (target?.kind !== "mailbox") return false;
    const msg: InboundMessage = { ...envelope, raw: await build() };
    const nowMs = this.m.ctx.clock.nowMs();
    const checked = parseMail(msg.raw).then((parsed) => examine(parsed, auth, nowMs, false));
    await this.store(msg, checked, target.boxes.map((box) => ({ box, envelopeTo: target.address })), [], within);
    return true;
  }

  /** `checked`: the message examined, authenticated when boxes is not empty (deliver asks for it then). */
  private async store(
    msg: InboundMessage,
    checked: Promise<Examined>,
    boxes: { box: mailboxes.MailboxTarget; envelopeTo: string }[],
    tests: { id: string }[],
    within?: (t: Sql) => Promise<void>,
  ) {
    const nowMs = this.m.ctx.clock.nowMs();
    const now = this.m.ctx.clock.iso();
    const keys = new Map<string, string>();
    for (const { box } of boxes) if (!keys.has(box.workspace_id)) keys.set(box.workspace_id, this.rawKey(box.workspace_id, uuid()));
    // The object writes overlap the parse and the checks (a worker thread, DNS round trips).
    const writes = Promise.allSettled([...keys.values()].map((k) => this.m.ctx.objects.put(k, msg.raw, "message/rfc822")));
    const mail = await checked.catch(async (e: unknown) => {
      await writes;
      await this.dropObjects(keys);
      throw e;
    });
    const failed = (await writes).find((r): r is PromiseRejectedResult => r.status === "rejected");
    if (failed) {
      await this.dropObjects(keys);
      throw failed.reason;
    }
    const { auth, spam } = mail;
    const from = splitAddress(mail.fromAddress);
    try {
      await tx(this.m.ctx.db, async (t) => {
        for (const { box, envelopeTo } of boxes) {
          const id = uuid();
          const row: mailboxes.ReceivedRow = {
            id,
            workspace_id: box.workspace_id,
            mailbox_id: box.id,
            seq: await mailboxes.nextMessageSeq(t, box.id),
            raw_object_key: keys.get(box.workspace_id)!,
            envelope_from: msg.from,
            envelope_to: envelopeTo,
            from_address: mail.fromAddress,
            from_local: from.local,
            from_domain: from.domain,
            from_fold: `${mail.fromName} <${mail.fromAddress}>`.toLowerCase(),
            to_addresses: JSON.stringify(mail.to),
            cc_addresses: JSON.stringify(mail.cc),
            subject: mail.subject,
            subject_fold: mail.subject.toLowerCase(),
            body_preview: mail.preview,
            rfc822_message_id: mail.messageId,
            size_bytes: msg.raw.byteLength,
            spam_score: spam.score,
            spam_verdict: spam.verdict,
            spam_rules: JSON.stringify(spam.rules),
            spf_result: auth.spf,
            dkim_result: auth.dkim,
            dmarc_result: auth.dmarc,
            quarantined: spam.quarantined ? 1 : 0,
            attachments: JSON.stringify(mail.attachments),
            received_at: now,
            received_ms: nowMs,
            read_at: null,
            deleted_at: null,
          };
          await mailboxes.insertReceived(t, row);
          await this.m.emit(t, box.workspace_id, "email.received", {
            mailbox_id: box.id,
            message_id: id,
            seq_id: String(row.seq),
            envelope_to: envelopeTo,
            from_address: mail.fromAddress,
            subject: mail.subject,
            spam_verdict: spam.verdict,
            quarantined: spam.quarantined,
            received_at: now,
          });
        }
        for (const d of tests) await this.domains.markTestReceived(t, d.id);
        await within?.(t);
      });
    } catch (e) {
      await this.dropObjects(keys);
      throw e;
    }
  }

  /** The raw objects of a message that was not stored after all. */
  private async dropObjects(keys: Map<string, string>) {
    for (const k of keys.values()) await this.m.ctx.objects.delete(k).catch(() => {});
  }

  /** A report at a VERP address: applied to the outbound message; kept in the report log either way. */
  private async report(msg: InboundMessage, out: ReportOutcome, m: { id: string; workspace_id: string }) {
    let applied = false;
    const reply = { code: out.statusCode, detail: out.detail };
    if (out.kind === "arf") applied = !!(await this.messages.markComplained(m.id));
    else if (out.kind === "dsn") {
      if (out.action === "failed") applied = !!(await this.messages.markBounced(m.id, null, reply));
      else if (out.action === "delayed") applied = !!(await this.messages.markDelayedByReport(m.id, reply));
      else if (out.action === "delivered") applied = !!(await this.messages.markDelivered(m.id));
    }
    // Unparsed reports keep their raw message for a look by hand.
    let key: string | null = null;
    if (out.kind === "unparsed") {
      key = `mail/reports/${m.workspace_id}/${uuid()}.eml`;
      await this.m.ctx.objects.put(key, msg.raw, "message/rfc822");
    }
    const now = this.m.ctx.clock.iso();
    await store.insertReport(this.m.ctx.db, {
      id: uuid(),
      workspace_id: m.workspace_id,
      message_id: m.id,
      kind: out.kind,
      action: out.action,
      status_code: out.statusCode,
      detail: out.detail,
      applied: applied ? 1 : 0,
      raw_object_key: key,
      received_at: now,
      received_ms: this.m.ctx.clock.nowMs(),
    });
    this.m.ctx.log.info("mail report received", { message_id: m.id, kind: out.kind, action: out.action, status: out.statusCode, applied });
  }

  // ------------------------------------------------------------------ the report log

  /** GET /inbound-reports: bounce and complaint reports newest first, with counts of the last 30 days. */
  async listReports(p: Principal, workspaceId: string, q: { kind?: string; limit?: unknown; cursor?: string }) {
    const workspace = await this.m.guard(p, workspaceId, "mail.message.read");
    const limit = parseLimit(q.limit, 20, 100);
    let kind = q.kind === undefined || q.kind === "" ? null : q.kind;
    if (kind !== null && !REPORT_KINDS.includes(kind as never)) throw invalidField("kind", REPORT_KINDS.join(", "));
    const c = decodeCursor<{ m?: unknown; id?: unknown; k?: unknown }>(q.cursor);
    if (c) {
      if (typeof c.m !== "number" || typeof c.id !== "string") throw badRequest("Malformed cursor", [{ field: "cursor", reason: "not a cursor issued by this API" }], "INVALID_CURSOR");
      if (kind !== null && kind !== c.k) throw badRequest("Malformed cursor", [{ field: "cursor", reason: "the cursor belongs to another kind filter" }], "INVALID_CURSOR");
      kind = (c.k as string | null) ?? null;
    }
    const rows = await store.listReports(this.m.ctx.db, { workspaceId: workspace.id, kind, before: c ? { received_ms: c.m as number, id: c.id as string } : null, limit: limit + 1 });
    const page = buildPage(rows, limit, (r) => ({ m: r.received_ms, id: r.id, k: kind }), (r) => ({
      id: r.id,
      message_id: r.message_id,
      kind: r.kind,
      action: r.action,
      status_code: r.status_code,
      detail: r.detail,
      applied: r.applied === 1,
      received_at: r.received_at,
    }));
    const counts = { window_days: 30, dsn: 0, arf: 0, unparsed: 0, applied: 0 };
    for (const r of await store.reportCounts(this.m.ctx.db, workspace.id, this.m.ctx.clock.nowMs() - 30 * DAY)) {
      counts[r.kind as "dsn" | "arf" | "unparsed"] += r.n;
      if (r.applied) counts.applied += r.n;
    }
    return { ...page, counts };
  }

  // ------------------------------------------------------------------ retention

  /**
   * The daily purge: received messages older than their mailbox's retention_days (rows,
   * then objects no row refers to any more), soft-deleted mailboxes left empty once their
   * retention has passed since the deletion, and report rows older than 90 days. Returns
   * the number of messages purged.
   */
  async purge(): Promise<number> {
    const nowMs = this.m.ctx.clock.nowMs();
    let total = 0;
    for (;;) {
      const doomed = await mailboxes.purgeCandidates(this.m.ctx.db, nowMs, PURGE_BATCH);
      if (!doomed.length) break;
      const orphans = await tx(this.m.ctx.db, async (t: Sql) => {
        await mailboxes.deleteReceived(t, doomed.map((r) => r.id));
        return mailboxes.unreferencedKeys(t, doomed.map((r) => r.raw_object_key));
      });
      for (const k of orphans) await this.m.ctx.objects.delete(k).catch((e) => this.m.ctx.log.warn("received message object not deleted", { key: k, error: String(e) }));
      total += doomed.length;
      if (doomed.length < PURGE_BATCH) break;
    }
    await mailboxes.deleteEmptyDeletedMailboxes(this.m.ctx.db, nowMs);
    const old = await store.oldReports(this.m.ctx.db, nowMs - REPORT_RETENTION_DAYS * DAY, PURGE_BATCH);
    if (old.length) {
      await store.deleteReports(this.m.ctx.db, old.map((r) => r.id));
      for (const r of old) if (r.raw_object_key) await this.m.ctx.objects.delete(r.raw_object_key).catch(() => {});
    }
    return total;
  }

  /** Inside the workspace-deleting transaction: its rows go by foreign key, its objects after the commit. */
  async dropWorkspaceObjects(t: Sql, workspaceId: string): Promise<void> {
    const keys = await mailboxes.objectKeysOfWorkspace(t, workspaceId);
    if (!keys.length) return;
    t.afterCommit(async () => {
      for (const k of keys) await this.m.ctx.objects.delete(k).catch(() => {});
    });
  }
}
