/**
 * Waitlist entries: views, positions, referrals, events, decisions (approve / reject, single
 * and bulk) and the admin reads and edits. Public sign-up is public/signup.ts; notifications after
 * commit are notify.ts.
 *
 * - Entry status: pending -> approved | rejected, from pending only (else 409
 *   ENTRY_NOT_PENDING); approved and rejected are final.
 * - A referral counts on the referrer while the referred entry exists and is not rejected.
 * - Positions (pending entries only; null otherwise): store.ts POSITIONS, docs/waitlist.md, "Reference".
 */
import type { RequestMeta } from "../../../access/http";
import type { Principal } from "../../../access/principal";
import { tx, type Sql } from "../../../core/db";
import { ApiError, badRequest, conflict, invalidField, notFound } from "../../../core/errors";
import { uuid } from "../../../core/ids";
import { buildPage, decodeCursor, parseLimit, type Page } from "../../../core/pagination";
import { audit } from "../../../kernel/tenancy";
import { enqueueNotification, type NotificationKind } from "./notify";
import { parseWaitlistSettings, type WaitlistSettings } from "../settings";
import * as store from "./store";
import { entryView, publicEntryView, type ClientInfo, type EntryView, type PublicEntryView } from "./views";
import type { WaitlistRow, WaitlistService } from "../waitlists";
import type { WaitlistContext } from "../events";
import { BULK_MAX } from "../limits";

export const ENTRY_STATUSES = ["pending", "approved", "rejected"] as const;
export const ENTRY_LIST_DEFAULT = 50;
export const ENTRY_LIST_MAX = 200;
export const Q_MAX = 128;
export const METADATA_MAX_BYTES = 8192;

type EntryEventType = "entry.created" | "entry.updated" | "entry.approved" | "entry.rejected";
type EntryEventExtra = { changes?: Record<string, { from: unknown; to: unknown }> };

const isEntryStatus = (v: unknown): v is store.EntryStatus => typeof v === "string" && (ENTRY_STATUSES as readonly string[]).includes(v);
const likePattern = (q: string) => `%${q.toLowerCase().replace(/[\\%_]/g, (m) => `\\${m}`)}%`;

export class EntryService {
  constructor(
    readonly m: WaitlistContext,
    readonly waitlists: WaitlistService,
  ) {}

  // ------------------------------------------------------------------ shared by sign-up and admin

  /**
   * The entry's position (null unless pending). The newest pending entry with no referrals is
   * last, so its position is the pending count (one row read; a sign-up has it from its insert).
   */
  async position(db: Sql, w: WaitlistRow, s: WaitlistSettings, r: store.EntryRow): Promise<number | null> {
    if (r.status !== "pending") return null;
    if (Number(r.referral_count) === 0 && !(await store.pendingAfter(db, w.id, r))) return store.pendingCount(db, w.id);
    return store.positionOf(db, w.id, s.referral_boost, r.id);
  }

  async publicView(db: Sql, w: WaitlistRow, s: WaitlistSettings, r: store.EntryRow, client: Pick<ClientInfo, "origin">): Promise<PublicEntryView> {
    return this.publicViewAt(s, r, client, await this.position(db, w, s, r));
  }

  /** The public view of an entry whose position the caller knows. */
  publicViewAt(s: WaitlistSettings, r: store.EntryRow, client: Pick<ClientInfo, "origin">, position: number | null): PublicEntryView {
    const base = s.allowed_origins.includes("*") || client.origin === null ? client.origin : s.allowed_origins.includes(client.origin) ? client.origin : null;
    return publicEntryView(r, s, position, base);
  }

  async emitEntry(t: Sql, w: WaitlistRow, s: WaitlistSettings, type: EntryEventType, r: store.EntryRow, extra: EntryEventExtra = {}): Promise<void> {
    await this.emitEntryAt(t, w, type, r, await this.position(t, w, s, r), extra);
  }

  /** The event of an entry whose position the caller knows. */
  async emitEntryAt(t: Sql, w: WaitlistRow, type: EntryEventType, r: store.EntryRow, position: number | null, extra: EntryEventExtra = {}): Promise<void> {
    await this.m.emit(t, w.workspace_id, type, { ...entryView(r, position), ...extra });
  }

  /**
   * A referral of `referrer` started (+1) or stopped (-1) counting. The count changes in t; its
   * entry.updated event (with the new position, an O(pending) computation) is emitted by the
   * job waitlist.referrals, batch by batch (referrals.ts).
   */
  async referralChanged(t: Sql, w: WaitlistRow, referrer: store.EntryRow, delta: 1 | -1): Promise<void> {
    const at = this.m.ctx.clock.iso();
    await store.bumpReferrals(t, referrer.id, delta, at);
    const from = Number(referrer.referral_count);
    await store.insertReferralUpdate(t, { id: uuid(), waitlist_id: w.id, entry_id: referrer.id, from_count: from, to_count: from + delta, created_at: at });
  }

  notify(t: Sql, w: WaitlistRow, r: store.EntryRow, kind: NotificationKind): Promise<void> {
    return enqueueNotification(t, this.m.ctx, this.waitlists.notifier, { workspace_id: w.workspace_id, waitlist_id: w.id, entry_id: r.id, kind });
  }

  /** Approves or rejects a pending entry in t: event, referral bookkeeping, notification. 409 when not pending. */
  async decide(t: Sql, w: WaitlistRow, s: WaitlistSettings, r: store.EntryRow, to: "approved" | "rejected"): Promise<store.EntryRow> {
    const now = this.m.ctx.clock.iso();
    if (!(await store.decideEntry(t, w.id, r.id, to, now))) throw conflict(`The entry is ${r.status}; only pending entries can be ${to}`, "ENTRY_NOT_PENDING");
    // Before the read: queuing an approval's invite sets the entry's invite to pending.
    await this.notify(t, w, r, to);
    const after = (await store.entryById(t, w.id, r.id))!;
    await this.emitEntry(t, w, s, to === "approved" ? "entry.approved" : "entry.rejected", after);
    if (to === "rejected" && r.referred_by_entry_id) {
      const referrer = await store.entryById(t, w.id, r.referred_by_entry_id);
      if (referrer) await this.referralChanged(t, w, referrer, -1);
    }
    return after;
  }

  // ------------------------------------------------------------------ admin

  /** An entry of the waitlist by an id the route schema let through (a UUID of any case). */
  private async entryIn(db: Sql, w: WaitlistRow, id: string): Promise<store.EntryRow> {
    const r = await store.entryById(db, w.id, id.toLowerCase());
    if (!r) throw notFound("Entry");
    return r;
  }

  async list(p: Principal, workspaceId: string, waitlistId: string, q: { limit?: number; cursor?: string; status?: string; q?: string; sort?: string }): Promise<Page<EntryView>> {
    const { waitlist: w, input } = await this.waitlists.scoped(p, workspaceId, waitlistId, "waitlist.entry.read", () => listQuery(q));
    const { limit, status, sort, text, c } = input;
    const s = parseWaitlistSettings(w.settings);
    const rows = await store.listEntries(this.m.ctx.db, {
      waitlistId: w.id,
      boost: s.referral_boost,
      status: status as store.EntryStatus | null,
      pattern: text === null ? null : likePattern(text),
      sort,
      after: c ? { c: c.c as string, id: c.id as string, p: typeof c.p === "number" ? c.p : null } : null,
      limit: limit + 1,
    });
    return buildPage(rows, limit, (r) => ({ c: r.created_at, id: r.id, p: r.position === null ? null : Number(r.position), k: `${sort}|${status}|${text}` }), (r) => entryView(r, r.position === null ? null : Number(r.position)));
  }

  async count(p: Principal, workspaceId: string, waitlistId: string) {
    const { waitlist: w } = await this.waitlists.scoped(p, workspaceId, waitlistId, "waitlist.entry.read");
    const c = await store.countByStatus(this.m.ctx.db, w.id);
    return { total: c.pending + c.approved + c.rejected, ...c };
  }

  async get(p: Principal, workspaceId: string, waitlistId: string, id: string): Promise<EntryView> {
    const { waitlist: w } = await this.waitlists.scoped(p, workspaceId, waitlistId, "waitlist.entry.read");
    const r = await this.entryIn(this.m.ctx.db, w, id);
    return entryView(r, await store.positionOf(this.m.ctx.db, w.id, parseWaitlistSettings(w.settings).referral_boost, r.id));
  }

  async update(p: Principal, workspaceId: string, waitlistId: string, id: string, b: { name?: unknown; interest?: unknown; metadata?: unknown }, meta?: RequestMeta): Promise<EntryView> {
    const { ws, waitlist: w, input: patch } = await this.waitlists.scoped(p, workspaceId, waitlistId, "waitlist.entry.write", () => entryPatch(b));
    const s = parseWaitlistSettings(w.settings);
    return tx(this.m.ctx.db, async (t) => {
      const r = await this.entryIn(t, w, id);
      if (b.metadata !== undefined) {
        const merged: Record<string, unknown> = { ...JSON.parse(r.metadata) };
        for (const [k, v] of Object.entries(b.metadata as Record<string, unknown>)) {
          if (v === null) delete merged[k];
          else merged[k] = v;
        }
        patch.metadata = JSON.stringify(merged);
        if (patch.metadata.length > METADATA_MAX_BYTES) throw invalidField("metadata", `at most ${METADATA_MAX_BYTES} bytes of JSON`);
      }
      const changes: Record<string, { from: unknown; to: unknown }> = {};
      for (const k of Object.keys(patch) as (keyof store.EntryRow)[]) if (patch[k] !== r[k]) changes[k] = { from: k === "metadata" ? JSON.parse(r.metadata) : r[k], to: k === "metadata" ? JSON.parse(patch.metadata!) : patch[k] };
      if (Object.keys(changes).length === 0) return entryView(r, await store.positionOf(t, w.id, s.referral_boost, r.id));
      await store.updateEntry(t, r.id, patch, this.m.ctx.clock.iso());
      const after = (await store.entryById(t, w.id, r.id))!;
      await this.emitEntry(t, w, s, "entry.updated", after, { changes });
      await audit(t, this.m.ctx, { actor: p, action: "waitlist.entry.update", workspaceId: ws.id, target: { type: "waitlist_entry", id: r.id }, meta, metadata: { fields: Object.keys(changes) } });
      return entryView(after, await store.positionOf(t, w.id, s.referral_boost, r.id));
    });
  }

  async remove(p: Principal, workspaceId: string, waitlistId: string, id: string, meta?: RequestMeta): Promise<void> {
    const { ws, waitlist: w } = await this.waitlists.scoped(p, workspaceId, waitlistId, "waitlist.entry.write");
    await tx(this.m.ctx.db, async (t) => {
      const r = await this.entryIn(t, w, id);
      await store.deleteEntry(t, r);
      if (r.referred_by_entry_id && r.status !== "rejected") {
        const referrer = await store.entryById(t, w.id, r.referred_by_entry_id);
        if (referrer) await this.referralChanged(t, w, referrer, -1);
      }
      await this.m.emit(t, w.workspace_id, "entry.deleted", { id: r.id, waitlist_id: w.id, email: r.email, deleted_at: this.m.ctx.clock.iso() });
      await audit(t, this.m.ctx, { actor: p, action: "waitlist.entry.delete", workspaceId: ws.id, target: { type: "waitlist_entry", id: r.id }, meta });
    });
  }

  async decideOne(p: Principal, workspaceId: string, waitlistId: string, id: string, to: "approved" | "rejected", meta?: RequestMeta): Promise<EntryView> {
    const { ws, waitlist: w } = await this.waitlists.scoped(p, workspaceId, waitlistId, "waitlist.entry.write");
    const s = parseWaitlistSettings(w.settings);
    return tx(this.m.ctx.db, async (t) => {
      const r = await this.entryIn(t, w, id);
      const after = await this.decide(t, w, s, r, to);
      await audit(t, this.m.ctx, { actor: p, action: `waitlist.entry.${to === "approved" ? "approve" : "reject"}`, workspaceId: ws.id, target: { type: "waitlist_entry", id: r.id }, meta });
      return entryView(after, null);
    });
  }

  /** POST .../entries/bulk: all or nothing; every named entry must exist and be pending. */
  async bulk(p: Principal, workspaceId: string, waitlistId: string, b: { action?: unknown; entry_ids?: unknown; top?: unknown }, meta?: RequestMeta) {
    const { ws, waitlist: w, input: to } = await this.waitlists.scoped(p, workspaceId, waitlistId, "waitlist.entry.write", () => bulkAction(b));
    const s = parseWaitlistSettings(w.settings);
    return tx(this.m.ctx.db, async (t) => {
      const ids = b.entry_ids !== undefined ? [...new Set((b.entry_ids as string[]).map((x) => x.toLowerCase()))] : await store.topPendingIds(t, w.id, s.referral_boost, b.top as number);
      const rows: store.EntryRow[] = [];
      for (const id of ids) {
        const r = await store.entryById(t, w.id, id);
        if (!r) throw new ApiError(404, "NOT_FOUND", `Entry ${id} not found`, [{ field: "entry_ids", reason: `${id} is not an entry of this waitlist` }]);
        rows.push(r);
      }
      const notPending = rows.filter((r) => r.status !== "pending");
      if (notPending.length) throw conflict(`Only pending entries can be ${to}: ${notPending.map((r) => r.id).join(", ")}`, "ENTRY_NOT_PENDING");
      const out: EntryView[] = [];
      for (const r of rows) out.push(entryView(await this.decide(t, w, s, (await store.entryById(t, w.id, r.id))!, to), null));
      await audit(t, this.m.ctx, { actor: p, action: `waitlist.entry.bulk_${b.action}`, workspaceId: ws.id, target: { type: "waitlist", id: w.id }, meta, metadata: { count: out.length } });
      return { action: b.action as string, count: out.length, data: out };
    });
  }
}

/** The list's query (400 naming the parameter); checked before the waitlist is looked up. */
function listQuery(q: { limit?: number; cursor?: string; status?: string; q?: string; sort?: string }) {
  const limit = parseLimit(q.limit, ENTRY_LIST_DEFAULT, ENTRY_LIST_MAX);
  const status = q.status ? q.status : null;
  if (status !== null && !isEntryStatus(status)) throw invalidField("status", `one of ${ENTRY_STATUSES.join(", ")}`);
  const sort = q.sort ?? "position";
  if (sort !== "position" && sort !== "created_at") throw invalidField("sort", "position or created_at");
  const text = q.q ? q.q : null;
  if (text !== null && text.length > Q_MAX) throw invalidField("q", `at most ${Q_MAX} characters`);
  const c = decodeCursor<{ c?: unknown; id?: unknown; p?: unknown; k?: unknown }>(q.cursor);
  if (c && (typeof c.c !== "string" || typeof c.id !== "string" || c.k !== `${sort}|${status}|${text}`)) {
    throw badRequest("Malformed cursor", [{ field: "cursor", reason: "not a cursor of this list with these filters (status, q, sort)" }], "INVALID_CURSOR");
  }
  return { limit, status, sort: sort as "position" | "created_at", text, c };
}

/** An entry PATCH's name and interest, and metadata's type (its merged size needs the entry). */
function entryPatch(b: { name?: unknown; interest?: unknown; metadata?: unknown }): Partial<store.EntryRow> {
  const patch: Partial<store.EntryRow> = {};
  if (b.name !== undefined) {
    if (b.name !== null && (typeof b.name !== "string" || b.name.length > 200)) throw invalidField("name", "a string of at most 200 characters, or null");
    patch.name = b.name as string | null;
  }
  if (b.interest !== undefined) {
    if (b.interest !== null && (typeof b.interest !== "string" || b.interest.length > 500)) throw invalidField("interest", "a string of at most 500 characters, or null");
    patch.interest = b.interest as string | null;
  }
  if (b.metadata !== undefined && (typeof b.metadata !== "object" || b.metadata === null || Array.isArray(b.metadata))) {
    throw invalidField("metadata", "must be an object (merged into the entry's metadata; a null value removes a key)");
  }
  return patch;
}

/** A bulk body: the decision, and entry_ids (their shape is the route schema's) or top. */
function bulkAction(b: { action?: unknown; entry_ids?: unknown; top?: unknown }): "approved" | "rejected" {
  if (b.action !== "approve" && b.action !== "reject") throw invalidField("action", "approve or reject");
  if ((b.entry_ids === undefined) === (b.top === undefined)) throw badRequest("Give entry_ids or top, not both", [{ field: "entry_ids", reason: "exactly one of entry_ids and top" }]);
  if (b.entry_ids === undefined && (typeof b.top !== "number" || !Number.isInteger(b.top) || b.top < 1 || b.top > BULK_MAX)) {
    throw invalidField("top", `integer 1-${BULK_MAX}: the first N pending entries by position`);
  }
  return b.action === "approve" ? "approved" : "rejected";
}
