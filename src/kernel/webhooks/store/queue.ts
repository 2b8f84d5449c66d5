/**
 * SQL of the delivery queue as product surfaces see it (queue.ts; the community's records
 * use it): one endpoint's attempt log with each request body, a delivery by reference, and
 * putting a delivery back into the queue.
 */
import type { Sql } from "../../../core/db";
import type { AttemptFields } from "./events-log";

export interface EndpointAttemptRow extends AttemptFields {
  /** att_... (UUIDv7, increasing): orders attempts recorded within the same millisecond (keyset position). */
  id: string;
  delivery_id: string | null;
  event_id: string;
  event_type: string;
  /** The envelope exactly as sent (the stored event body). */
  request_body: string;
  created_ms: number;
}

/**
 * Attempts made to one endpoint, newest first, keyset-paged by (created_ms, id) descending;
 * `before` is the last row of the previous page.
 */
export function attemptsOfEndpoint(db: Sql, endpointId: string, before: { ms: number; id: string } | null, limit: number): Promise<EndpointAttemptRow[]> {
  const page = before ? "AND (a.created_ms < ? OR (a.created_ms = ? AND a.id < ?))" : "";
  const args: (string | number)[] = [endpointId];
  if (before) args.push(before.ms, before.ms, before.id);
  args.push(limit);
  return db.all<EndpointAttemptRow>(
    `SELECT a.id, a.delivery_id, a.event_id, e.type AS event_type, e.body AS request_body, a.attempt_number, a.trigger,
            a.status_code, a.latency_ms, a.error_class, a.response_body, a.created_at, a.created_ms
     FROM webhook_attempts a JOIN webhook_events e ON e.id = a.event_id
     WHERE a.endpoint_id = ? ${page}
     ORDER BY a.created_ms DESC, a.id DESC
     LIMIT ?`,
    ...args,
  );
}

export interface DeliveryRef {
  id: string;
  event_id: string;
  status: string;
}

/** A delivery of one endpoint, by its id (dlv_...) or by the id of one of its attempts (att_...). */
export function deliveryOfEndpoint(db: Sql, endpointId: string, ref: string): Promise<DeliveryRef | null> {
  return db.get<DeliveryRef>(
    `SELECT d.id, d.event_id, d.status FROM webhook_deliveries d
     WHERE d.endpoint_id = ? AND (d.id = ? OR d.id = (SELECT a.delivery_id FROM webhook_attempts a WHERE a.id = ? AND a.endpoint_id = ?))`,
    endpointId,
    ref,
    ref,
    endpointId,
  );
}

/**
 * Puts a delivery back into the queue, due now, with a fresh retry schedule (attempts 0).
 * Refused (false) while an attempt of it is in flight (an unexpired lease): recording that
 * attempt would otherwise overwrite the new schedule.
 */
export async function requeueDelivery(db: Sql, id: string, nowMs: number, at: string): Promise<boolean> {
  const changed = await db.run(
    `UPDATE webhook_deliveries SET status = 'pending', attempts = 0, next_attempt_ms = ?, lease_until_ms = NULL, last_error = NULL, updated_at = ?
     WHERE id = ? AND (lease_until_ms IS NULL OR lease_until_ms <= ?)`,
    nowMs,
    at,
    id,
    nowMs,
  );
  return changed === 1;
}
