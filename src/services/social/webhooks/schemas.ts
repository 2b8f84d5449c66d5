/** TypeBox models of the community's webhook records (routes.ts), shared by the routes, the OpenAPI document and the records' types (views.ts). */
import { prefixedIdPattern } from "../../../core/ids";
import { t } from "../../../core/schema";
import { Pagination } from "../../../access/schemas";
import { URL_MAX, LegacyWebhookId } from "../../../kernel/webhooks";
import { UuidOut } from "../core/schemas";

/**
 * The handles of these records, as WebhookService writes them (core/ids.ts prefixedId: the
 * prefix, then a UUIDv7's 32 lowercase hex digits). A malformed one is 400 VALIDATION_ERROR
 * naming the parameter before anything is looked up; a well-formed unknown one is 404.
 */
export const WebhookRecordId = LegacyWebhookId("A webhook record of the community (whk_...)");
export const DeliveryRef = t.String({ pattern: prefixedIdPattern("dlv", "att"), description: "A deliveries item's delivery_id (dlv_...), or the item's own id (att_...)" });

export const CommunityWebhook = t.Object({
  id: t.String({ description: "whk_..." }),
  community_id: UuidOut(),
  url: t.String(),
  event_types: t.Array(t.String(), { description: "Exactly the types delivered; types added to the catalogue later are not included until subscribed" }),
  disabled: t.Boolean({ description: "Paused (PATCH disabled:true) or auto-disabled after 20 consecutive failures or 24 h of only failures" }),
  disabled_at: t.Nullable(t.String()),
  disabled_reason: t.Nullable(t.String({ description: "manual | failing" })),
  consecutive_failures: t.Integer(),
  first_failure_at: t.Nullable(t.String()),
  last_status_code: t.Nullable(t.Integer()),
  last_attempt_at: t.Nullable(t.String()),
  signing_secret_hint: t.String({ description: "Last 4 characters of the signing secret" }),
  created_at: t.String(),
  updated_at: t.String(),
});
export const CommunityWebhookWithSecret = t.Composite([
  CommunityWebhook,
  t.Object({ signing_secret: t.Nullable(t.String({ description: "whsec_...; only in this response (null on an Idempotency-Key replay)" })) }),
]);
export const WebhookList = t.Object({ data: t.Array(CommunityWebhook), pagination: Pagination });

const EventTypes = t.Array(t.String({ maxLength: 200 }), {
  maxItems: 200,
  description: "Types of GET /social/v1/webhook-event-types; omitted or empty: every type listed there now (later types need a PATCH)",
});
export const CreateBody = t.Object({
  url: t.String({ maxLength: URL_MAX, description: "https, publicly resolvable; private and link-local addresses are refused at every delivery" }),
  event_types: t.Optional(EventTypes),
});
export const PatchBody = t.Object({
  disabled: t.Optional(t.Boolean({ description: "false re-enables and clears the failure streak; true pauses (queued retries are dropped)" })),
  url: t.Optional(t.String({ maxLength: URL_MAX })),
  event_types: t.Optional(EventTypes),
});

export const Attempt = t.Object({
  id: t.String({ description: "att_..." }),
  delivery_id: t.Nullable(t.String({ description: "dlv_...: the {deliveryId} of redeliver" })),
  event_id: t.String({ description: "evt_...: the envelope id and webhook-id header" }),
  event_type: t.String(),
  attempt_number: t.Integer({ description: "1 for the first attempt of this event to this webhook, then 2, 3, ... (retries, tests, redeliveries)" }),
  trigger: t.String({ description: "scheduled | retry | test | replay" }),
  request_body: t.String({ description: "The raw body sent (the envelope)" }),
  response_status: t.Nullable(t.Integer()),
  response_body: t.Nullable(t.String({ description: "First 1 KiB of the response" })),
  error_class: t.Nullable(t.String({ description: "null on 2xx; http_status | timeout | connection | blocked | redirect | tls | invalid_url" })),
  latency_ms: t.Integer(),
  succeeded: t.Boolean(),
  created_at: t.String(),
});
export const Queued = t.Object({ accepted: t.Literal(true), event_id: t.String(), delivery_id: t.String() });
