/**
 * Work that runs after the response is on its way (e.g. password-reset mails: so neither
 * status, body nor timing says whether the address exists, and a mail outage cannot turn
 * into an error). Failures are logged; idle() waits for everything still running, for
 * tests and for shutdown before the database closes.
 */
import type { Logger } from "./log";

export class DeferredWork {
  private pending = new Set<Promise<unknown>>();

  constructor(private readonly log: Logger) {}

  run(what: string, fn: () => unknown, fields: Record<string, unknown> = {}) {
    const job: Promise<void> = new Promise<void>((resolve) => setImmediate(resolve))
      .then(fn)
      .then(() => undefined)
      .catch((err) => this.log.error(`${what} failed`, { ...fields, err: String(err) }))
      .finally(() => this.pending.delete(job));
    this.pending.add(job);
  }

  async idle() {
    while (this.pending.size) await Promise.all([...this.pending]);
  }
}
