-- Mail service, sending part: per-workspace send settings (the send rate limit).
-- See src/services/mail/sending/ (store.ts has every statement).

CREATE TABLE mail_send_settings (
  workspace_id     TEXT PRIMARY KEY REFERENCES platform_workspaces(id) ON DELETE CASCADE,
  rate_per_second  INTEGER,                          -- messages per second for send/send-batch; NULL: the default (100)
  updated_at       TEXT NOT NULL
);
