/**
 * Requests in progress per client address (HTTP_MAX_REQUESTS_PER_CLIENT). A connection is
 * either idle (closed by Bun's idleTimeout), sending headers (likewise) or carrying a
 * request: counting requests counts the connections a client can hold open, which Bun.serve
 * does not expose itself.
 *
 * Exact, and cheap while the server is not crowded: as long as fewer than `cap` requests are
 * in progress in all, no address can be over the cap, so requests are only remembered, not
 * attributed (server.requestIP costs about 2 µs, a sixth of a /healthz). When the total
 * reaches the cap, every request in progress is attributed to its address, and each new one
 * is counted, until the counted ones have all ended.
 */

/** What the kernel keeps of a request for its admission (on its per-request state). */
export interface AdmissionSlot {
  /** undefined: not attributed (or not admitted); null: admitted without an address (in-process); else the address counted. */
  held?: string | null;
}

export class ClientAdmission {
  private readonly counts = new Map<string, number>();
  private readonly unattributed = new Map<AdmissionSlot, Request>();
  private inProgress = 0;

  constructor(
    readonly cap: number,
    private readonly addressOf: (request: Request) => string | null,
  ) {}

  /** Admits a request (true), or refuses it past the cap (false: nothing to release). */
  admit(slot: AdmissionSlot, request: Request): boolean {
    if (this.counts.size === 0 && this.inProgress < this.cap) {
      this.unattributed.set(slot, request);
      this.inProgress++;
      return true;
    }
    if (this.unattributed.size) this.attributeAll();
    const address = this.addressOf(request);
    if (address !== null) {
      const n = (this.counts.get(address) ?? 0) + 1;
      if (n > this.cap) return false;
      this.counts.set(address, n);
    }
    slot.held = address;
    this.inProgress++;
    return true;
  }

  /** The request's answer is made: its place is free. Safe to call twice. */
  release(slot: AdmissionSlot): void {
    if (this.unattributed.delete(slot)) {
      this.inProgress--;
      return;
    }
    const address = slot.held;
    if (address === undefined) return;
    slot.held = undefined;
    this.inProgress--;
    if (address === null) return;
    const n = this.counts.get(address)! - 1;
    if (n === 0) this.counts.delete(address);
    else this.counts.set(address, n);
  }

  private attributeAll() {
    for (const [slot, request] of this.unattributed) {
      const address = this.addressOf(request);
      slot.held = address;
      if (address !== null) this.counts.set(address, (this.counts.get(address) ?? 0) + 1);
    }
    this.unattributed.clear();
  }
}
