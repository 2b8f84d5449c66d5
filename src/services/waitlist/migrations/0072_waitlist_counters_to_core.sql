-- Waitlist sign-up limits moved to the core limiter's sliding-window counters
-- (core_ratelimit_windows, 0008): the waitlist's own copy of them goes.
DROP TABLE waitlist_rate_counters;
