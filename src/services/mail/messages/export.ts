/**
 * The CSV export of the message log: the list's filters, every matching message newest
 * first, streamed page by page. One running export per workspace (a lease row, released when
 * the stream ends or the client goes away) and 5 per sliding hour: 429 EXPORT_LIMIT with
 * Retry-After.
 */
import { randomBytes } from "node:crypto";
import type { Principal } from "../../../access/principal";
import { HOUR, MINUTE } from "../../../core/clock";
import { ApiError } from "../../../core/errors";
import type { MailContext } from "../part-context";
import { csvRow } from "./csv";
import { filterOf, parseFilters, type MessageQuery } from "./query";
import * as store from "./store";

export const EXPORTS_PER_HOUR = 5;
export const EXPORT_LEASE_MS = 15 * MINUTE;
export const EXPORT_PAGE = 500;
export const EXPORT_BUSY_RETRY_S = 5;

export const EXPORT_COLUMNS = [
  "id", "created_at", "status", "from_address", "to_address", "subject", "template_name", "domain_id", "sent_at", "delivered_at",
  "deferred_at", "deferral_count", "bounce_code", "bounce_detail", "spf_result", "dkim_result", "dmarc_result",
] as const;

const exportLimit = (message: string, retryAfterS: number) =>
  new ApiError(429, "EXPORT_LIMIT", message, undefined, { "retry-after": String(Math.max(1, retryAfterS)) });

export class MessageExport {
  constructor(private readonly m: MailContext) {}

  async exportCsv(p: Principal, workspaceId: string, q: MessageQuery): Promise<Response> {
    const ws = await this.m.guard(p, workspaceId, "mail.message.read");
    const f = parseFilters(q);
    const holder = randomBytes(12).toString("hex");
    const now = this.m.ctx.clock.nowMs();
    if (!(await store.takeExportLock(this.m.ctx.db, ws.id, holder, now, now + EXPORT_LEASE_MS))) {
      throw exportLimit("Another export of this workspace is running; one at a time", EXPORT_BUSY_RETRY_S);
    }
    const release = () => store.releaseExportLock(this.m.ctx.db, ws.id, holder).then(() => {});
    try {
      const hit = await this.m.ctx.ratelimit.hit(`mail:export:${ws.id}`, EXPORTS_PER_HOUR, HOUR);
      if (!hit.allowed) throw exportLimit(`At most ${EXPORTS_PER_HOUR} exports per hour per workspace`, Math.ceil(hit.retryAfterMs / 1000));
    } catch (e) {
      await release();
      throw e;
    }
    const db = this.m.ctx.db;
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
          const rows = await store.listMessages(db, filterOf(ws.id, f, before, EXPORT_PAGE));
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
    const day = this.m.ctx.clock.iso().slice(0, 10);
    return new Response(stream, {
      headers: {
        "content-type": "text/csv; charset=utf-8",
        "content-disposition": `attachment; filename="messages-${day}.csv"`,
        "cache-control": "no-store",
        "x-content-type-options": "nosniff",
      },
    });
  }
}
