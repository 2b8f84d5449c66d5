/**
 * The events log of one scope: events of the last 30 days with their delivery state per
 * endpoint, one event with every attempt, and replays.
 *
 * - Newest first, cursor pages (limit default 20, max 100). Older events answer 404 even
 *   before the retention job has purged them.
 * - endpoint_id and status filter on deliveries: with both, one delivery must match both.
 * - A replay sends the stored body (same webhook-id) once, freshly signed, and is never
 *   retried. Without endpoint_id it goes to every endpoint that has a delivery of the event
 *   (deleted endpoints are gone, with their deliveries). With endpoint_id it may target any
 *   endpoint of the scope, also one that never had the event (its first delivery row is
 *   created then). A successful replay settles the endpoint's delivery as delivered (no
 *   further retries); a failed one leaves the delivery and its retry schedule as they were.
 *   Either way it is the endpoint's latest attempt: list and detail show it in
 *   deliveries[].latest_attempt (attempts and last_status_code count it too), and a 2xx
 *   clears the endpoint's failure streak (engine.sendOnce).
 */
import { badRequest, invalidField, notFound } from "../../core/errors";
import { encodeCursor, decodeCursor, parseLimit, type Page } from "../../core/pagination";
import { prefixedId } from "../../core/ids";
import { tx } from "../../core/db";
import type { AppContext } from "../../context";
import { EVENT_RETENTION_MS, type AttemptResult, type Scope } from "./types";
import { pickResult, type EndpointService, type ManualSender } from "./endpoints";
import { DELIVERY_STATUSES } from "./limits";
import * as log from "./store/events-log";
import * as endpointsStore from "./store/endpoints";
import { deliveryView, eventDetailView, eventView, type DeliveryView, type EventDetailView, type EventView } from "./views";

export interface EventsQuery {
  endpoint_id?: string;
  type?: string;
  status?: string;
  limit?: unknown;
  cursor?: string;
}

export class EventsLogService {
  constructor(
    private readonly ctx: AppContext,
    private readonly endpoints: EndpointService,
    private readonly sender: ManualSender,
  ) {}

  private since() {
    return this.ctx.clock.nowMs() - EVENT_RETENTION_MS;
  }

  async list(scope: Scope, q: EventsQuery): Promise<Page<EventView>> {
    const limit = parseLimit(q.limit, 20, 100);
    const status = q.status === undefined || q.status === "" ? null : q.status;
    if (status !== null && !(DELIVERY_STATUSES as readonly string[]).includes(status)) {
      throw invalidField("status", `one of ${DELIVERY_STATUSES.join(", ")}`);
    }
    const c = decodeCursor<{ ms?: unknown; id?: unknown }>(q.cursor);
    if (c && (typeof c.ms !== "number" || typeof c.id !== "string")) {
      throw badRequest("Malformed cursor", [{ field: "cursor", reason: "not a cursor issued by this API" }], "INVALID_CURSOR");
    }
    const rows = await log.listEvents(this.ctx.db, {
      product: scope.product,
      scopeId: scope.scopeId,
      sinceMs: this.since(),
      type: q.type ? q.type : null,
      endpointId: q.endpoint_id ? q.endpoint_id : null,
      status,
      before: c ? { ms: c.ms as number, id: c.id as string } : null,
      limit: limit + 1,
    });
    const has_more = rows.length > limit;
    const page = has_more ? rows.slice(0, limit) : rows;
    const byEvent = new Map<string, DeliveryView[]>();
    for (const d of await log.deliveriesOf(this.ctx.db, page.map((r) => r.id))) {
      const list = byEvent.get(d.event_id) ?? [];
      list.push(deliveryView(d));
      byEvent.set(d.event_id, list);
    }
    const last = page[page.length - 1];
    return {
      data: page.map((r) => eventView(r, byEvent.get(r.id) ?? [])),
      pagination: { next_cursor: has_more ? encodeCursor({ ms: last.created_ms, id: last.id }) : null, has_more },
    };
  }

  private async event(scope: Scope, id: string): Promise<log.EventRow> {
    const e = await log.eventInScope(this.ctx.db, scope.product, scope.scopeId, id, this.since());
    if (!e) throw notFound("Event");
    return e;
  }

  async get(scope: Scope, id: string): Promise<EventDetailView> {
    const e = await this.event(scope, id);
    const deliveries = (await log.deliveriesOf(this.ctx.db, [e.id])).map(deliveryView);
    return eventDetailView(e, deliveries, await log.attemptsOf(this.ctx.db, e.id));
  }

  async replay(scope: Scope, id: string, endpointId: string | undefined): Promise<{ data: (AttemptResult & { endpoint_id: string; trigger: "replay" })[] }> {
    const e = await this.event(scope, id);
    let targets: string[];
    if (endpointId) targets = [(await this.endpoints.row(this.ctx.db, scope, endpointId)).id];
    else targets = (await log.deliveriesOf(this.ctx.db, [e.id])).map((d) => d.endpoint_id);

    const results = await Promise.all(
      targets.map(async (endpoint_id) => {
        const existing = await log.deliveryFor(this.ctx.db, e.id, endpoint_id);
        let manual: string | null = null;
        if (!existing) {
          manual = prefixedId("dlv");
          const now = this.ctx.clock.iso();
          await tx(this.ctx.db, async (t) => {
            // Re-check in the transaction: the endpoint may be gone by now.
            if (!(await endpointsStore.endpointInScope(t, scope.product, scope.scopeId, endpoint_id))) throw notFound("Webhook endpoint");
            await log.insertManualDelivery(t, { id: manual!, event_id: e.id, endpoint_id, now });
          });
        }
        const r = await this.sender.sendOnce(endpoint_id, e.id, "replay", existing?.id ?? manual!);
        if (manual) await this.endpoints.finishManual(manual, r);
        else if (r.succeeded) await log.settleDeliveredByReplay(this.ctx.db, existing!.id, r.status_code, this.ctx.clock.iso());
        return { endpoint_id, ...pickResult(r), trigger: "replay" as const };
      }),
    );
    return { data: results };
  }
}
