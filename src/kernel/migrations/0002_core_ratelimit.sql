-- 0002_core_ratelimit: persistent rate limits and lock-outs (src/core/ratelimit.ts).
-- Persistent so a restart doesn't hand an attacker a fresh budget. Times are epoch
-- milliseconds from the injected clock: integer range math, no string parsing.

-- Sliding log: one row per *allowed* hit. Denied hits are not recorded, so a key never
-- holds more than `limit` live rows however hard it is hammered.
CREATE TABLE core_ratelimit_hits (
  id         INTEGER PRIMARY KEY,
  key        TEXT    NOT NULL,
  at_ms      INTEGER NOT NULL,
  expires_ms INTEGER NOT NULL  -- at_ms + window: when purgeExpired may drop the row
);
CREATE INDEX core_ratelimit_hits_key_at ON core_ratelimit_hits (key, at_ms);
CREATE INDEX core_ratelimit_hits_expires ON core_ratelimit_hits (expires_ms);

-- Consecutive failures (e.g. wrong passwords): one counter row per key.
CREATE TABLE core_ratelimit_failures (
  key        TEXT    PRIMARY KEY,
  count      INTEGER NOT NULL,
  expires_ms INTEGER NOT NULL  -- last failure + window; past it the streak is over
);
CREATE INDEX core_ratelimit_failures_expires ON core_ratelimit_failures (expires_ms);

CREATE TABLE core_ratelimit_locks (
  key      TEXT    PRIMARY KEY,
  until_ms INTEGER NOT NULL
);
CREATE INDEX core_ratelimit_locks_until ON core_ratelimit_locks (until_ms);
