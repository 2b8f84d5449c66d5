/**
 * SQL of the webhook engine: fan-out of claimed outbox events, the delivery queue (claims with
 * leases), the attempt log, endpoint health counters and the retention purge. Endpoint rows
 * are read here with the engine's own queries; the HTTP side has store/endpoints.ts.
 */
import type { Db } from "../../../core/db";

// ---------------------------------------------------------------- outbox -> events
// (core_events is read through EventOutbox.claim, never here)

/** Deliveries still to attempt (the metrics backlog; on the partial index of pending rows). */
export function countPendingDeliveries(db: Db): number {
  return db.query<{ n: number }, []>("SELECT COUNT(*) AS n FROM webhook_deliveries WHERE status = 'pending'").get()!.n;
}

/** Endpoints that take new deliveries in a scope (event_types is filtered by the caller). */
export function selectReceivingEndpoints(db: Db, product: string, scopeId: string): { id: string; event_types: string }[] {
  return db
    .query<{ id: string; event_types: string }, [string, string]>(
      "SELECT id, event_types FROM webhook_endpoints WHERE product = ? AND scope_id = ? AND enabled = 1 AND status = 'enabled' ORDER BY id",
    )
    .all(product, scopeId);
}

export interface NewEventRow {
  id: string;
  product: string;
  scope_id: string;
  type: string;
  body: string;
  is_test: number;
  created_at: string;
  created_ms: number;
}

/** Ignores a repeat of the same id (a re-dispatched outbox row keeps its first envelope). */
export function insertEvent(db: Db, e: NewEventRow): boolean {
  return (
    db
      .query(
        `INSERT OR IGNORE INTO webhook_events (id, product, scope_id, type, body, is_test, created_at, created_ms)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(e.id, e.product, e.scope_id, e.type, e.body, e.is_test, e.created_at, e.created_ms).changes === 1
  );
}

export function insertDelivery(db: Db, d: { id: string; event_id: string; endpoint_id: string; next_attempt_ms: number; at: string }): void {
  db.query(
    `INSERT OR IGNORE INTO webhook_deliveries (id, event_id, endpoint_id, status, attempts, next_attempt_ms, created_at, updated_at)
     VALUES (?, ?, ?, 'pending', 0, ?, ?, ?)`,
  ).run(d.id, d.event_id, d.endpoint_id, d.next_attempt_ms, d.at, d.at);
}

// ---------------------------------------------------------------- the delivery queue

/** A due delivery with what deciding on it needs (the body is read once it is claimed). */
export interface DueRow {
  id: string;
  event_id: string;
  endpoint_id: string;
  attempts: number;
  enabled: number;
  status: string;
}

/**
 * Due, unleased pending deliveries, earliest first, skipping endpoints listed in
 * `excludeJson` (a JSON array of endpoint ids already at their concurrency cap). Ordered by
 * next_attempt_ms alone so the due index gives the order: a tie-breaker column would sort
 * every due row (a burst shares one next_attempt_ms) on each call.
 */
export function selectDue(db: Db, nowMs: number, excludeJson: string, limit: number): DueRow[] {
  return db
    .query<DueRow, [number, number, string, number]>(
      `SELECT d.id, d.event_id, d.endpoint_id, d.attempts, e.enabled, e.status
       FROM webhook_deliveries d
       JOIN webhook_endpoints e ON e.id = d.endpoint_id
       WHERE d.status = 'pending' AND d.next_attempt_ms <= ?1
         AND (d.lease_until_ms IS NULL OR d.lease_until_ms <= ?2)
         AND d.endpoint_id NOT IN (SELECT value FROM json_each(?3))
       ORDER BY d.next_attempt_ms
       LIMIT ?4`,
    )
    .all(nowMs, nowMs, excludeJson, limit);
}

/**
 * Takes the lease of one delivery if nobody holds it. Returns false when another pump (or
 * process) claimed it first or it is no longer pending.
 */
export function claimLease(db: Db, id: string, nowMs: number, leaseUntilMs: number): boolean {
  return (
    db
      .query(
        `UPDATE webhook_deliveries SET lease_until_ms = ?
         WHERE id = ? AND status = 'pending' AND (lease_until_ms IS NULL OR lease_until_ms <= ?)`,
      )
      .run(leaseUntilMs, id, nowMs).changes === 1
  );
}

/** A pending delivery whose endpoint stopped receiving: finished without a send. */
export function markNotSent(db: Db, id: string, at: string): void {
  db.query("UPDATE webhook_deliveries SET status = 'not_sent', next_attempt_ms = NULL, lease_until_ms = NULL, updated_at = ? WHERE id = ? AND status = 'pending'").run(at, id);
}

/**
 * Records the outcome of a scheduled attempt, fenced by the lease this pump took: if the
 * lease was lost (expired and re-claimed, or the delivery was dropped meanwhile) nothing
 * changes and false is returned.
 */
export function finishAttempt(
  db: Db,
  d: { id: string; leaseUntilMs: number; status: "pending" | "delivered" | "failed"; attempts: number; nextAttemptMs: number | null; statusCode: number | null; error: string | null; at: string },
): boolean {
  return (
    db
      .query(
        `UPDATE webhook_deliveries
         SET status = ?, attempts = ?, next_attempt_ms = ?, lease_until_ms = NULL, last_status_code = ?, last_error = ?, updated_at = ?
         WHERE id = ? AND status = 'pending' AND lease_until_ms = ?`,
      )
      .run(d.status, d.attempts, d.nextAttemptMs, d.statusCode, d.error, d.at, d.id, d.leaseUntilMs).changes === 1
  );
}

/** Pending deliveries of an endpoint become not_sent (auto-disable drops queued retries). */
export function dropPendingOfEndpoint(db: Db, endpointId: string, at: string): number {
  return db
    .query("UPDATE webhook_deliveries SET status = 'not_sent', next_attempt_ms = NULL, lease_until_ms = NULL, updated_at = ? WHERE endpoint_id = ? AND status = 'pending'")
    .run(at, endpointId).changes;
}

// ---------------------------------------------------------------- attempts

export interface NewAttemptRow {
  id: string;
  delivery_id: string | null;
  event_id: string;
  endpoint_id: string;
  trigger: "scheduled" | "retry" | "test" | "replay";
  status_code: number | null;
  latency_ms: number;
  error_class: string | null;
  response_body: string | null;
  created_at: string;
  created_ms: number;
}

/**
 * Logs one attempt. attempt_number is the attempt's place among every attempt ever made of
 * this event to this endpoint (scheduled, retries, tests and replays alike), so the log reads
 * 1, 2, 3... whatever triggered each one.
 */
export function insertAttempt(db: Db, a: NewAttemptRow): number {
  const n =
    db
      .query<{ n: number }, [string, string]>("SELECT COUNT(*) AS n FROM webhook_attempts WHERE event_id = ? AND endpoint_id = ?")
      .get(a.event_id, a.endpoint_id)!.n + 1;
  db.query(
    `INSERT INTO webhook_attempts (id, delivery_id, event_id, endpoint_id, attempt_number, trigger, status_code, latency_ms, error_class, response_body, created_at, created_ms)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(a.id, a.delivery_id, a.event_id, a.endpoint_id, n, a.trigger, a.status_code, a.latency_ms, a.error_class, a.response_body, a.created_at, a.created_ms);
  return n;
}

// ---------------------------------------------------------------- endpoint health

export interface EndpointHealth {
  id: string;
  enabled: number;
  status: string;
  consecutive_failures: number;
  first_failure_at: string | null;
}

export function selectEndpointHealth(db: Db, id: string): EndpointHealth | null {
  return db
    .query<EndpointHealth, [string]>("SELECT id, enabled, status, consecutive_failures, first_failure_at FROM webhook_endpoints WHERE id = ?")
    .get(id);
}

export function recordEndpointSuccess(db: Db, id: string, statusCode: number, at: string): void {
  db.query(
    `UPDATE webhook_endpoints SET consecutive_failures = 0, first_failure_at = NULL, last_status_code = ?, last_attempt_at = ?, updated_at = ?
     WHERE id = ?`,
  ).run(statusCode, at, at, id);
}

/** A failed manual send (test, replay): the latest attempt is recorded, the failure streak is not touched. */
export function recordEndpointAttempt(db: Db, id: string, statusCode: number | null, at: string): void {
  db.query("UPDATE webhook_endpoints SET last_status_code = ?, last_attempt_at = ?, updated_at = ? WHERE id = ?").run(statusCode, at, at, id);
}

export function recordEndpointFailure(db: Db, id: string, f: { consecutiveFailures: number; firstFailureAt: string; statusCode: number | null; at: string }): void {
  db.query(
    `UPDATE webhook_endpoints SET consecutive_failures = ?, first_failure_at = ?, last_status_code = ?, last_attempt_at = ?, updated_at = ?
     WHERE id = ?`,
  ).run(f.consecutiveFailures, f.firstFailureAt, f.statusCode, f.at, f.at, id);
}

/** Auto-disable: `enabled` stays what the user set; PATCH enabled:true brings it back. */
export function autoDisableEndpoint(db: Db, id: string, at: string): void {
  db.query(
    `UPDATE webhook_endpoints SET status = 'auto_disabled', disabled_reason = 'failing', auto_disabled_at = ?, updated_at = ?
     WHERE id = ? AND status = 'enabled'`,
  ).run(at, at, id);
}

// ---------------------------------------------------------------- one-off sends (test / replay)

export interface SendTarget {
  id: string;
  product: string;
  url: string;
  secret_enc: string;
  prev_secret_enc: string | null;
  prev_secret_expires_ms: number | null;
  legacy: number;
}

export function selectSendTarget(db: Db, endpointId: string): SendTarget | null {
  return db
    .query<SendTarget, [string]>("SELECT id, product, url, secret_enc, prev_secret_enc, prev_secret_expires_ms, legacy FROM webhook_endpoints WHERE id = ?")
    .get(endpointId);
}

export function selectEventBody(db: Db, eventId: string): { id: string; body: string } | null {
  return db.query<{ id: string; body: string }, [string]>("SELECT id, body FROM webhook_events WHERE id = ?").get(eventId);
}

// ---------------------------------------------------------------- retention

/**
 * Deletes up to `batch` events created before the cutoff (deliveries and attempts go with
 * them through ON DELETE CASCADE). Batched so one purge never holds the write lock long.
 */
export function deleteEventsBefore(db: Db, cutoffMs: number, batch: number): number {
  return db
    .query("DELETE FROM webhook_events WHERE id IN (SELECT id FROM webhook_events WHERE created_ms < ? LIMIT ?)")
    .run(cutoffMs, batch).changes;
}
