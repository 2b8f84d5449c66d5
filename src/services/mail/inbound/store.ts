/** SQL of the inbound part: VERP look-ups and the bounce/complaint report log (migration 0054). */
import type { Sql } from "../../../core/db";

/** The outbound message behind bounces+<id>@<fqdn>: the id must be a message sent from a domain of that name. */
export async function verpMessage(db: Sql, id: string, fqdn: string): Promise<{ id: string; workspace_id: string } | null> {
  return db.get<{ id: string; workspace_id: string }>(
    "SELECT m.id, m.workspace_id FROM mail_messages m JOIN mail_domains d ON d.id = m.domain_id WHERE m.id = ? AND d.fqdn = ?",
    id,
    fqdn,
  );
}

export interface ReportRow {
  id: string;
  workspace_id: string;
  message_id: string | null;
  kind: "dsn" | "arf" | "unparsed";
  action: string | null;
  status_code: string | null;
  detail: string | null;
  applied: number;
  raw_object_key: string | null;
  received_at: string;
  received_ms: number;
}

export async function insertReport(db: Sql, r: ReportRow): Promise<void> {
  await db.run(
    `INSERT INTO mail_inbound_reports (id, workspace_id, message_id, kind, action, status_code, detail, applied, raw_object_key, received_at, received_ms)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    r.id, r.workspace_id, r.message_id, r.kind, r.action, r.status_code, r.detail, r.applied, r.raw_object_key, r.received_at, r.received_ms,
  );
}

export async function reportCounts(db: Sql, workspaceId: string, sinceMs: number): Promise<{ kind: string; applied: number; n: number }[]> {
  const rows = await db.all<{ kind: string; applied: number | string; n: number | string }>(
    "SELECT kind, applied, count(*) AS n FROM mail_inbound_reports WHERE workspace_id = ? AND received_ms >= ? GROUP BY kind, applied",
    workspaceId,
    sinceMs,
  );
  return rows.map((r) => ({ kind: r.kind, applied: Number(r.applied), n: Number(r.n) }));
}

/** Reports older than the cut-off (retention of the report log): their raw keys, then the rows go. */
export async function oldReports(db: Sql, beforeMs: number, limit: number): Promise<{ id: string; raw_object_key: string | null }[]> {
  return db.all<{ id: string; raw_object_key: string | null }>("SELECT id, raw_object_key FROM mail_inbound_reports WHERE received_ms < ? ORDER BY received_ms LIMIT ?", beforeMs, limit);
}

export async function deleteReports(db: Sql, ids: string[]): Promise<number> {
  if (!ids.length) return 0;
  return db.run(`DELETE FROM mail_inbound_reports WHERE id IN (${ids.map(() => "?").join(", ")})`, ...ids);
}

export async function listReports(
  db: Sql,
  f: { workspaceId: string; kind: string | null; before: { received_ms: number; id: string } | null; limit: number },
): Promise<ReportRow[]> {
  const where = ["workspace_id = ?"];
  const params: (string | number)[] = [f.workspaceId];
  if (f.kind !== null) {
    where.push("kind = ?");
    params.push(f.kind);
  }
  if (f.before) {
    where.push("(received_ms < ? OR (received_ms = ? AND id < ?))");
    params.push(f.before.received_ms, f.before.received_ms, f.before.id);
  }
  const rows = await db.all<ReportRow>(`SELECT * FROM mail_inbound_reports WHERE ${where.join(" AND ")} ORDER BY received_ms DESC, id DESC LIMIT ?`, ...params, f.limit);
  return rows.map((r) => ({ ...r, applied: Number(r.applied), received_ms: Number(r.received_ms) }));
}
