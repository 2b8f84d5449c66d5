/**
 * Group commit for the card board's writes on SQLite. One writer at a time holds the file,
 * and the commit (the WAL write of every page the change touched, FTS segment included)
 * costs more than the card's statements. Writes that arrive while a transaction runs wait
 * for it anyway; they are then run together in the next transaction, each in its own
 * savepoint, and committed once. Every caller still answers only after the commit that holds
 * its change (no write-behind, nothing lost on a crash), and a failing write rolls back its
 * own savepoint only: the others of the batch commit. A lone write runs in a plain
 * transaction, exactly as without grouping.
 *
 * PostgreSQL takes concurrent transactions on separate connections: writes go straight to
 * tx() there.
 */
import { tx, type Sql } from "../../../core/db";

interface Item {
  fn: (t: Sql) => Promise<unknown>;
  resolve: (v: unknown) => void;
  reject: (e: unknown) => void;
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

export class GroupCommit {
  private pending: Item[] = [];
  private draining = false;

  constructor(
    private readonly db: Sql,
    private readonly maxBatch = 64,
  ) {}

  run<T>(fn: (t: Sql) => Promise<T>): Promise<T> {
    if (this.db.engine !== "sqlite") return tx(this.db, fn);
    return new Promise<T>((resolve, reject) => {
      this.pending.push({ fn, resolve: resolve as (v: unknown) => void, reject });
      if (!this.draining) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.draining = true;
    try {
      while (this.pending.length) {
        const batch = this.pending.splice(0, this.maxBatch);
        const outcomes: Outcome[] = [];
        try {
          await tx(this.db, async (t) => {
            if (batch.length === 1) {
              outcomes.push({ ok: true, value: await batch[0]!.fn(t) });
              return;
            }
            for (const item of batch) {
              try {
                outcomes.push({ ok: true, value: await t.tx(item.fn) });
              } catch (error) {
                outcomes.push({ ok: false, error });
              }
            }
          });
        } catch (error) {
          // The transaction failed as a whole (a lone write threw, or the commit failed): nothing of it was written.
          for (const item of batch) item.reject(error);
          continue;
        }
        batch.forEach((item, i) => {
          const o = outcomes[i]!;
          if (o.ok) item.resolve(o.value);
          else item.reject(o.error);
        });
      }
    } finally {
      this.draining = false;
    }
  }
}
