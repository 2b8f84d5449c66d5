-- PostgreSQL variant of migrations/0031_auth_oauth.sql, same tables, columns and indexes:
-- epoch-ms columns are BIGINT.
-- Federated sign-in for App end users (issue 5). Identities themselves live in
-- auth_identities (0030).

-- Web sign-in in flight (authorize -> callback). Only hashes of state and nonce are kept;
-- the PKCE verifier is read back at the callback, so it is encrypted with the master key.
CREATE TABLE auth_oauth_states (
  state_hash         TEXT PRIMARY KEY,
  app_id             TEXT NOT NULL REFERENCES auth_apps(id) ON DELETE CASCADE,
  provider           TEXT NOT NULL,
  nonce_hash         TEXT NOT NULL,
  code_verifier_enc  TEXT NOT NULL,
  return_to          TEXT NOT NULL,
  created_at         TEXT NOT NULL,
  expires_at         BIGINT NOT NULL,      -- epoch ms
  consumed_at        TEXT
);
CREATE INDEX auth_oauth_states_nonce ON auth_oauth_states(app_id, nonce_hash);
CREATE INDEX auth_oauth_states_expiry ON auth_oauth_states(expires_at);

-- The single-use code the callback appends to return_to (auth_code=...), traded for tokens
-- at /oauth/exchange within 60 s. Only its hash is kept.
CREATE TABLE auth_oauth_codes (
  code_hash    TEXT PRIMARY KEY,
  app_id       TEXT NOT NULL REFERENCES auth_apps(id) ON DELETE CASCADE,
  user_id      TEXT NOT NULL REFERENCES auth_users(id) ON DELETE CASCADE,
  provider     TEXT NOT NULL,
  created_at   TEXT NOT NULL,
  expires_at   BIGINT NOT NULL,            -- epoch ms
  consumed_at  TEXT
);
CREATE INDEX auth_oauth_codes_expiry ON auth_oauth_codes(expires_at);

-- Nonces consumed by the native flow (hash of the token's nonce claim), kept until the
-- token they came with has expired: a replay within that time is refused.
CREATE TABLE auth_oauth_nonces (
  app_id       TEXT NOT NULL REFERENCES auth_apps(id) ON DELETE CASCADE,
  nonce_hash   TEXT NOT NULL,
  created_at   TEXT NOT NULL,
  expires_at   BIGINT NOT NULL,            -- epoch ms
  PRIMARY KEY (app_id, nonce_hash)
);
CREATE INDEX auth_oauth_nonces_expiry ON auth_oauth_nonces(expires_at);

-- What the first factor of a sign-in waiting for MFA was (JSON amr, e.g. ["oauth","idp_2"]);
-- NULL means a password sign-in (["pwd"]). Verify appends the second factor to it.
ALTER TABLE auth_mfa_challenges ADD COLUMN first_amr TEXT;

ALTER TABLE auth_identities ADD COLUMN last_used_at TEXT;
