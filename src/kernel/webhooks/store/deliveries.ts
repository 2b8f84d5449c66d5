/**
 * SQL of the webhook engine: fan-out of claimed outbox events, the delivery queue (claims with
 * leases), the attempt log, endpoint health counters and the retention purge. Endpoint rows
 * are read here with the engine's own queries; the HTTP side has store/endpoints.ts.
 */
import type { Sql } from "../../../core/db";
import { dialect } from "../../../core/store/sql";

// ---------------------------------------------------------------- outbox -> events
// (core_events is read through EventOutbox.claim, never here)

/** Deliveries still to attempt (the metrics backlog; on the partial index of pending rows). */
export async function countPendingDeliveries(db: Sql): Promise<number> {
  return (await db.get<{ n: number }>("SELECT COUNT(*) AS n FROM webhook_deliveries WHERE status = 'pending'"))!.n;
}

/** Endpoints that take new deliveries in a scope (event_types is filtered by the caller). */
export function selectReceivingEndpoints(db: Sql, product: string, scopeId: string): Promise<{ id: string; event_types: string }[]> {
  return db.all<{ id: string; event_types: string }>(
    "SELECT id, event_types FROM webhook_endpoints WHERE product = ? AND scope_id = ? AND enabled = 1 AND status = 'enabled' ORDER BY id",
    product,
    scopeId,
  );
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
export async function insertEvent(db: Sql, e: NewEventRow): Promise<boolean> {
  const changed = await db.run(
    `INSERT INTO webhook_events (id, product, scope_id, type, body, is_test, created_at, created_ms)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
    e.id,
    e.product,
    e.scope_id,
    e.type,
    e.body,
    e.is_test,
    e.created_at,
    e.created_ms,
  );
  return changed === 1;
}

/** Ignores a second delivery of the same event to the same endpoint (UNIQUE (event_id, endpoint_id)). */
export async function insertDelivery(db: Sql, d: { id: string; event_id: string; endpoint_id: string; next_attempt_ms: number; at: string }): Promise<void> {
  await db.run(
    `INSERT INTO webhook_deliveries (id, event_id, endpoint_id, status, attempts, next_attempt_ms, created_at, updated_at)
     VALUES (?, ?, ?, 'pending', 0, ?, ?, ?) ON CONFLICT DO NOTHING`,
    d.id,
    d.event_id,
    d.endpoint_id,
    d.next_attempt_ms,
    d.at,
    d.at,
  );
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
 * Due, unleased pending deliveries, earliest first, skipping endpoints listed in `exclude`
 * (endpoint ids already at their concurrency cap). Ordered by next_attempt_ms alone so the
 * due index gives the order: a tie-breaker column would sort every due row (a burst shares
 * one next_attempt_ms) on each call.
 *
 * Run it in the transaction that then claims the rows (claimLease): on PostgreSQL the
 * delivery rows are locked and rows another node is claiming are skipped. The endpoint's
 * columns come from scalar subqueries rather than a join so that only delivery rows are
 * locked (a join would lock the endpoint rows too, and other nodes would skip every
 * delivery of those endpoints while this claim runs).
 */
export function selectDue(db: Sql, nowMs: number, exclude: readonly string[], limit: number): Promise<DueRow[]> {
  const excludeJson = JSON.stringify(exclude);
  const notExcluded =
    db.engine === "postgres"
      ? "NOT IN (SELECT jsonb_array_elements_text(?3::text::jsonb))" // bound as text: a jsonb parameter would get the string JSON-encoded
      : "NOT IN (SELECT value FROM json_each(?3))";
  return db.all<DueRow>(
    `SELECT d.id, d.event_id, d.endpoint_id, d.attempts,
            (SELECT e.enabled FROM webhook_endpoints e WHERE e.id = d.endpoint_id) AS enabled,
            (SELECT e.status FROM webhook_endpoints e WHERE e.id = d.endpoint_id) AS status
     FROM webhook_deliveries d
     WHERE d.status = 'pending' AND d.next_attempt_ms <= ?1
       AND (d.lease_until_ms IS NULL OR d.lease_until_ms <= ?2)
       AND d.endpoint_id ${notExcluded}
     ORDER BY d.next_attempt_ms
     LIMIT ?4${dialect(db).skipLocked}`,
    nowMs,
    nowMs,
    excludeJson,
    limit,
  );
}

/**
 * Takes the lease of one delivery for `owner` (`<node>/<process>`, core/node-id.ts) if nobody
 * holds it. Returns false when another pump (or process) claimed it first or it is no longer
 * pending.
 */
export async function claimLease(db: Sql, id: string, nowMs: number, leaseUntilMs: number, owner: string): Promise<boolean> {
  const changed = await db.run(
    `UPDATE webhook_deliveries SET lease_until_ms = ?, lease_owner = ?
     WHERE id = ? AND status = 'pending' AND (lease_until_ms IS NULL OR lease_until_ms <= ?)`,
    leaseUntilMs,
    owner,
    id,
    nowMs,
  );
  return changed === 1;
}

/**
 * Leases this node's previous processes held when they stopped are ended, so those deliveries
 * are due now instead of when the lease runs out. `patterns` are core/node-id.ts's (LIKE,
 * escape character backslash). Returns how many.
 */
export function reclaimInterrupted(db: Sql, patterns: { previousLives: string; mine: string }): Promise<number> {
  return db.run(
    `UPDATE webhook_deliveries SET lease_until_ms = NULL, lease_owner = NULL
     WHERE status = 'pending' AND lease_until_ms IS NOT NULL AND lease_owner LIKE ? ESCAPE '\\' AND lease_owner NOT LIKE ? ESCAPE '\\'`,
    patterns.previousLives,
    patterns.mine,
  );
}

/** A pending delivery whose endpoint stopped receiving: finished without a send. */
export async function markNotSent(db: Sql, id: string, at: string): Promise<void> {
  await db.run("UPDATE webhook_deliveries SET status = 'not_sent', next_attempt_ms = NULL, lease_until_ms = NULL, updated_at = ? WHERE id = ? AND status = 'pending'", at, id);
}

/**
 * Records the outcome of a scheduled attempt, fenced by the lease this pump took: if the
 * lease was lost (expired and re-claimed, or the delivery was dropped meanwhile) nothing
 * changes and false is returned.
 */
export async function finishAttempt(
  db: Sql,
  d: { id: string; leaseUntilMs: number; status: "pending" | "delivered" | "failed"; attempts: number; nextAttemptMs: number | null; statusCode: number | null; error: string | null; at: string },
): Promise<boolean> {
  const changed = await db.run(
    `UPDATE webhook_deliveries
     SET status = ?, attempts = ?, next_attempt_ms = ?, lease_until_ms = NULL, lease_owner = NULL, last_status_code = ?, last_error = ?, updated_at = ?
     WHERE id = ? AND status = 'pending' AND lease_until_ms = ?`,
    d.status,
    d.attempts,
    d.nextAttemptMs,
    d.statusCode,
    d.error,
    d.at,
    d.id,
    d.leaseUntilMs,
  );
  return changed === 1;
}

/** Pending deliveries of an endpoint become not_sent (auto-disable drops queued retries). */
export function dropPendingOfEndpoint(db: Sql, endpointId: string, at: string): Promise<number> {
  return db.run(
    "UPDATE webhook_deliveries SET status = 'not_sent', next_attempt_ms = NULL, lease_until_ms = NULL, updated_at = ? WHERE endpoint_id = ? AND status = 'pending'",
    at,
    endpointId,
  );
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
export async function insertAttempt(db: Sql, a: NewAttemptRow): Promise<number> {
  const n = (await db.get<{ n: number }>("SELECT COUNT(*) AS n FROM webhook_attempts WHERE event_id = ? AND endpoint_id = ?", a.event_id, a.endpoint_id))!.n + 1;
  await db.run(
    `INSERT INTO webhook_attempts (id, delivery_id, event_id, endpoint_id, attempt_number, trigger, status_code, latency_ms, error_class, response_body, created_at, created_ms)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    a.id,
    a.delivery_id,
    a.event_id,
    a.endpoint_id,
    n,
    a.trigger,
    a.status_code,
    a.latency_ms,
    a.error_class,
    a.response_body,
    a.created_at,
    a.created_ms,
  );
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

export function selectEndpointHealth(db: Sql, id: string): Promise<EndpointHealth | null> {
  return db.get<EndpointHealth>("SELECT id, enabled, status, consecutive_failures, first_failure_at FROM webhook_endpoints WHERE id = ?", id);
}

export async function recordEndpointSuccess(db: Sql, id: string, statusCode: number, at: string): Promise<void> {
  await db.run(
    `UPDATE webhook_endpoints SET consecutive_failures = 0, first_failure_at = NULL, last_status_code = ?, last_attempt_at = ?, updated_at = ?
     WHERE id = ?`,
    statusCode,
    at,
    at,
    id,
  );
}

/** A failed manual send (test, replay): the latest attempt is recorded, the failure streak is not touched. */
export async function recordEndpointAttempt(db: Sql, id: string, statusCode: number | null, at: string): Promise<void> {
  await db.run("UPDATE webhook_endpoints SET last_status_code = ?, last_attempt_at = ?, updated_at = ? WHERE id = ?", statusCode, at, at, id);
}

/**
 * One more failure in the endpoint's streak (the first one starts it at `at`). The counter
 * is incremented by the UPDATE itself, so failures recorded at once (several pumps, several
 * nodes) all count; returns the streak as it now stands, or null when the endpoint is gone.
 */
export function recordEndpointFailure(
  db: Sql,
  id: string,
  f: { statusCode: number | null; at: string },
): Promise<{ consecutive_failures: number; first_failure_at: string; status: string } | null> {
  return db.get<{ consecutive_failures: number; first_failure_at: string; status: string }>(
    `UPDATE webhook_endpoints
     SET consecutive_failures = consecutive_failures + 1, first_failure_at = COALESCE(first_failure_at, ?), last_status_code = ?, last_attempt_at = ?, updated_at = ?
     WHERE id = ?
     RETURNING consecutive_failures, first_failure_at, status`,
    f.at,
    f.statusCode,
    f.at,
    f.at,
    id,
  );
}

/** Auto-disable: `enabled` stays what the user set; PATCH enabled:true brings it back. Returns whether this call disabled it. */
export async function autoDisableEndpoint(db: Sql, id: string, at: string): Promise<boolean> {
  const changed = await db.run(
    `UPDATE webhook_endpoints SET status = 'auto_disabled', disabled_reason = 'failing', auto_disabled_at = ?, updated_at = ?
     WHERE id = ? AND status = 'enabled'`,
    at,
    at,
    id,
  );
  return changed === 1;
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

export function selectSendTarget(db: Sql, endpointId: string): Promise<SendTarget | null> {
  return db.get<SendTarget>("SELECT id, product, url, secret_enc, prev_secret_enc, prev_secret_expires_ms, legacy FROM webhook_endpoints WHERE id = ?", endpointId);
}

export function selectEventBody(db: Sql, eventId: string): Promise<{ id: string; body: string } | null> {
  return db.get<{ id: string; body: string }>("SELECT id, body FROM webhook_events WHERE id = ?", eventId);
}

// ---------------------------------------------------------------- retention

/**
 * Deletes up to `batch` events created before the cutoff (deliveries and attempts go with
 * them through ON DELETE CASCADE). Batched so one purge never holds the write lock long.
 */
export function deleteEventsBefore(db: Sql, cutoffMs: number, batch: number): Promise<number> {
  return db.run("DELETE FROM webhook_events WHERE id IN (SELECT id FROM webhook_events WHERE created_ms < ? LIMIT ?)", cutoffMs, batch);
}
