-- PostgreSQL variant of migrations/0030_auth.sql, same tables, columns and indexes:
-- COLLATE NOCASE columns are citext; epoch-ms columns are BIGINT.
-- End-user Auth: Apps and everything isolated inside one App (users, sessions, roles,
-- tenants, MFA, invites, M2M clients, audit). Every table carries app_id and every lookup
-- filters on it, so one App never sees another's rows.

CREATE TABLE auth_apps (
  id               TEXT PRIMARY KEY,
  workspace_id     TEXT NOT NULL REFERENCES platform_workspaces(id) ON DELETE CASCADE,
  slug             citext NOT NULL UNIQUE,
  display_name     TEXT NOT NULL,
  settings         TEXT NOT NULL,             -- JSON, see src/services/auth/settings.ts
  publishable_key  TEXT NOT NULL UNIQUE,      -- pk_...: public by design (browser sign-up)
  created_at       TEXT NOT NULL,
  updated_at       TEXT NOT NULL
);
CREATE INDEX auth_apps_workspace ON auth_apps(workspace_id, id);

-- RS256 signing keys. The newest unretired key signs; retired keys stay in the JWKS until
-- every token they signed has expired (drop_after).
CREATE TABLE auth_signing_keys (
  kid          TEXT PRIMARY KEY,
  app_id       TEXT NOT NULL REFERENCES auth_apps(id) ON DELETE CASCADE,
  public_jwk   TEXT NOT NULL,                 -- JSON
  private_enc  TEXT NOT NULL,                 -- PKCS#8 PEM, encrypted with the master key
  created_at   TEXT NOT NULL,
  retired_at   TEXT,
  drop_after   BIGINT                         -- epoch ms; NULL while the key signs
);
CREATE INDEX auth_signing_keys_app ON auth_signing_keys(app_id, created_at);

-- App roles: a role carries permissions of the form resource.action (JSON array).
CREATE TABLE auth_roles (
  id           TEXT PRIMARY KEY,
  app_id       TEXT NOT NULL REFERENCES auth_apps(id) ON DELETE CASCADE,
  name         citext NOT NULL,
  description  TEXT NOT NULL DEFAULT '',
  permissions  TEXT NOT NULL DEFAULT '[]',
  created_at   TEXT NOT NULL,
  updated_at   TEXT NOT NULL,
  UNIQUE (app_id, name)
);

-- The App's permission catalogue (roles may only name registered permissions).
CREATE TABLE auth_permissions (
  app_id       TEXT NOT NULL REFERENCES auth_apps(id) ON DELETE CASCADE,
  name         TEXT NOT NULL,
  description  TEXT NOT NULL DEFAULT '',
  created_at   TEXT NOT NULL,
  PRIMARY KEY (app_id, name)
);

-- End users. The password credential is optional (federated-only users have none);
-- provider identities live in their own table so they can be linked and unlinked.
CREATE TABLE auth_users (
  id             TEXT PRIMARY KEY,
  app_id         TEXT NOT NULL REFERENCES auth_apps(id) ON DELETE CASCADE,
  username       citext NOT NULL,
  display_name   TEXT,
  password_hash  TEXT,
  role_id        TEXT REFERENCES auth_roles(id) ON DELETE SET NULL,
  status         TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active','suspended','deactivated','blocked')),
  metadata       TEXT NOT NULL DEFAULT '{}',
  created_at     TEXT NOT NULL,
  updated_at     TEXT NOT NULL,
  UNIQUE (app_id, username)
);
CREATE INDEX auth_users_app ON auth_users(app_id, id);
CREATE INDEX auth_users_role ON auth_users(role_id);

-- Email addresses and phone numbers of a user. Only a verified primary email signs in.
-- A value is unique per App and kind, so no two users share an address.
CREATE TABLE auth_contacts (
  id           TEXT PRIMARY KEY,
  app_id       TEXT NOT NULL REFERENCES auth_apps(id) ON DELETE CASCADE,
  user_id      TEXT NOT NULL REFERENCES auth_users(id) ON DELETE CASCADE,
  kind         TEXT NOT NULL CHECK (kind IN ('email','phone')),
  value        citext NOT NULL,
  is_primary   INTEGER NOT NULL DEFAULT 0,
  verified_at  TEXT,
  created_at   TEXT NOT NULL,
  UNIQUE (app_id, kind, value)
);
CREATE INDEX auth_contacts_user ON auth_contacts(user_id);

-- Federated identities (issuer + subject), linked to a user.
CREATE TABLE auth_identities (
  id           TEXT PRIMARY KEY,
  app_id       TEXT NOT NULL REFERENCES auth_apps(id) ON DELETE CASCADE,
  user_id      TEXT NOT NULL REFERENCES auth_users(id) ON DELETE CASCADE,
  provider     TEXT NOT NULL,
  issuer       TEXT NOT NULL,
  subject      TEXT NOT NULL,
  email        TEXT,
  created_at   TEXT NOT NULL,
  UNIQUE (app_id, issuer, subject)
);
CREATE INDEX auth_identities_user ON auth_identities(user_id);

-- Sessions: what a refresh token renews. tenant and MFA facts are fixed at sign-in
-- (step-up updates amr / mfa_at; the next refresh carries them).
CREATE TABLE auth_sessions (
  id           TEXT PRIMARY KEY,
  app_id       TEXT NOT NULL REFERENCES auth_apps(id) ON DELETE CASCADE,
  user_id      TEXT NOT NULL REFERENCES auth_users(id) ON DELETE CASCADE,
  tenant_id    TEXT,
  amr          TEXT NOT NULL DEFAULT '["pwd"]',
  mfa_at       TEXT,
  created_at   TEXT NOT NULL,
  expires_at   BIGINT NOT NULL,              -- epoch ms
  revoked_at   TEXT,
  ip           TEXT,
  user_agent   TEXT
);
CREATE INDEX auth_sessions_user ON auth_sessions(user_id);
-- Sessions signed in to a tenant are revoked when the tenant is deleted, suspended or
-- archived (and a member's when removed). Partial: most sessions have no tenant.
CREATE INDEX auth_sessions_tenant ON auth_sessions(tenant_id, user_id) WHERE tenant_id IS NOT NULL;

CREATE TABLE auth_refresh_tokens (
  token_hash   TEXT PRIMARY KEY,
  session_id   TEXT NOT NULL REFERENCES auth_sessions(id) ON DELETE CASCADE,
  created_at   TEXT NOT NULL,
  rotated_at   TEXT
);
CREATE INDEX auth_refresh_tokens_session ON auth_refresh_tokens(session_id);

-- Tenants (organizations) inside an App and their members.
CREATE TABLE auth_tenants (
  id           TEXT PRIMARY KEY,
  app_id       TEXT NOT NULL REFERENCES auth_apps(id) ON DELETE CASCADE,
  display_id   TEXT NOT NULL UNIQUE,
  slug         citext NOT NULL,
  display_name TEXT NOT NULL,
  status       TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active','suspended','archived')),
  metadata     TEXT NOT NULL DEFAULT '{}',
  created_at   TEXT NOT NULL,
  updated_at   TEXT NOT NULL,
  UNIQUE (app_id, slug)
);
CREATE INDEX auth_tenants_page ON auth_tenants(app_id, created_at DESC, id DESC);

CREATE TABLE auth_tenant_members (
  id           TEXT PRIMARY KEY,
  tenant_id    TEXT NOT NULL REFERENCES auth_tenants(id) ON DELETE CASCADE,
  user_id      TEXT NOT NULL REFERENCES auth_users(id) ON DELETE CASCADE,
  role_id      TEXT REFERENCES auth_roles(id) ON DELETE SET NULL,
  invited_by   TEXT,
  joined_at    TEXT NOT NULL,
  UNIQUE (tenant_id, user_id)
);
CREATE INDEX auth_tenant_members_page ON auth_tenant_members(tenant_id, joined_at DESC, id DESC);
CREATE INDEX auth_tenant_members_user ON auth_tenant_members(user_id);

-- MFA factors (TOTP secret encrypted; email factors point at an address). Disable is soft.
CREATE TABLE auth_mfa_factors (
  id             TEXT PRIMARY KEY,
  app_id         TEXT NOT NULL REFERENCES auth_apps(id) ON DELETE CASCADE,
  user_id        TEXT NOT NULL REFERENCES auth_users(id) ON DELETE CASCADE,
  type           TEXT NOT NULL CHECK (type IN ('totp','email')),
  name           TEXT,
  secret_enc     TEXT,
  email          TEXT,
  confirmed_at   TEXT,                        -- enabled = confirmed and not disabled
  disabled_at    TEXT,
  last_step      INTEGER,                     -- last accepted TOTP time step (no replay)
  created_at     TEXT NOT NULL
);
CREATE INDEX auth_mfa_factors_user ON auth_mfa_factors(user_id);

-- A sign-in waiting for its second factor (mfa_token = id).
CREATE TABLE auth_mfa_challenges (
  id               TEXT PRIMARY KEY,
  app_id           TEXT NOT NULL REFERENCES auth_apps(id) ON DELETE CASCADE,
  user_id          TEXT NOT NULL REFERENCES auth_users(id) ON DELETE CASCADE,
  tenant_id        TEXT,
  created_at       TEXT NOT NULL,
  expires_at       BIGINT NOT NULL,
  consumed_at      TEXT,
  failures         INTEGER NOT NULL DEFAULT 0,
  locked_at        TEXT,
  code_factor_id   TEXT,                      -- email factor the current code was sent to
  code_hash        TEXT,
  code_expires_at  BIGINT,
  sends            INTEGER NOT NULL DEFAULT 0,
  last_send_at     BIGINT
);

CREATE TABLE auth_recovery_codes (
  id           TEXT PRIMARY KEY,
  user_id      TEXT NOT NULL REFERENCES auth_users(id) ON DELETE CASCADE,
  code_hash    TEXT NOT NULL,
  used_at      TEXT,
  created_at   TEXT NOT NULL
);
CREATE INDEX auth_recovery_codes_user ON auth_recovery_codes(user_id);

-- Invites: only the code's hash is kept.
CREATE TABLE auth_invites (
  id           TEXT PRIMARY KEY,
  app_id       TEXT NOT NULL REFERENCES auth_apps(id) ON DELETE CASCADE,
  code_hash    TEXT NOT NULL UNIQUE,
  code_hint    TEXT NOT NULL,
  email        TEXT,
  role_id      TEXT REFERENCES auth_roles(id) ON DELETE SET NULL,
  tenant_id    TEXT REFERENCES auth_tenants(id) ON DELETE SET NULL,
  max_uses     INTEGER NOT NULL DEFAULT 1,
  uses         INTEGER NOT NULL DEFAULT 0,
  expires_at   BIGINT,
  revoked_at   TEXT,
  created_by   TEXT,
  created_at   TEXT NOT NULL
);
CREATE INDEX auth_invites_app ON auth_invites(app_id, created_at DESC, id DESC);

-- Contact verification and password-reset codes (HMAC of the code; one live code per purpose and target).
CREATE TABLE auth_codes (
  id           TEXT PRIMARY KEY,
  app_id       TEXT NOT NULL REFERENCES auth_apps(id) ON DELETE CASCADE,
  user_id      TEXT REFERENCES auth_users(id) ON DELETE CASCADE,
  purpose      TEXT NOT NULL CHECK (purpose IN ('verify_email','verify_phone','password_reset')),
  target       citext NOT NULL,
  code_hash    TEXT NOT NULL,
  created_at   TEXT NOT NULL,
  expires_at   BIGINT NOT NULL,
  consumed_at  TEXT,
  superseded_at TEXT
);
CREATE INDEX auth_codes_target ON auth_codes(app_id, purpose, target);

-- Machine-to-machine clients (client_credentials). Only the secret's hash is kept.
CREATE TABLE auth_m2m_clients (
  id           TEXT PRIMARY KEY,
  app_id       TEXT NOT NULL REFERENCES auth_apps(id) ON DELETE CASCADE,
  client_id    TEXT NOT NULL UNIQUE,
  name         TEXT NOT NULL,
  secret_hash  TEXT NOT NULL,
  secret_hint  TEXT NOT NULL,
  permissions  TEXT NOT NULL DEFAULT '[]',
  created_at   TEXT NOT NULL,
  rotated_at   TEXT,
  last_used_at TEXT
);
CREATE INDEX auth_m2m_clients_app ON auth_m2m_clients(app_id, created_at);

-- Per-App audit log.
CREATE TABLE auth_audit (
  id           TEXT PRIMARY KEY,
  app_id       TEXT NOT NULL REFERENCES auth_apps(id) ON DELETE CASCADE,
  action       TEXT NOT NULL,
  outcome      TEXT NOT NULL DEFAULT 'success',
  actor_type   TEXT NOT NULL,
  actor_id     TEXT,
  target_type  TEXT,
  target_id    TEXT,
  ip           TEXT,
  user_agent   TEXT,
  metadata     TEXT NOT NULL DEFAULT '{}',
  created_at   TEXT NOT NULL
);
CREATE INDEX auth_audit_page ON auth_audit(app_id, id DESC);
CREATE INDEX auth_audit_action ON auth_audit(app_id, action, id DESC);
CREATE INDEX auth_audit_actor ON auth_audit(app_id, actor_id, id DESC);
-- "Everything done to user X"; partial: sign-ins have no target, so they pay no extra index write.
CREATE INDEX auth_audit_target ON auth_audit(app_id, target_id, id DESC) WHERE target_id IS NOT NULL;
