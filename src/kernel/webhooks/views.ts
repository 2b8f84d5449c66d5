/**
 * What the webhook routes serve, one function per record: an endpoint (shared routes), an
 * event of the events log with its deliveries and attempts, and a legacy webhook record.
 * The TypeBox models of schemas.ts and legacy-schemas.ts are the types too (one declaration
 * for the documented and the served shape).
 */
import type { Static } from "@sinclair/typebox";
import type { DeliveryAttempt, LegacyWebhook } from "./legacy-schemas";
import type { Attempt, Delivery, Event, EventDetail, LatestAttempt, WebhookEndpoint } from "./schemas";
import type { EndpointRow } from "./store/endpoints";
import type { AttemptRow, DeliveryWithLatestRow, EventRow, EventSummaryRow } from "./store/events-log";

export type EndpointView = Static<typeof WebhookEndpoint>;
/** The most recent attempt of an event to an endpoint: scheduled, retry, test or replay. */
export type LatestAttemptView = Static<typeof LatestAttempt>;
export type DeliveryView = Static<typeof Delivery>;
export type EventView = Static<typeof Event>;
export type AttemptView = Static<typeof Attempt>;
export type EventDetailView = Static<typeof EventDetail>;
export type LegacyWebhookView = Static<typeof LegacyWebhook>;
/** A legacy record's delivery attempt: the store selects exactly these fields (store/legacy.ts recentAttempts). */
export type LegacyAttemptView = Static<typeof DeliveryAttempt>;

/**
 * `secret`: the endpoint's current secret (only its last 4 characters are shown); `nowMs`:
 * whether the previous secret still signs (the rotation's grace period) depends on the time.
 */
export const endpointView = (r: EndpointRow, secret: string, nowMs: number): EndpointView => {
  const prevLive = r.prev_secret_enc !== null && r.prev_secret_expires_ms !== null && r.prev_secret_expires_ms > nowMs;
  return {
    id: r.id,
    url: r.url,
    description: r.description,
    event_types: JSON.parse(r.event_types) as string[],
    enabled: r.enabled === 1 && r.status === "enabled",
    status: r.status,
    signing_secret_hint: secret.slice(-4),
    consecutive_failures: r.consecutive_failures,
    first_failure_at: r.first_failure_at,
    disabled_reason: r.status === "auto_disabled" ? (r.disabled_reason ?? "failing") : null,
    previous_secret_expires_at: prevLive ? new Date(r.prev_secret_expires_ms!).toISOString() : null,
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
};

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

export const deliveryView = (d: DeliveryWithLatestRow): DeliveryView => ({
  endpoint_id: d.endpoint_id,
  status: d.status,
  attempts: d.attempts,
  last_status_code: d.last_status_code,
  latest_attempt:
    d.latest_attempt_number === null
      ? null
      : {
          attempt_number: d.latest_attempt_number,
          trigger: d.latest_trigger!,
          status_code: d.last_status_code,
          error_class: d.latest_error_class,
          latency_ms: d.latest_latency_ms!,
          created_at: d.latest_created_at!,
        },
  next_attempt_at: d.status === "pending" ? iso(d.next_attempt_ms) : null,
});

export const eventView = (e: EventSummaryRow, deliveries: DeliveryView[]): EventView => ({
  id: e.id,
  type: e.type,
  created_at: e.created_at,
  is_test: e.is_test === 1,
  deliveries,
});

export const attemptView = (a: AttemptRow): AttemptView => ({
  endpoint_id: a.endpoint_id,
  attempt_number: a.attempt_number,
  trigger: a.trigger,
  status_code: a.status_code,
  latency_ms: a.latency_ms,
  error_class: a.error_class,
  response_body: a.response_body,
  created_at: a.created_at,
});

/** One event with the envelope as delivered ({id, type, created_at, data}) and every attempt. */
export const eventDetailView = (e: EventRow, deliveries: DeliveryView[], attempts: AttemptRow[]): EventDetailView => ({
  ...eventView(e, deliveries),
  payload: JSON.parse(e.body),
  attempts: attempts.map(attemptView),
});

export const legacyWebhookView = (r: EndpointRow): LegacyWebhookView => ({
  id: r.id,
  workspace_id: r.scope_id,
  url: r.url,
  active: r.enabled === 1 && r.status === "enabled",
  failure_count: r.consecutive_failures,
  last_status_code: r.last_status_code,
  last_attempt_at: r.last_attempt_at,
  auto_disabled_at: r.auto_disabled_at,
  first_failure_at: r.first_failure_at,
  created_at: r.created_at,
});
