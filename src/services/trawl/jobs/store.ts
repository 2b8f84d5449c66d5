/**
 * Every SQL statement of the extraction-job service (trawl): jobs (also the worker's queue,
 * claimed under a lease with an owner token), settings and monthly usage. Portable SQL:
 * ISO-text timestamps and epoch-ms BIGINT set by the application, JSON as TEXT.
 */
import type { Sql } from "../../../core/db";
import { dialect } from "../../../core/store/sql";

export type JobStatus = "queued" | "running" | "succeeded" | "failed" | "cancelled";
export const JOB_STATUSES: readonly JobStatus[] = ["queued", "running", "succeeded", "failed", "cancelled"];

export interface JobRow {
  id: string;
  workspace_id: string;
  status: JobStatus;
  json_schema: string;
  description: string;
  suggested_urls: string;
  max_steps: number;
  timeout_s: number;
  model_tier: string;
  webhook_id: string | null;
  result: string | null;
  result_meta: string | null;
  error: string | null;
  error_code: string | null;
  attempts: number;
  steps: number;
  pages_fetched: number;
  bytes_fetched: number;
  tokens_in: number;
  tokens_out: number;
  lease_until_ms: number | null;
  lease_owner: string | null;
  enqueued_ms: number;
  enqueued_at: string;
  started_at: string | null;
  completed_at: string | null;
  created_at: string;
}

export type NewJob = Omit<JobRow, "status" | "result" | "result_meta" | "error" | "error_code" | "attempts" | "steps" | "pages_fetched" | "bytes_fetched" | "tokens_in" | "tokens_out" | "lease_until_ms" | "lease_owner" | "started_at" | "completed_at">;

export async function insertJob(t: Sql, j: NewJob): Promise<void> {
  await t.run(
    `INSERT INTO trawl_jobs (id, workspace_id, status, json_schema, description, suggested_urls, max_steps, timeout_s, model_tier, webhook_id, enqueued_ms, enqueued_at, created_at)
     VALUES ($id, $workspace_id, 'queued', $json_schema, $description, $suggested_urls, $max_steps, $timeout_s, $model_tier, $webhook_id, $enqueued_ms, $enqueued_at, $created_at)`,
    { ...j },
  );
}

export const jobById = (db: Sql, id: string) => db.get<JobRow>("SELECT * FROM trawl_jobs WHERE id = ?", id);

export const jobInWorkspace = (db: Sql, workspaceId: string, id: string) =>
  db.get<JobRow>("SELECT * FROM trawl_jobs WHERE id = ? AND workspace_id = ?", id, workspaceId);

/** Newest first (created_at, id descending), after the keyset position when given; limit rows. */
export function listJobs(db: Sql, workspaceId: string, status: JobStatus | null, after: { created_at: string; id: string } | null, limit: number): Promise<JobRow[]> {
  const where = ["workspace_id = ?"];
  const params: (string | number)[] = [workspaceId];
  if (status) {
    where.push("status = ?");
    params.push(status);
  }
  if (after) {
    where.push("(created_at < ? OR (created_at = ? AND id < ?))");
    params.push(after.created_at, after.created_at, after.id);
  }
  return db.all<JobRow>(`SELECT * FROM trawl_jobs WHERE ${where.join(" AND ")} ORDER BY created_at DESC, id DESC LIMIT ?`, ...params, limit);
}

/**
 * Takes up to `limit` jobs: queued ones in enqueue order, and running ones whose lease ran
 * out (their worker died). Each becomes running under `owner` until `leaseUntil`, attempts
 * + 1. Runs inside the caller's transaction (SKIP LOCKED on PostgreSQL).
 */
export async function claimDue(t: Sql, now: number, leaseUntil: number, owner: string, startedAt: string, maxAttempts: number, limit: number): Promise<JobRow[]> {
  // Two indexed reads (an OR of both would scan the queue): expired leases first, they waited longest.
  const due = await t.all<{ id: string }>(
    `SELECT id FROM trawl_jobs WHERE status = 'running' AND lease_until_ms <= ? AND attempts < ? LIMIT ?${dialect(t).skipLocked}`,
    now,
    maxAttempts,
    limit,
  );
  if (due.length < limit) {
    due.push(...(await t.all<{ id: string }>(`SELECT id FROM trawl_jobs WHERE status = 'queued' ORDER BY enqueued_ms, id LIMIT ?${dialect(t).skipLocked}`, limit - due.length)));
  }
  if (!due.length) return [];
  const ids = due.map((r) => r.id);
  const marks = ids.map(() => "?").join(", ");
  await t.run(
    `UPDATE trawl_jobs SET status = 'running', lease_until_ms = ?, lease_owner = ?, attempts = attempts + 1,
            started_at = ?, steps = 0, pages_fetched = 0, bytes_fetched = 0, tokens_in = 0, tokens_out = 0
      WHERE id IN (${marks})`,
    leaseUntil,
    owner,
    startedAt,
    ...ids,
  );
  return t.all<JobRow>(`SELECT * FROM trawl_jobs WHERE id IN (${marks}) ORDER BY enqueued_ms, id`, ...ids);
}

/** Hands a running job back to the queue (graceful shutdown): its attempt does not count. */
export const release = (db: Sql, id: string, owner: string) =>
  db.run("UPDATE trawl_jobs SET status = 'queued', attempts = attempts - 1, lease_until_ms = NULL, lease_owner = NULL, started_at = NULL WHERE id = ? AND status = 'running' AND lease_owner = ?", id, owner);

/** Running jobs whose lease ran out and that have used every attempt (selected for failing). */
export async function claimExhausted(t: Sql, now: number, maxAttempts: number, limit: number): Promise<JobRow[]> {
  return t.all<JobRow>(
    `SELECT * FROM trawl_jobs WHERE status = 'running' AND lease_until_ms <= ? AND attempts >= ? LIMIT ?${dialect(t).skipLocked}`,
    now,
    maxAttempts,
    limit,
  );
}

/** Extends a claim still held by `owner`; false when it was lost (cancelled, or taken over). */
export const extendLease = async (db: Sql, id: string, owner: string, leaseUntil: number): Promise<boolean> =>
  (await db.run("UPDATE trawl_jobs SET lease_until_ms = ? WHERE id = ? AND status = 'running' AND lease_owner = ?", leaseUntil, id, owner)) === 1;

export interface Usage {
  steps: number;
  pages_fetched: number;
  bytes_fetched: number;
  tokens_in: number;
  tokens_out: number;
}

export interface Outcome extends Usage {
  status: "succeeded" | "failed";
  result: string | null;
  result_meta: string | null;
  error: string | null;
  error_code: string | null;
  completed_at: string;
}

/**
 * Finishes a running job held by `owner` (null: any running job, for the expiry sweep).
 * False when the job is no longer running under that claim: nothing written.
 */
export async function finish(t: Sql, id: string, owner: string | null, o: Outcome): Promise<boolean> {
  const fence = owner === null ? "" : " AND lease_owner = $owner";
  const n = await t.run(
    `UPDATE trawl_jobs SET status = $status, result = $result, result_meta = $result_meta, error = $error, error_code = $error_code,
            completed_at = $completed_at, steps = $steps, pages_fetched = $pages_fetched, bytes_fetched = $bytes_fetched,
            tokens_in = $tokens_in, tokens_out = $tokens_out, lease_until_ms = NULL, lease_owner = NULL
      WHERE id = $id AND status = 'running'${fence}`,
    { ...o, id, owner: owner ?? undefined },
  );
  return n === 1;
}

/** Usage so far of a running job (the worker's progress), for a cancelled job's record. */
export async function recordUsage(t: Sql, id: string, u: Usage): Promise<void> {
  await t.run(
    "UPDATE trawl_jobs SET steps = $steps, pages_fetched = $pages_fetched, bytes_fetched = $bytes_fetched, tokens_in = $tokens_in, tokens_out = $tokens_out WHERE id = $id",
    { ...u, id },
  );
}

/** queued/running -> cancelled; false when the job was already final. */
export async function cancel(t: Sql, id: string, at: string): Promise<boolean> {
  const n = await t.run(
    "UPDATE trawl_jobs SET status = 'cancelled', completed_at = ?, lease_until_ms = NULL, lease_owner = NULL WHERE id = ? AND status IN ('queued','running')",
    at,
    id,
  );
  return n === 1;
}

// ------------------------------------------------------------------ settings and usage

export interface SettingsRow {
  workspace_id: string;
  monthly_credit_limit: number | null;
  updated_at: string;
}

export const settings = (db: Sql, workspaceId: string) => db.get<SettingsRow>("SELECT * FROM trawl_settings WHERE workspace_id = ?", workspaceId);

export async function putSettings(t: Sql, s: SettingsRow): Promise<void> {
  await t.run(
    `INSERT INTO trawl_settings (workspace_id, monthly_credit_limit, updated_at) VALUES ($workspace_id, $monthly_credit_limit, $updated_at)
     ON CONFLICT (workspace_id) DO UPDATE SET monthly_credit_limit = excluded.monthly_credit_limit, updated_at = excluded.updated_at`,
    { ...s },
  );
}

export interface UsageRow extends Usage {
  workspace_id: string;
  month: string;
  jobs: number;
  credits: number;
  low_notified: number;
}

export const usage = (db: Sql, workspaceId: string, month: string) =>
  db.get<UsageRow>("SELECT * FROM trawl_usage WHERE workspace_id = ? AND month = ?", workspaceId, month);

/** Adds one finished job's usage to the month's counters; returns the new row. */
export async function addUsage(t: Sql, workspaceId: string, month: string, u: Usage, credits: number): Promise<UsageRow> {
  await t.run(
    `INSERT INTO trawl_usage (workspace_id, month, jobs, steps, pages_fetched, bytes_fetched, tokens_in, tokens_out, credits)
     VALUES ($ws, $month, 1, $steps, $pages_fetched, $bytes_fetched, $tokens_in, $tokens_out, $credits)
     ON CONFLICT (workspace_id, month) DO UPDATE SET jobs = trawl_usage.jobs + 1, steps = trawl_usage.steps + excluded.steps,
       pages_fetched = trawl_usage.pages_fetched + excluded.pages_fetched, bytes_fetched = trawl_usage.bytes_fetched + excluded.bytes_fetched,
       tokens_in = trawl_usage.tokens_in + excluded.tokens_in, tokens_out = trawl_usage.tokens_out + excluded.tokens_out,
       credits = trawl_usage.credits + excluded.credits`,
    { ws: workspaceId, month, ...u, credits },
  );
  return (await usage(t, workspaceId, month))!;
}

/** Marks credits.low as sent for the month; false when it already was. */
export const markLowNotified = async (t: Sql, workspaceId: string, month: string): Promise<boolean> =>
  (await t.run("UPDATE trawl_usage SET low_notified = 1 WHERE workspace_id = ? AND month = ? AND low_notified = 0", workspaceId, month)) === 1;
