/** SQL for an App's machine-to-machine clients (client_credentials). */
import type { Db } from "../../../core/db";

export interface M2mClientRow {
  id: string;
  app_id: string;
  client_id: string;
  name: string;
  secret_hash: string;
  secret_hint: string;
  permissions: string;
  created_at: string;
  rotated_at: string | null;
  last_used_at: string | null;
}

export function insertClient(db: Db, r: M2mClientRow) {
  db.query(
    `INSERT INTO auth_m2m_clients (id, app_id, client_id, name, secret_hash, secret_hint, permissions, created_at, rotated_at, last_used_at)
     VALUES ($id, $app_id, $client_id, $name, $secret_hash, $secret_hint, $permissions, $created_at, $rotated_at, $last_used_at)`,
  ).run(r as any);
}

/** A client of the App by its row id or its public client_id. */
export const clientByRef = (db: Db, appId: string, ref: string) =>
  db.query<M2mClientRow, [string, string, string]>("SELECT * FROM auth_m2m_clients WHERE app_id = ? AND (id = ? OR client_id = ?)").get(appId, ref, ref);

/** The token endpoint's lookup: by client_id within the App. */
export const clientByClientId = (db: Db, appId: string, clientId: string) =>
  db.query<M2mClientRow, [string, string]>("SELECT * FROM auth_m2m_clients WHERE app_id = ? AND client_id = ?").get(appId, clientId);

/** Keyset page in id (creation) order. */
export const listClients = (db: Db, appId: string, after: string | null, limit: number) =>
  db.query<M2mClientRow, [string, string, number]>("SELECT * FROM auth_m2m_clients WHERE app_id = ? AND id > ? ORDER BY id LIMIT ?").all(appId, after ?? "", limit);

export const updateClient = (db: Db, id: string, f: { name: string; permissions: string }) =>
  db.query("UPDATE auth_m2m_clients SET name = ?, permissions = ? WHERE id = ?").run(f.name, f.permissions, id).changes;

export const setClientSecret = (db: Db, id: string, hash: string, hint: string, now: string) =>
  db.query("UPDATE auth_m2m_clients SET secret_hash = ?, secret_hint = ?, rotated_at = ? WHERE id = ?").run(hash, hint, now, id).changes;

/** Advisory: written at most once a minute per client (cutoff = now - 1 minute). */
export const touchClient = (db: Db, id: string, now: string, cutoff: string) =>
  db.query("UPDATE auth_m2m_clients SET last_used_at = ? WHERE id = ? AND (last_used_at IS NULL OR last_used_at < ?)").run(now, id, cutoff).changes;

export const deleteClient = (db: Db, appId: string, id: string) => db.query("DELETE FROM auth_m2m_clients WHERE app_id = ? AND id = ?").run(appId, id).changes;
