/**
 * Counts over the message log: the daily timeline (sent or bounced) and the deliverability
 * verdict over a window of days (the verdict rules themselves are in deliverability.ts).
 */
import type { Principal } from "../../../access/principal";
import { DAY } from "../../../core/clock";
import { badRequest, invalidField } from "../../../core/errors";
import type { MailContext } from "../part-context";
import { verdictOf, type DeliverabilityView } from "./deliverability";
import * as store from "./store";
import { WINDOW_DEFAULT, WINDOW_MAX, TIMELINE_MAX_BUCKETS } from "./limits";


export class MessageStats {
  constructor(private readonly m: MailContext) {}

  async timeline(p: Principal, workspaceId: string, q: { granularity?: string; since?: string; until?: string; metric?: string }) {
    const ws = await this.m.guard(p, workspaceId, "mail.message.read");
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
      (await store.dailyCounts(this.m.ctx.db, ws.id, metric === "sent" ? "sent_at" : "bounced_at", new Date(since!).toISOString(), new Date(until!).toISOString())).map((r) => [
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

  async deliverability(p: Principal, workspaceId: string, q: { window_days?: number }): Promise<DeliverabilityView> {
    const ws = await this.m.guard(p, workspaceId, "mail.message.read");
    let days = WINDOW_DEFAULT;
    if (q.window_days !== undefined) {
      days = Number(q.window_days);
      if (!Number.isInteger(days) || days < 1 || days > WINDOW_MAX) throw invalidField("window_days", `integer 1-${WINDOW_MAX}`);
    }
    const now = this.m.ctx.clock.nowMs();
    const since = new Date(now - days * DAY).toISOString();
    const until = new Date(now + 1).toISOString();
    const counts = Object.fromEntries((await store.statusCounts(this.m.ctx.db, ws.id, since, until)).map((r) => [r.status, Number(r.n)]));
    const details = await store.negativeDetails(this.m.ctx.db, ws.id, since, until);
    return verdictOf(days, counts, details);
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
