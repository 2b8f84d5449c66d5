/**
 * The SQLite engine: bun:sqlite behind the async `Sql` interface (the embedded default).
 *
 * Two connections to one WAL file. Writes and transactions go to the writer, one at a time:
 * a transaction's callback is async (it may await a password hash or a network call
 * between statements), so a mutex keeps a second transaction, or a lone write, from
 * landing inside it. Reads outside transactions go to a reader connection, synchronously
 * and without the mutex, so they stay as cheap as before and never see another request's
 * uncommitted writes. Prepared statements are cached by bun:sqlite (db.query).
 */
import { Database } from "bun:sqlite";
import { existsSync, mkdirSync } from "node:fs";
import { dirname } from "node:path";
import type { Migration } from "./migrations";
import { assertNotInOwnTx, isReadOnly, noTransaction, runAfterCommit, txScope, type Db, type Sql, type SqlParams } from "./sql";

/**
 * Statements db.query() keeps prepared (LRU; Bun's default is 20). Bunker has a few hundred
 * distinct statements, so at 20 the hot ones were evicted and re-prepared on almost every
 * request (10-20 µs each for a join). A prepared statement costs a few KB.
 */
const QUERY_CACHE_SIZE = 1000;

/** Opens (creating if needed) a SQLite file with Bunker's pragmas. */
export function openSqliteFile(path: string, opts: { readOnly?: boolean } = {}): Database {
  if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
  if (Database.MAX_QUERY_CACHE_SIZE < QUERY_CACHE_SIZE) Database.MAX_QUERY_CACHE_SIZE = QUERY_CACHE_SIZE;
  const db = new Database(path, { create: true, strict: true });
  db.exec("PRAGMA journal_mode = WAL");
  db.exec("PRAGMA synchronous = NORMAL");
  db.exec("PRAGMA foreign_keys = ON");
  db.exec("PRAGMA busy_timeout = 5000");
  // SQLite's defaults (a 2 MB page cache, reads through read(2)) suit a phone, not a server:
  // a 100,000-card full-text search or a deep followers page re-reads the same B-tree pages
  // on every request. 32 MB of cache per connection and reads through a 256 MB memory map
  // (the OS page cache, not extra memory) cut those reads to memory lookups.
  db.exec("PRAGMA cache_size = -32768");
  db.exec("PRAGMA mmap_size = 268435456");
  db.exec("PRAGMA temp_store = MEMORY");
  if (opts.readOnly) db.exec("PRAGMA query_only = ON");
  return db;
}

/**
 * Applies every migration of the list (the kernel's and every module's, in order: schemaOf)
 * not yet recorded, each in its own transaction. Returns names applied.
 */
export function migrateSqlite(db: Database, migrations: readonly Migration[]): string[] {
  db.exec("CREATE TABLE IF NOT EXISTS core_migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)");
  const done = new Set(db.query<{ name: string }, []>("SELECT name FROM core_migrations").all().map((r) => r.name));
  const applied: string[] = [];
  for (const m of migrations) {
    if (done.has(m.name)) continue;
    db.transaction(() => {
      // A file of only comments is legal (SQLite refuses to exec it); record it anyway.
      if (m.sql.replace(/--.*$/gm, "").trim()) db.exec(m.sql);
      db.query("INSERT INTO core_migrations (name, applied_at) VALUES (?, ?)").run(m.name, new Date().toISOString());
    }).immediate();
    applied.push(m.name);
  }
  return applied;
}

/**
 * Opens a database that must already exist, read-only, without creating anything: for
 * maintenance commands, where a mistyped DATA_DIR must fail instead of yielding a new,
 * empty database. Null when there is no file.
 */
export function openExistingSqlite(path: string): Database | null {
  if (!existsSync(path)) return null;
  return new Database(path, { readonly: true, strict: true });
}

type Listener = (payload: string) => void;

interface TxItem {
  fn: (t: Sql) => Promise<unknown>;
  resolve: (v: unknown) => void;
  reject: (e: unknown) => void;
}

/** A commit group closes after this many transactions or this long (see SqliteDb.tx). */
const BATCH_MAX = 128;
const BATCH_MAX_MS = 5;

/** Remembers, per SQL text, whether it only reads (first keyword SELECT). */
const readOnlyCache = new Map<string, boolean>();
function readsOnly(sql: string): boolean {
  let r = readOnlyCache.get(sql);
  if (r === undefined) {
    r = isReadOnly(sql);
    if (readOnlyCache.size < 5000) readOnlyCache.set(sql, r);
  }
  return r;
}

export class SqliteDb implements Db {
  readonly engine = "sqlite" as const;
  /** The writer connection: transactions, writes, maintenance (backup, checkpoint). */
  readonly writer: Database;
  private readonly reader: Database;
  private locked = false;
  private readonly waiters: (() => void)[] = [];
  /** Commits and the transactions they carried since open (group commit; /metrics, tests). */
  readonly commitStats = { commits: 0, transactions: 0 };
  /** Transactions waiting for the next commit group (tx()). */
  private readonly txQueue: TxItem[] = [];
  private draining = false;
  private readonly listeners = new Map<string, Set<Listener>>();
  readonly migrated: string[];

  /** Opens the file and migrates it to `migrations` (schemaOf the app's modules). */
  constructor(readonly location: string, migrations: readonly Migration[]) {
    this.writer = openSqliteFile(location);
    this.migrated = migrateSqlite(this.writer, migrations);
    // ":memory:" is one database per connection: everything stays on the writer.
    this.reader = location === ":memory:" ? this.writer : openSqliteFile(location, { readOnly: true });
  }

  async get<T>(sql: string, ...params: SqlParams): Promise<T | null> {
    assertNotInOwnTx(this);
    if (readsOnly(sql)) return this.reader.query(sql).get(...(params as any[])) as T | null;
    // A lone write joins the next commit group rather than committing on its own.
    return this.tx(async (t) => t.get<T>(sql, ...params));
  }

  async all<T>(sql: string, ...params: SqlParams): Promise<T[]> {
    assertNotInOwnTx(this);
    if (readsOnly(sql)) return this.reader.query(sql).all(...(params as any[])) as T[];
    return this.tx(async (t) => t.all<T>(sql, ...params));
  }

  async run(sql: string, ...params: SqlParams): Promise<number> {
    assertNotInOwnTx(this);
    // A lone write joins the next commit group rather than committing on its own.
    return this.tx(async (t) => t.run(sql, ...params));
  }

  /**
   * Group commit. A commit costs more than the statements of a typical write (the WAL write
   * of every page touched, an FTS5 segment flush): transactions started while others run, or
   * in the same event-loop turn, are run one after the other inside ONE SQLite transaction,
   * each in a savepoint of its own, and committed once. Each caller is still answered only
   * after the commit that holds its change (nothing acknowledged is lost on a crash), a
   * transaction that throws rolls back its own savepoint only (the others commit), and its
   * notifications and after-commit callbacks are dropped with it. The first transaction
   * of a group runs with no savepoint (alone, it is exactly a plain BEGIN/COMMIT).
   *
   * Bun runs each request's handler, microtasks included, to its first real I/O before it
   * parses the next request, so a transaction started at once would always run alone: the
   * batch starts on setImmediate, after the requests of the current turn have queued theirs.
   * A batch is closed early once it has run for BATCH_MAX_MS (a transaction that awaits a
   * password hash or the network must not hold the others' commit) or holds BATCH_MAX items.
   */
  tx<T>(fn: (t: Sql) => Promise<T>): Promise<T> {
    assertNotInOwnTx(this);
    return new Promise<T>((resolve, reject) => {
      this.txQueue.push({ fn: fn as (t: Sql) => Promise<unknown>, resolve: resolve as (v: unknown) => void, reject });
      if (!this.draining) {
        this.draining = true;
        setImmediate(() => void this.drainTx());
      }
    });
  }

  private async drainTx(): Promise<void> {
    await this.acquire();
    try {
      while (this.txQueue.length) await this.runBatch();
    } finally {
      this.draining = false;
      this.release();
    }
  }

  /**
   * Runs queued transactions in one SQLite transaction until the queue is empty, BATCH_MAX of
   * them ran or BATCH_MAX_MS passed; the rest stay queued for the next group. A transaction
   * queued while the group runs (a handler that reached its write meanwhile) joins it instead
   * of waiting for this commit and paying for one of its own.
   */
  private async runBatch(): Promise<void> {
    const done: { item: TxItem; handle: SqliteTx; value: unknown }[] = [];
    const started = performance.now();
    // IMMEDIATE: takes the file's write lock up front, so another process (the CLI) never
    // deadlocks with us upgrading a read lock.
    try {
      this.writer.exec("BEGIN IMMEDIATE");
    } catch (err) {
      for (const item of this.txQueue.splice(0, BATCH_MAX)) item.reject(err);
      return;
    }
    for (let ran = 0; ran < BATCH_MAX && this.txQueue.length; ran++) {
      const item = this.txQueue.shift()!;
      // The first runs without a savepoint: when it throws, the transaction holds nothing else.
      const lone = ran === 0;
      const handle = new SqliteTx(this, this.writer);
      const scope = { db: this as unknown, open: true };
      if (!lone) this.writer.exec("SAVEPOINT group_item");
      try {
        const value = await txScope.run(scope, () => item.fn(handle));
        if (!lone) this.writer.exec("RELEASE group_item");
        done.push({ item, handle, value });
      } catch (err) {
        if (this.writer.inTransaction && !lone) {
          this.writer.exec("ROLLBACK TO group_item");
          this.writer.exec("RELEASE group_item");
        }
        item.reject(err);
        if (!this.writer.inTransaction || lone) {
          // SQLite rolled the whole transaction back (I/O error, disk full) or the first write failed: the
          // writes of the items before this one are gone too (the others still queued run in the next group).
          if (this.writer.inTransaction) this.writer.exec("ROLLBACK");
          for (const d of done) d.item.reject(new Error("transaction rolled back with its commit group", { cause: err }));
          return;
        }
      } finally {
        scope.open = false;
        handle.close();
      }
      if (performance.now() - started > BATCH_MAX_MS) break;
    }
    // The group's before-commit hooks, in order, outside the items' savepoints.
    const hooks = done.some((d) => d.handle.pendingBeforeCommit.length) ? new SqliteTx(this, this.writer) : null;
    if (hooks) {
      const scope = { db: this as unknown, open: true };
      try {
        await txScope.run(scope, async () => {
          for (const d of done) for (let i = 0; i < d.handle.pendingBeforeCommit.length; i++) await d.handle.pendingBeforeCommit[i]!(hooks);
          for (let i = 0; i < hooks.pendingBeforeCommit.length; i++) await hooks.pendingBeforeCommit[i]!(hooks);
        });
      } catch (err) {
        if (this.writer.inTransaction) this.writer.exec("ROLLBACK");
        for (const d of done) d.item.reject(err);
        return;
      } finally {
        scope.open = false;
        hooks.close();
      }
    }
    try {
      this.writer.exec("COMMIT");
    } catch (err) {
      if (this.writer.inTransaction) this.writer.exec("ROLLBACK");
      for (const d of done) d.item.reject(err);
      return;
    }
    this.commitStats.commits++;
    this.commitStats.transactions += done.length;
    for (const d of done) {
      for (const [channel, payload] of d.handle.pendingNotifications) this.deliver(channel, payload);
      runAfterCommit(d.handle.pendingAfterCommit);
      d.item.resolve(d.value);
    }
    if (hooks) {
      for (const [channel, payload] of hooks.pendingNotifications) this.deliver(channel, payload);
      runAfterCommit(hooks.pendingAfterCommit);
    }
  }

  async notify(channel: string, payload = ""): Promise<void> {
    this.deliver(channel, payload);
  }

  beforeCommit(): void {
    noTransaction();
  }

  afterCommit(fn: () => unknown): void {
    assertNotInOwnTx(this);
    runAfterCommit([fn]);
  }

  async listen(channel: string, onNotify: Listener): Promise<() => Promise<void>> {
    let set = this.listeners.get(channel);
    if (!set) this.listeners.set(channel, (set = new Set()));
    set.add(onNotify);
    return async () => void set.delete(onNotify);
  }

  async ping(): Promise<boolean> {
    try {
      return this.reader.query("SELECT 1 AS ok").get() !== null;
    } catch {
      return false;
    }
  }

  /** Runs fn on the writer connection with no transaction of ours open (backup, checkpoint). */
  exclusive<T>(fn: (writer: Database) => T): Promise<T> {
    return this.withLock(() => fn(this.writer));
  }

  async close(): Promise<void> {
    await this.acquire();
    try {
      this.writer.exec("PRAGMA wal_checkpoint(TRUNCATE)");
    } catch {
      // best effort: a reader still open elsewhere may keep the WAL
    }
    if (this.reader !== this.writer) this.reader.close();
    this.writer.close();
    this.listeners.clear();
  }

  private deliver(channel: string, payload: string) {
    for (const l of this.listeners.get(channel) ?? []) {
      try {
        l(payload);
      } catch (err) {
        queueMicrotask(() => {
          throw err;
        });
      }
    }
  }

  private async withLock<T>(fn: () => T): Promise<T> {
    await this.acquire();
    try {
      return fn();
    } finally {
      this.release();
    }
  }

  private acquire(): Promise<void> {
    if (!this.locked) {
      this.locked = true;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  private release() {
    const next = this.waiters.shift();
    if (next) next(); // the lock passes straight to the next waiter
    else this.locked = false;
  }
}

/** One open transaction (or savepoint) on the writer connection. */
class SqliteTx implements Sql {
  readonly engine = "sqlite" as const;
  readonly pendingNotifications: [string, string][];
  readonly pendingAfterCommit: (() => unknown)[];
  readonly pendingBeforeCommit: ((t: Sql) => Promise<unknown>)[];
  private open = true;
  private savepoints = 0;

  constructor(
    private readonly root: SqliteDb,
    private readonly conn: Database,
    pending?: [string, string][],
    afterCommit?: (() => unknown)[],
    beforeCommit?: ((t: Sql) => Promise<unknown>)[],
  ) {
    this.pendingNotifications = pending ?? [];
    this.pendingAfterCommit = afterCommit ?? [];
    this.pendingBeforeCommit = beforeCommit ?? [];
  }

  close() {
    this.open = false;
  }

  private check() {
    if (!this.open) throw new Error("transaction handle used after its transaction ended");
  }

  async get<T>(sql: string, ...params: SqlParams): Promise<T | null> {
    this.check();
    return this.conn.query(sql).get(...(params as any[])) as T | null;
  }

  async all<T>(sql: string, ...params: SqlParams): Promise<T[]> {
    this.check();
    return this.conn.query(sql).all(...(params as any[])) as T[];
  }

  async run(sql: string, ...params: SqlParams): Promise<number> {
    this.check();
    return this.conn.query(sql).run(...(params as any[])).changes;
  }

  async tx<T>(fn: (t: Sql) => Promise<T>): Promise<T> {
    this.check();
    const name = `sp_${++this.savepoints}`;
    const inner = new SqliteTx(this.root, this.conn, this.pendingNotifications, this.pendingAfterCommit, this.pendingBeforeCommit);
    const mark = this.pendingNotifications.length;
    const markAfter = this.pendingAfterCommit.length;
    const markBefore = this.pendingBeforeCommit.length;
    this.conn.exec(`SAVEPOINT ${name}`);
    try {
      const result = await fn(inner);
      this.conn.exec(`RELEASE ${name}`);
      return result;
    } catch (err) {
      this.conn.exec(`ROLLBACK TO ${name}`);
      this.conn.exec(`RELEASE ${name}`);
      this.pendingNotifications.length = mark; // a rolled-back savepoint's notifications never go out
      this.pendingAfterCommit.length = markAfter;
      this.pendingBeforeCommit.length = markBefore;
      throw err;
    } finally {
      inner.close();
    }
  }

  async notify(channel: string, payload = ""): Promise<void> {
    this.check();
    this.pendingNotifications.push([channel, payload]);
  }

  afterCommit(fn: () => unknown): void {
    this.check();
    this.pendingAfterCommit.push(fn);
  }

  beforeCommit(fn: (t: Sql) => Promise<unknown>): void {
    this.check();
    this.pendingBeforeCommit.push(fn);
  }
}

// ---- maintenance on a raw SQLite file (backup, restore: src/core/backup.ts) ----

/** Consistent online copy of a live database (VACUUM INTO works while others write). */
export function vacuumInto(db: Database, target: string) {
  mkdirSync(dirname(target), { recursive: true });
  db.query("VACUUM INTO ?").run(target);
}

/** True when the file has Bunker's migration table (and is a readable SQLite database at all). */
export function isBunkerDb(db: Database): boolean {
  try {
    return db.query("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'core_migrations'").get() !== null;
  } catch {
    return false;
  }
}

/** SQLite's own check of every page and index: "ok", or the first problems found. */
export function integrityCheck(db: Database): string {
  return db.query<{ integrity_check: string }, []>("PRAGMA integrity_check(5)").all().map((r) => r.integrity_check).join("; ");
}

/** The key-check value of a raw database file (restore compares it with the key it restores). */
export function readKeyCheckSync(db: Database): string | null {
  return db.query<{ check_value: string }, []>("SELECT check_value FROM core_key_check WHERE id = 1").get()?.check_value ?? null;
}
