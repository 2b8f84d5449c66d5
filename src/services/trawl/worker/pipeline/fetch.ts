/**
 * Page fetching for extraction jobs, through the SSRF-guarded outbound client
 * (core/outbound-http.ts): that client never follows a redirect, so this loop follows up to
 * MAX_REDIRECTS itself and every hop goes through the guard again (URL checks, DNS
 * resolution, public addresses only unless ALLOW_PRIVATE_TARGETS). Bodies are capped at
 * 5 MB (a larger page is refused, not cut), content types HTML, JSON and text only, a clear
 * user agent, and robots.txt of each origin honoured for that user agent (or "*").
 */
import { OutboundError, type OutboundHttp } from "../../../../core/outbound-http";

export const USER_AGENT = "BunkerTrawl/0.1 (+https://github.com/bunker; extraction jobs)";
export const ROBOTS_TOKEN = "bunkertrawl";
export const PAGE_MAX_BYTES = 5 * 1024 * 1024;
export const MAX_REDIRECTS = 5;
export const PAGE_TIMEOUT_MS = 30_000;

export type FetchErrorCode = "FETCH_FAILED" | "BLOCKED_BY_SSRF_GUARD";

export class FetchError extends Error {
  constructor(
    readonly code: FetchErrorCode,
    message: string,
  ) {
    super(message);
  }
}

export interface Page {
  url: string;
  finalUrl: string;
  status: number;
  contentType: string;
  kind: "html" | "json" | "text";
  text: string;
  bytes: number;
}

type Requester = Pick<OutboundHttp, "request">;

/** The bytes read of every response (pages, redirects, robots.txt), reported to the caller. */
export interface FetchMeter {
  bytes: number;
}

function kindOf(contentType: string): Page["kind"] | null {
  const ct = contentType.split(";")[0].trim().toLowerCase();
  if (ct === "text/html" || ct === "application/xhtml+xml") return "html";
  if (ct === "application/json" || ct.endsWith("+json")) return "json";
  if (ct === "text/plain" || ct === "text/markdown" || ct === "text/csv" || ct === "") return "text";
  return null;
}

function decode(body: Uint8Array, contentType: string): string {
  const m = /charset=["']?([\w-]+)/i.exec(contentType);
  try {
    return new TextDecoder(m ? m[1] : "utf-8").decode(body);
  } catch {
    return new TextDecoder("utf-8").decode(body);
  }
}

export class PageFetcher {
  /** robots.txt rules per origin, for the life of one job. */
  private readonly robots = new Map<string, Promise<Rules>>();

  constructor(
    private readonly http: Requester,
    private readonly meter: FetchMeter,
    private readonly signal: AbortSignal,
  ) {}

  private async get(url: string, accept: string): Promise<{ status: number; headers: Record<string, string>; body: Uint8Array; finalUrl: string }> {
    let current = url;
    for (let hop = 0; ; hop++) {
      let res;
      try {
        res = await this.http.request(current, { headers: { "user-agent": USER_AGENT, accept }, timeoutMs: PAGE_TIMEOUT_MS, signal: this.signal });
      } catch (e) {
        if (this.signal.aborted) throw this.signal.reason;
        if (e instanceof OutboundError && (e.kind === "blocked" || e.kind === "invalid_url")) {
          throw new FetchError(e.kind === "blocked" ? "BLOCKED_BY_SSRF_GUARD" : "FETCH_FAILED", `${current}${hop ? ` (redirect ${hop} from ${url})` : ""}: ${e.message}`);
        }
        throw new FetchError("FETCH_FAILED", `${current}: ${(e as Error).message}`);
      }
      this.meter.bytes += res.body.byteLength;
      const location = res.headers.location;
      if (res.status >= 300 && res.status < 400 && location) {
        if (hop >= MAX_REDIRECTS) throw new FetchError("FETCH_FAILED", `${url}: more than ${MAX_REDIRECTS} redirects`);
        try {
          current = new URL(location, current).href;
        } catch {
          throw new FetchError("FETCH_FAILED", `${current}: redirect to an invalid URL`);
        }
        continue;
      }
      return { ...res, finalUrl: current };
    }
  }

  /** True when robots.txt of the URL's origin lets our user agent read the path. */
  async allowed(url: string): Promise<boolean> {
    const u = new URL(url);
    let rules = this.robots.get(u.origin);
    if (!rules) {
      rules = this.get(`${u.origin}/robots.txt`, "text/plain")
        .then((r) => (r.status >= 200 && r.status < 300 ? parseRobots(decode(r.body, r.headers["content-type"] ?? ""), ROBOTS_TOKEN) : []))
        // Unreachable or missing robots.txt: no rules (a blocked origin fails on the page itself).
        .catch((e) => {
          if (this.signal.aborted) throw e;
          return [];
        });
      this.robots.set(u.origin, rules);
    }
    return isAllowed(await rules, u.pathname + u.search);
  }

  async fetch(url: string): Promise<Page> {
    if (!(await this.allowed(url))) throw new FetchError("FETCH_FAILED", `${url}: disallowed by robots.txt for ${ROBOTS_TOKEN}`);
    const r = await this.get(url, "text/html,application/xhtml+xml,application/json;q=0.9,text/plain;q=0.8");
    if (r.status < 200 || r.status >= 300) throw new FetchError("FETCH_FAILED", `${r.finalUrl}: HTTP ${r.status}`);
    if (r.body.byteLength > PAGE_MAX_BYTES) throw new FetchError("FETCH_FAILED", `${r.finalUrl}: larger than ${PAGE_MAX_BYTES / 1024 / 1024} MB`);
    const contentType = r.headers["content-type"] ?? "";
    const kind = kindOf(contentType);
    if (!kind) throw new FetchError("FETCH_FAILED", `${r.finalUrl}: unsupported content type ${contentType.split(";")[0]}`);
    return { url, finalUrl: r.finalUrl, status: r.status, contentType, kind, text: decode(r.body, contentType), bytes: r.body.byteLength };
  }
}

// ------------------------------------------------------------------ robots.txt (RFC 9309)

interface Rule {
  allow: boolean;
  path: string;
}
type Rules = Rule[];

/** The rules of the group naming `token` (product token, case-insensitive), else of "*". */
export function parseRobots(text: string, token: string): Rules {
  const groups: { agents: string[]; rules: Rule[] }[] = [];
  let cur: { agents: string[]; rules: Rule[] } | null = null;
  let lastWasAgent = false;
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.replace(/#.*/, "").trim();
    const m = /^([A-Za-z-]+)\s*:\s*(.*)$/.exec(line);
    if (!m) continue;
    const key = m[1].toLowerCase();
    const value = m[2].trim();
    if (key === "user-agent") {
      if (!cur || !lastWasAgent) {
        cur = { agents: [], rules: [] };
        groups.push(cur);
      }
      cur.agents.push(value.toLowerCase());
      lastWasAgent = true;
      continue;
    }
    lastWasAgent = false;
    if (!cur) continue;
    if (key === "allow" || key === "disallow") {
      if (value === "" && key === "disallow") continue; // "Disallow:" allows everything
      cur.rules.push({ allow: key === "allow", path: value });
    }
  }
  const mine = groups.filter((g) => g.agents.some((a) => a !== "*" && token.startsWith(a.split("/")[0])));
  const chosen = mine.length ? mine : groups.filter((g) => g.agents.includes("*"));
  return chosen.flatMap((g) => g.rules);
}

function matches(pattern: string, path: string): boolean {
  const anchored = pattern.endsWith("$");
  const body = anchored ? pattern.slice(0, -1) : pattern;
  const re = new RegExp("^" + body.split("*").map((s) => s.replace(/[.+?^${}()|[\]\\]/g, "\\$&")).join(".*") + (anchored ? "$" : ""));
  return re.test(path);
}

/** Longest matching rule wins; allow wins a tie; no match allows. */
export function isAllowed(rules: Rules, path: string): boolean {
  let best: Rule | null = null;
  for (const r of rules) {
    if (!matches(r.path, path)) continue;
    if (!best || r.path.length > best.path.length || (r.path.length === best.path.length && r.allow)) best = r;
  }
  return best ? best.allow : true;
}
