-- The latest tick of each scheduled job that a node claimed. With several nodes on one
-- PostgreSQL database every node's scheduler fires; the first to move tick_at forward runs
-- that tick and the others skip it. Unused on SQLite (one node, nothing to share).
CREATE TABLE core_job_ticks (
  name       TEXT PRIMARY KEY,
  tick_at    TEXT NOT NULL,
  node       TEXT NOT NULL,
  claimed_at TEXT NOT NULL
);
