/**
 * Helpers shared by workspace API keys, personal access tokens and the audit log: minting
 * a bearer secret (only its hash is ever stored), name and timestamp validation.
 */
import { badRequest } from "../../../core/errors";
import { randomBase62 } from "../../../core/ids";
import { hashToken } from "../../../core/secrets";

/** Random part of every minted secret: 40 base62 characters ≈ 238 bits, far beyond guessing. */
const SECRET_CHARS = 40;
/** Characters kept in clear for display ("svc_live_AbC", "pat_AbCdEfGh"): enough to tell keys apart, too few to matter. */
const DISPLAY_PREFIX_CHARS = 12;
export const NAME_MAX = 100;

export interface MintedSecret {
  secret: string;
  hash: string;
  prefix: string;
  last_four: string;
}

export function mintSecret(typePrefix: string): MintedSecret {
  const secret = typePrefix + randomBase62(SECRET_CHARS);
  return { secret, hash: hashToken(secret), prefix: secret.slice(0, DISPLAY_PREFIX_CHARS), last_four: secret.slice(-4) };
}

export function validateName(v: unknown, field = "name"): string {
  const s = typeof v === "string" ? v.trim() : "";
  if (!s || s.length > NAME_MAX) throw badRequest(`Invalid ${field}`, [{ field, reason: `1-${NAME_MAX} characters` }]);
  return s;
}

/** An ISO 8601 date (YYYY-MM-DD, read as UTC midnight) or date-time with Z or an offset. */
const ISO_RE = /^(\d{4})-(\d{2})-(\d{2})(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2}))?$/;

/** Parses an ISO 8601 instant to epoch ms; 400 naming `field` when malformed. */
export function parseIsoInstant(v: unknown, field: string): number {
  const m = typeof v === "string" ? ISO_RE.exec(v) : null;
  let ms = m ? Date.parse(v as string) : NaN;
  // Date.parse rolls impossible days over ("2026-02-31" becomes March 3rd): refuse them instead.
  if (m && new Date(Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!)).getUTCDate() !== +m[3]!) ms = NaN;
  if (!Number.isFinite(ms)) throw badRequest(`Invalid ${field}`, [{ field, reason: "ISO 8601 date or date-time, e.g. 2026-12-31T23:59:59Z" }]);
  return ms;
}

export const isoOrNull = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
