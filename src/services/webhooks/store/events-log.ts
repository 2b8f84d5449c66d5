/** SQL of the events log (read side), plus the rows test sends and replays write. */
import type { Db } from "../../../core/db";

// One definition of an event row and of its insert, shared with the engine's store.
export { insertEvent, type NewEventRow as EventRow } from "./deliveries";
import type { NewEventRow as EventRow } from "./deliveries";

export type EventSummaryRow = Omit<EventRow, "body" | "product" | "scope_id">;

export interface DeliverySummaryRow {
  id: string;
  event_id: string;
  endpoint_id: string;
  status: "pending" | "delivered" | "failed" | "not_sent";
  attempts: number;
  last_status_code: number | null;
  next_attempt_ms: number | null;
}

/** A delivery with the latest attempt of its (event, endpoint), whatever triggered it. */
export interface DeliveryWithLatestRow extends DeliverySummaryRow {
  latest_attempt_number: number | null;
  latest_trigger: string | null;
  latest_error_class: string | null;
  latest_latency_ms: number | null;
  latest_created_at: string | null;
}

/** What an attempt tells a caller; both the events log and the legacy deliveries list show it. */
export interface AttemptFields {
  attempt_number: number;
  trigger: string;
  status_code: number | null;
  latency_ms: number;
  error_class: string | null;
  response_body: string | null;
  created_at: string;
}

export interface AttemptRow extends AttemptFields {
  id: string;
  delivery_id: string | null;
  event_id: string;
  endpoint_id: string;
  created_ms: number;
}

export interface EventFilter {
  product: string;
  scopeId: string;
  sinceMs: number;
  type: string | null;
  endpointId: string | null;
  status: string | null;
  /** Keyset position: the last row of the previous page (newest first). */
  before: { ms: number; id: string } | null;
  limit: number;
}

/** Events of a scope, newest first; endpoint/status filters match on one delivery having both. */
export function listEvents(db: Db, f: EventFilter): EventSummaryRow[] {
  const where = ["e.product = ?", "e.scope_id = ?", "e.created_ms >= ?"];
  const args: (string | number)[] = [f.product, f.scopeId, f.sinceMs];
  if (f.type !== null) {
    where.push("e.type = ?");
    args.push(f.type);
  }
  if (f.before) {
    where.push("(e.created_ms < ? OR (e.created_ms = ? AND e.id < ?))");
    args.push(f.before.ms, f.before.ms, f.before.id);
  }
  if (f.endpointId !== null || f.status !== null) {
    const sub = ["d.event_id = e.id"];
    if (f.endpointId !== null) {
      sub.push("d.endpoint_id = ?");
      args.push(f.endpointId);
    }
    if (f.status !== null) {
      sub.push("d.status = ?");
      args.push(f.status);
    }
    where.push(`EXISTS (SELECT 1 FROM webhook_deliveries d WHERE ${sub.join(" AND ")})`);
  }
  args.push(f.limit);
  return db
    .query<EventSummaryRow, (string | number)[]>(
      `SELECT e.id, e.type, e.is_test, e.created_at, e.created_ms FROM webhook_events e
       WHERE ${where.join(" AND ")} ORDER BY e.created_ms DESC, e.id DESC LIMIT ?`,
    )
    .all(...args);
}

/**
 * Deliveries of the given events (one per endpoint), in the order they were created, each
 * with its latest attempt read from the attempt log: the delivery row only tracks the
 * scheduled stream (its attempts drive the retry schedule), while test sends and replays
 * are attempts too, so `attempts` and `last_status_code` come from the log (attempt_number
 * of the latest attempt counts every attempt of that event to that endpoint). Uses the
 * webhook_attempts_event_endpoint index; rowid orders attempts of the same millisecond.
 */
export function deliveriesOf(db: Db, eventIds: string[]): DeliveryWithLatestRow[] {
  if (eventIds.length === 0) return [];
  return db
    .query<DeliveryWithLatestRow, string[]>(
      `SELECT d.id, d.event_id, d.endpoint_id, d.status, d.next_attempt_ms,
              COALESCE(l.attempt_number, 0) AS attempts, l.status_code AS last_status_code,
              l.attempt_number AS latest_attempt_number, l.trigger AS latest_trigger, l.error_class AS latest_error_class,
              l.latency_ms AS latest_latency_ms, l.created_at AS latest_created_at
       FROM webhook_deliveries d
       LEFT JOIN webhook_attempts l ON l.id = (
         SELECT a.id FROM webhook_attempts a WHERE a.event_id = d.event_id AND a.endpoint_id = d.endpoint_id
         ORDER BY a.created_ms DESC, a.rowid DESC LIMIT 1)
       WHERE d.event_id IN (${eventIds.map(() => "?").join(",")}) ORDER BY d.created_at, d.endpoint_id`,
    )
    .all(...eventIds);
}

export const eventInScope = (db: Db, product: string, scopeId: string, id: string, sinceMs: number) =>
  db
    .query<EventRow, [string, string, string, number]>("SELECT * FROM webhook_events WHERE product = ? AND scope_id = ? AND id = ? AND created_ms >= ?")
    .get(product, scopeId, id, sinceMs);

export const attemptsOf = (db: Db, eventId: string) =>
  db.query<AttemptRow, [string]>("SELECT * FROM webhook_attempts WHERE event_id = ? ORDER BY created_ms, rowid").all(eventId);

export const deliveryFor = (db: Db, eventId: string, endpointId: string) =>
  db.query<DeliverySummaryRow, [string, string]>(
    "SELECT id, event_id, endpoint_id, status, attempts, last_status_code, next_attempt_ms FROM webhook_deliveries WHERE event_id = ? AND endpoint_id = ?",
  ).get(eventId, endpointId);

/**
 * A delivery row for a manual send (test, or a replay to an endpoint that never had this
 * event). It starts as not_sent, which the engine never picks up: manual sends are not retried.
 */
export function insertManualDelivery(db: Db, d: { id: string; event_id: string; endpoint_id: string; now: string }) {
  db.query(
    `INSERT INTO webhook_deliveries (id, event_id, endpoint_id, status, attempts, next_attempt_ms, created_at, updated_at)
     VALUES (?, ?, ?, 'not_sent', 0, NULL, ?, ?)`,
  ).run(d.id, d.event_id, d.endpoint_id, d.now, d.now);
}

/** The outcome of a manual send on its own delivery row: final, never retried. */
export function finishManualDelivery(db: Db, id: string, r: { succeeded: boolean; status_code: number | null; error: string | null }, now: string) {
  db.query(
    `UPDATE webhook_deliveries SET status = ?, attempts = attempts + 1, next_attempt_ms = NULL, lease_until_ms = NULL,
       last_status_code = ?, last_error = ?, updated_at = ? WHERE id = ?`,
  ).run(r.succeeded ? "delivered" : "failed", r.status_code, r.error, now, id);
}

/**
 * A successful replay settles a scheduled delivery: delivered, no further retry. A failed
 * replay leaves the delivery as it was (its retry schedule, if any, continues).
 */
export function settleDeliveredByReplay(db: Db, id: string, statusCode: number | null, now: string) {
  db.query(
    `UPDATE webhook_deliveries SET status = 'delivered', next_attempt_ms = NULL, last_status_code = ?, last_error = NULL, updated_at = ?
     WHERE id = ? AND status <> 'delivered'`,
  ).run(statusCode, now, id);
}
