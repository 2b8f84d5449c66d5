/**
 * Webhook events of the extraction-job service (trawl): the catalogue served by {scope}/webhooks/event-types
 * and used to validate subscriptions. Each example is the `data` object of the envelope
 * (conventions: webhooks/catalogue.ts).
 */
import { defineWebhookProduct, EXAMPLE_T0 as T0, EXAMPLE_T1 as T1 } from "../webhooks/catalogue";
import type { EventTypeInfo } from "../webhooks/types";

const job = (over: Record<string, unknown> = {}) => ({
  id: "job_0192f500a1b27c3d8e4f",
  workspace_id: "ws_0192f0c4e5b87d21a9c3",
  status: "queued",
  description: "Extract pricing tiers",
  suggested_urls: ["https://acme.example/pricing"],
  model_tier: "standard",
  attempts: 0,
  result: null,
  error: null,
  enqueued_at: T0,
  started_at: null,
  completed_at: null,
  created_at: T0,
  ...over,
});

const EVENTS: EventTypeInfo[] = [
  { type: "job.queued", description: "An extraction job was created and queued.", example: job() },
  { type: "job.running", description: "A worker started (or retried) an extraction job.", example: job({ status: "running", attempts: 1, started_at: T0 }) },
  {
    type: "job.succeeded",
    description: "An extraction job finished with a result matching its schema.",
    example: job({ status: "succeeded", attempts: 1, started_at: T0, completed_at: T1, result: { tiers: [{ name: "Starter", price_usd: 19 }, { name: "Pro", price_usd: 49 }] } }),
  },
  {
    type: "job.failed",
    description: "An extraction job failed (timeout, step limit or error).",
    example: job({ status: "failed", attempts: 3, started_at: T0, completed_at: T1, error: "timeout after 120s" }),
  },
  { type: "job.cancelled", description: "An extraction job was cancelled before it finished.", example: job({ status: "cancelled", completed_at: T1 }) },
];

export const TRAWL_WEBHOOKS = defineWebhookProduct({
  product: "trawl",
  label: "Extraction jobs",
  legacyHeader: "x-trawl-signature",
  events: EVENTS,
});
