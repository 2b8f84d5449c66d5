-- MFA of console (platform) accounts: TOTP factors, the sign-in challenges waiting for the
-- second factor, and recovery codes (src/services/platform/mfa.ts). Portable as is: epoch-ms
-- columns are BIGINT, timestamps ISO text set by the application.

-- enabled = confirmed and not disabled; disabling is soft (the row stays for the audit trail).
CREATE TABLE platform_mfa_factors (
  id            TEXT PRIMARY KEY,
  account_id    TEXT NOT NULL REFERENCES platform_accounts(id) ON DELETE CASCADE,
  type          TEXT NOT NULL CHECK (type IN ('totp')),
  name          TEXT,
  secret_enc    TEXT NOT NULL,              -- TOTP seed, encrypted with the master key (secret box)
  confirmed_at  TEXT,
  disabled_at   TEXT,
  last_step     BIGINT,                     -- last accepted TOTP time step (no replay)
  created_at    TEXT NOT NULL
);
CREATE INDEX platform_mfa_factors_account ON platform_mfa_factors(account_id);

-- A sign-in whose first factor (password or identity provider) passed, waiting for the
-- second one (mfa_token = id). Single use; locked by the 5th wrong code.
CREATE TABLE platform_mfa_challenges (
  id                TEXT PRIMARY KEY,
  account_id        TEXT NOT NULL REFERENCES platform_accounts(id) ON DELETE CASCADE,
  first_factor      TEXT NOT NULL,          -- password | oauth:<provider>
  session_duration  BIGINT NOT NULL,        -- seconds, as asked at sign-in
  created_at        TEXT NOT NULL,
  expires_at        BIGINT NOT NULL,        -- epoch ms
  consumed_at       TEXT,
  failures          INTEGER NOT NULL DEFAULT 0,
  locked_at         TEXT
);
CREATE INDEX platform_mfa_challenges_account ON platform_mfa_challenges(account_id);

-- Only HMACs of the codes (key derived from the master key); each works once.
CREATE TABLE platform_recovery_codes (
  id          TEXT PRIMARY KEY,
  account_id  TEXT NOT NULL REFERENCES platform_accounts(id) ON DELETE CASCADE,
  code_hash   TEXT NOT NULL,
  used_at     TEXT,
  created_at  TEXT NOT NULL
);
CREATE INDEX platform_recovery_codes_account ON platform_recovery_codes(account_id, code_hash);
