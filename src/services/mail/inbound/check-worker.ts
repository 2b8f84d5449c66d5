/**
 * The worker thread of inbound checks (checks.ts): parses a received message (mailparser),
 * checks SPF, DKIM and DMARC (mailauth), the two costs of a received message, and answers
 * what the inbound path keeps of it (examine.ts), so that they run on every core while the
 * event loop keeps the SMTP sessions, the object store and the database.
 *
 * DNS questions go to the event loop, whose resolver holds the one 30-second cache (auth.ts)
 * on the service's clock. Each answer comes back with the moment that cache lets it go, and
 * is reused here until then (compared with the receiving time of the message asking): the
 * same answer the cache would give, without the round trip.
 *
 * An entry point of its own: `bun build --compile` embeds it because scripts/build.ts
 * lists it beside src/main.ts.
 */
import { DNS_CACHE_MAX, dnsCacheKey, type DnsLookup } from "./auth";
import { checkMessage } from "./examine";
import type { CheckJob, CheckResult, DnsAnswer, DnsQuestion } from "./checks";

declare const self: Worker;

type Settled = Pick<DnsAnswer, "answer" | "error">;
const asked = new Map<number, (a: DnsAnswer) => void>();
const kept = new Map<string, Settled & { until: number }>();
let questions = 0;

// mailauth reads an error's code (ENOTFOUND, ENODATA) to tell "no record" from a failure.
const settle = (a: Settled) => (a.error ? Promise.reject(Object.assign(new Error(a.error.message), { code: a.error.code })) : Promise.resolve(a.answer));

/** The resolver of a message received at nowMs. */
const resolverAt =
  (nowMs: number): DnsLookup =>
  (name, rrtype) => {
    const key = dnsCacheKey(name, rrtype);
    const hit = kept.get(key);
    if (hit && hit.until > nowMs) return settle(hit);
    return new Promise<DnsAnswer>((resolve) => {
      const dns = ++questions;
      asked.set(dns, resolve);
      self.postMessage({ dns, name, rrtype } satisfies DnsQuestion);
    }).then((a) => {
      if (a.until !== null) {
        if (kept.size >= DNS_CACHE_MAX) kept.delete(kept.keys().next().value!);
        kept.set(key, { answer: a.answer, error: a.error, until: a.until });
      }
      return settle(a);
    });
  };

async function run(job: CheckJob): Promise<CheckResult> {
  try {
    return { id: job.id, examined: await checkMessage(job.raw, job, resolverAt(job.nowMs)) };
  } catch (e) {
    return { id: job.id, error: String((e as Error)?.message ?? e) };
  }
}

self.onmessage = (ev: MessageEvent<CheckJob | DnsAnswer>) => {
  const m = ev.data;
  if ("dns" in m) {
    asked.get(m.dns)?.(m);
    asked.delete(m.dns);
    return;
  }
  void run(m).then((r) => self.postMessage(r));
};
