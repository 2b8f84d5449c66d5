/** SQL for App roles and the App's permission catalogue. */
import type { Db } from "../../../core/db";

export interface RoleRow {
  id: string;
  app_id: string;
  name: string;
  description: string;
  permissions: string;
  created_at: string;
  updated_at: string;
}

export const roleByName = (db: Db, appId: string, name: string) =>
  db.query<RoleRow, [string, string]>("SELECT * FROM auth_roles WHERE app_id = ? AND name = ?").get(appId, name);

export const roleById = (db: Db, appId: string, id: string) =>
  db.query<RoleRow, [string, string]>("SELECT * FROM auth_roles WHERE app_id = ? AND id = ?").get(appId, id);
