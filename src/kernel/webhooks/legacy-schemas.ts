/** TypeBox models of the deprecated webhook routes (legacy-routes.ts), shared by the routes, the OpenAPI document and the records' types (views.ts). */
import { t } from "../../core/schema";
import { Pagination } from "../../access/schemas";
import { URL_MAX } from "./limits";

export const LegacyWebhook = t.Object({
  id: t.String({ description: "whk_..." }),
  workspace_id: t.String(),
  url: t.String(),
  active: t.Boolean({ description: "False when paused (PATCH active:false) or auto-disabled after repeated failures" }),
  failure_count: t.Integer({ description: "Consecutive failed deliveries" }),
  last_status_code: t.Nullable(t.Integer()),
  last_attempt_at: t.Nullable(t.String()),
  auto_disabled_at: t.Nullable(t.String()),
  first_failure_at: t.Nullable(t.String()),
  created_at: t.String(),
});
export const LegacyWebhookWithSecret = t.Composite([
  LegacyWebhook,
  t.Object({ signing_secret: t.Nullable(t.String({ description: "Only in this response (null on an Idempotency-Key replay)" })) }),
]);
export const LegacyList = t.Object({ data: t.Array(LegacyWebhook), pagination: Pagination });

export const CreateBody = t.Object({
  url: t.String({ maxLength: URL_MAX, description: "https in production; private and loopback targets are refused" }),
  active: t.Optional(t.Boolean({ default: true })),
});
export const PatchBody = t.Object({
  url: t.Optional(t.String({ maxLength: URL_MAX })),
  active: t.Optional(t.Boolean({ description: "true re-activates and clears the auto-disable; false pauses and drops queued retries" })),
});
export const TestBody = t.Optional(t.Object({ event_type: t.Optional(t.String({ description: "Default: the first type of the catalogue" })) }));

export const DeliveryAttempt = t.Object({
  id: t.String({ description: "att_..." }),
  event_id: t.String(),
  event_type: t.String(),
  attempt_number: t.Integer(),
  trigger: t.String({ description: "scheduled | retry | test | replay" }),
  status_code: t.Nullable(t.Integer()),
  latency_ms: t.Integer(),
  error_class: t.Nullable(t.String({ description: "null on 2xx; http_status | timeout | connection | blocked | redirect | tls | invalid_url" })),
  response_body: t.Nullable(t.String({ description: "First 1 KiB of the response" })),
  created_at: t.String(),
});
