/**
 * Allowlist check of the `return_to` URL of federated sign-in (an open redirect is the
 * classic way to leak an authorization result, so the rules are strict and exact).
 *
 * Allowlist entries are origins: `scheme://host[:port]`, or `scheme://*.domain[:port]`.
 * - Scheme and port must match exactly (the default port of the scheme and no port are the
 *   same thing: `https://a.com` = `https://a.com:443`).
 * - A plain host matches only itself (case-insensitive; IDNs compared in punycode).
 * - `*.example.com` matches exactly one extra label: `app.example.com`, not `example.com`
 *   itself, not `a.b.example.com`, and never look-alikes such as `evil-example.com` or
 *   `example.com.evil.com` (the comparison is on whole labels of the parsed host).
 *   A wildcard needs at least two labels after it (`*.com` is refused).
 * `return_to` itself must be an absolute http(s) URL written with `//`, without userinfo
 * (`https://example.com@evil.com` goes to evil.com), backslashes (browsers read them as
 * slashes) or whitespace / control characters (the URL parser silently drops some), and at
 * most 2048 characters. Callers redirect to the parsed, re-serialised URL, so what was
 * checked is exactly what the browser gets.
 */
import { invalidField } from "./errors";

export const RETURN_TO_MAX = 2048;

export interface OriginPattern {
  protocol: "http:" | "https:";
  /** Host without the `*.` of a wildcard entry (lower case, punycode). */
  host: string;
  wildcard: boolean;
  /** "" for the scheme's default port. */
  port: string;
}

const ENTRY_RE = /^(https?):\/\/(\*\.)?([A-Za-z0-9.\-\u0080-\uffff]+)(?::(\d{1,5}))?\/?$/;

/** Parses one allowlist entry; null when it is not an origin (or a too-broad wildcard). */
export function parseOriginPattern(raw: string): OriginPattern | null {
  const m = ENTRY_RE.exec(raw.trim());
  if (!m) return null;
  let url: URL;
  try {
    url = new URL(`${m[1].toLowerCase()}://${m[3]}${m[4] ? ":" + m[4] : ""}`);
  } catch {
    return null;
  }
  const wildcard = !!m[2];
  const host = url.hostname;
  if (!host || host.endsWith(".") || host.startsWith(".")) return null;
  if (wildcard && (host.split(".").length < 2 || /^[\d.]+$/.test(host) || host.startsWith("["))) return null;
  return { protocol: url.protocol as OriginPattern["protocol"], host, wildcard, port: url.port };
}

export function parseOriginPatterns(entries: string[]): OriginPattern[] {
  return entries.map(parseOriginPattern).filter((p): p is OriginPattern => p !== null);
}

export function originMatches(url: URL, p: OriginPattern): boolean {
  if (url.protocol !== p.protocol || url.port !== p.port) return false;
  const host = url.hostname;
  if (!p.wildcard) return host === p.host;
  const suffix = `.${p.host}`;
  if (!host.endsWith(suffix)) return false;
  const label = host.slice(0, -suffix.length);
  return label.length > 0 && !label.includes(".");
}

/**
 * The parsed return_to when it is allowed, else 400 VALIDATION_ERROR on field `return_to`.
 * An empty allowlist refuses everything.
 */
export function checkReturnTo(raw: unknown, allow: OriginPattern[]): URL {
  const bad = (reason: string) => invalidField("return_to", reason);
  if (typeof raw !== "string" || raw === "") throw bad("is required");
  if (raw.length > RETURN_TO_MAX) throw bad(`at most ${RETURN_TO_MAX} characters`);
  if (/[\s\x00-\x1f\x7f\\]/.test(raw)) throw bad("must not contain whitespace, control characters or backslashes");
  if (!/^https?:\/\//i.test(raw)) throw bad("must be an absolute http(s) URL");
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw bad("must be an absolute http(s) URL");
  }
  const rest = raw.slice(raw.indexOf("//") + 2);
  const end = rest.search(/[/?#]/);
  const authority = end < 0 ? rest : rest.slice(0, end);
  if (url.username || url.password || authority.includes("@")) throw bad("must not contain credentials (user@host)");
  if (!allow.some((p) => originMatches(url, p))) throw bad("origin is not in the allowlist");
  return url;
}
