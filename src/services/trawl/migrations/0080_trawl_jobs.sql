-- Extraction jobs (trawl): the jobs (also the worker's queue, claimed with leases), the
-- per-workspace settings (monthly credit limit) and the monthly usage counters.
-- See src/services/trawl/ (store.ts has every statement).

CREATE TABLE trawl_jobs (
  id               TEXT PRIMARY KEY,                 -- job_...
  workspace_id     TEXT NOT NULL REFERENCES platform_workspaces(id) ON DELETE CASCADE,
  status           TEXT NOT NULL DEFAULT 'queued'
                   CHECK (status IN ('queued','running','succeeded','failed','cancelled')),
  json_schema      TEXT NOT NULL,                    -- JSON object as given
  description      TEXT NOT NULL,
  suggested_urls   TEXT NOT NULL,                    -- JSON array of URLs
  max_steps        INTEGER NOT NULL,
  timeout_s        INTEGER NOT NULL,
  model_tier       TEXT NOT NULL,
  webhook_id       TEXT,                             -- a legacy webhook (whk_...) of the workspace
  result           TEXT,                             -- JSON object, only when succeeded
  result_meta      TEXT,                             -- JSON: extractor, pages, warnings
  error            TEXT,                             -- message, when failed
  error_code       TEXT,                             -- FETCH_FAILED | BLOCKED_BY_SSRF_GUARD | TIMEOUT | SCHEMA_UNSATISFIED | LLM_ERROR | STEP_LIMIT
  attempts         INTEGER NOT NULL DEFAULT 0,       -- claims so far
  steps            INTEGER NOT NULL DEFAULT 0,       -- usage of the latest attempt
  pages_fetched    INTEGER NOT NULL DEFAULT 0,
  bytes_fetched    BIGINT NOT NULL DEFAULT 0,
  tokens_in        INTEGER NOT NULL DEFAULT 0,
  tokens_out       INTEGER NOT NULL DEFAULT 0,
  lease_until_ms   BIGINT,                           -- while running: the claim holds until then
  lease_owner      TEXT,                             -- token of the claim (fences late writes of a lost lease)
  enqueued_ms      BIGINT NOT NULL,                  -- queue order
  enqueued_at      TEXT NOT NULL,
  started_at       TEXT,
  completed_at     TEXT,
  created_at       TEXT NOT NULL
);
CREATE INDEX trawl_jobs_ws_created ON trawl_jobs (workspace_id, created_at, id);
CREATE INDEX trawl_jobs_ws_status_created ON trawl_jobs (workspace_id, status, created_at, id);
CREATE INDEX trawl_jobs_queue ON trawl_jobs (status, enqueued_ms);

CREATE TABLE trawl_settings (
  workspace_id          TEXT PRIMARY KEY REFERENCES platform_workspaces(id) ON DELETE CASCADE,
  monthly_credit_limit  INTEGER,                     -- NULL: no limit
  updated_at            TEXT NOT NULL
);

CREATE TABLE trawl_usage (
  workspace_id     TEXT NOT NULL REFERENCES platform_workspaces(id) ON DELETE CASCADE,
  month            TEXT NOT NULL,                    -- YYYY-MM (UTC)
  jobs             INTEGER NOT NULL DEFAULT 0,       -- jobs finished (any outcome) this month
  steps            INTEGER NOT NULL DEFAULT 0,
  pages_fetched    INTEGER NOT NULL DEFAULT 0,
  bytes_fetched    BIGINT NOT NULL DEFAULT 0,
  tokens_in        BIGINT NOT NULL DEFAULT 0,
  tokens_out       BIGINT NOT NULL DEFAULT 0,
  credits          INTEGER NOT NULL DEFAULT 0,
  low_notified     INTEGER NOT NULL DEFAULT 0,       -- 1 once credits.low was emitted this month
  PRIMARY KEY (workspace_id, month)
);
