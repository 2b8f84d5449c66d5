/**
 * SPF, DKIM and DMARC (with alignment) of a received message with mailauth, resolving
 * through the mail service's DNS servers (DNS_SERVERS, the loopback DNS server in tests).
 * Results are mailauth's keywords (pass, fail, softfail, neutral, none, temperror,
 * permerror, policy); "none" when a check did not apply.
 */
import { Resolver } from "node:dns/promises";
import { joinTxtChunks } from "../domains/dns";
import type { AuthResults } from "./spam";
import { lazy } from "../../../core/lazy";

// Loaded by the first message received, not at start-up (core/lazy.ts).
const mailauth = lazy(() => require("mailauth") as typeof import("mailauth"));

export type DnsLookup = (name: string, rrtype: string) => Promise<unknown>;

const NXDOMAIN = new Set(["ENOTFOUND", "NXDOMAIN", "ENONAME"]);
const NODATA = new Set(["ENODATA", "ENOTIMP"]);

/** How long answers (and "no such name / no data" answers) are reused; 0 turns the cache off. */
export const DNS_CACHE_MS = 30_000;
export const DNS_CACHE_MAX = 10_000;

/** A cached resolver, which also says until when (on its clock) it keeps the answer to a question: null when it does not. */
export interface CachedLookup extends DnsLookup {
  until(name: string, rrtype: string): number | null;
}

/** The cache's key of a question (names are case-insensitive). */
export const dnsCacheKey = (name: string, rrtype: string) => `${rrtype} ${name.toLowerCase()}`;

/**
 * A mailauth resolver on node:dns (Bun splits multi-string TXT records: joined back here),
 * with a small in-process cache: answers and negative answers are reused for 30 s (at most
 * 10,000 names), as a local caching resolver would; lookups that failed otherwise
 * (timeouts, SERVFAIL) are not cached. Senders keep sending from the same few domains, so
 * this saves the SPF, DKIM and DMARC round trips of most messages.
 */
export function mailauthResolver(servers: string[] | null, timeoutMs = 3000, cacheMs = DNS_CACHE_MS, now: () => number = () => performance.now()): CachedLookup {
  const lookup = uncachedResolver(servers, timeoutMs);
  if (cacheMs <= 0) return Object.assign(lookup, { until: () => null });
  const cache = new Map<string, { until: number; answer: Promise<unknown> }>();
  const cached: DnsLookup = (name, rrtype) => {
    const key = dnsCacheKey(name, rrtype);
    const t = now();
    const hit = cache.get(key);
    if (hit && hit.until > t) return hit.answer;
    const answer = lookup(name, rrtype);
    if (cache.size >= DNS_CACHE_MAX) cache.delete(cache.keys().next().value!);
    cache.set(key, { until: t + cacheMs, answer });
    // Keep definite answers only: a timeout or SERVFAIL is asked again next time.
    answer.catch((e: { code?: string }) => {
      if (e?.code !== "ENOTFOUND" && e?.code !== "ENODATA" && cache.get(key)?.answer === answer) cache.delete(key);
    });
    return answer;
  };
  return Object.assign(cached, { until: (name: string, rrtype: string) => cache.get(dnsCacheKey(name, rrtype))?.until ?? null });
}

function uncachedResolver(servers: string[] | null, timeoutMs: number): DnsLookup {
  const r = new Resolver({ timeout: timeoutMs, tries: 2 });
  if (servers && servers.length) r.setServers(servers);
  return async (name, rrtype) => {
    try {
      if (rrtype === "TXT") {
        const { records } = joinTxtChunks(await r.resolveTxt(name));
        if (!records.length) throw Object.assign(new Error(`no TXT for ${name}`), { code: "ENODATA" });
        return records.map((s) => [s]);
      }
      return await r.resolve(name, rrtype as "A");
    } catch (e) {
      const code = (e as { code?: string }).code ?? "";
      if (NXDOMAIN.has(code)) throw Object.assign(new Error(`${name} not found`), { code: "ENOTFOUND" });
      if (NODATA.has(code)) throw Object.assign(new Error(`no ${rrtype} for ${name}`), { code: "ENODATA" });
      throw e;
    }
  };
}

/** What mailauth is asked beyond SPF, DKIM and DMARC: nothing (the inbound bench's ceiling asks the same). */
export const AUTH_OPTIONS = { disableArc: true, disableBimi: true } as const;

/** DKIM: pass when any signature passes; otherwise the first signature's result; none without one. */
export async function authenticateMessage(
  raw: Uint8Array,
  o: { ip: string; helo: string; sender: string; mta: string; resolver: DnsLookup },
): Promise<AuthResults> {
  try {
    const res = await mailauth().authenticate(Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength), {
      ip: o.ip.replace(/^::ffff:/, ""),
      helo: o.helo || o.ip,
      sender: o.sender,
      mta: o.mta,
      resolver: o.resolver as never,
      ...AUTH_OPTIONS,
    });
    // mailauth's lenient mode reports a body hash mismatch as neutral; RFC 6376 (6.3) makes
    // it a failure (PERMFAIL): the body was changed after signing.
    const dkims = (res.dkim?.results ?? []).map((d: any) => {
      const r = String(d.status?.result ?? "none");
      return r === "neutral" && /body hash/i.test(String(d.status?.comment ?? "")) ? "fail" : r;
    });
    const dkim = dkims.includes("pass") ? "pass" : (dkims[0] ?? "none");
    const spf = res.spf ? (res.spf.status?.result ?? "none") : "none";
    const dmarc = res.dmarc ? (res.dmarc.status?.result ?? "none") : "none";
    const policy = res.dmarc && res.dmarc.policy ? String(res.dmarc.policy) : null;
    return { spf: String(spf), dkim: String(dkim), dmarc: String(dmarc), dmarcPolicy: policy };
  } catch {
    return { spf: "temperror", dkim: "temperror", dmarc: "temperror", dmarcPolicy: null };
  }
}
