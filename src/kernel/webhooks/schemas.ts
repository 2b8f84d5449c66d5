/** TypeBox models of the shared webhook routes (routes.ts), shared by the routes, the OpenAPI document and the records' types (views.ts). */
import { t } from "../../core/schema";
import { JsonObject, Pagination } from "../../access/schemas";
import { EndpointId } from "./ids";
import { DELIVERY_STATUSES, DESCRIPTION_MAX, GRACE_DEFAULT_HOURS, GRACE_MAX_HOURS, URL_MAX } from "./limits";

export const WebhookEndpoint = t.Object({
  id: t.String({ description: "ep_..." }),
  url: t.String(),
  description: t.String(),
  event_types: t.Array(t.String(), { description: "Empty: every event type, including future ones" }),
  enabled: t.Boolean({ description: "True exactly when events are delivered: false while paused (PATCH enabled:false) or auto_disabled (see status), until PATCH enabled:true" }),
  status: t.Union([t.Literal("enabled"), t.Literal("auto_disabled")], {
    description: "auto_disabled after 20 consecutive failures or 24 h of only failures (disabled_reason failing); PATCH enabled:true brings it back",
  }),
  signing_secret_hint: t.String({ description: "Last 4 characters of the current signing secret" }),
  consecutive_failures: t.Integer(),
  first_failure_at: t.Nullable(t.String()),
  disabled_reason: t.Nullable(t.String({ description: "failing while auto_disabled, else null" })),
  previous_secret_expires_at: t.Nullable(t.String({ description: "End of the rotation grace period while the previous secret still signs" })),
  created_at: t.String(),
  updated_at: t.String(),
});
export const WebhookEndpointWithSecret = t.Composite([
  WebhookEndpoint,
  t.Object({ signing_secret: t.Nullable(t.String({ description: "whsec_...; only in this response (null on an Idempotency-Key replay)" })) }),
]);
export const EndpointList = t.Object({ data: t.Array(WebhookEndpoint), pagination: Pagination });

const EventTypesSchema = t.Array(t.String({ maxLength: 200 }), { maxItems: 200, description: "Catalogue types of this product; empty or omitted: all, including future ones" });
export const EndpointCreate = t.Object({
  url: t.String({ maxLength: URL_MAX, description: "https in production; private and loopback targets are refused" }),
  description: t.Optional(t.String({ maxLength: DESCRIPTION_MAX })),
  event_types: t.Optional(EventTypesSchema),
});
export const EndpointPatch = t.Object({
  url: t.Optional(t.String({ maxLength: URL_MAX })),
  description: t.Optional(t.String({ maxLength: DESCRIPTION_MAX })),
  event_types: t.Optional(EventTypesSchema),
  enabled: t.Optional(t.Boolean({ description: "true re-enables (clears the failure streak and an auto-disable); false pauses and drops queued retries" })),
});
export const RotateBody = t.Optional(
  t.Object({ grace_hours: t.Optional(t.Integer({ minimum: 0, maximum: GRACE_MAX_HOURS, default: GRACE_DEFAULT_HOURS, description: "0 ends the old secret now" })) }),
);
export const TestBody = t.Optional(t.Object({ event_type: t.Optional(t.String({ description: "Default: the first type of the catalogue" })) }));

const AttemptFields = {
  succeeded: t.Boolean(),
  status_code: t.Nullable(t.Integer()),
  latency_ms: t.Integer(),
  error_class: t.Nullable(t.String({ description: "null on 2xx; http_status | timeout | connection | blocked | redirect | tls | invalid_url" })),
  response_body: t.Nullable(t.String({ description: "First 1 KiB of the response" })),
};
export const TestResult = t.Object({ ...AttemptFields, trigger: t.Literal("test"), event_id: t.String() });
export const ReplayResult = t.Object({ data: t.Array(t.Object({ endpoint_id: t.String(), ...AttemptFields, trigger: t.Literal("replay") })) });

export const EventType = t.Object({ type: t.String(), description: t.String(), example: JsonObject() });
export const LatestAttempt = t.Object({
  attempt_number: t.Integer(),
  trigger: t.String({ description: "scheduled | retry | test | replay" }),
  status_code: t.Nullable(t.Integer()),
  error_class: t.Nullable(t.String()),
  latency_ms: t.Integer(),
  created_at: t.String(),
});
export const Delivery = t.Object({
  endpoint_id: t.String(),
  status: t.Union([t.Literal("pending"), t.Literal("delivered"), t.Literal("failed"), t.Literal("not_sent")]),
  attempts: t.Integer({ description: "Every attempt of this event to the endpoint, replays and tests included" }),
  last_status_code: t.Nullable(t.Integer({ description: "Status code of the latest attempt" })),
  latest_attempt: t.Nullable(LatestAttempt),
  next_attempt_at: t.Nullable(t.String({ description: "Next retry while pending" })),
});
export const Event = t.Object({ id: t.String(), type: t.String(), created_at: t.String(), is_test: t.Boolean(), deliveries: t.Array(Delivery) });
export const EventList = t.Object({ data: t.Array(Event), pagination: Pagination });
export const Attempt = t.Object({
  endpoint_id: t.String(),
  attempt_number: t.Integer(),
  trigger: t.String({ description: "scheduled | retry | test | replay" }),
  status_code: t.Nullable(t.Integer()),
  latency_ms: t.Integer(),
  error_class: t.Nullable(t.String()),
  response_body: t.Nullable(t.String()),
  created_at: t.String(),
});
export const EventDetail = t.Composite([Event, t.Object({ payload: t.Unknown({ description: "The envelope as delivered: {id, type, created_at, data}" }), attempts: t.Array(Attempt) })]);

export const EventsQuery = t.Object({
  endpoint_id: t.Optional(EndpointId("Only this endpoint's deliveries (ep_... or whk_...)")),
  type: t.Optional(t.String()),
  status: t.Optional(t.UnionEnum(DELIVERY_STATUSES)),
  limit: t.Optional(t.QueryInteger({ description: "1-100, default 20" })),
  cursor: t.Optional(t.String()),
});
