-- PostgreSQL variant of migrations/0012_platform_keys_audit.sql, same tables, columns and indexes:
-- epoch-ms columns are BIGINT.
-- Workspace API keys, personal access tokens and the audit log.
CREATE TABLE platform_api_keys (
  id            TEXT PRIMARY KEY,
  workspace_id  TEXT NOT NULL REFERENCES platform_workspaces(id) ON DELETE CASCADE,
  name          TEXT NOT NULL,
  prefix        TEXT NOT NULL,               -- first characters, for display
  last_four     TEXT NOT NULL,
  key_hash      TEXT NOT NULL UNIQUE,        -- SHA-256 of the whole key
  policy        TEXT NOT NULL,
  created_by    TEXT NOT NULL REFERENCES platform_accounts(id),
  created_at    TEXT NOT NULL,
  expires_at    BIGINT,
  last_used_at  TEXT,
  revoked_at    TEXT
);
CREATE INDEX platform_api_keys_ws ON platform_api_keys(workspace_id, created_at);

CREATE TABLE platform_personal_tokens (
  id            TEXT PRIMARY KEY,
  account_id    TEXT NOT NULL REFERENCES platform_accounts(id) ON DELETE CASCADE,
  name          TEXT NOT NULL,
  prefix        TEXT NOT NULL,
  last_four     TEXT NOT NULL,
  token_hash    TEXT NOT NULL UNIQUE,
  created_at    TEXT NOT NULL,
  expires_at    BIGINT,
  last_used_at  TEXT,
  revoked_at    TEXT
);
CREATE INDEX platform_personal_tokens_account ON platform_personal_tokens(account_id);

CREATE TABLE platform_audit_log (
  id            TEXT PRIMARY KEY,            -- UUIDv7: time-ordered, doubles as the page key
  workspace_id  TEXT,
  actor_type    TEXT NOT NULL,               -- account | api_key | personal_token | system
  actor_id      TEXT,
  action        TEXT NOT NULL,
  target_type   TEXT,
  target_id     TEXT,
  ip            TEXT,
  user_agent    TEXT,
  metadata      TEXT NOT NULL DEFAULT '{}',
  created_at    TEXT NOT NULL
);
CREATE INDEX platform_audit_ws ON platform_audit_log(workspace_id, id);
CREATE INDEX platform_audit_actor ON platform_audit_log(actor_id, id);
CREATE INDEX platform_audit_action ON platform_audit_log(action, id);
