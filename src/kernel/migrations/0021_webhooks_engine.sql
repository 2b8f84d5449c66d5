-- 0021_webhooks_engine: the webhook pump's query on the core outbox. Only scopes starting
-- with "webhook:" are the engine's; other scopes (e.g. "platform:...") may stay undispatched
-- for ever, so the general pending index would make every pump step over them. The bounds
-- are the literal range of that prefix (';' follows ':' in ASCII) so the planner can match
-- this partial index against the engine's query.
CREATE INDEX core_events_webhook_pending ON core_events (created_at, id)
  WHERE dispatched_at IS NULL AND scope >= 'webhook:' AND scope < 'webhook;';

-- attempt_number counts earlier attempts of one (event, endpoint). Without this index the
-- planner picks webhook_attempts_endpoint and walks every attempt of the endpoint.
CREATE INDEX webhook_attempts_event_endpoint ON webhook_attempts (event_id, endpoint_id);
