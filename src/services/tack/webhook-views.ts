/**
 * The card board's webhook record: its schema (routes, OpenAPI), its type and the one
 * serialiser of an endpoint row into it. Behaviour and decisions: webhooks.ts.
 */
import type { Static } from "@sinclair/typebox";
import { t } from "../../core/schema";
import type { EndpointRecord } from "../../kernel/webhooks";
import { OffsetPagination } from "./board/schemas";

export const TackWebhook = t.Object({
  id: t.String({ description: "whk_... (registered here) or ep_... (created through the shared /webhooks/endpoints route)" }),
  workspace_id: t.String(),
  url: t.String(),
  events: t.Array(t.String(), { description: "Event types delivered; empty: every type, including future ones" }),
  active: t.Boolean({ description: "True on register; false when paused (PATCH active:false) or auto-disabled after repeated failures" }),
  status: t.Union([t.Literal("enabled"), t.Literal("auto_disabled")], {
    description: "auto_disabled after 20 consecutive failures or 24 h of only failures (disabled_reason failing); a pause (PATCH active:false) leaves it as it is",
  }),
  disabled_reason: t.Nullable(t.String({ description: "failing while auto_disabled, else null" })),
  signing_secret_hint: t.String({ description: "Last 4 characters of the signing secret" }),
  legacy_signature: t.Boolean({ description: "True when registered with your own secret: deliveries also carry X-Tack-Signature (until 15 January 2027)" }),
  created_at: t.String(),
  updated_at: t.String(),
});
export const TackWebhookList = t.Object({ data: t.Array(TackWebhook), pagination: OffsetPagination });

export type TackWebhookView = Static<typeof TackWebhook>;
export type TackWebhookPage = Static<typeof TackWebhookList>;

/** `hint`: the last characters of the endpoint's secret (the shared engine decrypts it). */
export const tackWebhookView = (r: EndpointRecord, hint: string): TackWebhookView => ({
  id: r.id,
  workspace_id: r.scope_id,
  url: r.url,
  events: JSON.parse(r.event_types) as string[],
  active: r.enabled === 1 && r.status === "enabled",
  status: r.status,
  disabled_reason: r.status === "auto_disabled" ? (r.disabled_reason ?? "failing") : null,
  signing_secret_hint: hint,
  legacy_signature: r.legacy === 1,
  created_at: r.created_at,
  updated_at: r.updated_at,
});
