-- PostgreSQL variant of migrations/0003_core_idempotency.sql, same tables, columns and indexes:
-- epoch-ms columns are BIGINT.
-- 0003_core_idempotency: Idempotency-Key records (src/core/idempotency.ts).
-- A row is claimed (status NULL) before the handler runs and completed with its result,
-- so a concurrent duplicate sees the claim and never runs the handler a second time.
CREATE TABLE core_idempotency_keys (
  scope          TEXT    NOT NULL,  -- whose key it is (e.g. principal id): keys are per caller
  key            TEXT    NOT NULL,
  fingerprint    TEXT    NOT NULL,  -- hash of method, path and body of the first request
  claim_id       TEXT    NOT NULL,  -- lets only the claiming request complete or release it
  status         INTEGER,           -- NULL while the first request is in flight
  body           TEXT,              -- JSON of the stored response body; NULL for none
  headers        TEXT,              -- JSON object of the stored response headers
  created_ms     BIGINT NOT NULL,
  expires_ms     BIGINT NOT NULL,  -- created + 24 h; after it the key is free again
  lease_until_ms BIGINT,           -- in-flight claims older than this were abandoned (crash)
  PRIMARY KEY (scope, key)
);
CREATE INDEX core_idempotency_keys_expires ON core_idempotency_keys (expires_ms);
