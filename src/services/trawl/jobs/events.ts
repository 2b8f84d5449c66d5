/**
 * Webhook events of the extraction-job service (trawl): the catalogue served by {scope}/webhooks/event-types
 * and used to validate subscriptions. Each example is the `data` object of the envelope
 * (conventions: webhooks/catalogue.ts).
 */
import type { ModuleContext } from "../../../kernel/module";
import { Type } from "@sinclair/typebox";
import { defineWebhookProduct, EXAMPLE_T0 as T0, EXAMPLE_T1 as T1 } from "../../../kernel/webhooks";
import { Job } from "./schemas";

const job = (over: Record<string, unknown> = {}) => ({
  id: "job_0192f500a1b27c3d8e4f5a6b7c8d9e0f",
  workspace_id: "ws_0192f0c4e5b87d21a9c3",
  status: "queued",
  json_schema: { type: "object", properties: { tiers: { type: "array", items: { type: "object", properties: { name: { type: "string" }, price_usd: { type: "number" } } } } }, required: ["tiers"] },
  description: "Extract pricing tiers",
  suggested_urls: ["https://acme.example/pricing"],
  max_steps: 10,
  timeout_s: 120,
  model_tier: "standard",
  webhook_id: null,
  result: null,
  result_meta: null,
  error: null,
  error_code: null,
  attempts: 0,
  usage: { steps: 0, pages_fetched: 0, bytes: 0, llm_tokens_in: 0, llm_tokens_out: 0 },
  enqueued_at: T0,
  started_at: null,
  completed_at: null,
  created_at: T0,
  ...over,
});

const EVENTS = [
  { type: "job.queued",
    data: Job, description: "An extraction job was created and queued.", example: job() },
  { type: "job.running",
    data: Job, description: "A worker started (or retried) an extraction job.", example: job({ status: "running", attempts: 1, started_at: T0 }) },
  {
    type: "job.succeeded",
    data: Job,
    description: "An extraction job finished with a result matching its schema.",
    example: job({ status: "succeeded", attempts: 1, started_at: T0, completed_at: T1, result: { tiers: [{ name: "Starter", price_usd: 19 }, { name: "Pro", price_usd: 49 }] },
      result_meta: { extractor: "llm", model: "gpt-4o-mini", pages: [{ url: "https://acme.example/pricing", status: 200, extracted: true }], warnings: [], stopped_by: "done" },
      usage: { steps: 1, pages_fetched: 1, bytes: 48211, llm_tokens_in: 3120, llm_tokens_out: 96 } }),
  },
  {
    type: "job.failed",
    data: Job,
    description: "An extraction job failed (timeout, step limit or error).",
    example: job({ status: "failed", attempts: 3, started_at: T0, completed_at: T1, error: "TIMEOUT: the job ran longer than timeout_s (120 s)", error_code: "TIMEOUT" }),
  },
  { type: "job.cancelled",
    data: Job, description: "An extraction job was cancelled before it finished.", example: job({ status: "cancelled", completed_at: T1 }) },
  {
    type: "credits.low",
    data: Type.Object({ workspace_id: Type.String(), month: Type.String({ description: "YYYY-MM" }), credits_used: Type.Integer(), monthly_credit_limit: Type.Integer(), remaining: Type.Integer() }),
    description: "The workspace used 90% of its monthly extraction credits (sent once per month).",
    example: { workspace_id: "ws_0192f0c4e5b87d21a9c3", month: "2026-11", credits_used: 905, monthly_credit_limit: 1000, remaining: 95 },
  },
] as const;

export const TRAWL_WEBHOOKS = defineWebhookProduct({
  product: "trawl",
  label: "Extraction jobs",
  legacyHeader: "x-trawl-signature",
  events: EVENTS,
});

/** The module's context with its emit typed by these declarations. */
export type TrawlContext = ModuleContext<typeof TRAWL_WEBHOOKS>;
