/** All SQL of the mail sandbox part: the dev outbox (table mail_dev_outbox, migrations/0056_mail_sandbox.sql). */
import type { Sql } from "../../../core/db";

export interface OutboxRow {
  id: string;
  workspace_id: string;
  message_id: string;
  domain_id: string | null;
  from_address: string;
  to_address: string;
  subject: string;
  /** JSON object of the extra headers, or null. */
  headers: string | null;
  html: string | null;
  text: string | null;
  created_at: string;
}

export async function insertOutbox(db: Sql, r: OutboxRow): Promise<void> {
  await db.run(
    `INSERT INTO mail_dev_outbox (id, workspace_id, message_id, domain_id, from_address, to_address, subject, headers, html, text, created_at)
     VALUES ($id, $workspace_id, $message_id, $domain_id, $from_address, $to_address, $subject, $headers, $html, $text, $created_at)`,
    { ...r },
  );
}

/** Keeps the newest `keep` captured messages of a workspace; the older ones go. Returns how many went. */
export async function pruneOutbox(db: Sql, workspaceId: string, keep: number): Promise<number> {
  // The oldest row still kept; everything older than it goes (portable: no LIMIT in DELETE).
  const edge = await db.get<{ created_at: string; id: string }>(
    "SELECT created_at, id FROM mail_dev_outbox WHERE workspace_id = ? ORDER BY created_at DESC, id DESC LIMIT 1 OFFSET ?",
    workspaceId,
    keep - 1,
  );
  if (!edge) return 0;
  return db.run(
    "DELETE FROM mail_dev_outbox WHERE workspace_id = ? AND (created_at < ? OR (created_at = ? AND id < ?))",
    workspaceId,
    edge.created_at,
    edge.created_at,
    edge.id,
  );
}

/** Captured messages of a workspace, newest first, after the keyset position `before`. */
export function listOutbox(db: Sql, workspaceId: string, before: { created_at: string; id: string } | null, limit: number): Promise<OutboxRow[]> {
  if (!before) return db.all<OutboxRow>("SELECT * FROM mail_dev_outbox WHERE workspace_id = ? ORDER BY created_at DESC, id DESC LIMIT ?", workspaceId, limit);
  return db.all<OutboxRow>(
    "SELECT * FROM mail_dev_outbox WHERE workspace_id = ? AND (created_at < ? OR (created_at = ? AND id < ?)) ORDER BY created_at DESC, id DESC LIMIT ?",
    workspaceId,
    before.created_at,
    before.created_at,
    before.id,
    limit,
  );
}

/** One captured message of a workspace; another workspace's id reads as absent. */
export const outboxInWorkspace = (db: Sql, workspaceId: string, id: string) =>
  db.get<OutboxRow>("SELECT * FROM mail_dev_outbox WHERE workspace_id = ? AND id = ?", workspaceId, id);
