/** SQL for an App's machine-to-machine clients (client_credentials). */
import type { Sql } from "../../../core/db";

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

export async function insertClient(db: Sql, r: M2mClientRow): Promise<void> {
  await db.run(
    `INSERT INTO auth_m2m_clients (id, app_id, client_id, name, secret_hash, secret_hint, permissions, created_at, rotated_at, last_used_at)
     VALUES ($id, $app_id, $client_id, $name, $secret_hash, $secret_hint, $permissions, $created_at, $rotated_at, $last_used_at)`,
    { ...r },
  );
}

/** A client of the App by its row id or its public client_id. */
export const clientByRef = (db: Sql, appId: string, ref: string) =>
  db.get<M2mClientRow>("SELECT * FROM auth_m2m_clients WHERE app_id = ? AND (id = ? OR client_id = ?)", appId, ref, ref);

/** The token endpoint's lookup: by client_id within the App. */
export const clientByClientId = (db: Sql, appId: string, clientId: string) =>
  db.get<M2mClientRow>("SELECT * FROM auth_m2m_clients WHERE app_id = ? AND client_id = ?", appId, clientId);

/** Keyset page in id (creation) order. */
export const listClients = (db: Sql, appId: string, after: string | null, limit: number) =>
  db.all<M2mClientRow>("SELECT * FROM auth_m2m_clients WHERE app_id = ? AND id > ? ORDER BY id LIMIT ?", appId, after ?? "", limit);

export const updateClient = (db: Sql, id: string, f: { name: string; permissions: string }) =>
  db.run("UPDATE auth_m2m_clients SET name = ?, permissions = ? WHERE id = ?", f.name, f.permissions, id);

export const setClientSecret = (db: Sql, id: string, hash: string, hint: string, now: string) =>
  db.run("UPDATE auth_m2m_clients SET secret_hash = ?, secret_hint = ?, rotated_at = ? WHERE id = ?", hash, hint, now, id);

/** Advisory: written at most once a minute per client (cutoff = now - 1 minute). */
export const touchClient = (db: Sql, id: string, now: string, cutoff: string) =>
  db.run("UPDATE auth_m2m_clients SET last_used_at = ? WHERE id = ? AND (last_used_at IS NULL OR last_used_at < ?)", now, id, cutoff);

export const deleteClient = (db: Sql, appId: string, id: string) => db.run("DELETE FROM auth_m2m_clients WHERE app_id = ? AND id = ?", appId, id);
