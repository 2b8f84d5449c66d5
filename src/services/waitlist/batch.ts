/**
 * Group commit for public sign-ups: sign-ups that arrive while a write transaction is running
 * wait for it and then share the next one, each in its own savepoint (a failing sign-up rolls
 * back only itself; its error goes to its own caller). One commit then serves many sign-ups,
 * which is what a burst of them (a launch tweet) costs most. A lone sign-up runs at once, in
 * a transaction of its own. Results are handed out only after the commit.
 */
import { tx, type Db, type Sql } from "../../core/db";
import type { Logger } from "../../core/log";

interface Item {
  fn: (t: Sql) => Promise<unknown>;
  resolve: (v: unknown) => void;
  reject: (e: unknown) => void;
}

export const BATCH_MAX = 64;

export class WriteBatcher {
  private queue: Item[] = [];
  private running = false;

  constructor(
    private readonly db: Db,
    private readonly log: Logger,
  ) {}

  run<T>(fn: (t: Sql) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ fn, resolve: resolve as (v: unknown) => void, reject });
      if (!this.running) this.drain().catch((e: Error) => this.log.error("waitlist write batch failed", { error: e.message }));
    });
  }

  private async drain(): Promise<void> {
    this.running = true;
    try {
      while (this.queue.length) {
        const batch = this.queue.splice(0, BATCH_MAX);
        const results: { ok: boolean; value: unknown }[] = [];
        try {
          await tx(this.db, async (t) => {
            for (const item of batch) {
              try {
                results.push({ ok: true, value: await t.tx(item.fn) });
              } catch (e) {
                results.push({ ok: false, value: e });
              }
            }
          });
        } catch (e) {
          for (const item of batch) item.reject(e);
          continue;
        }
        batch.forEach((item, i) => (results[i]!.ok ? item.resolve(results[i]!.value) : item.reject(results[i]!.value)));
      }
    } finally {
      this.running = false;
    }
  }
}
