/**
 * The extraction-job service (trawl) as a module: the jobs API (jobs/routes.ts, jobs/service.ts), the
 * durable worker (worker/worker.ts; scheduler job trawl.worker every second), the webhook event
 * catalogue and the workspace webhook scope (shared and legacy routes under
 * /trawl/v1/workspaces/{workspace_id}/webhooks).
 *
 * The spec names the legacy record "the extraction-job service's", but the same deprecated
 * {scope}/webhooks routes serve mail, waitlist and Auth Apps too, so the record stays the
 * engine's factory (webhooks/legacy.ts, legacy-routes.ts) that each product switches on
 * with legacyRoutes: true, rather than code here that the others would import.
 */
import { createOutboundHttp } from "../../core/outbound-http";
import { defineService } from "../../kernel/module";
import { workspaceScope } from "../../kernel/webhooks";
import { TRAWL_WEBHOOKS } from "./jobs/events";
import { PAGE_MAX_BYTES } from "./worker/pipeline/fetch";
import { LlmClient } from "./worker/pipeline/llm";
import { jobRoutes } from "./jobs/routes";
import { WorkspaceId } from "./jobs/schemas";
import { JobService } from "./jobs/service";
import { TrawlWorker } from "./worker/worker";
import { migrations } from "./migrations";
import { TRAWL_SETTINGS } from "./settings";

export const TRAWL_WORKER_JOB = "trawl.worker";

export const TRAWL_ACTIONS = [
  { name: "trawl.job.read", description: "List and read extraction jobs, the extraction settings and usage" },
  { name: "trawl.job.write", description: "Create and cancel extraction jobs" },
  { name: "trawl.settings.write", description: "Change the extraction settings (monthly credit limit)" },
] as const;

export interface Trawl {
  jobs: JobService;
  worker: TrawlWorker;
}

export const trawlModule = defineService({
  name: "trawl",
  migrations,
  settings: TRAWL_SETTINGS,
  description: "AI extraction jobs",
  prefix: "/trawl",
  openapi: { title: "Bunker extraction jobs", description: "AI extraction jobs.", version: "v0.1.0" },
  actions: [...TRAWL_ACTIONS],
  webhooks: TRAWL_WEBHOOKS,
  create: (d): Trawl => {
    const cfg = d.settings;
    const jobs = new JobService(d);
    // Its own guarded client: pages up to 5 MB (one byte more tells a larger page apart).
    const http = createOutboundHttp({ allowPrivateTargets: d.ctx.config.allowPrivateTargets, requireHttps: false, maxBodyBytes: PAGE_MAX_BYTES + 1 });
    const llm = cfg.llmBaseUrl ? new LlmClient(cfg.llmBaseUrl, cfg.llmApiKey) : null;
    const worker = new TrawlWorker(d, jobs, { concurrency: cfg.concurrency, http, llm, models: { standard: cfg.llmModel, pro: cfg.llmModelPro } });
    return { jobs, worker };
  },
  routes: (s, d) => jobRoutes(s.jobs, d),
  jobs: (s) => [{ name: TRAWL_WORKER_JOB, schedule: "* * * * * *", run: async () => void (await s.worker.tick()) }],
  stop: (s) => s.worker.stop(),
  webhookScopes: (_, d) => [{ prefix: "/trawl/v1/workspaces/:workspace_id", resolve: workspaceScope(d.tenancy, d.name), legacyRoutes: true, params: { workspace_id: WorkspaceId } }],
});
