-- Mail service, messages part: the outbound message log (also the send pipeline's queue),
-- per-workspace message settings, suppressions and the export lock.
-- See src/services/mail/messages/ (store.ts has every statement).

CREATE TABLE mail_messages (
  id               TEXT PRIMARY KEY,                 -- UUIDv7
  workspace_id     TEXT NOT NULL REFERENCES platform_workspaces(id) ON DELETE CASCADE,
  domain_id        TEXT,                             -- sending domain (mail_domains.id); kept as text
  from_address     TEXT NOT NULL,
  to_address       TEXT NOT NULL,                    -- one recipient per row, as given
  to_fold          TEXT NOT NULL,                    -- to_address lower-cased (right to be forgotten, suppressions)
  subject          TEXT NOT NULL,
  subject_fold     TEXT NOT NULL,                    -- subject lower-cased for subject_contains
  template_name    TEXT,
  status           TEXT NOT NULL DEFAULT 'queued'
                   CHECK (status IN ('queued','sending','sent','delivered','deferred','bounced','complained','failed')),
  smtp_transcript  TEXT,                             -- SMTP conversation of the latest attempt: no credentials, no body
  spf_result       TEXT,
  dkim_result      TEXT,
  dmarc_result     TEXT,
  bounce_code      TEXT,                             -- enhanced status code or reply code of the latest 4xx/5xx
  bounce_detail    TEXT,                             -- the reply text
  error            TEXT,                             -- why it failed (status failed)
  created_at       TEXT NOT NULL,
  sent_at          TEXT,                             -- relay / MX accepted
  delivered_at     TEXT,                             -- recipient-side evidence only
  deferred_at      TEXT,                             -- latest deferral
  bounced_at       TEXT,
  complained_at    TEXT,
  failed_at        TEXT,
  deferral_count   INTEGER NOT NULL DEFAULT 0,
  -- Send pipeline bookkeeping.
  attempts         INTEGER NOT NULL DEFAULT 0,       -- claims so far
  next_attempt_ms  BIGINT,                            -- due time (epoch ms) while queued or deferred; null otherwise
  lease_until_ms   BIGINT,                            -- while sending: the claim holds until then
  lease_owner      TEXT,                             -- token of the claim (fences late writes of a lost lease)
  envelope_from    TEXT,                             -- VERP bounce address (bounces+<id>@<fqdn>)
  rfc822_message_id TEXT,                            -- Message-ID header
  headers          TEXT,                             -- JSON object of extra headers (List-Unsubscribe, ...)
  send_data        TEXT,                             -- JSON render input (template data), cleared once final
  body_key         TEXT,                             -- object key of {html, text}; null when redacted or not stored
  idempotency_key  TEXT,                             -- the send's Idempotency-Key or a batch row's key
  batch_id         TEXT,                             -- one send / send-batch request
  batch_index      INTEGER
);
-- Newest-first keyset pages of the list, one index per filter.
CREATE INDEX mail_messages_ws ON mail_messages(workspace_id, created_at, id);
CREATE INDEX mail_messages_ws_to ON mail_messages(workspace_id, to_address, created_at, id);
CREATE INDEX mail_messages_ws_template ON mail_messages(workspace_id, template_name, created_at, id);
CREATE INDEX mail_messages_ws_status ON mail_messages(workspace_id, status, created_at, id);
-- Right to be forgotten and suppression look-ups.
CREATE INDEX mail_messages_ws_fold ON mail_messages(workspace_id, to_fold);
-- Timeline metrics.
CREATE INDEX mail_messages_ws_sent ON mail_messages(workspace_id, sent_at);
CREATE INDEX mail_messages_ws_bounced ON mail_messages(workspace_id, bounced_at);
-- The worker's claims: due queued/deferred messages, and sending ones whose lease ran out.
CREATE INDEX mail_messages_due ON mail_messages(next_attempt_ms) WHERE next_attempt_ms IS NOT NULL;
CREATE INDEX mail_messages_leased ON mail_messages(lease_until_ms) WHERE lease_until_ms IS NOT NULL;
CREATE INDEX mail_messages_idem ON mail_messages(workspace_id, idempotency_key) WHERE idempotency_key IS NOT NULL;
CREATE INDEX mail_messages_batch ON mail_messages(batch_id, batch_index) WHERE batch_id IS NOT NULL;

CREATE TABLE mail_message_settings (
  workspace_id   TEXT PRIMARY KEY REFERENCES platform_workspaces(id) ON DELETE CASCADE,
  redact_bodies  INTEGER NOT NULL DEFAULT 0,
  updated_at     TEXT NOT NULL
);

CREATE TABLE mail_suppressions (
  workspace_id       TEXT NOT NULL REFERENCES platform_workspaces(id) ON DELETE CASCADE,
  email              TEXT NOT NULL,                  -- lower-cased
  reason             TEXT NOT NULL CHECK (reason IN ('bounce','complaint','manual','unsubscribe')),
  source_message_id  TEXT,
  created_at         TEXT NOT NULL,
  PRIMARY KEY (workspace_id, email)
);
CREATE INDEX mail_suppressions_ws ON mail_suppressions(workspace_id, created_at, email);
CREATE INDEX mail_suppressions_reason ON mail_suppressions(workspace_id, reason, created_at, email);

-- One running export per workspace, across nodes: a row with a lease (released when the stream ends).
CREATE TABLE mail_message_export_locks (
  workspace_id    TEXT PRIMARY KEY REFERENCES platform_workspaces(id) ON DELETE CASCADE,
  holder          TEXT NOT NULL,
  lease_until_ms  BIGINT NOT NULL
);
