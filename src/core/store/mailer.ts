/** SQL of the system mail outbox (core_mail_outbox). */
import type { Sql } from "./sql";

export type SystemMailStatus = "queued" | "sent" | "failed" | "logged";

export interface MailRow {
  id: string;
  from_addr: string;
  to_addr: string;
  subject: string;
  text_body: string;
  html_body: string | null;
  status: SystemMailStatus;
  attempts: number;
  next_attempt_at: string;
  last_error: string | null;
  message_id: string | null;
  created_at: string;
  updated_at: string;
  sent_at: string | null;
}

const COLUMNS = "id, from_addr, to_addr, subject, text_body, html_body, status, attempts, next_attempt_at, last_error, message_id, created_at, updated_at, sent_at";

export async function insertMail(db: Sql, r: Pick<MailRow, "id" | "from_addr" | "to_addr" | "subject" | "text_body" | "html_body" | "created_at">): Promise<void> {
  await db.run(
    `INSERT INTO core_mail_outbox (id, from_addr, to_addr, subject, text_body, html_body, status, attempts, next_attempt_at, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, 'queued', 0, ?, ?, ?)`,
    r.id, r.from_addr, r.to_addr, r.subject, r.text_body, r.html_body, r.created_at, r.created_at, r.created_at,
  );
}

/** Queued messages due at `now`, most overdue first. */
export function selectDue(db: Sql, now: string, limit: number): Promise<MailRow[]> {
  return db.all<MailRow>(`SELECT ${COLUMNS} FROM core_mail_outbox WHERE status = 'queued' AND next_attempt_at <= ? ORDER BY next_attempt_at, created_at LIMIT ?`, now, limit);
}

/**
 * Takes a due message for one attempt: counts the attempt and pushes next_attempt_at to
 * `leaseUntil`, so no other runner picks it up meanwhile and a crash mid-send only delays
 * it. Returns false if someone else took it first.
 */
/** Messages still to send (new or waiting for a retry): the metrics queue gauge. */
export async function countQueued(db: Sql): Promise<number> {
  return (await db.get<{ n: number }>("SELECT COUNT(*) AS n FROM core_mail_outbox WHERE status = 'queued'"))!.n;
}

export async function claimMail(db: Sql, id: string, now: string, leaseUntil: string): Promise<boolean> {
  const changed = await db.run(
    "UPDATE core_mail_outbox SET attempts = attempts + 1, next_attempt_at = ?, updated_at = ? WHERE id = ? AND status = 'queued' AND next_attempt_at <= ?",
    leaseUntil, now, id, now,
  );
  return changed === 1;
}

export async function markDone(db: Sql, id: string, status: "sent" | "logged", at: string, messageId: string | null): Promise<void> {
  await db.run("UPDATE core_mail_outbox SET status = ?, sent_at = ?, updated_at = ?, message_id = ?, last_error = NULL WHERE id = ?", status, at, at, messageId, id);
}

export async function markRetry(db: Sql, id: string, nextAttemptAt: string, error: string, now: string): Promise<void> {
  await db.run("UPDATE core_mail_outbox SET next_attempt_at = ?, last_error = ?, updated_at = ? WHERE id = ?", nextAttemptAt, error, now, id);
}

export async function markFailed(db: Sql, id: string, error: string, now: string): Promise<void> {
  await db.run("UPDATE core_mail_outbox SET status = 'failed', last_error = ?, updated_at = ? WHERE id = ?", error, now, id);
}

export function selectMail(db: Sql, id: string): Promise<MailRow | null> {
  return db.get<MailRow>(`SELECT ${COLUMNS} FROM core_mail_outbox WHERE id = ?`, id);
}

export function selectRecent(db: Sql, limit: number): Promise<MailRow[]> {
  return db.all<MailRow>(`SELECT ${COLUMNS} FROM core_mail_outbox ORDER BY created_at DESC, id DESC LIMIT ?`, limit);
}

/** Deletes finished messages (sent, logged, failed) last touched before `cutoff`. */
export function deleteFinishedBefore(db: Sql, cutoff: string): Promise<number> {
  return db.run("DELETE FROM core_mail_outbox WHERE status IN ('sent', 'logged', 'failed') AND updated_at < ?", cutoff);
}
