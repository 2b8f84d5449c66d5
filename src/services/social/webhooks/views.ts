/**
 * What the community's webhook routes serve: an endpoint of the shared engine as the
 * community's webhook record, and an attempt of its deliveries. The TypeBox models of
 * schemas.ts are the types too (one declaration for the documented and the served shape).
 */
import type { Static } from "@sinclair/typebox";
import type { EndpointAttemptRow, EndpointRecord } from "../../../kernel/webhooks";
import type { Attempt, CommunityWebhook } from "./schemas";

export type CommunityWebhookView = Static<typeof CommunityWebhook>;
export type CommunityAttemptView = Static<typeof Attempt>;

/** `secretHint`: the endpoint's masked secret, which only the engine can read (WebhookService.endpoints.secretHint). */
export function communityWebhookView(r: EndpointRecord, secretHint: string): CommunityWebhookView {
  // Paused (enabled = 0) or auto-disabled by the engine: this record folds both into one flag.
  const autoDisabled = r.status === "auto_disabled";
  const disabled = autoDisabled || r.enabled !== 1;
  return {
    id: r.id,
    community_id: r.scope_id,
    url: r.url,
    event_types: JSON.parse(r.event_types) as string[],
    disabled,
    disabled_at: !disabled ? null : autoDisabled ? r.auto_disabled_at : r.updated_at,
    disabled_reason: !disabled ? null : autoDisabled ? (r.disabled_reason ?? "failing") : "manual",
    consecutive_failures: r.consecutive_failures,
    first_failure_at: r.first_failure_at,
    last_status_code: r.last_status_code,
    last_attempt_at: r.last_attempt_at,
    signing_secret_hint: secretHint,
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
}

export const communityAttemptView = (r: EndpointAttemptRow): CommunityAttemptView => ({
  id: r.id,
  delivery_id: r.delivery_id,
  event_id: r.event_id,
  event_type: r.event_type,
  attempt_number: r.attempt_number,
  trigger: r.trigger,
  request_body: r.request_body,
  response_status: r.status_code,
  response_body: r.response_body,
  error_class: r.error_class,
  latency_ms: r.latency_ms,
  succeeded: r.status_code !== null && r.status_code >= 200 && r.status_code < 300,
  created_at: r.created_at,
});
