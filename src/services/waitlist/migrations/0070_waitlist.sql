-- Waitlist service (issue 16): workspace settings, waitlists, entries, variants, daily view
-- counters and the notification outbox (approve -> Auth invite -> mail, welcome, rejected).
-- Deleting a waitlist removes its entries, variants and counters (ON DELETE CASCADE).

CREATE TABLE waitlist_settings (
  workspace_id             TEXT PRIMARY KEY REFERENCES platform_workspaces(id) ON DELETE CASCADE,
  default_sender_domain_id TEXT,
  default_sender_address   TEXT,
  default_auth_app_slug    TEXT,
  brand_name               TEXT,
  brand_logo_url           TEXT,
  primary_color            TEXT,
  notifications_via_mail   INTEGER NOT NULL DEFAULT 0,
  welcome_template_name    TEXT,
  approved_template_name   TEXT,
  rejected_template_name   TEXT,
  updated_at               TEXT NOT NULL
);

CREATE TABLE waitlist_waitlists (
  id                      TEXT PRIMARY KEY,          -- UUIDv7
  workspace_id            TEXT NOT NULL REFERENCES platform_workspaces(id) ON DELETE CASCADE,
  workspace_slug          TEXT NOT NULL,             -- the workspace's slug (kept in step by workspace.renamed)
  previous_workspace_slug TEXT,                      -- the slug before the last rename: public URLs keep working
  slug                    TEXT NOT NULL,
  display_name            TEXT NOT NULL,
  description             TEXT,
  status                  TEXT NOT NULL CHECK (status IN ('draft','open','paused','closed')),
  settings                TEXT NOT NULL,             -- JSON object, see src/services/waitlist/settings.ts
  created_by              TEXT,
  created_at              TEXT NOT NULL,
  updated_at              TEXT NOT NULL,
  UNIQUE (workspace_id, slug)
);
CREATE INDEX waitlist_waitlists_list ON waitlist_waitlists(workspace_id, created_at, id);
CREATE INDEX waitlist_waitlists_public ON waitlist_waitlists(workspace_slug, slug);
CREATE INDEX waitlist_waitlists_previous ON waitlist_waitlists(previous_workspace_slug, slug);

CREATE TABLE waitlist_entries (
  id                   TEXT PRIMARY KEY,             -- UUIDv7
  waitlist_id          TEXT NOT NULL REFERENCES waitlist_waitlists(id) ON DELETE CASCADE,
  workspace_id         TEXT NOT NULL,
  email                TEXT NOT NULL,                -- lower-cased
  name                 TEXT,
  interest             TEXT,
  referrer             TEXT,                         -- Referer / page the sign-up came from
  referral_code        TEXT NOT NULL,
  referral_count       INTEGER NOT NULL DEFAULT 0,   -- referred entries not rejected (deleted ones leave)
  referred_by_entry_id TEXT,
  status               TEXT NOT NULL CHECK (status IN ('pending','approved','rejected')),
  invited_at           TEXT,
  invited_to_app_slug  TEXT,
  metadata             TEXT NOT NULL,                -- JSON object
  custom_fields        TEXT NOT NULL,                -- JSON object
  utm_source           TEXT,
  utm_medium           TEXT,
  utm_campaign         TEXT,
  variant_id           TEXT,
  client_hash          TEXT,                         -- SHA-256 of the client address (burst flag), never shown
  decided_at           TEXT,                         -- approved or rejected at
  created_at           TEXT NOT NULL,
  updated_at           TEXT NOT NULL,
  UNIQUE (waitlist_id, email),
  UNIQUE (waitlist_id, referral_code)
);
CREATE INDEX waitlist_entries_queue ON waitlist_entries(waitlist_id, status, created_at, id);
CREATE INDEX waitlist_entries_created ON waitlist_entries(waitlist_id, created_at, id);
CREATE INDEX waitlist_entries_referred ON waitlist_entries(referred_by_entry_id);
CREATE INDEX waitlist_entries_client ON waitlist_entries(waitlist_id, client_hash, created_at);

CREATE TABLE waitlist_variants (
  id           TEXT PRIMARY KEY,
  waitlist_id  TEXT NOT NULL REFERENCES waitlist_waitlists(id) ON DELETE CASCADE,
  name         TEXT NOT NULL,
  display_name TEXT,
  description  TEXT,
  cta_text     TEXT,
  weight       INTEGER NOT NULL DEFAULT 1,
  active       INTEGER NOT NULL DEFAULT 1,
  created_at   TEXT NOT NULL,
  updated_at   TEXT NOT NULL,
  UNIQUE (waitlist_id, name)
);

-- Public GET views per day and variant (analytics), counted in memory and added in batches.
CREATE TABLE waitlist_views (
  waitlist_id TEXT NOT NULL REFERENCES waitlist_waitlists(id) ON DELETE CASCADE,
  day         TEXT NOT NULL,                          -- YYYY-MM-DD (UTC)
  variant_id  TEXT NOT NULL,                          -- '' when no variant was chosen
  views       INTEGER NOT NULL,
  PRIMARY KEY (waitlist_id, day, variant_id)
);

-- The service's outbox: one row per notification to carry out after the change committed
-- (kind welcome | approved | rejected). The job waitlist.notify claims due rows with a lease,
-- creates the Auth invite (approved) and queues the mail; failures retry with backoff.
CREATE TABLE waitlist_notifications (
  id              TEXT PRIMARY KEY,
  workspace_id    TEXT NOT NULL REFERENCES platform_workspaces(id) ON DELETE CASCADE,
  waitlist_id     TEXT NOT NULL,
  entry_id        TEXT NOT NULL,
  kind            TEXT NOT NULL,
  state           TEXT NOT NULL,                      -- pending | done | failed
  attempts        INTEGER NOT NULL DEFAULT 0,
  next_attempt_at BIGINT NOT NULL,                    -- epoch ms
  lease_until     BIGINT,
  invite_code     TEXT,                               -- sealed; held between the invite and the mail, then cleared
  last_error      TEXT,
  created_at      TEXT NOT NULL,
  updated_at      TEXT NOT NULL
);
CREATE INDEX waitlist_notifications_due ON waitlist_notifications(state, next_attempt_at);
