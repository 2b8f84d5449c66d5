/**
 * The webhook HTTP surface's service object: endpoints and the events log of every scope,
 * on top of the event catalogue and the delivery engine (which app.ts builds and passes in).
 * Products emit events through the engine and reach webhook data only through this object
 * (endpoints, events, queue), never the webhook_* tables; nothing here delivers on a schedule.
 */
import type { AppContext } from "../../context";
import { EndpointService, type EventTypeSource, type ManualSender } from "./endpoints";
import { EventsLogService } from "./events-log";
import { DeliveryQueue } from "./queue";

export interface WebhookServiceDeps {
  catalogue: EventTypeSource;
  /** The delivery engine (WebhookEngine): test sends and replays go through sendOnce. */
  engine: ManualSender;
}

export class WebhookService {
  readonly endpoints: EndpointService;
  readonly events: EventsLogService;
  readonly queue: DeliveryQueue;
  readonly catalogue: EventTypeSource;

  constructor(
    readonly ctx: AppContext,
    deps: WebhookServiceDeps,
  ) {
    this.catalogue = deps.catalogue;
    this.endpoints = new EndpointService(ctx, deps.catalogue, deps.engine);
    this.events = new EventsLogService(ctx, this.endpoints, deps.engine);
    this.queue = new DeliveryQueue(ctx);
  }
}
