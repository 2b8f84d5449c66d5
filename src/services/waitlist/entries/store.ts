/** The SQL of entries: the entries (with positions and counts), the notification outbox and the deferred referral events. */
import type { Sql } from "../../../core/db";
import { dialect, updateById } from "../../../core/store/sql";

export type EntryStatus = "pending" | "approved" | "rejected";

// ------------------------------------------------------------------ entries

export interface EntryRow {
  id: string;
  waitlist_id: string;
  workspace_id: string;
  email: string;
  name: string | null;
  interest: string | null;
  referrer: string | null;
  referral_code: string;
  referral_count: number;
  referred_by_entry_id: string | null;
  status: EntryStatus;
  invited_at: string | null;
  invited_to_app_slug: string | null;
  metadata: string;
  custom_fields: string;
  utm_source: string | null;
  utm_medium: string | null;
  utm_campaign: string | null;
  variant_id: string | null;
  client_hash: string | null;
  decided_at: string | null;
  created_at: string;
  updated_at: string;
  invite_status: InviteStatus | null;
  invite_app_slug: string | null;
  invite_attempts: number;
  invite_error_code: string | null;
  invite_error_message: string | null;
  invite_updated_at: string | null;
}

/** The approved entry's Auth invite (null: none for this entry). */
export type InviteStatus = "pending" | "sent" | "failed";

/** An entry with its computed position (null unless pending). */
export type PositionedEntry = EntryRow & { position: number | null };

/**
 * Inserts an entry and counts it (waitlist_stats). Returns the waitlist's pending count after
 * it (RETURNING: the sign-up's position without another read).
 */
export async function insertEntry(db: Sql, r: EntryRow): Promise<{ pending: number }> {
  await db.run(
    `INSERT INTO waitlist_entries (id, waitlist_id, workspace_id, email, name, interest, referrer, referral_code, referral_count, referred_by_entry_id, status,
       invited_at, invited_to_app_slug, metadata, custom_fields, utm_source, utm_medium, utm_campaign, variant_id, client_hash, decided_at, created_at, updated_at,
       invite_status, invite_app_slug, invite_attempts, invite_error_code, invite_error_message, invite_updated_at)
     VALUES ($id, $waitlist_id, $workspace_id, $email, $name, $interest, $referrer, $referral_code, $referral_count, $referred_by_entry_id, $status,
       $invited_at, $invited_to_app_slug, $metadata, $custom_fields, $utm_source, $utm_medium, $utm_campaign, $variant_id, $client_hash, $decided_at, $created_at, $updated_at,
       $invite_status, $invite_app_slug, $invite_attempts, $invite_error_code, $invite_error_message, $invite_updated_at)`,
    { ...r },
  );
  const row = await db.get<{ pending: number }>(
    "UPDATE waitlist_stats SET total = total + 1, pending = pending + ? WHERE waitlist_id = ? RETURNING pending",
    r.status === "pending" ? 1 : 0,
    r.waitlist_id,
  );
  return { pending: Number(row?.pending ?? 0) };
}

export const entryById = (db: Sql, waitlistId: string, id: string) => db.get<EntryRow>("SELECT * FROM waitlist_entries WHERE waitlist_id = ? AND id = ?", waitlistId, id);
export const entryByEmail = (db: Sql, waitlistId: string, email: string) =>
  db.get<EntryRow>("SELECT * FROM waitlist_entries WHERE waitlist_id = ? AND email = ?", waitlistId, email);
export const entryByCode = (db: Sql, waitlistId: string, code: string) =>
  db.get<EntryRow>("SELECT * FROM waitlist_entries WHERE waitlist_id = ? AND referral_code = ?", waitlistId, code);

// Entry counts (waitlist_stats), kept by insertEntry's callers, decideEntry and deleteEntry.
export const bumpStats = (db: Sql, waitlistId: string, total: number, pending: number) =>
  db.run("UPDATE waitlist_stats SET total = total + ?, pending = pending + ? WHERE waitlist_id = ?", total, pending, waitlistId);
export const statsOf = async (db: Sql, waitlistId: string): Promise<{ total: number; pending: number }> => {
  const r = await db.get<{ total: number; pending: number }>("SELECT total, pending FROM waitlist_stats WHERE waitlist_id = ?", waitlistId);
  return { total: Number(r?.total ?? 0), pending: Number(r?.pending ?? 0) };
};
export const countEntries = async (db: Sql, waitlistId: string): Promise<number> => (await statsOf(db, waitlistId)).total;

export async function countByStatus(db: Sql, waitlistId: string): Promise<Record<EntryStatus, number>> {
  const rows = await db.all<{ status: EntryStatus; n: number }>("SELECT status, COUNT(*) AS n FROM waitlist_entries WHERE waitlist_id = ? GROUP BY status", waitlistId);
  const out = { pending: 0, approved: 0, rejected: 0 };
  for (const r of rows) out[r.status] = Number(r.n);
  return out;
}

/** Entries from this client hash since `since` (burst flag), counted up to `cap` (a bounded index range, however many there are). */
export const recentFromClient = async (db: Sql, waitlistId: string, clientHash: string, since: string, cap: number): Promise<number> =>
  Number(
    (await db.get<{ n: number }>(
      "SELECT COUNT(*) AS n FROM (SELECT 1 AS one FROM waitlist_entries WHERE waitlist_id = ? AND client_hash = ? AND created_at >= ? LIMIT ?) recent",
      waitlistId, clientHash, since, cap,
    ))!.n,
  );

/** Adds `delta` to an entry's referral_count (a referred entry joined, was rejected or deleted). */
export const bumpReferrals = (db: Sql, id: string, delta: number, at: string) =>
  db.run("UPDATE waitlist_entries SET referral_count = referral_count + ?, updated_at = ? WHERE id = ?", delta, at, id);

const ENTRY_PATCHABLE = [
  "name", "interest", "metadata", "status", "invited_at", "invited_to_app_slug", "decided_at",
  "invite_status", "invite_app_slug", "invite_attempts", "invite_error_code", "invite_error_message", "invite_updated_at",
] as const;
export const updateEntry = (db: Sql, id: string, patch: Partial<EntryRow>, at: string) => updateById(db, "waitlist_entries", id, patch, ENTRY_PATCHABLE, at);

/** Sets status only when the entry is still pending (approve, reject); returns 1 when it moved (and counts it). */
export async function decideEntry(db: Sql, waitlistId: string, id: string, status: EntryStatus, at: string): Promise<number> {
  const n = await db.run("UPDATE waitlist_entries SET status = ?, decided_at = ?, updated_at = ? WHERE id = ? AND status = 'pending'", status, at, at, id);
  if (n) await bumpStats(db, waitlistId, 0, -1);
  return n;
}

export async function deleteEntry(db: Sql, r: { id: string; waitlist_id: string; status: EntryStatus }): Promise<number> {
  const n = await db.run("DELETE FROM waitlist_entries WHERE id = ?", r.id);
  if (n) await bumpStats(db, r.waitlist_id, -1, r.status === "pending" ? -1 : 0);
  return n;
}

/**
 * Positions of a waitlist's pending entries (the formula in docs/waitlist.md, "Reference"):
 *   ordinal   = 1-based rank among pending entries by (created_at, id)
 *   effective = max(1, ordinal - referral_boost * referral_count)
 *   position  = 1-based rank by (effective, boosted first, created_at, id)
 * "Boosted first": a referrer whose effective rank equals another entry's goes ahead of it, so a
 * boost of N moves the referrer up N places per referral (with the tie going to the older entry,
 * a boost of 1 moved nobody). One CTE both engines run (window functions), shared by every read
 * that shows positions; `unboosted` is 0 for a boosted entry, 1 otherwise.
 */
const EFFECTIVE = `ord AS (
    SELECT id, created_at, referral_count, ROW_NUMBER() OVER (ORDER BY created_at, id) AS ordinal
      FROM waitlist_entries WHERE waitlist_id = $w AND status = 'pending'),
  eff AS (SELECT id, created_at,
      CASE WHEN ordinal - $boost * referral_count < 1 THEN 1 ELSE ordinal - $boost * referral_count END AS effective,
      CASE WHEN $boost * referral_count > 0 THEN 0 ELSE 1 END AS unboosted FROM ord)`;
const POSITIONS = `WITH ${EFFECTIVE},
  pos AS (SELECT id, ROW_NUMBER() OVER (ORDER BY effective, unboosted, created_at, id) AS position FROM eff)`;

/** One entry's position: the same order as POSITIONS, counted in one pass (no second sort). Null unless pending. */
export async function positionOf(db: Sql, waitlistId: string, boost: number, id: string): Promise<number | null> {
  const r = await db.get<{ position: number; found: number }>(
    `WITH ${EFFECTIVE},
      me AS (SELECT id, created_at, effective, unboosted FROM eff WHERE id = $id)
     SELECT COUNT(*) AS position, (SELECT COUNT(*) FROM me) AS found FROM eff, me
      WHERE eff.effective < me.effective OR (eff.effective = me.effective AND (eff.unboosted < me.unboosted OR (eff.unboosted = me.unboosted
        AND (eff.created_at < me.created_at OR (eff.created_at = me.created_at AND eff.id <= me.id)))))`,
    { w: waitlistId, boost, id },
  );
  return r && Number(r.found) ? Number(r.position) : null;
}

/** Positions of some entries of a waitlist (one pass for a batch). */
export async function positionsOf(db: Sql, waitlistId: string, boost: number, ids: string[]): Promise<Map<string, number>> {
  if (!ids.length) return new Map();
  const all = await allPositions(db, waitlistId, boost);
  return new Map(ids.filter((id) => all.has(id)).map((id) => [id, all.get(id)!]));
}

/** True when a pending entry of the waitlist is newer than `r` (by created_at, id); a range on the queue index. */
export const pendingAfter = async (db: Sql, waitlistId: string, r: { created_at: string; id: string }): Promise<boolean> =>
  !!(await db.get(
    "SELECT 1 AS one FROM waitlist_entries WHERE waitlist_id = ? AND status = 'pending' AND created_at >= ? AND NOT (created_at = ? AND id <= ?) LIMIT 1",
    waitlistId, r.created_at, r.created_at, r.id,
  ));

/** Pending entries (waitlist_stats): the newest pending entry with no referrals is last, so that is its position. */
export const pendingCount = async (db: Sql, waitlistId: string): Promise<number> => (await statsOf(db, waitlistId)).pending;

export interface EntryFilter {
  waitlistId: string;
  boost: number;
  status: EntryStatus | null;
  /** Lower-cased LIKE pattern (escaped) on email or name, or null. */
  pattern: string | null;
  sort: "position" | "created_at";
  /** created_at sort: last (created_at, id); position sort: last (position, created_at, id) with null positions last. */
  after: { c: string; id: string; p: number | null } | null;
  limit: number;
}

/** One page of entries with positions; sort=created_at is oldest first; sort=position puts non-pending entries after the queue. */
export function listEntries(db: Sql, f: EntryFilter): Promise<PositionedEntry[]> {
  const where = ["e.waitlist_id = $w"];
  const args: Record<string, string | number | null> = { w: f.waitlistId, boost: f.boost, lim: f.limit };
  if (f.status) {
    where.push("e.status = $status");
    args.status = f.status;
  }
  if (f.pattern) {
    where.push("(lower(e.email) LIKE $q ESCAPE '\\' OR lower(COALESCE(e.name, '')) LIKE $q ESCAPE '\\')");
    args.q = f.pattern;
  }
  // A position key that sorts null (non-pending) after every real one.
  const pkey = "COALESCE(pos.position, 2147483647)";
  if (f.after) {
    args.ac = f.after.c;
    args.aid = f.after.id;
    if (f.sort === "created_at") where.push("(e.created_at > $ac OR (e.created_at = $ac AND e.id > $aid))");
    else {
      args.ap = f.after.p ?? 2147483647;
      where.push(`(${pkey} > $ap OR (${pkey} = $ap AND (e.created_at > $ac OR (e.created_at = $ac AND e.id > $aid))))`);
    }
  }
  const order = f.sort === "created_at" ? "e.created_at, e.id" : `${pkey}, e.created_at, e.id`;
  return db.all<PositionedEntry>(
    `${POSITIONS} SELECT e.*, pos.position AS position FROM waitlist_entries e LEFT JOIN pos ON pos.id = e.id WHERE ${where.join(" AND ")} ORDER BY ${order} LIMIT $lim`,
    args,
  );
}

/** One page of every entry of a waitlist, oldest first, for export (positions come from allPositions). */
export function exportPage(db: Sql, waitlistId: string, after: { c: string; id: string } | null, limit: number): Promise<EntryRow[]> {
  return after
    ? db.all<EntryRow>("SELECT * FROM waitlist_entries WHERE waitlist_id = ? AND (created_at > ? OR (created_at = ? AND id > ?)) ORDER BY created_at, id LIMIT ?", waitlistId, after.c, after.c, after.id, limit)
    : db.all<EntryRow>("SELECT * FROM waitlist_entries WHERE waitlist_id = ? ORDER BY created_at, id LIMIT ?", waitlistId, limit);
}

/** Every pending entry's position (one pass), e.g. once per export. */
export async function allPositions(db: Sql, waitlistId: string, boost: number): Promise<Map<string, number>> {
  const rows = await db.all<{ id: string; position: number }>(`${POSITIONS} SELECT id, position FROM pos`, { w: waitlistId, boost });
  return new Map(rows.map((r) => [r.id, Number(r.position)]));
}

/** The first `n` pending entries by position (bulk top: N). */
export async function topPendingIds(db: Sql, waitlistId: string, boost: number, n: number): Promise<string[]> {
  const rows = await db.all<{ id: string }>(`${POSITIONS} SELECT id FROM pos ORDER BY position LIMIT $n`, { w: waitlistId, boost, n });
  return rows.map((r) => r.id);
}

// ------------------------------------------------------------------ notification outbox (notify.ts)

export interface NotificationRow {
  id: string;
  workspace_id: string;
  waitlist_id: string;
  entry_id: string;
  kind: "welcome" | "approved" | "rejected";
  attempts: number;
  invite_code: string | null;
}

export async function insertNotification(db: Sql, n: { id: string; workspace_id: string; waitlist_id: string; entry_id: string; kind: string; due: number; at: string }): Promise<void> {
  await db.run(
    `INSERT INTO waitlist_notifications (id, workspace_id, waitlist_id, entry_id, kind, state, attempts, next_attempt_at, lease_until, invite_code, last_error, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, 'pending', 0, ?, NULL, NULL, NULL, ?, ?)`,
    n.id, n.workspace_id, n.waitlist_id, n.entry_id, n.kind, n.due, n.at, n.at,
  );
}

/** In a transaction: due rows not leased, locked (PostgreSQL skips rows other nodes hold), then leased until `leaseUntil`. */
export async function claimNotifications(t: Sql, now: number, leaseUntil: number, limit: number): Promise<NotificationRow[]> {
  const rows = await t.all<NotificationRow>(
    `SELECT id, workspace_id, waitlist_id, entry_id, kind, attempts, invite_code FROM waitlist_notifications
      WHERE state = 'pending' AND next_attempt_at <= ? AND (lease_until IS NULL OR lease_until < ?) ORDER BY next_attempt_at, id LIMIT ?${dialect(t).skipLocked}`,
    now, now, limit,
  );
  for (const r of rows) await t.run("UPDATE waitlist_notifications SET lease_until = ?, attempts = attempts + 1 WHERE id = ?", leaseUntil, r.id);
  return rows;
}

/** Ends an attempt: done / failed (the invite code is dropped) or pending again at `next`. */
export const finishNotification = (db: Sql, id: string, state: string, next: number, error: string | null, at: string) =>
  db.run(
    "UPDATE waitlist_notifications SET state = ?, next_attempt_at = ?, lease_until = NULL, last_error = ?, invite_code = CASE WHEN ? = 'pending' THEN invite_code ELSE NULL END, updated_at = ? WHERE id = ?",
    state, next, error, state, at, id,
  );

export const keepInviteCode = (db: Sql, id: string, sealed: string) => db.run("UPDATE waitlist_notifications SET invite_code = ? WHERE id = ?", sealed, id);

export const notificationsOf = (db: Sql, entryId: string) =>
  db.all<{ kind: string; state: string; attempts: number; last_error: string | null }>(
    "SELECT kind, state, attempts, last_error FROM waitlist_notifications WHERE entry_id = ? ORDER BY created_at, id",
    entryId,
  );


// ------------------------------------------------------------------ deferred referral events (referrals.ts)

export interface ReferralUpdateRow {
  id: string;
  waitlist_id: string;
  entry_id: string;
  from_count: number;
  to_count: number;
  created_at: string;
}

export async function insertReferralUpdate(db: Sql, r: ReferralUpdateRow): Promise<void> {
  await db.run("INSERT INTO waitlist_referral_updates (id, waitlist_id, entry_id, from_count, to_count, created_at) VALUES ($id, $waitlist_id, $entry_id, $from_count, $to_count, $created_at)", { ...r });
}

/** The oldest pending updates, locked on PostgreSQL (other nodes skip them). */
export const claimReferralUpdates = (t: Sql, limit: number) =>
  t.all<ReferralUpdateRow>(`SELECT * FROM waitlist_referral_updates ORDER BY id LIMIT ?${dialect(t).skipLocked}`, limit);

export async function deleteReferralUpdates(t: Sql, ids: string[]): Promise<void> {
  for (const id of ids) await t.run("DELETE FROM waitlist_referral_updates WHERE id = ?", id);
}
