/**
 * Write-behind for records that are written at a high rate and need not be in the request's
 * own transaction: queued in memory and written together, in one transaction, a moment later.
 * A commit costs far more than the rows it carries (the client_credentials grant spent more
 * on committing its audit row than on everything but the RS256 signature), so one commit per
 * batch instead of per request.
 *
 * The trade-off is explicit: a crash loses at most the last `delayMs` of queued records (the
 * way large token services log exchanges asynchronously). Everything is written on flush(),
 * which readers of those records call first (so the API always shows them) and shutdown
 * calls before the database closes. A failing write is logged and does not stop the others.
 */
import type { Db, Sql } from "./db";
import type { Logger } from "./log";

export class WriteBehind {
  private queue: ((t: Sql) => Promise<unknown>)[] = [];
  private flushing: Promise<void> = Promise.resolve();
  private timer: ReturnType<typeof setTimeout> | null = null;

  constructor(
    private readonly db: Db,
    private readonly log: Logger,
    private readonly what: string,
    private readonly opts: { delayMs: number; maxBatch: number } = { delayMs: 1000, maxBatch: 500 },
  ) {}

  /** Queues one write; it runs inside the batch's transaction (its handle `t`). Capture values now, not in `write`. */
  add(write: (t: Sql) => Promise<unknown>) {
    this.queue.push(write);
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
    this.flushing = this.flushing.then(async () => {
      if (!batch.length) return;
      try {
        await this.db.tx(async (t) => {
          for (const write of batch) {
            // A savepoint each: one failing write is logged and does not undo the others.
            await t.tx((s) => write(s)).catch((err) => this.log.error(`${this.what}: a deferred write failed`, { err: String(err) }));
          }
        });
      } catch (err) {
        this.log.error(`${this.what}: a batch of deferred writes failed`, { err: String(err), lost: batch.length });
      }
    });
    return this.flushing;
  }

  get pending() {
    return this.queue.length;
  }
}
