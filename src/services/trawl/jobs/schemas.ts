/** TypeBox models of the extraction-job routes, shared by the routes and the OpenAPI document. */
import { t } from "../../../core/schema";
import { ErrorBody, JsonObject, Pagination } from "../../../access/schemas";
import { LegacyWebhookId } from "../../../kernel/webhooks";
import { CREDIT_LIMIT_MAX, DESCRIPTION_MAX, JOB_ID, STEPS, TIMEOUT, URLS_MAX } from "./limits";
import { UUID_PATTERN, Uuid } from "../../../access/schemas";
export { UUID_PATTERN, Uuid };

export { ErrorBody };

// Ids are checked at the boundary: a malformed one is a 400 naming its field, and only a
// well-formed id that matches nothing is a 404.
/** The workspace's id, in the job routes and the webhook scope (module.ts). */
export const WorkspaceId = Uuid("The workspace's id (UUID)");
export const WorkspaceParams = t.Object({ workspace_id: WorkspaceId });
export const JobParams = t.Object({ workspace_id: WorkspaceId, id: t.String({ pattern: JOB_ID.source, description: "job_ followed by 32 hex digits" }) });

const Status = t.Union([t.Literal("queued"), t.Literal("running"), t.Literal("succeeded"), t.Literal("failed"), t.Literal("cancelled")], {
  description: "queued | running | succeeded | failed | cancelled",
});

export const Job = t.Object({
  id: t.String({ description: "job_..." }),
  workspace_id: t.String(),
  status: Status,
  json_schema: JsonObject({ description: "The JSON Schema the result validates against (root type object)" }),
  description: t.String(),
  suggested_urls: t.Array(t.String(), { description: "Seed URLs (fragment removed, duplicates dropped)" }),
  max_steps: t.Integer({ description: "Pages the worker may read" }),
  timeout_s: t.Integer({ description: "Wall-clock seconds per attempt" }),
  model_tier: t.String({ description: "standard (LLM_MODEL) | pro (LLM_MODEL_PRO)" }),
  webhook_id: t.Nullable(t.String({ description: "Legacy webhook (whk_...) of the workspace notified of the job's events" })),
  result: t.Nullable(JsonObject({ description: "Only when succeeded: validates against json_schema" })),
  result_meta: t.Nullable(
    JsonObject({
      description: "Once finished: extractor (llm | heuristic), model, pages [{url, status, extracted}], sources per field (heuristic), warnings, stopped_by",
    }),
  ),
  error: t.Nullable(t.String({ description: '"<CODE>: <message>" when failed' })),
  error_code: t.Nullable(t.String({ description: "FETCH_FAILED | BLOCKED_BY_SSRF_GUARD | TIMEOUT | SCHEMA_UNSATISFIED | LLM_ERROR | STEP_LIMIT" })),
  attempts: t.Integer({ description: "Worker claims so far (at most 3)" }),
  usage: t.Object({
    steps: t.Integer(),
    pages_fetched: t.Integer(),
    bytes: t.Integer({ description: "Response bytes read" }),
    llm_tokens_in: t.Integer(),
    llm_tokens_out: t.Integer(),
  }),
  enqueued_at: t.String(),
  started_at: t.Nullable(t.String()),
  completed_at: t.Nullable(t.String()),
  created_at: t.String(),
});

export const JobList = t.Object({ data: t.Array(Job), pagination: Pagination });

export const JobCreate = t.Object({
  json_schema: JsonObject({ description: "JSON Schema (draft 2020-12, or draft-07 when $schema says so): root type object, at most 64 KB, local $ref only" }),
  description: t.String({ description: `What to extract, 1-${DESCRIPTION_MAX} characters` }),
  suggested_urls: t.Optional(t.Array(t.String(), { description: `Up to ${URLS_MAX} absolute http(s) URLs` })),
  webhook_id: t.Optional(t.Nullable(LegacyWebhookId("A legacy webhook (whk_ followed by 32 hex digits) of the workspace; 404 when none has this id"))),
  max_steps: t.Optional(t.Integer({ description: `${STEPS.min}-${STEPS.max}, default ${STEPS.def}` })),
  timeout_s: t.Optional(t.Integer({ description: `${TIMEOUT.min}-${TIMEOUT.max}, default ${TIMEOUT.def}` })),
  model_tier: t.Optional(t.String({ description: "standard (default) | pro" })),
});

export const JobListQuery = t.Object({
  status: t.Optional(t.String({ description: "queued | running | succeeded | failed | cancelled" })),
  cursor: t.Optional(t.String()),
  limit: t.Optional(t.QueryInteger({ description: "1-100, default 20" })),
});

export const Settings = t.Object({
  workspace_id: t.String(),
  monthly_credit_limit: t.Nullable(t.Integer({ description: "Credits per UTC month; null: no limit" })),
  updated_at: t.Nullable(t.String()),
});

export const SettingsPut = t.Object({
  monthly_credit_limit: t.Nullable(t.Integer({ description: `1-${CREDIT_LIMIT_MAX}, or null for no limit` })),
});

export const Usage = t.Object({
  workspace_id: t.String(),
  month: t.String({ description: "YYYY-MM (UTC)" }),
  jobs: t.Integer({ description: "Jobs that ended this month (any final status)" }),
  steps: t.Integer(),
  pages_fetched: t.Integer(),
  bytes: t.Integer(),
  llm_tokens_in: t.Integer(),
  llm_tokens_out: t.Integer(),
  credits_used: t.Integer({ description: "One per page fetched plus one per started 1,000 LLM tokens (per job)" }),
  monthly_credit_limit: t.Nullable(t.Integer()),
});

export const UsageQuery = t.Object({ month: t.Optional(t.String({ description: "YYYY-MM; default the current month" })) });
