/** SQL for webhook endpoints (the HTTP surface's side; the engine has its own queries in deliveries.ts). */
import type { Sql } from "../../../core/db";
import { updateById } from "../../../core/store/sql";

export interface EndpointRow {
  id: string;
  product: string;
  scope_id: string;
  url: string;
  description: string;
  /** JSON array of event types; empty = every type. */
  event_types: string;
  enabled: number;
  /** The engine's verdict; a manual pause is enabled = 0 (migration 0022 moved old "disabled" rows). */
  status: "enabled" | "auto_disabled";
  /** "failing" while auto_disabled. */
  disabled_reason: string | null;
  secret_enc: string;
  prev_secret_enc: string | null;
  prev_secret_expires_ms: number | null;
  legacy: number;
  consecutive_failures: number;
  first_failure_at: string | null;
  last_status_code: number | null;
  last_attempt_at: string | null;
  auto_disabled_at: string | null;
  created_at: string;
  updated_at: string;
}

export type NewEndpoint = Pick<EndpointRow, "id" | "product" | "scope_id" | "url" | "description" | "event_types" | "secret_enc" | "legacy" | "created_at" | "updated_at">;

export async function insertEndpoint(db: Sql, e: NewEndpoint): Promise<void> {
  await db.run(
    `INSERT INTO webhook_endpoints (id, product, scope_id, url, description, event_types, secret_enc, legacy, created_at, updated_at)
     VALUES ($id, $product, $scope_id, $url, $description, $event_types, $secret_enc, $legacy, $created_at, $updated_at)`,
    { ...e },
  );
}

/** One endpoint of a scope; another scope's id reads as absent. */
export const endpointInScope = (db: Sql, product: string, scopeId: string, id: string) =>
  db.get<EndpointRow>("SELECT * FROM webhook_endpoints WHERE product = ? AND scope_id = ? AND id = ?", product, scopeId, id);

export const countEndpoints = async (db: Sql, product: string, scopeId: string): Promise<number> =>
  (await db.get<{ n: number }>("SELECT COUNT(*) AS n FROM webhook_endpoints WHERE product = ? AND scope_id = ?", product, scopeId))!.n;

/** Keyset page by id (ep_ ids are UUIDv7: creation order). */
export const listEndpoints = (db: Sql, product: string, scopeId: string, after: string | null, limit: number) =>
  after === null
    ? db.all<EndpointRow>("SELECT * FROM webhook_endpoints WHERE product = ? AND scope_id = ? ORDER BY id LIMIT ?", product, scopeId, limit)
    : db.all<EndpointRow>("SELECT * FROM webhook_endpoints WHERE product = ? AND scope_id = ? AND id > ? ORDER BY id LIMIT ?", product, scopeId, after, limit);

/**
 * Endpoints of a scope, oldest first, by offset (the card board's pages): new rows land at
 * the end, so offsets already read stay valid while a client pages. Ties on created_at are
 * broken by id for a stable order.
 */
export const listByOffset = (db: Sql, product: string, scopeId: string, limit: number, offset: number) =>
  db.all<EndpointRow>("SELECT * FROM webhook_endpoints WHERE product = ? AND scope_id = ? ORDER BY created_at, id LIMIT ? OFFSET ?", product, scopeId, limit, offset);

/** Ids of every endpoint of a scope, oldest first. */
export const endpointIds = async (db: Sql, product: string, scopeId: string): Promise<string[]> =>
  (await db.all<{ id: string }>("SELECT id FROM webhook_endpoints WHERE product = ? AND scope_id = ? ORDER BY id", product, scopeId)).map((r) => r.id);

/** Fields a PATCH (or the state machine) may change; omitted keys stay as they are. */
export type EndpointPatch = Partial<
  Pick<EndpointRow, "url" | "description" | "event_types" | "enabled" | "status" | "disabled_reason" | "consecutive_failures" | "first_failure_at" | "auto_disabled_at">
>;

const PATCHABLE = ["url", "description", "event_types", "enabled", "status", "disabled_reason", "consecutive_failures", "first_failure_at", "auto_disabled_at"] as const;

export async function updateEndpoint(db: Sql, id: string, patch: EndpointPatch, updatedAt: string): Promise<void> {
  await updateById(db, "webhook_endpoints", id, patch, PATCHABLE, updatedAt);
}

export async function setSecrets(db: Sql, id: string, s: { secret_enc: string; prev_secret_enc: string | null; prev_secret_expires_ms: number | null }, updatedAt: string): Promise<void> {
  await db.run(
    "UPDATE webhook_endpoints SET secret_enc = ?, prev_secret_enc = ?, prev_secret_expires_ms = ?, updated_at = ? WHERE id = ?",
    s.secret_enc,
    s.prev_secret_enc,
    s.prev_secret_expires_ms,
    updatedAt,
    id,
  );
}

/**
 * Stops every queued retry of an endpoint: its pending deliveries become not_sent with no
 * next attempt (the engine only picks up pending rows). Returns how many were dropped.
 */
export function dropQueuedDeliveries(db: Sql, endpointId: string, now: string): Promise<number> {
  return db.run(
    "UPDATE webhook_deliveries SET status = 'not_sent', next_attempt_ms = NULL, lease_until_ms = NULL, updated_at = ? WHERE endpoint_id = ? AND status = 'pending'",
    now,
    endpointId,
  );
}

/** Deletes the endpoint; its deliveries and attempt log go with it (ON DELETE CASCADE). */
export const deleteEndpoint = (db: Sql, id: string): Promise<number> => db.run("DELETE FROM webhook_endpoints WHERE id = ?", id);
