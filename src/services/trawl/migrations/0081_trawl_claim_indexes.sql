-- Extraction jobs: indexes for the worker's claims, one per half of the claim (queued jobs
-- in enqueue order; running jobs by lease expiry), so a claim reads a few index entries
-- however long the queue is. Replaces the (status, enqueued_ms) index of 0080.

DROP INDEX trawl_jobs_queue;
CREATE INDEX trawl_jobs_queued ON trawl_jobs (status, enqueued_ms, id);
CREATE INDEX trawl_jobs_lease ON trawl_jobs (status, lease_until_ms);
