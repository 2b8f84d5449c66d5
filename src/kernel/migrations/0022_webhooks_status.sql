-- 0022_webhooks_status: the endpoint record's status is the engine's verdict, enabled |
-- auto_disabled, and a manual pause lives in `enabled` alone (spec 2, webhook endpoint).
-- Until now a pause also wrote status 'disabled' (disabled_reason 'manual'). Move those
-- rows: a paused endpoint that had been auto-disabled first (auto_disabled_at is only ever
-- set by the engine and cleared by a re-enable) stays auto_disabled; any other becomes
-- status enabled with enabled = 0. The CHECK of 0020 still admits 'disabled' (SQLite cannot
-- change a CHECK without rebuilding a table that others reference with ON DELETE CASCADE);
-- no code writes it any more.
UPDATE webhook_endpoints
   SET enabled = 0,
       status = CASE WHEN auto_disabled_at IS NOT NULL THEN 'auto_disabled' ELSE 'enabled' END,
       disabled_reason = CASE WHEN auto_disabled_at IS NOT NULL THEN 'failing' ELSE NULL END
 WHERE status = 'disabled';
