/**
 * Extraction jobs: create (validated at the boundary), list, read, cancel; the per-workspace
 * credit limit and the monthly usage. The worker (worker/worker.ts) runs the jobs; it finishes them
 * through finishJob() here so every final state records usage and emits its event in the
 * transaction of the change.
 *
 * Decisions where the spec is silent (docs/trawl.md, "Reference"):
 * - error is "<CODE>: <message>" and error_code carries the code alone.
 * - credits: one per page fetched plus one per started 1,000 LLM tokens (in + out), counted
 *   in the UTC month a job ends. With a monthly_credit_limit, credits.low goes out once a
 *   month when 90% is used; at 100% POST /jobs answers 402 CREDIT_LIMIT_REACHED (jobs
 *   already queued still run).
 */
import type { Principal } from "../../../access/principal";
import { tx, type Sql } from "../../../core/db";
import { ApiError, badRequest, conflict, notFound, type ErrorDetail } from "../../../core/errors";
import { prefixedId } from "../../../core/ids";
import { buildPage, decodeCursor, parseLimit, type Page } from "../../../core/pagination";
import { CREDIT_LIMIT_MAX, CREDIT_LOW_RATIO, DESCRIPTION_MAX, LIST_DEFAULT, LIST_MAX, STEPS, TIERS, TIMEOUT, URL_MAX, URLS_MAX } from "./limits";
import { SchemaCompiler, isObject } from "../schema";
import * as store from "./store";
import type { JobStatus } from "./store";
import { jobView, monthlyUsageView, settingsView, type JobView } from "./views";
import type { TrawlContext } from "./events";


export interface JobInput {
  json_schema?: unknown;
  description?: unknown;
  suggested_urls?: unknown;
  webhook_id?: unknown;
  max_steps?: unknown;
  timeout_s?: unknown;
  model_tier?: unknown;
}

export const monthOf = (iso: string) => iso.slice(0, 7);
export const creditsOf = (u: store.Usage) => u.pages_fetched + Math.ceil((u.tokens_in + u.tokens_out) / 1000);

function intIn(v: unknown, field: string, b: { min: number; max: number; def: number }, details: ErrorDetail[]): number {
  if (v === undefined || v === null) return b.def;
  if (typeof v !== "number" || !Number.isInteger(v) || v < b.min || v > b.max) {
    details.push({ field, reason: `integer from ${b.min} to ${b.max}` });
    return b.def;
  }
  return v;
}

function urls(v: unknown, details: ErrorDetail[]): string[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) {
    details.push({ field: "suggested_urls", reason: "must be an array of URLs" });
    return [];
  }
  if (v.length > URLS_MAX) details.push({ field: "suggested_urls", reason: `at most ${URLS_MAX} URLs` });
  const out: string[] = [];
  v.slice(0, URLS_MAX).forEach((u, i) => {
    const field = `suggested_urls[${i}]`;
    if (typeof u !== "string" || u.length > URL_MAX) return void details.push({ field, reason: `must be an absolute http(s) URL of at most ${URL_MAX} characters` });
    let url: URL;
    try {
      url = new URL(u);
    } catch {
      return void details.push({ field, reason: "must be an absolute http(s) URL" });
    }
    if ((url.protocol !== "http:" && url.protocol !== "https:") || !url.hostname) return void details.push({ field, reason: "must be an absolute http(s) URL" });
    url.hash = "";
    out.push(url.href);
  });
  return [...new Set(out)];
}

export class JobService {
  readonly schemas = new SchemaCompiler();
  /** Called after a cancel commits (the worker aborts the job's in-flight call). */
  onCancel: (jobId: string) => void = () => {};

  constructor(readonly m: TrawlContext) {}

  async create(p: Principal, workspaceId: string, input: JobInput): Promise<JobView> {
    const ws = await this.m.guard(p, workspaceId, "trawl.job.write");
    const details: ErrorDetail[] = [];
    // Serialised once: checked, compiled (the validator cache's key) and stored as this text.
    const schemaText: string = JSON.stringify(input.json_schema);
    details.push(...this.schemas.check(input.json_schema, schemaText));
    const description = typeof input.description === "string" ? input.description.trim() : "";
    if (typeof input.description !== "string" || description.length < 1 || description.length > DESCRIPTION_MAX) {
      details.push({ field: "description", reason: `string of 1-${DESCRIPTION_MAX} characters` });
    }
    const suggested = urls(input.suggested_urls, details);
    const maxSteps = intIn(input.max_steps, "max_steps", STEPS, details);
    const timeoutS = intIn(input.timeout_s, "timeout_s", TIMEOUT, details);
    const tier = input.model_tier ?? "standard";
    if (typeof tier !== "string" || !(TIERS as readonly string[]).includes(tier)) details.push({ field: "model_tier", reason: "standard or pro" });
    // Its shape is the route's schema (a legacy webhook id); whether it exists is looked up below.
    const webhookId = input.webhook_id ?? null;
    if (details.length) throw badRequest("Invalid extraction job", details);
    if (webhookId !== null) {
      const hook = await this.m.webhooks.legacy.row(this.m.ctx.db, { product: this.m.name, scopeId: ws.id }, webhookId as string).catch(() => null);
      if (!hook) throw new ApiError(404, "NOT_FOUND", `Webhook ${webhookId} not found in this workspace`, [{ field: "webhook_id", reason: "no legacy webhook of the workspace has this id" }]);
    }
    await this.assertCredits(ws.id);
    const now = this.m.ctx.clock.iso();
    const row: store.NewJob = {
      id: prefixedId("job"),
      workspace_id: ws.id,
      json_schema: schemaText,
      description,
      suggested_urls: JSON.stringify(suggested),
      max_steps: maxSteps,
      timeout_s: timeoutS,
      model_tier: tier as string,
      webhook_id: webhookId as string | null,
      enqueued_ms: this.m.ctx.clock.nowMs(),
      enqueued_at: now,
      created_at: now,
    };
    const view = jobView({
      ...row,
      status: "queued",
      result: null,
      result_meta: null,
      error: null,
      error_code: null,
      attempts: 0,
      steps: 0,
      pages_fetched: 0,
      bytes_fetched: 0,
      tokens_in: 0,
      tokens_out: 0,
      lease_until_ms: null,
      lease_owner: null,
      started_at: null,
      completed_at: null,
    });
    await tx(this.m.ctx.db, async (t) => {
      await store.insertJob(t, row);
      await this.m.emit(t, ws.id, "job.queued", view);
    });
    return view;
  }

  async list(p: Principal, workspaceId: string, q: { status?: string; cursor?: string; limit?: number }): Promise<Page<JobView>> {
    const ws = await this.m.guard(p, workspaceId, "trawl.job.read");
    const limit = parseLimit(q.limit, LIST_DEFAULT, LIST_MAX);
    let status: JobStatus | null = null;
    if (q.status !== undefined && q.status !== "") {
      if (!(store.JOB_STATUSES as readonly string[]).includes(q.status)) throw badRequest("Invalid status", [{ field: "status", reason: store.JOB_STATUSES.join(" | ") }]);
      status = q.status as JobStatus;
    }
    const c = decodeCursor<{ c?: unknown; id?: unknown }>(q.cursor);
    if (c && (typeof c.c !== "string" || typeof c.id !== "string")) throw badRequest("Malformed cursor", [{ field: "cursor", reason: "not a cursor issued by this API" }], "INVALID_CURSOR");
    const rows = await store.listJobs(this.m.ctx.db, ws.id, status, c ? { created_at: c.c as string, id: c.id as string } : null, limit + 1);
    return buildPage(rows, limit, (r) => ({ c: r.created_at, id: r.id }), jobView);
  }

  async get(p: Principal, workspaceId: string, id: string): Promise<JobView> {
    const ws = await this.m.guard(p, workspaceId, "trawl.job.read");
    const r = await store.jobInWorkspace(this.m.ctx.db, ws.id, id);
    if (!r) throw notFound("Job");
    return jobView(r);
  }

  async cancel(p: Principal, workspaceId: string, id: string): Promise<JobView> {
    const ws = await this.m.guard(p, workspaceId, "trawl.job.write");
    const view = await tx(this.m.ctx.db, async (t) => {
      const r = await store.jobInWorkspace(t, ws.id, id);
      if (!r) throw notFound("Job");
      if (!(await store.cancel(t, id, this.m.ctx.clock.iso()))) {
        throw conflict(`The job is ${r.status}: only queued or running jobs can be cancelled`, "JOB_NOT_CANCELLABLE");
      }
      const v = jobView((await store.jobById(t, id))!);
      await this.m.emit(t, ws.id, "job.cancelled", v);
      // Usage of a job cancelled while running is recorded by the worker when it stops.
      if (r.status === "queued") await this.account(t, ws.id, { steps: 0, pages_fetched: 0, bytes_fetched: 0, tokens_in: 0, tokens_out: 0 });
      return v;
    });
    this.onCancel(id);
    return view;
  }

  // ------------------------------------------------------------------ worker side

  /**
   * Finishes a running job held by `owner` (null: the expiry sweep) with its event and usage,
   * in one transaction. False when the claim was lost (cancelled meanwhile, or taken over).
   */
  async finishJob(jobId: string, owner: string | null, o: Omit<store.Outcome, "completed_at">): Promise<boolean> {
    return tx(this.m.ctx.db, async (t) => {
      const done = await store.finish(t, jobId, owner, { ...o, completed_at: this.m.ctx.clock.iso() });
      if (!done) return false;
      const r = (await store.jobById(t, jobId))!;
      await this.m.emit(t, r.workspace_id, o.status === "succeeded" ? "job.succeeded" : "job.failed", jobView(r));
      await this.account(t, r.workspace_id, o);
      return true;
    });
  }

  /** Usage of a job that was cancelled while it ran (the worker noticed and stopped). */
  async recordCancelledUsage(jobId: string, u: store.Usage): Promise<void> {
    await tx(this.m.ctx.db, async (t) => {
      const r = await store.jobById(t, jobId);
      if (!r || r.status !== "cancelled") return;
      await store.recordUsage(t, jobId, u);
      await this.account(t, r.workspace_id, u);
    });
  }

  /** Adds a finished job's usage to the month; credits.low once at 90% of the limit. */
  private async account(t: Sql, workspaceId: string, u: store.Usage): Promise<void> {
    const month = monthOf(this.m.ctx.clock.iso());
    const row = await store.addUsage(t, workspaceId, month, u, creditsOf(u));
    const limit = (await store.settings(t, workspaceId))?.monthly_credit_limit ?? null;
    if (limit === null || row.credits < CREDIT_LOW_RATIO * limit) return;
    if (!(await store.markLowNotified(t, workspaceId, month))) return;
    await this.m.emit(t, workspaceId, "credits.low", { workspace_id: workspaceId, month, credits_used: row.credits, monthly_credit_limit: limit, remaining: Math.max(0, limit - row.credits) });
  }

  private async assertCredits(workspaceId: string): Promise<void> {
    const limit = (await store.settings(this.m.ctx.db, workspaceId))?.monthly_credit_limit ?? null;
    if (limit === null) return;
    const used = (await store.usage(this.m.ctx.db, workspaceId, monthOf(this.m.ctx.clock.iso())))?.credits ?? 0;
    if (used >= limit) {
      throw new ApiError(402, "CREDIT_LIMIT_REACHED", `The workspace used ${used} of its ${limit} monthly extraction credits; new jobs are refused until the next month or a higher limit`);
    }
  }

  // ------------------------------------------------------------------ settings and usage

  async getSettings(p: Principal, workspaceId: string) {
    const ws = await this.m.guard(p, workspaceId, "trawl.job.read");
    return settingsView(ws.id, (await store.settings(this.m.ctx.db, ws.id)) ?? null);
  }

  async putSettings(p: Principal, workspaceId: string, input: { monthly_credit_limit?: unknown }) {
    const ws = await this.m.guard(p, workspaceId, "trawl.settings.write");
    const v = input.monthly_credit_limit;
    if (v !== null && (typeof v !== "number" || !Number.isInteger(v) || v < 1 || v > CREDIT_LIMIT_MAX)) {
      throw badRequest("Invalid monthly_credit_limit", [{ field: "monthly_credit_limit", reason: `integer from 1 to ${CREDIT_LIMIT_MAX}, or null for no limit` }]);
    }
    await tx(this.m.ctx.db, (t) => store.putSettings(t, { workspace_id: ws.id, monthly_credit_limit: v as number | null, updated_at: this.m.ctx.clock.iso() }));
    return this.getSettings(p, workspaceId);
  }

  async usage(p: Principal, workspaceId: string, q: { month?: string }) {
    const ws = await this.m.guard(p, workspaceId, "trawl.job.read");
    const month = q.month ?? monthOf(this.m.ctx.clock.iso());
    if (!/^\d{4}-(0[1-9]|1[0-2])$/.test(month)) throw badRequest("Invalid month", [{ field: "month", reason: "YYYY-MM" }]);
    const u = await store.usage(this.m.ctx.db, ws.id, month);
    const limit = (await store.settings(this.m.ctx.db, ws.id))?.monthly_credit_limit ?? null;
    return monthlyUsageView(ws.id, month, u ?? null, limit);
  }
}

export { isObject };
