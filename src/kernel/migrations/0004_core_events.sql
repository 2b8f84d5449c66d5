-- 0004_core_events: the outbox. A service records an event in the same transaction as the
-- write that caused it; the webhook engine dispatches from here (at-least-once).
CREATE TABLE core_events (
  id            TEXT PRIMARY KEY,           -- evt_<uuidv7 hex>
  type          TEXT NOT NULL,              -- e.g. "member.added"
  scope         TEXT NOT NULL,              -- who may see it, e.g. "platform:ws_<uuid>", "mail:<workspace_id>"
  data          TEXT NOT NULL,              -- JSON
  created_at    TEXT NOT NULL,              -- ISO 8601 UTC, from the injected clock
  dispatched_at TEXT                        -- NULL until the dispatcher has taken it
);
-- The dispatcher's query: undispatched, oldest first. Partial, so it stays small however
-- long dispatched events are kept.
CREATE INDEX core_events_pending ON core_events (created_at, id) WHERE dispatched_at IS NULL;
-- Retention purge of dispatched events.
CREATE INDEX core_events_dispatched ON core_events (dispatched_at) WHERE dispatched_at IS NOT NULL;
