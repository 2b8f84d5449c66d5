-- Shared webhook engine: endpoints per (product, scope), events fanned out from the core
-- outbox, one delivery per (event, endpoint), and a log of every attempt.

CREATE TABLE webhook_endpoints (
  id                     TEXT PRIMARY KEY,        -- ep_<uuidv7 hex>, or whk_... for legacy records
  product                TEXT NOT NULL,           -- mail | waitlist | trawl | auth | social | tack
  scope_id               TEXT NOT NULL,           -- workspace id, app id or community id
  url                    TEXT NOT NULL,
  description            TEXT NOT NULL DEFAULT '',
  event_types            TEXT NOT NULL DEFAULT '[]', -- JSON array; empty = every type, including future ones
  enabled                INTEGER NOT NULL DEFAULT 1,
  status                 TEXT NOT NULL DEFAULT 'enabled' CHECK (status IN ('enabled','auto_disabled','disabled')),
  disabled_reason        TEXT,                    -- failing | manual
  secret_enc             TEXT NOT NULL,           -- current signing secret (whsec_...), encrypted with the master key
  prev_secret_enc        TEXT,                    -- previous secret during a rotation grace period
  prev_secret_expires_ms INTEGER,
  legacy                 INTEGER NOT NULL DEFAULT 0, -- created through a legacy route: also gets X-<Product>-Signature
  consecutive_failures   INTEGER NOT NULL DEFAULT 0,
  first_failure_at       TEXT,
  last_status_code       INTEGER,
  last_attempt_at        TEXT,
  auto_disabled_at       TEXT,
  created_at             TEXT NOT NULL,
  updated_at             TEXT NOT NULL
);
CREATE INDEX webhook_endpoints_scope ON webhook_endpoints(product, scope_id, id);

-- The envelope of every event as first serialised: retries and replays send these exact bytes.
CREATE TABLE webhook_events (
  id          TEXT PRIMARY KEY,                   -- evt_... (same id as the core outbox row)
  product     TEXT NOT NULL,
  scope_id    TEXT NOT NULL,
  type        TEXT NOT NULL,
  body        TEXT NOT NULL,                      -- JSON envelope {id, type, created_at, data}
  is_test     INTEGER NOT NULL DEFAULT 0,
  created_at  TEXT NOT NULL,
  created_ms  INTEGER NOT NULL
);
CREATE INDEX webhook_events_scope ON webhook_events(product, scope_id, created_ms);
CREATE INDEX webhook_events_created ON webhook_events(created_ms);

CREATE TABLE webhook_deliveries (
  id               TEXT PRIMARY KEY,              -- dlv_...
  event_id         TEXT NOT NULL REFERENCES webhook_events(id) ON DELETE CASCADE,
  endpoint_id      TEXT NOT NULL REFERENCES webhook_endpoints(id) ON DELETE CASCADE,
  status           TEXT NOT NULL CHECK (status IN ('pending','delivered','failed','not_sent')),
  attempts         INTEGER NOT NULL DEFAULT 0,
  next_attempt_ms  INTEGER,                       -- NULL once finished
  lease_until_ms   INTEGER,                       -- set while an attempt is in flight (crash: retried after it)
  last_status_code INTEGER,
  last_error       TEXT,
  created_at       TEXT NOT NULL,
  updated_at       TEXT NOT NULL,
  UNIQUE (event_id, endpoint_id)
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries(next_attempt_ms) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries(endpoint_id, status);

CREATE TABLE webhook_attempts (
  id              TEXT PRIMARY KEY,               -- att_...
  delivery_id     TEXT REFERENCES webhook_deliveries(id) ON DELETE CASCADE, -- NULL for test sends without a delivery
  event_id        TEXT NOT NULL REFERENCES webhook_events(id) ON DELETE CASCADE,
  endpoint_id     TEXT NOT NULL REFERENCES webhook_endpoints(id) ON DELETE CASCADE,
  attempt_number  INTEGER NOT NULL,
  trigger         TEXT NOT NULL,                  -- scheduled | retry | test | replay
  status_code     INTEGER,
  latency_ms      INTEGER NOT NULL,
  error_class     TEXT,                           -- null on 2xx; http_status | timeout | connection | blocked | redirect | tls | invalid_url
  response_body   TEXT,                           -- first 1 KiB
  created_at      TEXT NOT NULL,
  created_ms      INTEGER NOT NULL
);
CREATE INDEX webhook_attempts_event ON webhook_attempts(event_id, created_ms);
CREATE INDEX webhook_attempts_endpoint ON webhook_attempts(endpoint_id, created_ms);
