/** SQL of the system mail outbox (core_mail_outbox). */
import type { Db } from "../db";

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

export function insertMail(db: Db, r: Pick<MailRow, "id" | "from_addr" | "to_addr" | "subject" | "text_body" | "html_body" | "created_at">): void {
  db.query(
    `INSERT INTO core_mail_outbox (id, from_addr, to_addr, subject, text_body, html_body, status, attempts, next_attempt_at, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, 'queued', 0, ?, ?, ?)`,
  ).run(r.id, r.from_addr, r.to_addr, r.subject, r.text_body, r.html_body, r.created_at, r.created_at, r.created_at);
}

/** Queued messages due at `now`, most overdue first. */
export function selectDue(db: Db, now: string, limit: number): MailRow[] {
  return db
    .query<MailRow, [string, number]>(`SELECT ${COLUMNS} FROM core_mail_outbox WHERE status = 'queued' AND next_attempt_at <= ? ORDER BY next_attempt_at, created_at LIMIT ?`)
    .all(now, limit);
}

/**
 * Takes a due message for one attempt: counts the attempt and pushes next_attempt_at to
 * `leaseUntil`, so no other runner picks it up meanwhile and a crash mid-send only delays
 * it. Returns false if someone else took it first.
 */
/** Messages still to send (new or waiting for a retry): the metrics queue gauge. */
export function countQueued(db: Db): number {
  return db.query<{ n: number }, []>("SELECT COUNT(*) AS n FROM core_mail_outbox WHERE status = 'queued'").get()!.n;
}

export function claimMail(db: Db, id: string, now: string, leaseUntil: string): boolean {
  return (
    db
      .query("UPDATE core_mail_outbox SET attempts = attempts + 1, next_attempt_at = ?, updated_at = ? WHERE id = ? AND status = 'queued' AND next_attempt_at <= ?")
      .run(leaseUntil, now, id, now).changes === 1
  );
}

export function markDone(db: Db, id: string, status: "sent" | "logged", at: string, messageId: string | null): void {
  db.query("UPDATE core_mail_outbox SET status = ?, sent_at = ?, updated_at = ?, message_id = ?, last_error = NULL WHERE id = ?").run(status, at, at, messageId, id);
}

export function markRetry(db: Db, id: string, nextAttemptAt: string, error: string, now: string): void {
  db.query("UPDATE core_mail_outbox SET next_attempt_at = ?, last_error = ?, updated_at = ? WHERE id = ?").run(nextAttemptAt, error, now, id);
}

export function markFailed(db: Db, id: string, error: string, now: string): void {
  db.query("UPDATE core_mail_outbox SET status = 'failed', last_error = ?, updated_at = ? WHERE id = ?").run(error, now, id);
}

export function selectMail(db: Db, id: string): MailRow | null {
  return db.query<MailRow, [string]>(`SELECT ${COLUMNS} FROM core_mail_outbox WHERE id = ?`).get(id);
}

export function selectRecent(db: Db, limit: number): MailRow[] {
  return db.query<MailRow, [number]>(`SELECT ${COLUMNS} FROM core_mail_outbox ORDER BY created_at DESC, id DESC LIMIT ?`).all(limit);
}

/** Deletes finished messages (sent, logged, failed) last touched before `cutoff`. */
export function deleteFinishedBefore(db: Db, cutoff: string): number {
  return db.query("DELETE FROM core_mail_outbox WHERE status IN ('sent', 'logged', 'failed') AND updated_at < ?").run(cutoff).changes;
}
