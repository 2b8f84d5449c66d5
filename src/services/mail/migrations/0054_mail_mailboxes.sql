-- Mail service, part 2 (issue 14): mailboxes, received messages and the bounce/complaint
-- reports that arrive at VERP addresses. See src/services/mail/mailboxes/ and
-- src/services/mail/inbound/ (store.ts files hold every statement). Portable SQL.

-- seq_id of mailboxes: per-workspace counter, never reused after a delete.
CREATE TABLE mail_mailbox_seq (
  workspace_id  TEXT PRIMARY KEY REFERENCES platform_workspaces(id) ON DELETE CASCADE,
  last_seq      INTEGER NOT NULL
);

CREATE TABLE mail_mailboxes (
  id                TEXT PRIMARY KEY,                 -- UUIDv7
  workspace_id      TEXT NOT NULL REFERENCES platform_workspaces(id) ON DELETE CASCADE,
  seq               INTEGER NOT NULL,                 -- seq_id (a string in the API)
  domain_id         TEXT NOT NULL,                    -- mail_domains.id (a domain with mailboxes cannot be deleted)
  local_part        TEXT NOT NULL,                    -- as given
  local_fold        TEXT NOT NULL,                    -- lower-cased: the unique key per domain
  display_name      TEXT,
  owner_account_id  TEXT,
  retention_days    INTEGER NOT NULL,
  status            TEXT NOT NULL CHECK (status IN ('active','disabled')),
  last_message_seq  INTEGER NOT NULL DEFAULT 0,       -- seq_id of received messages, per mailbox
  created_at        TEXT NOT NULL,
  updated_at        TEXT NOT NULL,
  deleted_at        TEXT,                             -- soft delete: refuses mail; purged after retention
  UNIQUE (workspace_id, seq)
);
-- One live mailbox per address; a soft-deleted one frees its name.
CREATE UNIQUE INDEX mail_mailboxes_address ON mail_mailboxes(domain_id, local_fold) WHERE deleted_at IS NULL;
CREATE INDEX mail_mailboxes_ws ON mail_mailboxes(workspace_id, seq);

CREATE TABLE mail_received (
  id                 TEXT PRIMARY KEY,                -- UUIDv7
  workspace_id       TEXT NOT NULL REFERENCES platform_workspaces(id) ON DELETE CASCADE,
  mailbox_id         TEXT NOT NULL REFERENCES mail_mailboxes(id) ON DELETE CASCADE,
  seq                INTEGER NOT NULL,                -- seq_id, per mailbox
  raw_object_key     TEXT NOT NULL,                   -- the .eml; shared by the copies of one SMTP message
  envelope_from      TEXT NOT NULL,                   -- MAIL FROM ("" for the null reverse-path)
  envelope_to        TEXT NOT NULL,                   -- the RCPT TO address that reached this mailbox
  from_address       TEXT NOT NULL,
  from_local         TEXT NOT NULL,
  from_domain        TEXT NOT NULL,
  from_fold          TEXT NOT NULL,                   -- lower-cased "name <address>" for the from filter
  to_addresses       TEXT NOT NULL,                   -- JSON string[]
  cc_addresses       TEXT NOT NULL,                   -- JSON string[]
  subject            TEXT NOT NULL,
  subject_fold       TEXT NOT NULL,
  body_preview       TEXT,                            -- first 512 bytes of the plain text
  rfc822_message_id  TEXT,
  size_bytes         BIGINT NOT NULL,
  spam_score         INTEGER NOT NULL,                -- sum of the matched rules (inbound/spam.ts)
  spam_verdict       TEXT NOT NULL,
  spam_rules         TEXT NOT NULL,                   -- JSON [{rule, score}] that made the score
  spf_result         TEXT NOT NULL,
  dkim_result        TEXT NOT NULL,
  dmarc_result       TEXT NOT NULL,
  quarantined        INTEGER NOT NULL,
  attachments        TEXT NOT NULL,                   -- JSON manifest [{position, filename, content_id, content_type, size_bytes, sha256}]
  received_at        TEXT NOT NULL,
  received_ms        BIGINT NOT NULL,                 -- received_at as epoch ms (retention)
  read_at            TEXT,
  deleted_at         TEXT,
  UNIQUE (mailbox_id, seq)
);
CREATE INDEX mail_received_box ON mail_received(mailbox_id, received_at, id);
CREATE INDEX mail_received_age ON mail_received(received_ms);
CREATE INDEX mail_received_raw ON mail_received(raw_object_key);

-- Bounce (DSN) and complaint (ARF) reports that reached a VERP address, parsed or not:
-- unparseable ones are kept (with their raw message) and counted, never dropped.
CREATE TABLE mail_inbound_reports (
  id                 TEXT PRIMARY KEY,
  workspace_id       TEXT NOT NULL REFERENCES platform_workspaces(id) ON DELETE CASCADE,
  message_id         TEXT,                            -- the outbound message of the VERP address
  kind               TEXT NOT NULL CHECK (kind IN ('dsn','arf','unparsed')),
  action             TEXT,                            -- failed | delayed | delivered | relayed | expanded | abuse ...
  status_code        TEXT,                            -- enhanced status (5.1.1)
  detail             TEXT,
  applied            INTEGER NOT NULL,                -- 1 when it changed the message's status
  raw_object_key     TEXT,
  received_at        TEXT NOT NULL,
  received_ms        BIGINT NOT NULL
);
CREATE INDEX mail_inbound_reports_ws ON mail_inbound_reports(workspace_id, received_ms);
