/** Routes of the extraction-job service: /trawl/v1/workspaces/{workspace_id}/jobs..., settings and usage. */
import { Elysia } from "elysia";
import { principalPlugin } from "../../../access/http";
import { callerKey, idempotent } from "../../../access/idempotent";
import { PLATFORM_CALLER, secured } from "../../../access/openapi";
import { requirePrincipal } from "../../../access/principal";
import type { ServiceDeps } from "../../../kernel/module";
import { ErrorBody, Job, JobCreate, JobList, JobListQuery, JobParams as jobParams, Settings, SettingsPut, Usage, UsageQuery, WorkspaceParams as wsParams } from "./schemas";
import { DESCRIPTION_MAX, STEPS, TIMEOUT, URLS_MAX } from "./limits";
import type { JobService } from "./service";
import type { JobView } from "./views";

const BASE = "/trawl/v1/workspaces/:workspace_id";
const tags = ["Extraction jobs"];
const errors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody };

export function jobRoutes(svc: JobService, deps: ServiceDeps) {
  return new Elysia({ name: "trawl-routes" })
    .use(principalPlugin(deps.tenancy.authz))
    .guard(secured(PLATFORM_CALLER))
    .post(
      `${BASE}/jobs`,
      (c) => {
        const p = requirePrincipal(c.principal);
        return idempotent(deps.ctx.idempotency, c, callerKey(p), async () => ({ status: 201, body: await svc.create(p, c.params.workspace_id, c.body) })) as Promise<JobView>;
      },
      {
        params: wsParams,
        body: JobCreate,
        response: { 201: Job, ...errors, 402: ErrorBody, 409: ErrorBody },
        detail: {
          tags,
          summary: "Create an extraction job (action trawl.job.write); 201 queued",
          description:
            `400 VALIDATION_ERROR with one detail per problem: json_schema must compile (ajv; draft 2020-12, draft-07 when $schema names it), have root type object, fit in 64 KB and use local $ref only; ` +
            `description 1-${DESCRIPTION_MAX} characters; suggested_urls up to ${URLS_MAX} absolute http(s) URLs; max_steps ${STEPS.min}-${STEPS.max} (default ${STEPS.def}); ` +
            `timeout_s ${TIMEOUT.min}-${TIMEOUT.max} (default ${TIMEOUT.def}); model_tier standard | pro. webhook_id must be a legacy webhook of the workspace (404 naming it). ` +
            "402 CREDIT_LIMIT_REACHED when the workspace used its monthly credits. Accepts Idempotency-Key (1-256 of letters, digits, _ - :): a replay within 24 h answers the original response " +
            "with Idempotent-Replay: true; the same key with another body is 409 IDEMPOTENCY_KEY_REUSE. Emits job.queued.",
        },
      },
    )
    .get(`${BASE}/jobs`, (c) => svc.list(requirePrincipal(c.principal), c.params.workspace_id, c.query), {
      params: wsParams,
      query: JobListQuery,
      response: { 200: JobList, ...errors },
      detail: { tags, summary: "List jobs, newest first (action trawl.job.read)", description: "Filter by status; limit 1-100 (default 20); cursor from pagination.next_cursor (a malformed cursor is 400 INVALID_CURSOR)." },
    })
    .get(`${BASE}/jobs/:id`, (c) => svc.get(requirePrincipal(c.principal), c.params.workspace_id, c.params.id), {
      params: jobParams,
      response: { 200: Job, ...errors },
      detail: { tags, summary: "Read a job (action trawl.job.read)", description: "result only when succeeded; error and error_code when failed. Another workspace's job is 404." },
    })
    .post(`${BASE}/jobs/:id/cancel`, (c) => svc.cancel(requirePrincipal(c.principal), c.params.workspace_id, c.params.id), {
      params: jobParams,
      response: { 200: Job, ...errors, 409: ErrorBody },
      detail: {
        tags,
        summary: "Cancel a queued or running job (action trawl.job.write)",
        description: "The job ends cancelled at once; a running job's in-flight fetch or LLM call is aborted. 409 JOB_NOT_CANCELLABLE for succeeded, failed or cancelled jobs. Emits job.cancelled.",
      },
    })
    .get(`${BASE}/extraction-settings`, (c) => svc.getSettings(requirePrincipal(c.principal), c.params.workspace_id), {
      params: wsParams,
      response: { 200: Settings, ...errors },
      detail: { tags, summary: "Read the extraction settings (action trawl.job.read)", description: "monthly_credit_limit: null means no limit." },
    })
    .put(`${BASE}/extraction-settings`, (c) => svc.putSettings(requirePrincipal(c.principal), c.params.workspace_id, c.body), {
      params: wsParams,
      body: SettingsPut,
      response: { 200: Settings, ...errors },
      detail: {
        tags,
        summary: "Set the monthly credit limit (action trawl.settings.write)",
        description: "At 90% used, credits.low is emitted once per month; at 100% new jobs are refused with 402 CREDIT_LIMIT_REACHED (queued jobs still run).",
      },
    })
    .get(`${BASE}/usage`, (c) => svc.usage(requirePrincipal(c.principal), c.params.workspace_id, c.query), {
      params: wsParams,
      query: UsageQuery,
      response: { 200: Usage, ...errors },
      detail: { tags, summary: "Monthly extraction usage (action trawl.job.read)", description: "Steps, pages, bytes, LLM tokens and credits of the jobs that ended in the month (UTC)." },
    });
}
