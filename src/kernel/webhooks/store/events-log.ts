/** SQL of the events log (read side), plus the rows test sends and replays write. */
import type { Sql } from "../../../core/db";

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
export function listEvents(db: Sql, f: EventFilter): Promise<EventSummaryRow[]> {
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
  return db.all<EventSummaryRow>(
    `SELECT e.id, e.type, e.is_test, e.created_at, e.created_ms FROM webhook_events e
     WHERE ${where.join(" AND ")} ORDER BY e.created_ms DESC, e.id DESC LIMIT ?`,
    ...args,
  );
}

/**
 * Deliveries of the given events (one per endpoint), in the order they were created, each
 * with its latest attempt read from the attempt log: the delivery row only tracks the
 * scheduled stream (its attempts drive the retry schedule), while test sends and replays
 * are attempts too, so `attempts` and `last_status_code` come from the log (attempt_number
 * of the latest attempt counts every attempt of that event to that endpoint). Uses the
 * webhook_attempts_event_endpoint index; the id (UUIDv7, increasing) orders attempts of the
 * same millisecond.
 */
export async function deliveriesOf(db: Sql, eventIds: string[]): Promise<DeliveryWithLatestRow[]> {
  if (eventIds.length === 0) return [];
  return db.all<DeliveryWithLatestRow>(
      `SELECT d.id, d.event_id, d.endpoint_id, d.status, d.next_attempt_ms,
              COALESCE(l.attempt_number, 0) AS attempts, l.status_code AS last_status_code,
              l.attempt_number AS latest_attempt_number, l.trigger AS latest_trigger, l.error_class AS latest_error_class,
              l.latency_ms AS latest_latency_ms, l.created_at AS latest_created_at
       FROM webhook_deliveries d
       LEFT JOIN webhook_attempts l ON l.id = (
         SELECT a.id FROM webhook_attempts a WHERE a.event_id = d.event_id AND a.endpoint_id = d.endpoint_id
         ORDER BY a.created_ms DESC, a.id DESC LIMIT 1)
       WHERE d.event_id IN (${eventIds.map(() => "?").join(",")}) ORDER BY d.created_at, d.endpoint_id`,
    ...eventIds,
  );
}

export const eventInScope = (db: Sql, product: string, scopeId: string, id: string, sinceMs: number) =>
  db.get<EventRow>("SELECT * FROM webhook_events WHERE product = ? AND scope_id = ? AND id = ? AND created_ms >= ?", product, scopeId, id, sinceMs);

/** Every attempt of an event, oldest first (the id, UUIDv7, orders attempts of the same millisecond). */
export const attemptsOf = (db: Sql, eventId: string) => db.all<AttemptRow>("SELECT * FROM webhook_attempts WHERE event_id = ? ORDER BY created_ms, id", eventId);

export const deliveryFor = (db: Sql, eventId: string, endpointId: string) =>
  db.get<DeliverySummaryRow>(
    "SELECT id, event_id, endpoint_id, status, attempts, last_status_code, next_attempt_ms FROM webhook_deliveries WHERE event_id = ? AND endpoint_id = ?",
    eventId,
    endpointId,
  );

/**
 * A delivery row for a manual send (test, or a replay to an endpoint that never had this
 * event). It starts as not_sent, which the engine never picks up: manual sends are not retried.
 */
export async function insertManualDelivery(db: Sql, d: { id: string; event_id: string; endpoint_id: string; now: string }): Promise<void> {
  await db.run(
    `INSERT INTO webhook_deliveries (id, event_id, endpoint_id, status, attempts, next_attempt_ms, created_at, updated_at)
     VALUES (?, ?, ?, 'not_sent', 0, NULL, ?, ?)`,
    d.id,
    d.event_id,
    d.endpoint_id,
    d.now,
    d.now,
  );
}

/** The outcome of a manual send on its own delivery row: final, never retried. */
export async function finishManualDelivery(db: Sql, id: string, r: { succeeded: boolean; status_code: number | null; error: string | null }, now: string): Promise<void> {
  await db.run(
    `UPDATE webhook_deliveries SET status = ?, attempts = attempts + 1, next_attempt_ms = NULL, lease_until_ms = NULL,
       last_status_code = ?, last_error = ?, updated_at = ? WHERE id = ?`,
    r.succeeded ? "delivered" : "failed",
    r.status_code,
    r.error,
    now,
    id,
  );
}

/**
 * A successful replay settles a scheduled delivery: delivered, no further retry. A failed
 * replay leaves the delivery as it was (its retry schedule, if any, continues).
 */
export async function settleDeliveredByReplay(db: Sql, id: string, statusCode: number | null, now: string): Promise<void> {
  await db.run(
    `UPDATE webhook_deliveries SET status = 'delivered', next_attempt_ms = NULL, last_status_code = ?, last_error = NULL, updated_at = ?
     WHERE id = ? AND status <> 'delivered'`,
    statusCode,
    now,
    id,
  );
}
