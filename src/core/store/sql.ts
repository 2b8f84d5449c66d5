/**
 * The data layer's one interface (issue 12). Every store function takes a `Sql` handle, the
 * database itself or the transaction it runs in, and returns a promise; two engines
 * implement it: bun:sqlite (./sqlite.ts, the embedded default) and PostgreSQL through
 * Bun.SQL (./postgres.ts, selected by DATABASE_URL).
 *
 * SQL is written once, in the subset both engines share:
 * - parameters are `?` (positional) or `$name` (one object argument); the PostgreSQL engine
 *   rewrites them to `$1..$n`;
 * - flags are INTEGER 0/1 and timestamps ISO text or epoch-ms integers: both engines return
 *   them as JS numbers and strings (PostgreSQL's int8 and boolean results are converted);
 * - `INSERT ... ON CONFLICT ... DO NOTHING/UPDATE` rather than `INSERT OR IGNORE/REPLACE`;
 * - where the engines really differ (JSON functions, row locks) branch on `db.engine` or use
 *   the fragments in `dialect()`.
 */
import { AsyncLocalStorage } from "node:async_hooks";

export type Engine = "sqlite" | "postgres";
export type SqlValue = string | number | bigint | boolean | null | Uint8Array;
/** Positional values, or one object of named values for `$name` placeholders. */
export type SqlParams = SqlValue[] | [Record<string, SqlValue | undefined>];

/** A handle statements run on: the database (autocommit) or one open transaction. */
export interface Sql {
  readonly engine: Engine;
  /** The first row, or null. */
  get<T = Record<string, unknown>>(sql: string, ...params: SqlParams): Promise<T | null>;
  all<T = Record<string, unknown>>(sql: string, ...params: SqlParams): Promise<T[]>;
  /** Runs a write; resolves to the number of rows it changed. */
  run(sql: string, ...params: SqlParams): Promise<number>;
  /**
   * Runs fn in a transaction and commits when it resolves (rolls back when it throws). On
   * a transaction handle it is a savepoint. Statements inside must use the handle fn gets:
   * the database handle refuses them while the transaction is open (see `txScope`).
   */
  tx<T>(fn: (t: Sql) => Promise<T>): Promise<T>;
  /**
   * Sends a notification to every node's `listen(channel)` (PostgreSQL NOTIFY; in-process on
   * SQLite). From a transaction handle it goes out only if the transaction commits.
   */
  notify(channel: string, payload?: string): Promise<void>;
  /**
   * Runs fn once the transaction commits (never if it rolls back; on the database handle: at
   * once). For effects outside the database that must follow the commit, e.g. deleting the
   * objects of rows the transaction deleted. fn handles its own errors; one that escapes is
   * written to stderr.
   */
  afterCommit(fn: () => unknown): void;
  /**
   * Queues fn to run in this transaction after its callback has resolved, just before the
   * commit, in the order queued; dropped if the transaction (or the savepoint) that queued it
   * rolls back. For derived writes that are cheaper together: on SQLite the hooks of a whole
   * commit group run at its end, outside the transactions' savepoints (FTS5 flushes its
   * pending index data at every savepoint, so a full-text row written inside each one costs
   * a segment per row). fn must not fail for reasons of its own: its failure rolls back the
   * transaction (on SQLite, its commit group). Only on a transaction handle.
   */
  beforeCommit(fn: (t: Sql) => Promise<unknown>): void;
}

/** The database: a handle plus what only the whole database does. */
export interface Db extends Sql {
  /** Calls onNotify for each notification on channel, from any node. Returns the unsubscriber. */
  listen(channel: string, onNotify: (payload: string) => void): Promise<() => Promise<void>>;
  /** True when the database answers a query (readiness probe). */
  ping(): Promise<boolean>;
  close(): Promise<void>;
  /** Where the data lives, for logs: the SQLite file path or the PostgreSQL URL without password. */
  readonly location: string;
  /** Migrations this open applied (names), for `bunker migrate`. */
  readonly migrated: string[];
}

/**
 * The transaction the current async call chain runs in, per database. A statement on the
 * database handle from inside its own open transaction is a bug: on SQLite it would wait for
 * the write lock that transaction holds (a deadlock) or read around its uncommitted writes,
 * on PostgreSQL it would run on another connection. Both engines throw instead.
 */
export const txScope = new AsyncLocalStorage<{ db: unknown; open: boolean }>();

export function assertNotInOwnTx(db: unknown): void {
  const scope = txScope.getStore();
  if (scope && scope.open && scope.db === db) {
    throw new Error("statement on the database handle inside one of its transactions: use the transaction's handle");
  }
}

/** SQL fragments that differ between the engines. */
export interface Dialect {
  /** Appended to a SELECT that claims rows for work: PostgreSQL locks them, skipping rows other nodes hold. */
  skipLocked: string;
}

const DIALECTS: Record<Engine, Dialect> = {
  sqlite: { skipLocked: "" }, // one writer at a time: the IMMEDIATE transaction is the lock
  postgres: { skipLocked: " FOR UPDATE SKIP LOCKED" },
};

export const dialect = (db: Sql): Dialect => DIALECTS[db.engine];

/** A unique or primary-key constraint refused the write (either engine). */
export function isUniqueViolation(err: unknown): boolean {
  const e = err as { code?: unknown; errno?: unknown };
  if (typeof e?.code === "string" && /^SQLITE_CONSTRAINT_(PRIMARYKEY|UNIQUE)$/.test(e.code)) return true;
  return e?.errno === "23505";
}

/** True when params is the one-object (named) form. */
export function isNamed(params: SqlParams): params is [Record<string, SqlValue | undefined>] {
  const p = params[0];
  return params.length === 1 && p !== null && typeof p === "object" && !(p instanceof Uint8Array);
}

export interface Translated {
  text: string;
  /** For named SQL: the parameter names in $n order. */
  names: string[] | null;
}

/**
 * Rewrites `?`, `?NNN` and `$name` placeholders to PostgreSQL's `$n`, skipping string
 * literals, quoted identifiers and comments. A SQL text mixes one style only.
 */
export function toPgPlaceholders(sql: string): Translated {
  let out = "";
  let n = 0;
  const names: string[] = [];
  const index = new Map<string, number>();
  let i = 0;
  while (i < sql.length) {
    const c = sql[i]!;
    if (c === "'" || c === '"') {
      const end = sql.indexOf(c, i + 1);
      const stop = end < 0 ? sql.length : end + 1;
      out += sql.slice(i, stop);
      i = stop;
      continue;
    }
    if (c === "-" && sql[i + 1] === "-") {
      const end = sql.indexOf("\n", i);
      const stop = end < 0 ? sql.length : end;
      out += sql.slice(i, stop);
      i = stop;
      continue;
    }
    if (c === "?") {
      const m = /^\?(\d+)/.exec(sql.slice(i));
      if (m) {
        out += `$${m[1]}`;
        i += m[0].length;
      } else {
        out += `$${++n}`;
        i++;
      }
      continue;
    }
    if (c === "$" && /[A-Za-z_]/.test(sql[i + 1] ?? "")) {
      const m = /^\$([A-Za-z_][A-Za-z0-9_]*)/.exec(sql.slice(i))!;
      const name = m[1]!;
      let k = index.get(name);
      if (k === undefined) {
        names.push(name);
        k = names.length;
        index.set(name, k);
      }
      out += `$${k}`;
      i += m[0].length;
      continue;
    }
    if (c === ":" && sql[i + 1] === ":") {
      out += "::"; // a cast, not a parameter
      i += 2;
      continue;
    }
    out += c;
    i++;
  }
  return { text: out, names: names.length ? names : null };
}

/** First keyword of a statement, upper-cased (comments and whitespace skipped). */
export function firstKeyword(sql: string): string {
  const m = /^(?:\s|--[^\n]*\n)*([A-Za-z]+)/.exec(sql);
  return m ? m[1]!.toUpperCase() : "";
}

/** A statement that only reads (may run on a read connection). WITH ... may write: not counted. */
export const isReadOnly = (sql: string) => firstKeyword(sql) === "SELECT";

/** True when the calling async chain runs inside an open transaction of db (caches bypass themselves there). */
export function inTransaction(db: unknown): boolean {
  const scope = txScope.getStore();
  return !!scope && scope.open && scope.db === db;
}

/**
 * Serialises the transaction t with every other transaction that locks the same key, until
 * t ends: for a check-then-write (a count under a cap, a window of hits) that two nodes could
 * otherwise both pass under READ COMMITTED. On SQLite write transactions are already one at a
 * time: nothing to do.
 */
export async function lockKey(t: Sql, key: string): Promise<void> {
  if (t.engine === "postgres") await t.get("SELECT pg_advisory_xact_lock(hashtext(?)) AS locked", key);
}

/** Runs after-commit callbacks in order; a failure is reported and does not stop the others. */
/** What a database handle answers to beforeCommit: there is no transaction to run it in. */
export function noTransaction(): never {
  throw new Error("beforeCommit needs a transaction handle");
}

export function runAfterCommit(fns: (() => unknown)[]): void {
  for (const fn of fns) {
    try {
      const r = fn();
      if (r instanceof Promise) r.catch((err) => console.error("after-commit callback failed:", err));
    } catch (err) {
      console.error("after-commit callback failed:", err);
    }
  }
}

/**
 * `UPDATE <table> SET <each column of columns that patch holds>, updated_at = ? WHERE id = ?`:
 * the partial update of a store's PATCH. Table and column names come from the store's own
 * fixed list, never from input; an absent (undefined) field is left as it is.
 */
export function updateById(db: Sql, table: string, id: string, patch: Readonly<Record<string, unknown>>, columns: readonly string[], updatedAt: string): Promise<number> {
  const sets: string[] = [];
  const values: SqlValue[] = [];
  for (const k of columns) {
    if (patch[k] === undefined) continue;
    sets.push(`${k} = ?`);
    values.push(patch[k] as SqlValue);
  }
  sets.push("updated_at = ?");
  values.push(updatedAt, id);
  return db.run(`UPDATE ${table} SET ${sets.join(", ")} WHERE id = ?`, ...values);
}

/**
 * The next number of a per-workspace counter table `<table> (workspace_id PRIMARY KEY,
 * last_seq)`, in the caller's transaction: one upsert, and numbers are never reused after a
 * delete (the `seq_id` of mail domains and mailboxes). The table name is the store's own.
 */
export async function nextWorkspaceSeq(t: Sql, table: string, workspaceId: string): Promise<number> {
  const r = await t.get<{ last_seq: number | string }>(
    `INSERT INTO ${table} (workspace_id, last_seq) VALUES (?, 1)
     ON CONFLICT (workspace_id) DO UPDATE SET last_seq = ${table}.last_seq + 1
     RETURNING last_seq`,
    workspaceId,
  );
  return Number(r!.last_seq);
}

/**
 * The database could not take the write now but may later: SQLite busy or locked, PostgreSQL
 * connection errors (class 08, closed or timed-out connections, server shutting down, too many
 * connections), lock timeouts, deadlocks and serialization failures.
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  const e = err as { code?: unknown; errno?: unknown } | null;
  const code = typeof e?.code === "string" ? e.code : "";
  const state = typeof e?.errno === "string" ? e.errno : "";
  return (
    /^SQLITE_(BUSY|LOCKED)/.test(code) ||
    /^ERR_POSTGRES_(CONNECTION|IDLE_TIMEOUT|LIFETIME_TIMEOUT)/.test(code) ||
    /^(ECONNREFUSED|ECONNRESET|EPIPE|ETIMEDOUT)$/.test(code) ||
    /^(08|57P0|53300$|55P03$|40001$|40P01$)/.test(state)
  );
}
