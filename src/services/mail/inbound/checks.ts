/**
 * Parsing and authentication of received messages on worker threads (check-worker.ts),
 * which answer what the inbound path keeps of a message (examine.ts).
 *
 * mailparser and mailauth are most of a received message's CPU (about 1.1 ms of 1.6 for a
 * 10 KB DKIM-signed message) and both are synchronous JavaScript: on the event loop they
 * cap inbound mail at one core and stall the SMTP sessions and the API while they run. Here
 * they can run on `threads` workers (MAIL_INBOUND_THREADS), started with the first message
 * and handed each message by fewest jobs in hand. The default is 0, the event loop: measured
 * on a shared 2-core machine (docs/performance.md), the workers cost more CPU per message
 * than they spared (their own compiled code and collector, the hops between threads) and
 * stored fewer messages per second; a host with idle cores may measure otherwise
 * (`MAIL_INBOUND_THREADS=2 npm run bench -- mail-inbound`). The workers ask their DNS questions back
 * through `resolver` (the service's cached resolver), so every check reads the same cached
 * answers on the same clock as before; a worker keeps a copy of each answer until the
 * moment that cache lets it go (`until`, compared with the message's receiving time), which
 * spares the round trip to the event loop for the names most messages ask again.
 *
 * A worker that dies fails the messages it held (the SMTP reply is 451, the sender retries)
 * and is replaced at the next message.
 */
import { RUNS_COMPILED } from "../../../core/compiled";
import { availableParallelism } from "node:os";
import type { Logger } from "../../../core/log";
import type { CachedLookup } from "./auth";
import { checkMessage, type CheckAsk, type Examined } from "./examine";

// The messages between the pool and its workers.
export interface CheckJob extends CheckAsk {
  id: number;
  raw: Uint8Array;
}
export type CheckResult = { id: number; examined: Examined } | { id: number; error: string };
export interface DnsQuestion {
  dns: number;
  name: string;
  rrtype: string;
}
export interface DnsAnswer {
  dns: number;
  answer?: unknown;
  error?: { code: string; message: string };
  /** Until when the service's cache keeps this answer (its clock), null when it does not. */
  until: number | null;
}

/** Both cores, or each core up to four: the inbound bench's ceiling runs on as many threads. */
export const CHECK_THREADS = Math.min(availableParallelism(), 4);

/**
 * The worker's entry point. From source it sits beside this file. A `bun build --compile`
 * executable embeds it as an entry point of its own (scripts/build.ts lists it), named by its
 * path under src/, and there every module's import.meta.url is the executable's root.
 */
const WORKER_ENTRY = new URL(RUNS_COMPILED ? "./services/mail/inbound/check-worker.ts" : "./check-worker.ts", import.meta.url);

interface Thread {
  worker: Worker;
  jobs: Map<number, { resolve(c: Examined): void; reject(e: Error): void }>;
}

export class CheckPool {
  private readonly threads: (Thread | null)[];
  private jobs = 0;
  private stopped = false;

  constructor(
    private readonly resolver: CachedLookup,
    private readonly log: Logger,
    threads: number,
  ) {
    this.threads = Array.from({ length: threads }, () => null);
  }

  /** Parses raw and, when `ask.auth` is given, checks SPF, DKIM and DMARC. */
  check(raw: Uint8Array, ask: CheckAsk): Promise<Examined> {
    if (this.stopped) return Promise.reject(new Error("inbound checks stopped"));
    if (!this.threads.length) return checkMessage(raw, ask, this.resolver);
    const t = this.pick();
    const id = ++this.jobs;
    return new Promise<Examined>((resolve, reject) => {
      t.jobs.set(id, { resolve, reject });
      t.worker.postMessage({ id, raw, ...ask } satisfies CheckJob);
    });
  }

  /** Ends the workers; messages still in hand fail (451). */
  stop(): void {
    this.stopped = true;
    for (const t of this.threads) if (t) this.end(t, new Error("inbound checks stopped"));
  }

  private pick(): Thread {
    let best = -1;
    for (let i = 0; i < this.threads.length; i++) {
      const t = this.threads[i];
      if (!t) {
        best = i;
        break;
      }
      if (best < 0 || t.jobs.size < this.threads[best]!.jobs.size) best = i;
    }
    return this.threads[best] ?? this.start(best);
  }

  private start(i: number): Thread {
    const worker = new Worker(WORKER_ENTRY);
    // Idle workers do not keep the process alive; stop() ends them with the service.
    (worker as Worker & { unref(): void }).unref();
    const t: Thread = { worker, jobs: new Map() };
    worker.onmessage = (ev: MessageEvent<CheckResult | DnsQuestion>) => {
      const m = ev.data;
      if ("dns" in m) return this.answer(worker, m);
      const job = t.jobs.get(m.id);
      t.jobs.delete(m.id);
      if (!job) return;
      if ("error" in m) job.reject(new Error(m.error));
      else job.resolve(m.examined);
    };
    worker.onerror = (ev: ErrorEvent) => {
      this.log.error("inbound check worker failed", { error: ev.message });
      this.end(t, new Error(`inbound check worker failed: ${ev.message}`));
    };
    worker.addEventListener("close", () => this.end(t, new Error("inbound check worker exited")));
    this.threads[i] = t;
    return t;
  }

  private answer(worker: Worker, q: DnsQuestion) {
    const until = () => this.resolver.until(q.name, q.rrtype);
    this.resolver(q.name, q.rrtype).then(
      (answer) => worker.postMessage({ dns: q.dns, answer, until: until() } satisfies DnsAnswer),
      (e: { code?: string; message?: string }) => worker.postMessage({ dns: q.dns, error: { code: String(e?.code ?? ""), message: String(e?.message ?? e) }, until: until() } satisfies DnsAnswer),
    );
  }

  /** Takes t out of the pool (once: a failed worker also closes) and fails what it held. */
  private end(t: Thread, reason: Error) {
    const i = this.threads.indexOf(t);
    if (i < 0) return;
    this.threads[i] = null;
    for (const job of t.jobs.values()) job.reject(reason);
    t.jobs.clear();
    t.worker.terminate();
  }
}
