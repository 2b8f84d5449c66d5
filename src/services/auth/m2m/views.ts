/**
 * What the M2M routes serve: a client row turned into the record of schemas.ts, whose TypeBox
 * model is the type too (one declaration for the documented and the served shape).
 */
import type { Static } from "@sinclair/typebox";
import type { Client } from "./schemas";
import type { M2mClientRow } from "./store";

export type M2mClientView = Static<typeof Client>;

export const clientView = (r: M2mClientRow): M2mClientView => ({
  id: r.id,
  client_id: r.client_id,
  name: r.name,
  permissions: JSON.parse(r.permissions),
  secret_hint: r.secret_hint,
  created_at: r.created_at,
  rotated_at: r.rotated_at,
  last_used_at: r.last_used_at,
});
