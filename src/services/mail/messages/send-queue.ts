/**
 * The message log is also the send pipeline's queue (used by the send routes and the
 * delivery worker):
 * - queue(): one row per recipient, status queued, due now; the body ({html, text}) goes to
 *   the object store unless the workspace redacts bodies (then it is never written).
 * - claim(): due queued/deferred messages (and sending ones whose lease ran out) become
 *   sending under a lease with an owner token; every later mark (outcomes.ts) must present
 *   that token, so a worker that lost its lease cannot overwrite a newer outcome
 *   (at-least-once). The token is `<node>/<process>/<claim>` (core/node-id.ts).
 * - reclaimInterrupted(): at a node's start, the claims its previous process held when it
 *   died become due at once (not after the lease).
 * - markHandover(): the worker records that it starts handing a message over before the
 *   SMTP conversation; a message claimed again with that mark set may have been accepted
 *   already. It is sent again (at-least-once) with the same Message-ID, so receivers can
 *   tell, and counted (bunker_mail_resent_after_handover_total).
 */
import { randomBytes } from "node:crypto";
import { MINUTE } from "../../../core/clock";
import { tx, type Sql } from "../../../core/db";
import { uuid } from "../../../core/ids";
import { nodeOf } from "../../../core/node-id";
import { bodyKey } from "./bodies";
import type { MailContext } from "../part-context";
import * as store from "./store";
import type { MessageRow } from "./store";
import { foldEmail } from "./views";

export const DEFAULT_LEASE_MS = 5 * MINUTE;

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
  /** From the sandbox domain: delivered on this instance, never relayed. */
  sandbox?: boolean;
}

export interface Claim {
  /** Present it to every mark of these messages. */
  owner: string;
  messages: MessageRow[];
}

export class SendQueue {
  constructor(private readonly m: MailContext) {}

  /**
   * Queues messages (one per input) in one transaction: status queued, due now. Bodies go to
   * the object store first (unless the workspace redacts bodies); a failed insert removes
   * them again. `within` runs in the same transaction (e.g. the send's own bookkeeping).
   */
  async queue(workspaceId: string, inputs: QueueInput[], within?: (t: Sql, rows: MessageRow[]) => Promise<void>): Promise<MessageRow[]> {
    const redact = await store.redactBodies(this.m.ctx.db, workspaceId);
    const now = this.m.ctx.clock.iso();
    const nowMs = this.m.ctx.clock.nowMs();
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
        sandbox: i.sandbox ? 1 : 0,
      };
    });
    const written: string[] = [];
    try {
      for (const [k, r] of rows.entries()) {
        if (!r.body_key) continue;
        await this.m.ctx.objects.put(r.body_key, JSON.stringify({ html: inputs[k]!.html ?? null, text: inputs[k]!.text ?? null }), "application/json");
        written.push(r.body_key);
      }
      return await tx(this.m.ctx.db, async (t) => {
        for (const r of rows) await store.insertMessage(t, r);
        const out: MessageRow[] = [];
        for (const r of rows) out.push((await store.messageById(t, r.id))!);
        await within?.(t, out);
        return out;
      });
    } catch (e) {
      for (const k of written) await this.m.ctx.objects.delete(k).catch(() => {});
      throw e;
    }
  }

  /** Claims up to `limit` due messages for `leaseMs` (they become sending). */
  async claim(limit = 50, leaseMs = DEFAULT_LEASE_MS): Promise<Claim> {
    const owner = `${nodeOf(this.m.ctx).owner}/${randomBytes(6).toString("hex")}`;
    const now = this.m.ctx.clock.nowMs();
    const messages = await tx(this.m.ctx.db, (t) => store.claimDue(t, now, now + leaseMs, owner, limit));
    for (const m of messages) {
      if (m.handover_ms === null) continue;
      this.m.ctx.metrics.count("bunker_mail_resent_after_handover_total", "Messages sent again after a worker stopped while handing them over (possible duplicates, same Message-ID).", {});
      this.m.ctx.log.warn("mail message sent again after an interrupted hand-over (possible duplicate)", { message_id: m.id, handover_at: new Date(Number(m.handover_ms)).toISOString() });
    }
    return { owner, messages };
  }

  /** Makes the claims this node's previous process held when it stopped due now; how many. */
  async reclaimInterrupted(): Promise<number> {
    const n = await store.reclaimInterrupted(this.m.ctx.db, nodeOf(this.m.ctx).patterns, this.m.ctx.clock.nowMs());
    if (n) this.m.ctx.log.info("mail messages interrupted by a stop are due again", { count: n, node: nodeOf(this.m.ctx).id });
    return n;
  }

  /** See the module comment; false when the claim was lost (do not send). */
  markHandover(id: string, owner: string): Promise<boolean> {
    return store.markHandover(this.m.ctx.db, id, owner, this.m.ctx.clock.nowMs());
  }

  /** Keeps a long delivery's claim; false when it was lost (stop: another worker has the message). */
  extendLease(id: string, owner: string, leaseMs = DEFAULT_LEASE_MS): Promise<boolean> {
    return store.extendLease(this.m.ctx.db, id, owner, this.m.ctx.clock.nowMs() + leaseMs);
  }
}
