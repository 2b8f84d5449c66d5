/**
 * The mail service's DNS resolver: node:dns/promises Resolver pointed at DNS_SERVERS when set
 * (tests start a real DNS server on loopback), the system resolver otherwise. Used by the
 * domain checks (TXT, MX) and by the sending part for MX lookups.
 *
 * "No such name" and "no records of this type" both read as an empty answer; other failures
 * (timeouts, SERVFAIL, refused) throw, so a check can tell "absent" from "could not look".
 */
import { Resolver } from "node:dns/promises";

export interface MailResolver {
  /**
   * TXT records of `name`, each one string (its character-strings joined). Bun's resolver
   * returns every character-string of a multi-string record as a record of its own: chunks
   * are joined back while a chunk is exactly 255 bytes long (the size publishers split at,
   * and the size dns_instructions tell customers to use). `chunks` keeps the raw answer, in
   * order, for matching an expected value against consecutive chunks.
   */
  resolveTxt(name: string): Promise<{ records: string[]; chunks: string[] }>;
  /** MX hosts of `name`, lowest preference first (ties in answer order); [] when none. */
  resolveMx(name: string): Promise<{ exchange: string; priority: number }[]>;
}

const ABSENT = new Set(["ENOTFOUND", "ENODATA", "NXDOMAIN", "ENONAME"]);
const absent = (e: unknown) => ABSENT.has((e as { code?: string })?.code ?? "");

/** Joins Bun's one-record-per-string answer back into records (see MailResolver.resolveTxt). */
export function joinTxtChunks(answer: string[][]): { records: string[]; chunks: string[] } {
  const chunks = answer.flat();
  // Node (and Bun, if it ever keeps the boundaries) returns multi-string records intact.
  if (answer.some((r) => r.length > 1)) return { records: answer.map((r) => r.join("")), chunks };
  const records: string[] = [];
  let current: string | null = null;
  for (const c of chunks) {
    current = current === null ? c : current + c;
    if (Buffer.byteLength(c, "utf8") !== 255) {
      records.push(current);
      current = null;
    }
  }
  if (current !== null) records.push(current);
  return { records, chunks };
}

/** True when `expected` is one of the records, or the concatenation of consecutive chunks. */
export function txtHas(answer: { records: string[]; chunks: string[] }, expected: string, normalise = (s: string) => s): boolean {
  const want = normalise(expected);
  if (answer.records.some((r) => normalise(r) === want)) return true;
  for (let i = 0; i < answer.chunks.length; i++) {
    let acc = "";
    for (let j = i; j < answer.chunks.length && acc.length < expected.length + 16; j++) {
      acc += answer.chunks[j];
      if (normalise(acc) === want) return true;
    }
  }
  return false;
}

export function createMailResolver(servers: string[] | null, opts: { timeoutMs?: number; tries?: number } = {}): MailResolver {
  const resolver = new Resolver({ timeout: opts.timeoutMs ?? 3000, tries: opts.tries ?? 2 });
  if (servers && servers.length) resolver.setServers(servers);
  return {
    async resolveTxt(name) {
      try {
        return joinTxtChunks(await resolver.resolveTxt(name));
      } catch (e) {
        if (absent(e)) return { records: [], chunks: [] };
        throw e;
      }
    },
    async resolveMx(name) {
      try {
        const mx = await resolver.resolveMx(name);
        return mx
          .map((m, i) => ({ exchange: m.exchange.replace(/\.$/, "").toLowerCase(), priority: m.priority, i }))
          .sort((a, b) => a.priority - b.priority || a.i - b.i)
          .map(({ exchange, priority }) => ({ exchange, priority }));
      } catch (e) {
        if (absent(e)) return [];
        throw e;
      }
    },
  };
}

/** Helpers for the sending part: a resolver per call site is cheap, but sharing one is fine too. */
export const resolveTxt = (r: MailResolver, name: string) => r.resolveTxt(name);
export const resolveMx = (r: MailResolver, name: string) => r.resolveMx(name);
