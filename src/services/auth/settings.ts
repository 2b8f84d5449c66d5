/**
 * App settings: defaults, validation of a (partial) update, and the merged view.
 *
 * Decisions (the spec names the settings, not their shapes):
 * - signup_requires_pak: "pak" is the platform API key. Off (default): sign-up accepts the
 *   App's publishable key (pk_..., safe to ship in a browser or mobile app) or a workspace
 *   API key of the App's workspace with auth.user.create. On: only the workspace API key,
 *   so users can only be signed up from the customer's own backend.
 * - mfa_policy: "optional" (users may enrol; sign-in asks for a factor when one is enabled),
 *   "required_for_federated_too" is issue 5's concern and not offered yet.
 * - Token lifetimes are seconds: access 60..86400 (default 3600), refresh (= session) 3600..
 *   7776000 (default 30 days).
 */
import { badRequest, type ErrorDetail } from "../../core/errors";

export interface AppSettings {
  signup_enabled: boolean;
  signup_requires_pak: boolean;
  password_min_length: number;
  default_role: string | null;
  allowed_redirect_origins: string[];
  access_token_ttl: number;
  refresh_token_ttl: number;
  mfa_policy: "optional" | "disabled";
  audience: string | null;
  mail_from: string | null;
  send_verification_email: boolean;
}

export const DEFAULT_SETTINGS: AppSettings = {
  signup_enabled: true,
  signup_requires_pak: false,
  password_min_length: 8,
  default_role: null,
  allowed_redirect_origins: [],
  access_token_ttl: 3600,
  refresh_token_ttl: 30 * 24 * 3600,
  mfa_policy: "optional",
  audience: null,
  mail_from: null,
  send_verification_email: true,
};

export const ACCESS_TTL = { min: 60, max: 86_400 };
export const REFRESH_TTL = { min: 3600, max: 7_776_000 };
export const PASSWORD_MIN = { min: 8, max: 128 };
export const MAX_REDIRECT_ORIGINS = 50;

const EMAIL_RE = /^[^\s@]{1,64}@[^\s@]+\.[^\s@]{2,}$/;
const MAIL_FROM_RE = /^(?:[^<>]{0,100}<[^\s@<>]{1,64}@[^\s@<>]+\.[^\s@<>]{2,}>|[^\s@]{1,64}@[^\s@]+\.[^\s@]{2,})$/;

/** An origin as a browser sends it: scheme://host[:port], no path, http(s) only. */
export function normaliseOrigin(raw: string): string | null {
  try {
    const u = new URL(raw);
    if (u.protocol !== "https:" && u.protocol !== "http:") return null;
    if (u.username || u.password || (u.pathname !== "/" && u.pathname !== "") || u.search || u.hash) return null;
    return u.origin;
  } catch {
    return null;
  }
}

const intIn = (v: unknown, r: { min: number; max: number }) => typeof v === "number" && Number.isInteger(v) && v >= r.min && v <= r.max;

/**
 * Applies a partial update to current settings; unknown keys and bad values are 400 with
 * one detail each. `roleExists` checks default_role against the App's roles.
 */
export function applySettings(current: AppSettings, patch: Record<string, unknown>, roleExists: (name: string) => boolean): AppSettings {
  const next: AppSettings = { ...current, allowed_redirect_origins: [...current.allowed_redirect_origins] };
  const details: ErrorDetail[] = [];
  const bad = (field: string, reason: string) => details.push({ field: `settings.${field}`, reason });
  for (const [k, v] of Object.entries(patch)) {
    switch (k) {
      case "signup_enabled":
      case "signup_requires_pak":
      case "send_verification_email":
        if (typeof v !== "boolean") bad(k, "must be a boolean");
        else next[k] = v;
        break;
      case "password_min_length":
        if (!intIn(v, PASSWORD_MIN)) bad(k, `integer ${PASSWORD_MIN.min}-${PASSWORD_MIN.max}`);
        else next.password_min_length = v as number;
        break;
      case "access_token_ttl":
        if (!intIn(v, ACCESS_TTL)) bad(k, `integer seconds ${ACCESS_TTL.min}-${ACCESS_TTL.max}`);
        else next.access_token_ttl = v as number;
        break;
      case "refresh_token_ttl":
        if (!intIn(v, REFRESH_TTL)) bad(k, `integer seconds ${REFRESH_TTL.min}-${REFRESH_TTL.max}`);
        else next.refresh_token_ttl = v as number;
        break;
      case "default_role":
        if (v !== null && (typeof v !== "string" || !roleExists(v))) bad(k, "must name an existing role of the App, or be null");
        else next.default_role = v as string | null;
        break;
      case "mfa_policy":
        if (v !== "optional" && v !== "disabled") bad(k, 'one of "optional", "disabled"');
        else next.mfa_policy = v;
        break;
      case "audience":
        if (v !== null && (typeof v !== "string" || !v.trim() || v.length > 512)) bad(k, "a non-empty string of at most 512 characters, or null");
        else next.audience = v as string | null;
        break;
      case "mail_from":
        if (v !== null && (typeof v !== "string" || !MAIL_FROM_RE.test(v.trim()))) bad(k, 'an address like "Acme <no-reply@acme.com>", or null');
        else next.mail_from = v === null ? null : (v as string).trim();
        break;
      case "allowed_redirect_origins": {
        if (!Array.isArray(v) || v.length > MAX_REDIRECT_ORIGINS) {
          bad(k, `an array of at most ${MAX_REDIRECT_ORIGINS} origins`);
          break;
        }
        const out: string[] = [];
        v.forEach((o, i) => {
          const n = typeof o === "string" ? normaliseOrigin(o) : null;
          if (!n) bad(`${k}[${i}]`, "an origin like https://app.example.com (scheme, host, optional port; no path)");
          else if (!out.includes(n)) out.push(n);
        });
        next.allowed_redirect_origins = out;
        break;
      }
      default:
        bad(k, "unknown setting");
    }
  }
  if (details.length) throw badRequest("Invalid App settings", details);
  return next;
}

export function parseSettings(json: string): AppSettings {
  return { ...DEFAULT_SETTINGS, ...(JSON.parse(json) as Partial<AppSettings>) };
}

export const isEmail = (s: string) => EMAIL_RE.test(s) && s.length <= 254;
