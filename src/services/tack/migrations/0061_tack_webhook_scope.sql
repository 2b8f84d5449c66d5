-- Card-board webhooks move from the platform workspace scope to board-workspace scope: a
-- webhook belongs to one board workspace (tack_workspaces) and receives its events.
-- Each platform workspace that has card-board webhooks gets a board workspace named after
-- its slug, with the id 'ws_' + the platform workspace id without dashes, and its webhook
-- endpoints, their events log and undispatched outbox rows move to it. card.deleted (no
-- longer emitted) becomes card.archived in endpoint filters. Portable SQL (both engines).

INSERT INTO tack_workspaces (id, owner_workspace_id, name, display_name, metadata, archived_at, created_at, updated_at)
SELECT 'ws_' || replace(w.id, '-', ''), w.id, w.slug, w.display_name, '{}', NULL, w.created_at, w.created_at
  FROM platform_workspaces w
 WHERE EXISTS (SELECT 1 FROM webhook_endpoints e WHERE e.product = 'tack' AND e.scope_id = w.id)
ON CONFLICT DO NOTHING;

UPDATE webhook_endpoints
   SET scope_id = 'ws_' || replace(scope_id, '-', ''),
       event_types = replace(event_types, '"card.deleted"', '"card.archived"')
 WHERE product = 'tack'
   AND EXISTS (SELECT 1 FROM tack_workspaces t WHERE t.id = 'ws_' || replace(webhook_endpoints.scope_id, '-', '') AND t.owner_workspace_id = webhook_endpoints.scope_id);

UPDATE webhook_events
   SET scope_id = 'ws_' || replace(scope_id, '-', '')
 WHERE product = 'tack'
   AND EXISTS (SELECT 1 FROM tack_workspaces t WHERE t.id = 'ws_' || replace(webhook_events.scope_id, '-', '') AND t.owner_workspace_id = webhook_events.scope_id);

UPDATE core_events
   SET scope = 'webhook:tack:ws_' || replace(substr(scope, 14), '-', '')
 WHERE dispatched_at IS NULL AND scope LIKE 'webhook:tack:%'
   AND EXISTS (SELECT 1 FROM tack_workspaces t WHERE t.owner_workspace_id = substr(core_events.scope, 14) AND t.id = 'ws_' || replace(substr(core_events.scope, 14), '-', ''));
