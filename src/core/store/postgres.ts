/**
 * The PostgreSQL engine: Bun.SQL (no extra driver) behind the async `Sql` interface,
 * selected by DATABASE_URL=postgres://... for deployments of several nodes.
 *
 * Rows come back as the SQLite engine returns them: int8 (COUNT(*), epoch-ms BIGINT
 * columns) as JS numbers rather than strings, booleans from expressions as 1/0.
 * Transactions are PostgreSQL's (READ COMMITTED); work that several nodes could take at
 * once is claimed with `FOR UPDATE SKIP LOCKED` (`dialect(db).skipLocked`).
 */
// A type only: Bun.SQL is read when a PostgreSQL database is opened, so a SQLite start does
// not load the driver (importing the binding evaluated bun:sql at every start).
import type { SQL } from "bun";
import { migratePg } from "./migrate-pg";
import type { Migration } from "./migrations";
import { assertNotInOwnTx, noTransaction, isNamed, runAfterCommit, toPgPlaceholders, txScope, type Db, type Sql, type SqlParams, type Translated } from "./sql";

const translations = new Map<string, Translated>();
function translate(sql: string): Translated {
  let t = translations.get(sql);
  if (!t) {
    t = toPgPlaceholders(sql);
    if (translations.size < 5000) translations.set(sql, t);
  }
  return t;
}

function values(t: Translated, params: SqlParams): unknown[] {
  if (t.names) {
    const obj = (isNamed(params) ? params[0] : {}) as Record<string, unknown>;
    return t.names.map((n) => bind(obj[n]));
  }
  return (params as unknown[]).map(bind);
}

/** Flags are INTEGER columns: a JS boolean binds as 1/0, as bun:sqlite binds it. */
const bind = (v: unknown) => (v === undefined ? null : typeof v === "boolean" ? (v ? 1 : 0) : v);

/** Plain arrays of plain objects, as bun:sqlite returns (Bun.SQL's rows have a null prototype and metadata). */
function normalise<T>(rows: Record<string, unknown>[]): T[] {
  const out = new Array(rows.length);
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i]!;
    const o: Record<string, unknown> = {};
    for (const k in row) {
      const v = row[k];
      o[k] = typeof v === "bigint" ? Number(v) : typeof v === "boolean" ? (v ? 1 : 0) : v;
    }
    out[i] = o;
  }
  return out as T[];
}

async function query<T>(conn: SQL, sql: string, params: SqlParams): Promise<{ rows: T[]; changed: number }> {
  const t = translate(sql);
  const result = await conn.unsafe(t.text, values(t, params));
  return { rows: normalise<T>(result as Record<string, unknown>[]), changed: (result as { affectedRows?: number; count?: number }).affectedRows ?? 0 };
}

/** Password shown in logs as "***". */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = "***";
    return u.toString();
  } catch {
    return "postgres://(unparsable URL)";
  }
}

export interface PostgresOptions {
  /** Connections in the pool (PG_POOL_SIZE). */
  max?: number;
  /** Skip migrations (tools that only read). */
  migrate?: boolean;
  /** The schema to migrate to: the kernel's and every module's migrations, in order (schemaOf). */
  migrations: readonly Migration[];
}

export class PostgresDb implements Db {
  readonly engine = "postgres" as const;
  readonly location: string;

  private constructor(
    readonly sql: SQL,
    url: string,
    readonly migrated: string[],
  ) {
    this.location = redactUrl(url);
  }

  /** Connects, checks the database (UTF-8, C collation) and migrates under an advisory lock. */
  static async open(url: string, opts: PostgresOptions): Promise<PostgresDb> {
    const sql = new Bun.SQL(url, { max: opts.max ?? 10, bigint: true, idleTimeout: 60 });
    let migrated: string[] = [];
    try {
      if (opts.migrate !== false) migrated = await migratePg(sql, opts.migrations);
      else await sql`SELECT 1`;
    } catch (err) {
      await sql.close();
      throw err;
    }
    return new PostgresDb(sql, url, migrated);
  }

  async get<T>(text: string, ...params: SqlParams): Promise<T | null> {
    assertNotInOwnTx(this);
    return (await query<T>(this.sql, text, params)).rows[0] ?? null;
  }

  async all<T>(text: string, ...params: SqlParams): Promise<T[]> {
    assertNotInOwnTx(this);
    return (await query<T>(this.sql, text, params)).rows;
  }

  async run(text: string, ...params: SqlParams): Promise<number> {
    assertNotInOwnTx(this);
    return (await query(this.sql, text, params)).changed;
  }

  async tx<T>(fn: (t: Sql) => Promise<T>): Promise<T> {
    assertNotInOwnTx(this);
    const scope = { db: this as unknown, open: true };
    const afterCommit: (() => unknown)[] = [];
    const beforeCommit: ((t: Sql) => Promise<unknown>)[] = [];
    try {
      // Wrapped: Bun.SQL treats an array returned by the callback as queries to await.
      const out = await this.sql.begin(async (conn) => {
        const handle = new PgTx(conn as unknown as SQL & { savepoint: SavepointFn }, afterCommit, beforeCommit);
        try {
          return {
            value: await txScope.run(scope, async () => {
              const value = await fn(handle);
              for (let i = 0; i < beforeCommit.length; i++) await beforeCommit[i]!(handle);
              return value;
            }),
          };
        } finally {
          handle.close();
        }
      });
      scope.open = false;
      runAfterCommit(afterCommit);
      return out.value as T;
    } finally {
      scope.open = false;
    }
  }

  afterCommit(fn: () => unknown): void {
    assertNotInOwnTx(this);
    runAfterCommit([fn]);
  }

  beforeCommit(): void {
    noTransaction();
  }

  async notify(channel: string, payload = ""): Promise<void> {
    await this.sql.notify(channel, payload);
  }

  async listen(channel: string, onNotify: (payload: string) => void): Promise<() => Promise<void>> {
    const sub = await this.sql.listen(channel, onNotify);
    return () => sub.unlisten();
  }

  async ping(): Promise<boolean> {
    try {
      await this.sql`SELECT 1`;
      return true;
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    await this.sql.close({ timeout: 5 });
  }
}

type SavepointFn = <T>(fn: (s: SQL) => Promise<T>) => Promise<T>;

class PgTx implements Sql {
  readonly engine = "postgres" as const;
  private open = true;

  constructor(
    private readonly conn: SQL & { savepoint: SavepointFn },
    private readonly pendingAfterCommit: (() => unknown)[],
    private readonly pendingBeforeCommit: ((t: Sql) => Promise<unknown>)[],
  ) {}

  close() {
    this.open = false;
  }

  private check() {
    if (!this.open) throw new Error("transaction handle used after its transaction ended");
  }

  async get<T>(text: string, ...params: SqlParams): Promise<T | null> {
    this.check();
    return (await query<T>(this.conn, text, params)).rows[0] ?? null;
  }

  async all<T>(text: string, ...params: SqlParams): Promise<T[]> {
    this.check();
    return (await query<T>(this.conn, text, params)).rows;
  }

  async run(text: string, ...params: SqlParams): Promise<number> {
    this.check();
    return (await query(this.conn, text, params)).changed;
  }

  async tx<T>(fn: (t: Sql) => Promise<T>): Promise<T> {
    this.check();
    const mark = this.pendingAfterCommit.length;
    const markBefore = this.pendingBeforeCommit.length;
    const out = await this.conn.savepoint(async (s) => {
      const inner = new PgTx(s as SQL & { savepoint: SavepointFn }, this.pendingAfterCommit, this.pendingBeforeCommit);
      try {
        return { value: await fn(inner) };
      } finally {
        inner.close();
      }
    }).catch((err) => {
      this.pendingAfterCommit.length = mark; // a rolled-back savepoint's callbacks never run
      this.pendingBeforeCommit.length = markBefore;
      throw err;
    });
    return out.value;
  }

  afterCommit(fn: () => unknown): void {
    this.check();
    this.pendingAfterCommit.push(fn);
  }

  beforeCommit(fn: (t: Sql) => Promise<unknown>): void {
    this.check();
    this.pendingBeforeCommit.push(fn);
  }

  async notify(channel: string, payload = ""): Promise<void> {
    this.check();
    // Inside a transaction NOTIFY is queued by the server and sent only on commit.
    await this.conn.unsafe("SELECT pg_notify($1, $2)", [channel, payload]);
  }
}
