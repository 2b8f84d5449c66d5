/**
 * Write-behind for records that are written at a high rate and need not be in the request's
 * own transaction: queued in memory and written together, in one transaction, a moment later.
 * A commit costs far more than the rows it carries (the client_credentials grant spent more
 * on committing its audit row than on everything but the RS256 signature), so one commit per
 * batch instead of per request.
 *
 * The trade-off is explicit: a crash loses at most the last `delayMs` of queued records (the
 * way large token services log exchanges asynchronously). Nothing else loses them:
 * - A batch the database refuses (SQLite busy or locked by another process's long write,
 *   a PostgreSQL connection lost or a lock timeout) is kept and tried again, with backoff,
 *   until it is written; batches stay in the order they were queued. One warning per outage,
 *   one line when it is over.
 * - A write that fails on its own (a constraint) is logged and does not stop the others:
 *   trying it again would fail the same way.
 * - flush() resolves once everything queued before it is written; readers of those records
 *   call it first (so the API always shows them). close() (shutdown) does the same but gives
 *   up after `closeTimeoutMs` of refusals, logging each record it could not write.
 */
import type { Db, Sql } from "./db";
import { isDatabaseUnavailable } from "./store/sql";
import type { Logger } from "./log";

export interface WriteBehindOptions {
  delayMs: number;
  maxBatch: number;
  /** The first wait before a refused batch is tried again; it doubles up to retryMaxMs. */
  retryMs?: number;
  retryMaxMs?: number;
  /** How long close() keeps trying a refused batch before it gives it up (logged). */
  closeTimeoutMs?: number;
}

interface Entry {
  write: (t: Sql) => Promise<unknown>;
  /** Names the record in the log line if it is given up at shutdown. */
  about: Record<string, unknown> | undefined;
}

export class WriteBehind {
  private queue: Entry[] = [];
  private flushing: Promise<void> = Promise.resolve();
  private timer: ReturnType<typeof setTimeout> | null = null;
  /** Refused attempts since the last batch written (0: the database takes writes). */
  private refusals = 0;
  /** performance.now() after which close() gives refused batches up; null while running. */
  private giveUpAt: number | null = null;
  private readonly retryMs: number;
  private readonly retryMaxMs: number;
  private readonly closeTimeoutMs: number;

  constructor(
    private readonly db: Db,
    private readonly log: Logger,
    private readonly what: string,
    private readonly opts: WriteBehindOptions = { delayMs: 1000, maxBatch: 500 },
  ) {
    this.retryMs = opts.retryMs ?? 250;
    this.retryMaxMs = opts.retryMaxMs ?? 5000;
    this.closeTimeoutMs = opts.closeTimeoutMs ?? 10_000;
  }

  /**
   * Queues one write; it runs inside the batch's transaction (its handle `t`), possibly more
   * than once if the batch is refused. Capture values now, not in `write`. `about` names the
   * record in the log if it is given up at shutdown.
   */
  add(write: (t: Sql) => Promise<unknown>, about?: Record<string, unknown>) {
    this.queue.push({ write, about });
    if (this.queue.length >= this.opts.maxBatch) void this.flush();
    else if (!this.timer) {
      this.timer = setTimeout(() => void this.flush(), this.opts.delayMs);
      this.timer.unref?.();
    }
  }

  /**
   * Writes everything queued, now; resolves once it (and any flush already running) is
   * written. Batches are written one after the other, in the order they were queued.
   */
  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const batch = this.queue;
    this.queue = [];
    this.flushing = this.flushing.then(() => this.write(batch));
    return this.flushing;
  }

  /** flush() for shutdown: batches still refused after closeTimeoutMs are given up and logged. */
  close(): Promise<void> {
    this.giveUpAt = performance.now() + this.closeTimeoutMs;
    return this.flush();
  }

  get pending() {
    return this.queue.length;
  }

  /** True while the database refuses writes (a batch waits to be tried again). */
  get retrying() {
    return this.refusals > 0;
  }

  private async write(batch: Entry[]): Promise<void> {
    if (!batch.length) return;
    for (;;) {
      try {
        await this.db.tx(async (t) => {
          for (const { write } of batch) {
            // A savepoint each: a write that fails on its own is logged and undoes nothing else;
            // the database being unavailable fails the whole batch, which is tried again.
            await t.tx((s) => write(s)).catch((err) => {
              if (isDatabaseUnavailable(err)) throw err;
              this.log.error(`${this.what}: a deferred write failed`, { err: String(err) });
            });
          }
        });
        if (this.refusals) this.log.info(`${this.what}: deferred writes written again`, { refused_attempts: this.refusals });
        this.refusals = 0;
        return;
      } catch (err) {
        if (!this.refusals++) this.log.warn(`${this.what}: the database refused deferred writes; they are kept and tried again until written`, { err: String(err), batch: batch.length });
        const wait = Math.min(this.retryMs * 2 ** (this.refusals - 1), this.retryMaxMs);
        if (this.giveUpAt !== null && performance.now() + wait > this.giveUpAt) {
          this.log.error(`${this.what}: deferred writes lost: the database refused them until shutdown`, {
            err: String(err),
            lost: batch.length,
            records: batch.flatMap((e) => (e.about ? [e.about] : [])),
          });
          return;
        }
        await Bun.sleep(wait);
      }
    }
  }
}
