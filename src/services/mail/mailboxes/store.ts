/** All SQL of the mailboxes part: mailboxes and received messages (tables of migration 0054). */
import type { Sql } from "../../../core/db";
import { updateById, nextWorkspaceSeq } from "../../../core/store/sql";

export const MAILBOX_STATUSES = ["active", "disabled"] as const;
export type MailboxStatus = (typeof MAILBOX_STATUSES)[number];

export interface MailboxRow {
  id: string;
  workspace_id: string;
  seq: number;
  domain_id: string;
  local_part: string;
  local_fold: string;
  display_name: string | null;
  owner_account_id: string | null;
  retention_days: number;
  status: MailboxStatus;
  last_message_seq: number;
  created_at: string;
  updated_at: string;
  deleted_at: string | null;
}

export interface ReceivedRow {
  id: string;
  workspace_id: string;
  mailbox_id: string;
  seq: number;
  raw_object_key: string;
  envelope_from: string;
  envelope_to: string;
  from_address: string;
  from_local: string;
  from_domain: string;
  from_fold: string;
  to_addresses: string;
  cc_addresses: string;
  subject: string;
  subject_fold: string;
  body_preview: string | null;
  rfc822_message_id: string | null;
  size_bytes: number;
  spam_score: number;
  spam_verdict: string;
  spam_rules: string;
  spf_result: string;
  dkim_result: string;
  dmarc_result: string;
  quarantined: number;
  attachments: string;
  received_at: string;
  received_ms: number;
  read_at: string | null;
  deleted_at: string | null;
}

/** A recipient the listener accepts: a live, active mailbox on an active receiving domain. */
export interface MailboxTarget {
  id: string;
  workspace_id: string;
  domain_id: string;
  fqdn: string;
}

export const nextSeq = (t: Sql, workspaceId: string) => nextWorkspaceSeq(t, "mail_mailbox_seq", workspaceId);

export async function insertMailbox(db: Sql, r: MailboxRow): Promise<void> {
  await db.run(
    `INSERT INTO mail_mailboxes (id, workspace_id, seq, domain_id, local_part, local_fold, display_name, owner_account_id, retention_days, status,
       last_message_seq, created_at, updated_at, deleted_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    r.id, r.workspace_id, r.seq, r.domain_id, r.local_part, r.local_fold, r.display_name, r.owner_account_id, r.retention_days, r.status,
    r.last_message_seq, r.created_at, r.updated_at, r.deleted_at,
  );
}

const num = (r: MailboxRow | null | undefined): MailboxRow | null =>
  r ? { ...r, seq: Number(r.seq), retention_days: Number(r.retention_days), last_message_seq: Number(r.last_message_seq) } : null;

export async function mailboxInWorkspace(db: Sql, workspaceId: string, id: string): Promise<MailboxRow | null> {
  return num(await db.get<MailboxRow>("SELECT * FROM mail_mailboxes WHERE id = ? AND workspace_id = ? AND deleted_at IS NULL", id, workspaceId));
}

export async function liveMailboxAt(db: Sql, domainId: string, localFold: string): Promise<MailboxRow | null> {
  return num(await db.get<MailboxRow>("SELECT * FROM mail_mailboxes WHERE domain_id = ? AND local_fold = ? AND deleted_at IS NULL", domainId, localFold));
}

export async function listMailboxes(
  db: Sql,
  f: { workspaceId: string; domainId: string | null; status: MailboxStatus | null; afterSeq: number; limit: number },
): Promise<MailboxRow[]> {
  const where = ["workspace_id = ?", "deleted_at IS NULL", "seq > ?"];
  const params: (string | number)[] = [f.workspaceId, f.afterSeq];
  if (f.domainId !== null) {
    where.push("domain_id = ?");
    params.push(f.domainId);
  }
  if (f.status !== null) {
    where.push("status = ?");
    params.push(f.status);
  }
  const rows = await db.all<MailboxRow>(`SELECT * FROM mail_mailboxes WHERE ${where.join(" AND ")} ORDER BY seq LIMIT ?`, ...params, f.limit);
  return rows.map((r) => num(r)!);
}

export const MAILBOX_PATCH_COLUMNS = ["display_name", "retention_days", "status", "deleted_at"] as const;
export type MailboxPatch = Partial<Pick<MailboxRow, (typeof MAILBOX_PATCH_COLUMNS)[number]>>;

export function updateMailbox(db: Sql, id: string, patch: MailboxPatch, now: string): Promise<number> {
  return updateById(db, "mail_mailboxes", id, patch, MAILBOX_PATCH_COLUMNS, now);
}

/** Live mailboxes of a domain (the domain's in-use check). */
export async function liveMailboxCount(db: Sql, domainId: string): Promise<number> {
  const r = await db.get<{ n: number | string }>("SELECT count(*) AS n FROM mail_mailboxes WHERE domain_id = ? AND deleted_at IS NULL", domainId);
  return Number(r?.n ?? 0);
}

// ------------------------------------------------------------------ the listener's look-ups

/** Active mailboxes for local@fqdn on active domains that receive (any workspace that verified the domain). */
export async function mailboxTargets(db: Sql, fqdn: string, localFold: string): Promise<MailboxTarget[]> {
  return db.all<MailboxTarget>(
    `SELECT m.id, m.workspace_id, m.domain_id, d.fqdn FROM mail_mailboxes m JOIN mail_domains d ON d.id = m.domain_id
      WHERE d.fqdn = ? AND d.status = 'active' AND d.intent IN ('receive','send_receive')
        AND m.local_fold = ? AND m.status = 'active' AND m.deleted_at IS NULL AND m.workspace_id = d.workspace_id`,
    fqdn,
    localFold,
  );
}

/** Domains whose test_address is bunker-test-<token>@fqdn (receive intents, any status). */
export async function testAddressDomains(db: Sql, fqdn: string, token: string): Promise<{ id: string; workspace_id: string }[]> {
  return db.all<{ id: string; workspace_id: string }>(
    "SELECT id, workspace_id FROM mail_domains WHERE fqdn = ? AND test_token = ? AND intent IN ('receive','send_receive')",
    fqdn,
    token,
  );
}

// ------------------------------------------------------------------ received messages

/** Takes the next per-mailbox seq (row lock on the mailbox). */
export async function nextMessageSeq(t: Sql, mailboxId: string): Promise<number> {
  const r = await t.get<{ last_message_seq: number | string }>(
    "UPDATE mail_mailboxes SET last_message_seq = last_message_seq + 1 WHERE id = ? RETURNING last_message_seq",
    mailboxId,
  );
  return Number(r!.last_message_seq);
}

export async function insertReceived(db: Sql, r: ReceivedRow): Promise<void> {
  await db.run(
    `INSERT INTO mail_received (id, workspace_id, mailbox_id, seq, raw_object_key, envelope_from, envelope_to, from_address, from_local, from_domain, from_fold,
       to_addresses, cc_addresses, subject, subject_fold, body_preview, rfc822_message_id, size_bytes, spam_score, spam_verdict, spam_rules,
       spf_result, dkim_result, dmarc_result, quarantined, attachments, received_at, received_ms, read_at, deleted_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    r.id, r.workspace_id, r.mailbox_id, r.seq, r.raw_object_key, r.envelope_from, r.envelope_to, r.from_address, r.from_local, r.from_domain, r.from_fold,
    r.to_addresses, r.cc_addresses, r.subject, r.subject_fold, r.body_preview, r.rfc822_message_id, r.size_bytes, r.spam_score, r.spam_verdict, r.spam_rules,
    r.spf_result, r.dkim_result, r.dmarc_result, r.quarantined, r.attachments, r.received_at, r.received_ms, r.read_at, r.deleted_at,
  );
}

const rnum = (r: ReceivedRow | null | undefined): ReceivedRow | null =>
  r ? { ...r, seq: Number(r.seq), size_bytes: Number(r.size_bytes), spam_score: Number(r.spam_score), quarantined: Number(r.quarantined), received_ms: Number(r.received_ms) } : null;

export async function receivedInMailbox(db: Sql, mailboxId: string, id: string): Promise<ReceivedRow | null> {
  return rnum(await db.get<ReceivedRow>("SELECT * FROM mail_received WHERE id = ? AND mailbox_id = ? AND deleted_at IS NULL", id, mailboxId));
}

export interface ReceivedFilter {
  mailboxId: string;
  fromPattern: string | null;
  subjectPattern: string | null;
  since: string | null;
  until: string | null;
  unread: boolean | null;
  before: { received_at: string; id: string } | null;
  limit: number;
}

/** Newest first. */
export async function listReceived(db: Sql, f: ReceivedFilter): Promise<ReceivedRow[]> {
  const where = ["mailbox_id = ?", "deleted_at IS NULL"];
  const params: (string | number)[] = [f.mailboxId];
  if (f.fromPattern !== null) {
    where.push("from_fold LIKE ? ESCAPE '\\'");
    params.push(f.fromPattern);
  }
  if (f.subjectPattern !== null) {
    where.push("subject_fold LIKE ? ESCAPE '\\'");
    params.push(f.subjectPattern);
  }
  if (f.since !== null) {
    where.push("received_at >= ?");
    params.push(f.since);
  }
  if (f.until !== null) {
    where.push("received_at < ?");
    params.push(f.until);
  }
  if (f.unread !== null) where.push(f.unread ? "read_at IS NULL" : "read_at IS NOT NULL");
  if (f.before) {
    where.push("(received_at < ? OR (received_at = ? AND id < ?))");
    params.push(f.before.received_at, f.before.received_at, f.before.id);
  }
  const rows = await db.all<ReceivedRow>(`SELECT * FROM mail_received WHERE ${where.join(" AND ")} ORDER BY received_at DESC, id DESC LIMIT ?`, ...params, f.limit);
  return rows.map((r) => rnum(r)!);
}

export function markRead(db: Sql, id: string, at: string): Promise<number> {
  return db.run("UPDATE mail_received SET read_at = ? WHERE id = ? AND read_at IS NULL", at, id);
}

export function softDeleteReceived(db: Sql, id: string, at: string): Promise<number> {
  return db.run("UPDATE mail_received SET deleted_at = ? WHERE id = ? AND deleted_at IS NULL", at, id);
}

// ------------------------------------------------------------------ retention

/**
 * Messages due for purge: older than their mailbox's retention (deleted ones included), or
 * belonging to a soft-deleted mailbox whose retention has passed since its deletion.
 */
export async function purgeCandidates(db: Sql, nowMs: number, limit: number): Promise<{ id: string; raw_object_key: string }[]> {
  return db.all<{ id: string; raw_object_key: string }>(
    `SELECT r.id, r.raw_object_key FROM mail_received r JOIN mail_mailboxes m ON m.id = r.mailbox_id
      WHERE r.received_ms < ? - CAST(m.retention_days AS BIGINT) * 86400000
      ORDER BY r.received_ms LIMIT ?`,
    nowMs,
    limit,
  );
}

export async function deleteReceived(db: Sql, ids: string[]): Promise<number> {
  if (!ids.length) return 0;
  return db.run(`DELETE FROM mail_received WHERE id IN (${ids.map(() => "?").join(", ")})`, ...ids);
}

/** Of these object keys, those no received message refers to any more. */
export async function unreferencedKeys(db: Sql, keys: string[]): Promise<string[]> {
  if (!keys.length) return [];
  const uniq = [...new Set(keys)];
  const used = await db.all<{ raw_object_key: string }>(
    `SELECT DISTINCT raw_object_key FROM mail_received WHERE raw_object_key IN (${uniq.map(() => "?").join(", ")})`,
    ...uniq,
  );
  const u = new Set(used.map((r) => r.raw_object_key));
  return uniq.filter((k) => !u.has(k));
}

/** Soft-deleted mailboxes with no messages left whose retention has passed since their deletion: the rows go. */
export async function deleteEmptyDeletedMailboxes(db: Sql, nowMs: number): Promise<number> {
  const rows = await db.all<{ id: string; deleted_at: string; retention_days: number | string }>(
    `SELECT m.id, m.deleted_at, m.retention_days FROM mail_mailboxes m
      WHERE m.deleted_at IS NOT NULL AND NOT EXISTS (SELECT 1 FROM mail_received r WHERE r.mailbox_id = m.id)`,
  );
  const due = rows.filter((r) => Date.parse(r.deleted_at) + Number(r.retention_days) * 86400000 <= nowMs).map((r) => r.id);
  if (!due.length) return 0;
  return db.run(`DELETE FROM mail_mailboxes WHERE id IN (${due.map(() => "?").join(", ")})`, ...due);
}

/** Raw object keys of a workspace's received messages and reports (deleted with it). */
export async function objectKeysOfWorkspace(db: Sql, workspaceId: string): Promise<string[]> {
  const a = await db.all<{ k: string }>("SELECT DISTINCT raw_object_key AS k FROM mail_received WHERE workspace_id = ?", workspaceId);
  const b = await db.all<{ k: string }>("SELECT raw_object_key AS k FROM mail_inbound_reports WHERE workspace_id = ? AND raw_object_key IS NOT NULL", workspaceId);
  return [...a, ...b].map((r) => r.k);
}
