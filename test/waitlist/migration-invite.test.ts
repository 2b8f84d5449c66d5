/**
 * Migration 0096 on entries from before it: an invited entry reads sent, an approved entry whose
 * invite the outbox gave up reads failed (with the outbox's error), one still being tried reads
 * pending, and entries with no invite to make keep invite null.
 */
import { Database } from "bun:sqlite";
import { expect, test } from "bun:test";
import { MIGRATIONS } from "../../src/app";

const T0 = "2026-11-02T09:14:05.000Z";
const T1 = "2026-11-02T09:20:41.000Z";

test("0096 backfills the invite of entries approved before it", () => {
  const db = new Database(":memory:");
  db.exec("PRAGMA foreign_keys = OFF"); // rows of this service only: no workspaces or accounts needed
  const at = MIGRATIONS.findIndex((m) => m.name === "0096_waitlist_invite_outcome");
  for (const m of MIGRATIONS.slice(0, at)) if (m.sql.replace(/--.*$/gm, "").trim()) db.exec(m.sql);

  db.query("INSERT INTO waitlist_settings (workspace_id, default_auth_app_slug, notifications_via_mail, updated_at) VALUES ('ws1', 'acme-app', 0, ?)").run(T0);
  db.query("INSERT INTO waitlist_settings (workspace_id, default_auth_app_slug, notifications_via_mail, updated_at) VALUES ('ws2', NULL, 1, ?)").run(T0);
  const entry = (id: string, ws: string, status: string, invitedAt: string | null) =>
    db
      .query(
        `INSERT INTO waitlist_entries (id, waitlist_id, workspace_id, email, referral_code, status, invited_at, invited_to_app_slug, metadata, custom_fields, created_at, updated_at)
         VALUES (?, 'w', ?, ?, ?, ?, ?, ?, '{}', '{}', ?, ?)`,
      )
      .run(id, ws, `${id}@example.com`, id, status, invitedAt, invitedAt ? "acme-app" : null, T0, T0);
  const notification = (entryId: string, ws: string, state: string, attempts: number, error: string | null) =>
    db
      .query(
        `INSERT INTO waitlist_notifications (id, workspace_id, waitlist_id, entry_id, kind, state, attempts, next_attempt_at, last_error, created_at, updated_at)
         VALUES (?, ?, 'w', ?, 'approved', ?, ?, 0, ?, ?, ?)`,
      )
      .run(`n-${entryId}`, ws, entryId, state, attempts, error, T0, T1);
  entry("sent", "ws1", "approved", T1);
  notification("sent", "ws1", "done", 1, null);
  entry("failed", "ws1", "approved", null);
  notification("failed", "ws1", "failed", 8, "A user with this email already exists");
  entry("retrying", "ws1", "approved", null);
  notification("retrying", "ws1", "pending", 2, "Auth unavailable");
  entry("waiting", "ws1", "pending", null);
  entry("mailonly", "ws2", "approved", null);
  notification("mailonly", "ws2", "failed", 8, "template missing");

  db.exec(MIGRATIONS[at]!.sql);
  const invite = (id: string) =>
    db.query("SELECT invite_status, invite_app_slug, invite_attempts, invite_error_code, invite_error_message, invite_updated_at FROM waitlist_entries WHERE id = ?").get(id);
  expect(invite("sent")).toEqual({ invite_status: "sent", invite_app_slug: "acme-app", invite_attempts: 1, invite_error_code: null, invite_error_message: null, invite_updated_at: T1 });
  expect(invite("failed")).toEqual({
    invite_status: "failed", invite_app_slug: "acme-app", invite_attempts: 8, invite_error_code: "INVITE_FAILED", invite_error_message: "A user with this email already exists", invite_updated_at: T1,
  });
  expect(invite("retrying")).toMatchObject({ invite_status: "pending", invite_attempts: 2, invite_error_code: "INVITE_FAILED", invite_error_message: "Auth unavailable" });
  expect(invite("waiting")).toMatchObject({ invite_status: null, invite_attempts: 0 });
  expect(invite("mailonly")).toMatchObject({ invite_status: null, invite_attempts: 0 });
});
