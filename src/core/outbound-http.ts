/**
 * Outbound HTTP to user-supplied URLs (webhooks, extraction targets) with an SSRF guard.
 *
 * 1. The URL is parsed with WHATWG URL, which normalises odd IPv4 spellings
 *    (http://2130706433/, http://0x7f.1/ -> 127.0.0.1), and the normalised host is checked.
 * 2. A host name is resolved once (all addresses); if ANY address is not public the call is
 *    refused, so a name can't smuggle in a private address next to a public one.
 * 3. The request goes to the checked address itself: the URL handed to fetch holds the IP
 *    literal, the Host header carries the original name, and for https the TLS server name
 *    (SNI and certificate check) is the original name. A second DNS answer (rebinding) is
 *    never consulted.
 * Redirects are never followed (a 3xx comes back as is: following one would skip the guard),
 * one deadline covers DNS, connect, headers and body, and the body read is capped.
 */
import { readLimited } from "./streams";
import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import { ApiError } from "./errors";

export type OutboundErrorKind = "timeout" | "connection" | "blocked" | "invalid_url" | "tls";

/**
 * An ApiError so that one escaping into a route still answers with the house error body:
 * a refused URL is the caller's input (400), a failed call is an upstream problem (502).
 */
export class OutboundError extends ApiError {
  constructor(
    public readonly kind: OutboundErrorKind,
    message: string,
  ) {
    super(
      kind === "blocked" || kind === "invalid_url" ? 400 : 502,
      kind === "blocked" || kind === "invalid_url" ? "VALIDATION_ERROR" : "UPSTREAM_ERROR",
      message,
      kind === "blocked" || kind === "invalid_url" ? [{ field: "url", reason: message }] : undefined,
    );
    this.name = "OutboundError";
  }
}

export interface OutboundRequestInit {
  method?: string;
  headers?: Record<string, string>;
  body?: string | Uint8Array;
  timeoutMs?: number;
  /** Aborts the call (DNS, connect, body) when it fires; the error is a "timeout" kind OutboundError. */
  signal?: AbortSignal;
}

export interface OutboundResponse {
  status: number;
  /** Lower-case names; repeated headers joined with ", ". */
  headers: Record<string, string>;
  /** At most maxBodyBytes; the rest is not read. */
  body: Uint8Array;
  /** The IP address the request was sent to. */
  address: string;
}

export interface OutboundHttpOptions {
  /** Dev/test only: allow loopback, private and other non-public targets (and plain http). */
  allowPrivateTargets: boolean;
  requireHttps: boolean;
  defaultTimeoutMs?: number;
  maxBodyBytes?: number;
  /** Extra trusted CA (PEM) for https targets, e.g. a test certificate or an internal CA. */
  tlsCa?: string;
  /** Name resolution (default: the system resolver, every address). A seam for tests. */
  resolve?: (host: string) => Promise<string[]>;
}

export interface OutboundHttp {
  request(url: string, init?: OutboundRequestInit): Promise<OutboundResponse>;
  /** The checks `request` starts with, without DNS: for validating a URL when it is saved. */
  checkUrl(url: string): URL;
}

const DEFAULT_TIMEOUT_MS = 10_000;
const DEFAULT_MAX_BODY = 1024 * 1024;

// ---------------------------------------------------------------- address classification

function parseV4(ip: string): number | null {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(ip);
  if (!m) return null;
  const parts = m.slice(1).map(Number);
  if (parts.some((p, i) => p > 255 || (m[i + 1].length > 1 && m[i + 1][0] === "0"))) return null;
  return ((parts[0] << 24) | (parts[1] << 16) | (parts[2] << 8) | parts[3]) >>> 0;
}

/** 16 bytes of an IPv6 address (zone id dropped), or null. */
function parseV6(ip: string): number[] | null {
  let s = ip;
  const zone = s.indexOf("%");
  if (zone >= 0) s = s.slice(0, zone);
  if (!/^[0-9a-fA-F:.]+$/.test(s) || !s.includes(":")) return null;
  // A dotted IPv4 tail (::ffff:1.2.3.4) becomes its two hex groups.
  const lastColon = s.lastIndexOf(":");
  if (s.slice(lastColon + 1).includes(".")) {
    const v4 = parseV4(s.slice(lastColon + 1));
    if (v4 === null) return null;
    s = `${s.slice(0, lastColon + 1)}${(v4 >>> 16).toString(16)}:${(v4 & 0xffff).toString(16)}`;
  }
  const halves = s.split("::");
  if (halves.length > 2) return null;
  const toGroups = (h: string) => (h === "" ? [] : h.split(":"));
  const head = toGroups(halves[0]);
  const rest = halves.length === 2 ? toGroups(halves[1]) : [];
  if ([...head, ...rest].some((g) => !/^[0-9a-fA-F]{1,4}$/.test(g))) return null;
  const fill = 8 - head.length - rest.length;
  if (halves.length === 2 ? fill < 1 : fill !== 0) return null;
  const groups = [...head, ...Array(fill).fill("0"), ...rest].map((g) => parseInt(g, 16));
  return groups.flatMap((g) => [g >> 8, g & 0xff]);
}

// [network, prefix length] of every IPv4 range that is not globally reachable
// (IANA special-purpose registry).
const V4_BLOCKED: [string, number][] = [
  ["0.0.0.0", 8], // "this network"
  ["10.0.0.0", 8], // RFC 1918
  ["100.64.0.0", 10], // CGNAT
  ["127.0.0.0", 8], // loopback
  ["169.254.0.0", 16], // link-local (cloud metadata lives here)
  ["172.16.0.0", 12], // RFC 1918
  ["192.0.0.0", 24], // IETF protocol assignments
  ["192.0.2.0", 24], // TEST-NET-1
  ["192.88.99.0", 24], // 6to4 relay anycast (deprecated)
  ["192.168.0.0", 16], // RFC 1918
  ["198.18.0.0", 15], // benchmarking
  ["198.51.100.0", 24], // TEST-NET-2
  ["203.0.113.0", 24], // TEST-NET-3
  ["224.0.0.0", 4], // multicast
  ["240.0.0.0", 4], // reserved, includes broadcast 255.255.255.255
];
const V4_BLOCKED_NUM = V4_BLOCKED.map(([net, len]) => {
  const mask = len === 0 ? 0 : (~0 << (32 - len)) >>> 0;
  return { net: (parseV4(net)! & mask) >>> 0, mask };
});

function isPublicV4(n: number): boolean {
  return !V4_BLOCKED_NUM.some(({ net, mask }) => ((n & mask) >>> 0) === net);
}

const v4FromBytes = (b: number[], at: number) => ((b[at] << 24) | (b[at + 1] << 16) | (b[at + 2] << 8) | b[at + 3]) >>> 0;
const startsWith = (b: number[], prefix: number[]) => prefix.every((x, i) => b[i] === x);

function isPublicV6(b: number[]): boolean {
  const zeros = (n: number) => Array(n).fill(0);
  // ::ffff:a.b.c.d (IPv4-mapped): the socket really talks to a.b.c.d.
  if (startsWith(b, [...zeros(10), 0xff, 0xff])) return isPublicV4(v4FromBytes(b, 12));
  // 64:ff9b::/96 (NAT64 well-known prefix) reaches the embedded IPv4 address.
  if (startsWith(b, [0x00, 0x64, 0xff, 0x9b, ...zeros(8)])) return isPublicV4(v4FromBytes(b, 12));
  // 2002::/16 (6to4) embeds an IPv4 address in bits 16..47.
  if (b[0] === 0x20 && b[1] === 0x02) return isPublicV4(v4FromBytes(b, 2));
  // Only 2000::/3 is global unicast. Everything else is non-global: ::, ::1, IPv4-compatible
  // ::/96, 64:ff9b:1::/48, 100::/64 discard, fc00::/7 ULA, fe80::/10 link-local, fec0::/10,
  // ff00::/8 multicast...
  if ((b[0] & 0xe0) !== 0x20) return false;
  // ...and inside 2000::/3: 2001::/23 IETF assignments (Teredo, ORCHID, benchmarking),
  // 2001:db8::/32 and 3fff::/20 documentation.
  if (b[0] === 0x20 && b[1] === 0x01 && b[2] < 0x02) return false;
  if (startsWith(b, [0x20, 0x01, 0x0d, 0xb8])) return false;
  if (b[0] === 0x3f && b[1] === 0xff && b[2] < 0x10) return false;
  return true;
}

/**
 * True only for a globally routable unicast address (dotted-quad IPv4 or IPv6, brackets and
 * zone ids tolerated). Anything else, including strings that are not an IP, is false.
 */
export function isPublicAddress(ip: string): boolean {
  const s = ip.startsWith("[") && ip.endsWith("]") ? ip.slice(1, -1) : ip;
  const v4 = parseV4(s);
  if (v4 !== null) return isPublicV4(v4);
  const v6 = parseV6(s);
  if (v6 !== null) return isPublicV6(v6);
  return false;
}

// ---------------------------------------------------------------- the client

function classifyFetchError(e: unknown, timedOut: boolean, target: string): OutboundError {
  if (e instanceof OutboundError) return e;
  const err = e as { name?: string; code?: string; message?: string };
  if (timedOut || err?.name === "TimeoutError" || err?.name === "AbortError") return new OutboundError("timeout", `Request to ${target} timed out`);
  const code = String(err?.code ?? "");
  const detail = err?.message ? `${code ? code + ": " : ""}${err.message}` : code || "unknown error";
  if (/CERT|TLS|SSL|SELF_SIGNED|UNABLE_TO_(VERIFY|GET)|HOSTNAME_MISMATCH|ALTNAME/i.test(code)) {
    return new OutboundError("tls", `TLS error talking to ${target}: ${detail}`);
  }
  return new OutboundError("connection", `Could not connect to ${target}: ${detail}`);
}

export function createOutboundHttp(opts: OutboundHttpOptions): OutboundHttp {
  const defaultTimeout = opts.defaultTimeoutMs ?? DEFAULT_TIMEOUT_MS;
  const maxBody = opts.maxBodyBytes ?? DEFAULT_MAX_BODY;
  const resolve = opts.resolve ?? (async (host: string) => (await lookup(host, { all: true, verbatim: true })).map((a) => a.address));

  function checkUrl(raw: string): URL {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw new OutboundError("invalid_url", "URL is not a valid absolute URL");
    }
    if (url.protocol !== "http:" && url.protocol !== "https:") throw new OutboundError("invalid_url", `URL scheme must be http or https, not ${url.protocol.slice(0, -1)}`);
    if (!url.hostname) throw new OutboundError("invalid_url", "URL has no host");
    if (opts.requireHttps && !opts.allowPrivateTargets && url.protocol !== "https:") throw new OutboundError("blocked", "URL must use https");
    const host = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
    if (!opts.allowPrivateTargets) {
      if (isIP(host) && !isPublicAddress(host)) throw new OutboundError("blocked", `Target address ${host} is not a public address`);
      const name = host.toLowerCase().replace(/\.$/, "");
      // RFC 6761: these names are loopback whatever DNS says; refuse them before any lookup.
      if (!isIP(host) && (name === "localhost" || name.endsWith(".localhost"))) throw new OutboundError("blocked", `Target host ${host} is not a public address`);
    }
    return url;
  }

  async function resolveChecked(url: URL, signal: AbortSignal): Promise<string> {
    const host = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
    if (isIP(host)) return host;
    let addresses: string[];
    try {
      const aborted = new Promise<never>((_, reject) => signal.addEventListener("abort", () => reject(signal.reason), { once: true }));
      aborted.catch(() => {}); // a later abort (during fetch) must not be an unhandled rejection
      addresses = await Promise.race([resolve(host), aborted]);
    } catch (e) {
      if (signal.aborted) throw e;
      throw new OutboundError("connection", `Could not resolve host ${host}: ${(e as { code?: string }).code ?? (e as Error).message}`);
    }
    if (!addresses.length) throw new OutboundError("connection", `Could not resolve host ${host}`);
    if (!opts.allowPrivateTargets) {
      const bad = addresses.find((a) => !isPublicAddress(a));
      if (bad) throw new OutboundError("blocked", `Target host ${host} resolves to ${bad}, which is not a public address`);
    }
    return addresses[0];
  }

  async function request(raw: string, init: OutboundRequestInit = {}): Promise<OutboundResponse> {
    const url = checkUrl(raw);
    const method = (init.method ?? "GET").toUpperCase();
    if (init.body !== undefined && (method === "GET" || method === "HEAD")) throw new ApiError(500, "INTERNAL_ERROR", `A ${method} request cannot have a body`);
    const timeoutMs = init.timeoutMs ?? defaultTimeout;
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort(new DOMException("deadline exceeded", "TimeoutError"));
    }, timeoutMs);
    const onAbort = () => controller.abort(init.signal!.reason);
    if (init.signal?.aborted) onAbort();
    else init.signal?.addEventListener("abort", onAbort, { once: true });
    const target = url.host;
    try {
      const address = await resolveChecked(url, controller.signal);
      const literal = address.includes(":") ? `[${address}]` : address;
      const pinned = `${url.protocol}//${literal}${url.port ? ":" + url.port : ""}${url.pathname}${url.search}`;

      const headers = new Headers(init.headers ?? {});
      headers.set("host", url.host);
      if ((url.username || url.password) && !headers.has("authorization")) {
        let user: string, pass: string;
        try {
          user = decodeURIComponent(url.username);
          pass = decodeURIComponent(url.password);
        } catch {
          throw new OutboundError("invalid_url", "URL credentials are not valid percent-encoding");
        }
        headers.set("authorization", "Basic " + Buffer.from(`${user}:${pass}`).toString("base64"));
      }
      const hostIsName = !isIP(url.hostname.replace(/^\[|\]$/g, ""));
      // An IP literal host is verified against the certificate as is (no SNI for IPs).
      const serverName = url.hostname.replace(/\.$/, "");
      const tls = url.protocol === "https:" ? { ...(hostIsName ? { serverName } : {}), ...(opts.tlsCa ? { ca: opts.tlsCa } : {}) } : undefined;

      const res = await fetch(pinned, {
        method,
        headers,
        body: init.body,
        redirect: "manual",
        signal: controller.signal,
        // A proxy from the environment would make its own DNS decision: always go direct.
        proxy: false,
        tls,
      } as RequestInit);

      const outHeaders: Record<string, string> = {};
      res.headers.forEach((v, k) => {
        outHeaders[k] = k in outHeaders ? `${outHeaders[k]}, ${v}` : v;
      });
      // A longer body is cut at maxBody (kept: the prefix), not downloaded.
      const { bytes: body } = await readLimited(res.body, maxBody);
      return { status: res.status, headers: outHeaders, body, address };
    } catch (e) {
      throw classifyFetchError(e, timedOut, target);
    } finally {
      clearTimeout(timer);
      init.signal?.removeEventListener("abort", onAbort);
    }
  }

  return { request, checkUrl };
}
