/**
 * GET .../entries/export.csv: every entry of a waitlist, oldest first, streamed in pages of
 * PAGE rows (each page one read; the positions of the pending entries are computed once, at
 * the start, as a map of id -> position). RFC 4180 with formula-injection-safe
 * cells (mail/messages/csv.ts). Columns: the fixed ones (COLUMNS), then one column per custom
 * field definition of the waitlist, named custom.<name>.
 */
import type { Sql } from "../../../core/db";
import { csvRow } from "../../mail/messages/csv";
import { parseWaitlistSettings } from "../settings";
import * as store from "./store";
import { type WaitlistRow } from "../waitlists";

export const COLUMNS = [
  "id", "email", "name", "interest", "status", "position", "referral_code", "referral_count", "referred_by_entry_id", "referrer",
  "utm_source", "utm_medium", "utm_campaign", "variant_id", "invited_at", "invited_to_app_slug", "metadata", "created_at", "updated_at",
] as const;
const PAGE = 500;

export function exportCsv(db: Sql, w: WaitlistRow): Response {
  const s = parseWaitlistSettings(w.settings);
  const custom = s.custom_fields.map((f) => f.name);
  const enc = new TextEncoder();
  let after: { c: string; id: string } | null = null;
  let headerSent = false;
  // Positions as of the start of the export, computed once (one pass over the pending entries).
  let positions: Map<string, number> | null = null;
  const stream = new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (!headerSent) {
        headerSent = true;
        controller.enqueue(enc.encode(csvRow([...COLUMNS, ...custom.map((n) => `custom.${n}`)])));
        return;
      }
      positions ??= await store.allPositions(db, w.id, s.referral_boost);
      const rows = await store.exportPage(db, w.id, after, PAGE);
      if (!rows.length) return controller.close();
      let out = "";
      for (const r of rows) {
        const cf = JSON.parse(r.custom_fields) as Record<string, unknown>;
        out += csvRow([
          r.id, r.email, r.name, r.interest, r.status, r.status === "pending" ? (positions.get(r.id) ?? null) : null, r.referral_code, Number(r.referral_count),
          r.referred_by_entry_id, r.referrer, r.utm_source, r.utm_medium, r.utm_campaign, r.variant_id, r.invited_at, r.invited_to_app_slug, r.metadata, r.created_at, r.updated_at,
          ...custom.map((n) => (cf[n] === undefined || cf[n] === null ? null : String(cf[n]))),
        ]);
      }
      controller.enqueue(enc.encode(out));
      const last = rows[rows.length - 1]!;
      after = { c: last.created_at, id: last.id };
      if (rows.length < PAGE) controller.close();
    },
  });
  return new Response(stream, {
    headers: { "content-type": "text/csv; charset=utf-8", "content-disposition": `attachment; filename="${w.slug}-entries.csv"`, "cache-control": "no-store" },
  });
}
