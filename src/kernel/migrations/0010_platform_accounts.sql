-- Console (platform) accounts, their sessions and password resets.
CREATE TABLE platform_accounts (
  id            TEXT PRIMARY KEY,
  email         TEXT NOT NULL COLLATE NOCASE UNIQUE,
  username      TEXT NOT NULL COLLATE NOCASE UNIQUE,
  display_name  TEXT,
  password_hash TEXT,                       -- argon2id PHC string; NULL for federated-only accounts
  status        TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active','suspended','deactivated','blocked')),
  is_operator   INTEGER NOT NULL DEFAULT 0,
  created_at    TEXT NOT NULL,
  updated_at    TEXT NOT NULL
);

CREATE TABLE platform_sessions (
  id           TEXT PRIMARY KEY,
  account_id   TEXT NOT NULL REFERENCES platform_accounts(id) ON DELETE CASCADE,
  created_at   TEXT NOT NULL,
  expires_at   INTEGER NOT NULL,            -- epoch ms; end of the session (session_duration)
  revoked_at   TEXT,
  ip           TEXT,
  user_agent   TEXT
);
CREATE INDEX platform_sessions_account ON platform_sessions(account_id);

-- Every refresh token ever issued for a session, by hash. A rotated token that comes
-- back is a replay: the whole session is revoked.
CREATE TABLE platform_refresh_tokens (
  token_hash  TEXT PRIMARY KEY,
  session_id  TEXT NOT NULL REFERENCES platform_sessions(id) ON DELETE CASCADE,
  created_at  TEXT NOT NULL,
  rotated_at  TEXT
);
CREATE INDEX platform_refresh_tokens_session ON platform_refresh_tokens(session_id);

CREATE TABLE platform_password_resets (
  id          TEXT PRIMARY KEY,
  account_id  TEXT NOT NULL REFERENCES platform_accounts(id) ON DELETE CASCADE,
  code_hash   TEXT NOT NULL UNIQUE,          -- HMAC of the 6-digit code with a server key
  created_at  TEXT NOT NULL,
  expires_at  INTEGER NOT NULL,
  used_at     TEXT
);
CREATE INDEX platform_password_resets_account ON platform_password_resets(account_id);
