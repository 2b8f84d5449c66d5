/** All SQL of the mail service's messages part: the message log (and send queue), settings, suppressions, the export lock. */
import type { Sql } from "../../../core/db";
import { dialect } from "../../../core/store/sql";

export const MESSAGE_STATUSES = ["queued", "sending", "sent", "delivered", "deferred", "bounced", "complained", "failed"] as const;
export type MessageStatus = (typeof MESSAGE_STATUSES)[number];
export const SUPPRESSION_REASONS = ["bounce", "complaint", "manual", "unsubscribe"] as const;
export type SuppressionReason = (typeof SUPPRESSION_REASONS)[number];

export interface MessageRow {
  id: string;
  workspace_id: string;
  domain_id: string | null;
  from_address: string;
  to_address: string;
  to_fold: string;
  subject: string;
  subject_fold: string;
  template_name: string | null;
  status: MessageStatus;
  smtp_transcript: string | null;
  spf_result: string | null;
  dkim_result: string | null;
  dmarc_result: string | null;
  bounce_code: string | null;
  bounce_detail: string | null;
  error: string | null;
  created_at: string;
  sent_at: string | null;
  delivered_at: string | null;
  deferred_at: string | null;
  bounced_at: string | null;
  complained_at: string | null;
  failed_at: string | null;
  deferral_count: number;
  attempts: number;
  next_attempt_ms: number | null;
  lease_until_ms: number | null;
  lease_owner: string | null;
  /** Set by the claim's worker just before it starts handing the message over (cleared by the outcome). */
  handover_ms: number | null;
  envelope_from: string | null;
  rfc822_message_id: string | null;
  headers: string | null;
  send_data: string | null;
  body_key: string | null;
  idempotency_key: string | null;
  batch_id: string | null;
  batch_index: number | null;
  /** 1 when sent from the sandbox domain (never relayed out). */
  sandbox: number;
  /** Where the delivery worker put a sandbox message; null for every other message. */
  delivered_to: DeliveredTo | null;
}

export const DELIVERED_TO = ["mailbox", "outbox"] as const;
export type DeliveredTo = (typeof DELIVERED_TO)[number];

const INSERT_COLUMNS = [
  "id", "workspace_id", "domain_id", "from_address", "to_address", "to_fold", "subject", "subject_fold", "template_name", "status",
  "created_at", "next_attempt_ms", "envelope_from", "rfc822_message_id", "headers", "send_data", "body_key", "idempotency_key", "batch_id", "batch_index", "sandbox",
] as const;
export type NewMessageRow = Pick<MessageRow, (typeof INSERT_COLUMNS)[number]>;

export async function insertMessage(db: Sql, r: NewMessageRow): Promise<void> {
  await db.run(`INSERT INTO mail_messages (${INSERT_COLUMNS.join(", ")}) VALUES (${INSERT_COLUMNS.map((c) => `$${c}`).join(", ")})`, { ...r });
}

export const messageById = (db: Sql, id: string) => db.get<MessageRow>("SELECT * FROM mail_messages WHERE id = ?", id);

export const messageInWorkspace = (db: Sql, workspaceId: string, id: string) =>
  db.get<MessageRow>("SELECT * FROM mail_messages WHERE workspace_id = ? AND id = ?", workspaceId, id);

export const messagesOfBatch = (db: Sql, workspaceId: string, batchId: string) =>
  db.all<MessageRow>("SELECT * FROM mail_messages WHERE workspace_id = ? AND batch_id = ? ORDER BY batch_index, id", workspaceId, batchId);

export interface MessageFilter {
  workspaceId: string;
  recipient: string | null;
  template: string | null;
  status: MessageStatus | null;
  /** LIKE pattern over subject_fold (escaped with backslash, lower-cased), or null. */
  subjectPattern: string | null;
  /** Keyset position: the last row of the previous page (newest first). */
  before: { created_at: string; id: string } | null;
  limit: number;
}

/** Messages of a workspace, newest first. */
export function listMessages(db: Sql, f: MessageFilter): Promise<MessageRow[]> {
  const where = ["workspace_id = ?"];
  const args: (string | number)[] = [f.workspaceId];
  if (f.recipient !== null) {
    where.push("to_address = ?");
    args.push(f.recipient);
  }
  if (f.template !== null) {
    where.push("template_name = ?");
    args.push(f.template);
  }
  if (f.status !== null) {
    where.push("status = ?");
    args.push(f.status);
  }
  if (f.subjectPattern !== null) {
    where.push("subject_fold LIKE ? ESCAPE '\\'");
    args.push(f.subjectPattern);
  }
  if (f.before) {
    where.push("(created_at < ? OR (created_at = ? AND id < ?))");
    args.push(f.before.created_at, f.before.created_at, f.before.id);
  }
  args.push(f.limit);
  return db.all<MessageRow>(`SELECT * FROM mail_messages WHERE ${where.join(" AND ")} ORDER BY created_at DESC, id DESC LIMIT ?`, ...args);
}

/** The messages of a workspace to one recipient, case-insensitively (right to be forgotten): ids and body keys. */
/** Object keys of every stored body in a workspace (its deletion removes them after commit). */
export const bodyKeysOfWorkspace = async (db: Sql, workspaceId: string): Promise<string[]> =>
  (await db.all<{ body_key: string }>("SELECT body_key FROM mail_messages WHERE workspace_id = ? AND body_key IS NOT NULL", workspaceId)).map((r) => r.body_key);

export const messagesToRecipient = (db: Sql, workspaceId: string, fold: string) =>
  db.all<{ id: string; body_key: string | null }>("SELECT id, body_key FROM mail_messages WHERE workspace_id = ? AND to_fold = ?", workspaceId, fold);

export const deleteMessagesToRecipient = (db: Sql, workspaceId: string, fold: string): Promise<number> =>
  db.run("DELETE FROM mail_messages WHERE workspace_id = ? AND to_fold = ?", workspaceId, fold);

// ------------------------------------------------------------------ send pipeline

/**
 * Claims up to `limit` messages that are due: queued or deferred with next_attempt_ms <= now,
 * or sending with a lease that ran out (a worker died mid-send: at-least-once). Run inside a
 * transaction: PostgreSQL locks the selected rows and skips those another node holds.
 */
export async function claimDue(t: Sql, now: number, leaseUntil: number, owner: string, limit: number): Promise<MessageRow[]> {
  const due = await t.all<{ id: string }>(
    `SELECT id FROM mail_messages
      WHERE (next_attempt_ms <= ? AND status IN ('queued','deferred')) OR (lease_until_ms <= ? AND status = 'sending')
      ORDER BY COALESCE(next_attempt_ms, lease_until_ms), id
      LIMIT ?${dialect(t).skipLocked}`,
    now,
    now,
    limit,
  );
  if (due.length === 0) return [];
  const ids = due.map((r) => r.id);
  const marks = ids.map(() => "?").join(", ");
  await t.run(
    `UPDATE mail_messages SET status = 'sending', next_attempt_ms = NULL, lease_until_ms = ?, lease_owner = ?, attempts = attempts + 1 WHERE id IN (${marks})`,
    leaseUntil,
    owner,
    ...ids,
  );
  return t.all<MessageRow>(`SELECT * FROM mail_messages WHERE id IN (${marks}) ORDER BY created_at, id`, ...ids);
}

/**
 * Claims of this node's previous processes (interrupted by a crash) become due at once: their
 * lease is ended, so the next claimDue takes them. `patterns` are core/node-id.ts's (LIKE,
 * escape character backslash). Returns how many.
 */
export const reclaimInterrupted = (db: Sql, patterns: { previousLives: string; mine: string }, now: number): Promise<number> =>
  db.run(
    `UPDATE mail_messages SET lease_until_ms = ?
      WHERE status = 'sending' AND lease_until_ms > ? AND lease_owner LIKE ? ESCAPE '\\' AND lease_owner NOT LIKE ? ESCAPE '\\'`,
    now,
    now,
    patterns.previousLives,
    patterns.mine,
  );

/** The claim's worker is about to hand the message over (see MessageRow.handover_ms); false when the claim was lost. */
export const markHandover = async (db: Sql, id: string, owner: string, now: number): Promise<boolean> =>
  (await db.run("UPDATE mail_messages SET handover_ms = ? WHERE id = ? AND status = 'sending' AND lease_owner = ?", now, id, owner)) === 1;

/** Extends a claim still held by `owner`; false when it was lost. */
export const extendLease = async (db: Sql, id: string, owner: string, leaseUntil: number): Promise<boolean> =>
  (await db.run("UPDATE mail_messages SET lease_until_ms = ? WHERE id = ? AND status = 'sending' AND lease_owner = ?", leaseUntil, id, owner)) === 1;

/** The fields an outcome changes (only those given). */
export type Outcome = Partial<
  Pick<
    MessageRow,
    | "status"
    | "smtp_transcript"
    | "spf_result"
    | "dkim_result"
    | "dmarc_result"
    | "bounce_code"
    | "bounce_detail"
    | "error"
    | "sent_at"
    | "delivered_at"
    | "deferred_at"
    | "bounced_at"
    | "complained_at"
    | "failed_at"
    | "deferral_count"
    | "next_attempt_ms"
    | "lease_until_ms"
    | "lease_owner"
    | "handover_ms"
    | "send_data"
    | "envelope_from"
    | "rfc822_message_id"
    | "delivered_to"
  >
>;

/**
 * Applies an outcome to a message when its state is still as expected: `from` lists the
 * statuses it may be in, and `owner` (when given) must hold its claim. Returns false
 * (nothing written) otherwise: a worker that lost its lease cannot overwrite a newer result.
 */
export async function applyOutcome(db: Sql, id: string, from: readonly MessageStatus[], owner: string | null, o: Outcome): Promise<boolean> {
  const keys = Object.keys(o) as (keyof Outcome)[];
  const sets = keys.map((k) => `${k} = ?`);
  const values = keys.map((k) => o[k] as string | number | null);
  let where = `id = ? AND status IN (${from.map(() => "?").join(", ")})`;
  const args: (string | number)[] = [id, ...from];
  if (owner !== null) {
    where += " AND lease_owner = ?";
    args.push(owner);
  }
  return (await db.run(`UPDATE mail_messages SET ${sets.join(", ")} WHERE ${where}`, ...values, ...args)) === 1;
}

// ------------------------------------------------------------------ reports

/**
 * Counts by status of a workspace's messages created in [since, until). Sandbox messages are
 * left out: they never met a receiver, so they say nothing about the workspace's reputation.
 */
export const statusCounts = (db: Sql, workspaceId: string, since: string, until: string) =>
  db.all<{ status: MessageStatus; n: number }>(
    "SELECT status, COUNT(*) AS n FROM mail_messages WHERE workspace_id = ? AND created_at >= ? AND created_at < ? AND sandbox = 0 GROUP BY status",
    workspaceId,
    since,
    until,
  );

/** Bounce details of negative outcomes of messages created in [since, until) (for block signals). */
export const negativeDetails = (db: Sql, workspaceId: string, since: string, until: string) =>
  db.all<{ bounce_detail: string; n: number }>(
    `SELECT bounce_detail, COUNT(*) AS n FROM mail_messages
      WHERE workspace_id = ? AND created_at >= ? AND created_at < ? AND bounce_detail IS NOT NULL
        AND status IN ('bounced','deferred','failed')
      GROUP BY bounce_detail`,
    workspaceId,
    since,
    until,
  );

/** Per UTC day (YYYY-MM-DD), messages whose `column` (sent_at or bounced_at) falls in [since, until). */
export function dailyCounts(db: Sql, workspaceId: string, column: "sent_at" | "bounced_at", since: string, until: string) {
  return db.all<{ day: string; n: number }>(
    `SELECT substr(${column}, 1, 10) AS day, COUNT(*) AS n FROM mail_messages
      WHERE workspace_id = ? AND ${column} >= ? AND ${column} < ? GROUP BY substr(${column}, 1, 10)`,
    workspaceId,
    since,
    until,
  );
}

// ------------------------------------------------------------------ settings

export const redactBodies = async (db: Sql, workspaceId: string): Promise<boolean> =>
  ((await db.get<{ redact_bodies: number }>("SELECT redact_bodies FROM mail_message_settings WHERE workspace_id = ?", workspaceId))?.redact_bodies ?? 0) === 1;

export async function setRedactBodies(db: Sql, workspaceId: string, on: boolean, now: string): Promise<void> {
  await db.run(
    `INSERT INTO mail_message_settings (workspace_id, redact_bodies, updated_at) VALUES (?, ?, ?)
     ON CONFLICT (workspace_id) DO UPDATE SET redact_bodies = excluded.redact_bodies, updated_at = excluded.updated_at`,
    workspaceId,
    on ? 1 : 0,
    now,
  );
}

// ------------------------------------------------------------------ suppressions

export interface SuppressionRow {
  workspace_id: string;
  email: string;
  reason: SuppressionReason;
  source_message_id: string | null;
  created_at: string;
}

/** Adds a suppression unless the address is already suppressed; true when a row was added. */
export const insertSuppression = async (db: Sql, r: SuppressionRow): Promise<boolean> =>
  (await db.run(
    `INSERT INTO mail_suppressions (workspace_id, email, reason, source_message_id, created_at) VALUES ($workspace_id, $email, $reason, $source_message_id, $created_at)
     ON CONFLICT (workspace_id, email) DO NOTHING`,
    { ...r },
  )) === 1;

export const suppression = (db: Sql, workspaceId: string, email: string) =>
  db.get<SuppressionRow>("SELECT * FROM mail_suppressions WHERE workspace_id = ? AND email = ?", workspaceId, email);

/** The suppressed addresses among `emails` (lower-cased). */
export async function suppressedAmong(db: Sql, workspaceId: string, emails: string[]): Promise<Set<string>> {
  if (emails.length === 0) return new Set();
  const rows = await db.all<{ email: string }>(
    `SELECT email FROM mail_suppressions WHERE workspace_id = ? AND email IN (${emails.map(() => "?").join(", ")})`,
    workspaceId,
    ...emails,
  );
  return new Set(rows.map((r) => r.email));
}

export const deleteSuppression = (db: Sql, workspaceId: string, email: string): Promise<number> =>
  db.run("DELETE FROM mail_suppressions WHERE workspace_id = ? AND email = ?", workspaceId, email);

export interface SuppressionFilter {
  workspaceId: string;
  reason: SuppressionReason | null;
  before: { created_at: string; email: string } | null;
  limit: number;
}

export function listSuppressions(db: Sql, f: SuppressionFilter): Promise<SuppressionRow[]> {
  const where = ["workspace_id = ?"];
  const args: (string | number)[] = [f.workspaceId];
  if (f.reason !== null) {
    where.push("reason = ?");
    args.push(f.reason);
  }
  if (f.before) {
    where.push("(created_at < ? OR (created_at = ? AND email < ?))");
    args.push(f.before.created_at, f.before.created_at, f.before.email);
  }
  args.push(f.limit);
  return db.all<SuppressionRow>(`SELECT * FROM mail_suppressions WHERE ${where.join(" AND ")} ORDER BY created_at DESC, email DESC LIMIT ?`, ...args);
}

// ------------------------------------------------------------------ export lock

/** Takes the workspace's export lock unless another holder's lease is still running; true when taken. */
export const takeExportLock = async (db: Sql, workspaceId: string, holder: string, now: number, leaseUntil: number): Promise<boolean> =>
  (await db.run(
    `INSERT INTO mail_message_export_locks (workspace_id, holder, lease_until_ms) VALUES (?, ?, ?)
     ON CONFLICT (workspace_id) DO UPDATE SET holder = excluded.holder, lease_until_ms = excluded.lease_until_ms
     WHERE mail_message_export_locks.lease_until_ms <= ?`,
    workspaceId,
    holder,
    leaseUntil,
    now,
  )) === 1;

export const exportLockUntil = async (db: Sql, workspaceId: string): Promise<number | null> =>
  (await db.get<{ lease_until_ms: number }>("SELECT lease_until_ms FROM mail_message_export_locks WHERE workspace_id = ?", workspaceId))?.lease_until_ms ?? null;

export const releaseExportLock = (db: Sql, workspaceId: string, holder: string): Promise<number> =>
  db.run("DELETE FROM mail_message_export_locks WHERE workspace_id = ? AND holder = ?", workspaceId, holder);
