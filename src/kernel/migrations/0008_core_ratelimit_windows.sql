-- 0008_core_ratelimit_windows: rate limits above RateLimiter's exact-log ceiling (1,000 per
-- window) as sliding-window counters: one row per key and fixed window, so a check costs the
-- same at 10,000 a second as at 10 (the sliding log of 0002 counts the window's rows).
CREATE TABLE core_ratelimit_windows (
  key        TEXT    NOT NULL,
  start_ms   BIGINT  NOT NULL,  -- start of the fixed window (a multiple of its length)
  count      INTEGER NOT NULL,
  expires_ms BIGINT  NOT NULL,  -- end of the next window: past it the row is no longer read
  PRIMARY KEY (key, start_ms)
);
CREATE INDEX core_ratelimit_windows_expires ON core_ratelimit_windows (expires_ms);
