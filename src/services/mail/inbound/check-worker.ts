/**
 * The worker thread of inbound checks (checks.ts): parses a received message (mailparser),
 * checks SPF, DKIM and DMARC (mailauth), the two costs of a received message, and answers
 * what the inbound path keeps of it (examine.ts), so that they run on every core while the
 * event loop keeps the SMTP sessions, the object store and the database. DNS questions go back to the main thread, whose resolver holds the one
 * 30-second cache (auth.ts) and the service's clock: every worker sees the same answers.
 *
 * An entry point of its own: `bun build --compile` embeds it because scripts/build.ts
 * lists it beside src/main.ts.
 */
import { authenticateMessage, type DnsLookup } from "./auth";
import { parseMail } from "../parse";
import { examine } from "./examine";
import type { CheckJob, CheckResult, DnsAnswer, DnsQuestion } from "./checks";

declare const self: Worker;

const asked = new Map<number, { resolve(v: unknown): void; reject(e: unknown): void }>();
let questions = 0;

// mailauth reads an error's code (ENOTFOUND, ENODATA) to tell "no record" from a failure.
const resolver: DnsLookup = (name, rrtype) =>
  new Promise((resolve, reject) => {
    const dns = ++questions;
    asked.set(dns, { resolve, reject });
    self.postMessage({ dns, name, rrtype } satisfies DnsQuestion);
  });

async function run(job: CheckJob): Promise<CheckResult> {
  try {
    const [parsed, auth] = await Promise.all([parseMail(job.raw), job.auth ? authenticateMessage(job.raw, { ...job.auth, resolver }) : null]);
    return { id: job.id, examined: examine(parsed, auth, job.nowMs, job.report) };
  } catch (e) {
    return { id: job.id, error: String((e as Error)?.message ?? e) };
  }
}

self.onmessage = (ev: MessageEvent<CheckJob | DnsAnswer>) => {
  const m = ev.data;
  if ("dns" in m) {
    const waiting = asked.get(m.dns);
    asked.delete(m.dns);
    if (!waiting) return;
    if (m.error) waiting.reject(Object.assign(new Error(m.error.message), { code: m.error.code }));
    else waiting.resolve(m.answer);
    return;
  }
  void run(m).then((r) => self.postMessage(r));
};
