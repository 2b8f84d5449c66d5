/**
 * What the extraction-job routes and events serve, one serialiser per record: rows turned
 * into the records of schemas.ts, whose TypeBox models are the types too (one declaration for
 * the documented and the served shape).
 */
import type { Static } from "@sinclair/typebox";
import type { Job, Settings, Usage } from "./schemas";
import type { JobRow, SettingsRow, UsageRow } from "./store";

export type JobView = Static<typeof Job>;
export type SettingsView = Static<typeof Settings>;
export type MonthlyUsageView = Static<typeof Usage>;

export const jobView = (r: JobRow): JobView => ({
  id: r.id,
  workspace_id: r.workspace_id,
  status: r.status,
  json_schema: JSON.parse(r.json_schema),
  description: r.description,
  suggested_urls: JSON.parse(r.suggested_urls),
  max_steps: r.max_steps,
  timeout_s: r.timeout_s,
  model_tier: r.model_tier,
  webhook_id: r.webhook_id,
  result: r.status === "succeeded" && r.result ? JSON.parse(r.result) : null,
  result_meta: r.result_meta ? JSON.parse(r.result_meta) : null,
  error: r.error,
  error_code: r.error_code,
  attempts: r.attempts,
  usage: { steps: r.steps, pages_fetched: r.pages_fetched, bytes: Number(r.bytes_fetched), llm_tokens_in: r.tokens_in, llm_tokens_out: r.tokens_out },
  enqueued_at: r.enqueued_at,
  started_at: r.started_at,
  completed_at: r.completed_at,
  created_at: r.created_at,
});

/** A workspace without a settings row has no limit (updated_at null). */
export const settingsView = (workspaceId: string, s: SettingsRow | null): SettingsView => ({
  workspace_id: workspaceId,
  monthly_credit_limit: s?.monthly_credit_limit ?? null,
  updated_at: s?.updated_at ?? null,
});

/** A month without a usage row reads as zeros. */
export const monthlyUsageView = (workspaceId: string, month: string, u: UsageRow | null, limit: number | null): MonthlyUsageView => ({
  workspace_id: workspaceId,
  month,
  jobs: u?.jobs ?? 0,
  steps: u?.steps ?? 0,
  pages_fetched: u?.pages_fetched ?? 0,
  bytes: Number(u?.bytes_fetched ?? 0),
  llm_tokens_in: Number(u?.tokens_in ?? 0),
  llm_tokens_out: Number(u?.tokens_out ?? 0),
  credits_used: u?.credits ?? 0,
  monthly_credit_limit: limit,
});
