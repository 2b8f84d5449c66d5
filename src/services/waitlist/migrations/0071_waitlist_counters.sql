-- Waitlist (issue 16), second migration. Sign-up rate limits: a sliding-window counter per key and minute, so a
-- check costs O(1) whatever the limit (the core sliding log keeps one row per hit, which is
-- too many for a per-waitlist limit of thousands a minute). Rows older than the previous
-- window are purged by the job waitlist.views.flush.
CREATE TABLE waitlist_rate_counters (
  key          TEXT NOT NULL,
  window_start BIGINT NOT NULL,   -- epoch ms, a multiple of the window
  count        INTEGER NOT NULL,
  PRIMARY KEY (key, window_start)
);

-- Entry counts per waitlist, kept by the writes that change them (insert, decision, delete),
-- so a sign-up's position (the pending count) and max_entries cost one row read.
CREATE TABLE waitlist_stats (
  waitlist_id TEXT PRIMARY KEY REFERENCES waitlist_waitlists(id) ON DELETE CASCADE,
  total       INTEGER NOT NULL,
  pending     INTEGER NOT NULL
);
INSERT INTO waitlist_stats (waitlist_id, total, pending)
  SELECT w.id,
         (SELECT COUNT(*) FROM waitlist_entries e WHERE e.waitlist_id = w.id),
         (SELECT COUNT(*) FROM waitlist_entries e WHERE e.waitlist_id = w.id AND e.status = 'pending')
    FROM waitlist_waitlists w;

-- Referral counts that changed in a sign-up, waiting for their entry.updated event: the job
-- waitlist.referrals computes the positions of a batch with one query and emits the events.
CREATE TABLE waitlist_referral_updates (
  id           TEXT PRIMARY KEY,                -- UUIDv7 (order of the changes)
  waitlist_id  TEXT NOT NULL REFERENCES waitlist_waitlists(id) ON DELETE CASCADE,
  entry_id     TEXT NOT NULL,                   -- the referrer
  from_count   INTEGER NOT NULL,
  to_count     INTEGER NOT NULL,
  created_at   TEXT NOT NULL
);

-- Nothing looks entries up by referrer (referral_count is kept on the referrer's row): one
-- index fewer to write per sign-up.
DROP INDEX waitlist_entries_referred;
