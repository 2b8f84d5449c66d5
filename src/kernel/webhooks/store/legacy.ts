/**
 * SQL of the deprecated webhook surface ({scope}/webhooks and {scope}/webhooks/{id}): the
 * legacy rows (webhook_endpoints.legacy = 1) of a scope and the attempt log of one of them.
 * Inserts, updates and deletes go through store/endpoints.ts like every endpoint.
 */
import type { Sql } from "../../../core/db";
import type { AttemptFields } from "./events-log";
import type { EndpointRow } from "./endpoints";

/** One legacy endpoint of a scope; another scope's id, or a non-legacy endpoint, reads as absent. */
export const legacyInScope = (db: Sql, product: string, scopeId: string, id: string) =>
  db.get<EndpointRow>("SELECT * FROM webhook_endpoints WHERE product = ? AND scope_id = ? AND id = ? AND legacy = 1", product, scopeId, id);

/**
 * Legacy endpoints of a scope, newest first, keyset-paged by (created_at, id) descending:
 * `before` is the last row of the previous page.
 */
export function listLegacy(db: Sql, product: string, scopeId: string, before: { created_at: string; id: string } | null, limit: number): Promise<EndpointRow[]> {
  if (before === null) {
    return db.all<EndpointRow>(
      "SELECT * FROM webhook_endpoints WHERE product = ? AND scope_id = ? AND legacy = 1 ORDER BY created_at DESC, id DESC LIMIT ?",
      product,
      scopeId,
      limit,
    );
  }
  return db.all<EndpointRow>(
    `SELECT * FROM webhook_endpoints WHERE product = ? AND scope_id = ? AND legacy = 1
       AND (created_at < ? OR (created_at = ? AND id < ?))
     ORDER BY created_at DESC, id DESC LIMIT ?`,
    product,
    scopeId,
    before.created_at,
    before.created_at,
    before.id,
    limit,
  );
}

export interface LegacyAttemptRow extends AttemptFields {
  id: string;
  event_id: string;
  event_type: string;
}

/**
 * The most recent attempts made to one endpoint (scheduled, retries, tests and replays),
 * newest first. Uses the webhook_attempts_endpoint index (endpoint_id, created_ms); the id
 * (UUIDv7, increasing) orders attempts recorded within the same millisecond.
 */
export const recentAttempts = (db: Sql, endpointId: string, limit: number) =>
  db.all<LegacyAttemptRow>(
    `SELECT a.id, a.event_id, e.type AS event_type, a.attempt_number, a.trigger, a.status_code, a.latency_ms, a.error_class, a.response_body, a.created_at
     FROM webhook_attempts a JOIN webhook_events e ON e.id = a.event_id
     WHERE a.endpoint_id = ?
     ORDER BY a.created_ms DESC, a.id DESC
     LIMIT ?`,
    endpointId,
    limit,
  );
