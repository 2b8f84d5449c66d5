-- PostgreSQL variant of migrations/0014_platform_identities.sql, same tables, columns and indexes:
-- epoch-ms columns are BIGINT.
-- Federated sign-in for console accounts (issue 5): provider identities linked to accounts,
-- the single-use state of each web sign-in, and whether an account's email was proven.

-- Set when the owner proved the address: a completed password reset (the code went to it)
-- or a federated sign-up with an address the provider marks verified. Linking a provider
-- identity to an existing account by email needs it (see src/services/platform/oauth.ts).
ALTER TABLE platform_accounts ADD COLUMN email_verified_at TEXT;

-- One row per provider identity (issuer + subject); an account may hold several.
CREATE TABLE platform_identities (
  id            TEXT PRIMARY KEY,
  account_id    TEXT NOT NULL REFERENCES platform_accounts(id) ON DELETE CASCADE,
  provider      TEXT NOT NULL,              -- idp_1 | idp_2 | idp_3 at link time
  issuer        TEXT NOT NULL,
  subject       TEXT NOT NULL,
  email         TEXT,                       -- as the provider reported it at link time
  created_at    TEXT NOT NULL,
  last_used_at  TEXT,
  UNIQUE (issuer, subject)
);
CREATE INDEX platform_identities_account ON platform_identities(account_id);

-- Web sign-in in flight. Only hashes of state and nonce are kept; the PKCE verifier must be
-- read back at the callback, so it is encrypted with the master key.
CREATE TABLE platform_oauth_states (
  state_hash         TEXT PRIMARY KEY,
  provider           TEXT NOT NULL,
  nonce_hash         TEXT NOT NULL,
  code_verifier_enc  TEXT NOT NULL,
  return_to          TEXT NOT NULL,
  created_at         TEXT NOT NULL,
  expires_at         BIGINT NOT NULL,      -- epoch ms
  consumed_at        TEXT
);
CREATE INDEX platform_oauth_states_nonce ON platform_oauth_states(nonce_hash);
CREATE INDEX platform_oauth_states_expiry ON platform_oauth_states(expires_at);
