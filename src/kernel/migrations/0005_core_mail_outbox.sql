-- 0005_core_mail_outbox: system mail (password-reset codes, invites, ...). Requests only
-- enqueue here; a scheduled job delivers through the relay, or logs in dev mode.
CREATE TABLE core_mail_outbox (
  id              TEXT PRIMARY KEY,          -- sysmail_<uuidv7 hex>
  from_addr       TEXT NOT NULL,
  to_addr         TEXT NOT NULL,
  subject         TEXT NOT NULL,
  text_body       TEXT NOT NULL,
  html_body       TEXT,
  status          TEXT NOT NULL,             -- queued | sent | failed | logged
  attempts        INTEGER NOT NULL DEFAULT 0,
  next_attempt_at TEXT NOT NULL,             -- when a queued message is next due (also the claim lease)
  last_error      TEXT,
  message_id      TEXT,                      -- Message-ID the relay accepted
  created_at      TEXT NOT NULL,
  updated_at      TEXT NOT NULL,
  sent_at         TEXT                       -- sent or logged
);
-- The delivery job's query: queued messages that are due.
CREATE INDEX core_mail_outbox_due ON core_mail_outbox (next_attempt_at) WHERE status = 'queued';
CREATE INDEX core_mail_outbox_created ON core_mail_outbox (created_at);
