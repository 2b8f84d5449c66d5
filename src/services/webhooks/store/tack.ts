/**
 * SQL of the card board's webhook records (/tack/api/v1/workspaces/{workspace}/webhooks):
 * the one query the shared endpoint store does not have, an offset page of a scope's
 * endpoints in creation order. Reads of one row, counts, inserts, updates and deletes go
 * through store/endpoints.ts like every endpoint.
 */
import type { Db } from "../../../core/db";
import type { EndpointRow } from "./endpoints";

/**
 * Endpoints of a scope, oldest first (new rows land at the end, so offsets already read
 * stay valid while a client pages). Ties on created_at are broken by id for a stable order.
 */
export const listByOffset = (db: Db, product: string, scopeId: string, limit: number, offset: number) =>
  db
    .query<EndpointRow, [string, string, number, number]>(
      "SELECT * FROM webhook_endpoints WHERE product = ? AND scope_id = ? ORDER BY created_at, id LIMIT ? OFFSET ?",
    )
    .all(product, scopeId, limit, offset);
