/**
 * Group commit: writes of concurrent requests that must be durable before the request is
 * answered (a created job) share one transaction. A commit costs far more than the rows it
 * carries, so under load one commit serves every request that arrived while the previous
 * one was being written. Unlike a write-behind, nothing is answered before it is committed:
 * a crash loses no acknowledged write.
 *
 * Each write runs in a savepoint of the batch's transaction, so one failing write rejects
 * its own caller and the others still commit. Batches are written one after the other.
 */
import type { Db, Sql } from "../../core/db";

interface Pending {
  write: (t: Sql) => Promise<unknown>;
  resolve: (v: unknown) => void;
  reject: (e: unknown) => void;
}

export class GroupCommit {
  private queue: Pending[] = [];
  private running = false;

  constructor(
    private readonly db: Db,
    private readonly maxBatch = 256,
  ) {}

  /** Runs `write` in the next batch's transaction; resolves with its value once committed. */
  run<T>(write: (t: Sql) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ write, resolve: resolve as (v: unknown) => void, reject });
      if (!this.running) {
        this.running = true;
        // Let the requests already in flight join this batch.
        setImmediate(() => void this.drain());
      }
    });
  }

  private async drain(): Promise<void> {
    try {
      while (this.queue.length) {
        const batch = this.queue.splice(0, this.maxBatch);
        const outcomes: ({ ok: true; value: unknown } | { ok: false; error: unknown })[] = [];
        try {
          await this.db.tx(async (t) => {
            for (const p of batch) {
              try {
                outcomes.push({ ok: true, value: await t.tx((s) => p.write(s)) });
              } catch (error) {
                outcomes.push({ ok: false, error });
              }
            }
          });
        } catch (error) {
          for (const p of batch) p.reject(error);
          continue;
        }
        batch.forEach((p, i) => {
          const o = outcomes[i];
          if (o.ok) p.resolve(o.value);
          else p.reject(o.error);
        });
      }
    } finally {
      this.running = false;
    }
  }
}
