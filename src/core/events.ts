/**
 * The event outbox. A service records an event with `record` inside the same db
 * transaction as the change it describes, so the two commit (or roll back) together; its
 * consumer (the webhook engine for "webhook:" scopes, the workspace-event dispatch for
 * "platform:" scopes) later takes them with `claim`. Every scope needs a consumer: only
 * dispatched events are purged. Delivery is at-least-once: a crash between handling and
 * marking repeats the event, never loses it.
 */
import type { Clock } from "./clock";
import type { Db, Sql } from "./db";
import { isUniqueViolation } from "./store/sql";
import { conflict, invalidField } from "./errors";
import { prefixedId } from "./ids";
import * as store from "./store/events";

export interface OutboxEvent {
  id: string;
  type: string;
  scope: string;
  data: unknown;
  created_at: string;
  dispatched_at: string | null;
}

export interface NewEvent {
  type: string;
  /** Who the event belongs to, e.g. "platform:ws_<uuid>" or "mail:<workspace_id>". */
  scope: string;
  data: unknown;
  /** Caller-chosen id (must start with "evt_"), e.g. when the id already went out in a response. */
  id?: string;
}

/** An event as claimed: `data` is the stored JSON text (a consumer may splice it in as is). */
export interface ClaimedEvent {
  id: string;
  type: string;
  scope: string;
  data: string;
  created_at: string;
}

const toEvent = (r: store.EventRow): OutboxEvent => ({ ...r, data: JSON.parse(r.data) });

export class EventOutbox {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
  ) {}

  /**
   * An insert on `t`: pass the transaction of the write it describes. Throws 409 if a
   * caller-chosen id is taken.
   */
  async record(t: Sql, e: NewEvent): Promise<{ id: string; created_at: string }> {
    if (!e.type) throw invalidField("type", "must not be empty");
    if (!e.scope) throw invalidField("scope", "must not be empty");
    if (e.id !== undefined && !/^evt_[A-Za-z0-9_-]{1,100}$/.test(e.id)) throw invalidField("id", 'must look like "evt_..."');
    const id = e.id ?? prefixedId("evt");
    const created_at = this.clock.iso();
    const data = JSON.stringify(e.data ?? null);
    try {
      await store.insertEvent(t, { id, type: e.type, scope: e.scope, data, created_at });
    } catch (err) {
      if (isUniqueViolation(err)) throw conflict(`Event ${id} already exists`);
      throw err;
    }
    return { id, created_at };
  }

  /** Undispatched events, oldest first. */
  async pending(limit: number): Promise<OutboxEvent[]> {
    return (await store.selectPending(this.db, Math.max(1, Math.floor(limit)))).map(toEvent);
  }

  /**
   * Hands up to `limit` undispatched events whose scope starts with `scopePrefix` (e.g.
   * "webhook:") to `consume`, oldest first, and marks them dispatched, all in one
   * transaction (`consume` gets its handle for the writes it makes): another process or node
   * cannot take the same events (SQLite: one writer; PostgreSQL: the rows are locked and
   * other nodes skip them), and a throw rolls the batch back so it is offered again.
   * Returns how many were taken.
   */
  claim(scopePrefix: string, limit: number, consume: (e: ClaimedEvent, t: Sql) => unknown): Promise<number> {
    return this.db.tx(async (t) => {
      const rows = await store.selectPendingInScope(t, scopePrefix, Math.max(1, Math.floor(limit)));
      for (const r of rows) await consume({ id: r.id, type: r.type, scope: r.scope, data: r.data, created_at: r.created_at }, t);
      if (rows.length) await store.markDispatched(t, rows.map((r) => r.id), this.clock.iso());
      return rows.length;
    });
  }

  /** Undispatched events, all of them or those of one scope prefix (e.g. "webhook:"). */
  pendingCount(scopePrefix?: string): Promise<number> {
    return scopePrefix === undefined ? store.countPending(this.db) : store.countPendingInScope(this.db, scopePrefix);
  }

  /** Returns how many were newly marked; ids already dispatched or unknown are ignored. */
  async markDispatched(ids: string[]): Promise<number> {
    if (!ids.length) return 0;
    return store.markDispatched(this.db, ids, this.clock.iso());
  }

  async get(id: string): Promise<OutboxEvent | null> {
    const row = await store.selectEvent(this.db, id);
    return row ? toEvent(row) : null;
  }

  /**
   * Deletes events dispatched before the instant `cutoffMs` (epoch milliseconds, e.g.
   * `clock.nowMs() - 7 * DAY`); undispatched events are never purged. Returns the count.
   */
  purgeDispatchedBefore(cutoffMs: number): Promise<number> {
    return store.deleteDispatchedBefore(this.db, new Date(cutoffMs).toISOString());
  }
}
