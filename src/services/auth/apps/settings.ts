/**
 * App settings: defaults, validation of a (partial) update, and the merged view.
 *
 * Decisions (the spec names the settings, not their shapes):
 * - signup_requires_pak: "pak" is the platform API key. Off (default): sign-up accepts the
 *   App's publishable key (pk_..., safe to ship in a browser or mobile app) or a workspace
 *   API key of the App's workspace with auth.user.create. On: only the workspace API key,
 *   so users can only be signed up from the customer's own backend.
 * - mfa_policy: "optional" (users may enrol; sign-in asks for a factor when one is enabled)
 *   or "disabled" (no sign-in asks for one).
 * - mfa_for_federated (default true): federated sign-ins of a user with an enabled factor
 *   get the MFA challenge too. false trusts the provider's own MFA: federated sign-ins of
 *   this App skip the challenge (password sign-ins still get it).
 * - oauth_providers: {idp_1|idp_2|idp_3: {issuer, client_id, client_secret,
 *   native_client_ids?}}; a PATCH merges per provider, null removes one. The secret is
 *   write-only: kept encrypted with the master key, shown back as client_secret_hint.
 *   client_secret may be left out when changing an already configured provider.
 *   native_client_ids (idp_1 only): further `aud` values accepted from the native flow,
 *   e.g. the iOS bundle id next to the web services id. The issuer must be an http(s) URL
 *   the outbound guard accepts (https in production; no private addresses unless
 *   ALLOW_PRIVATE_TARGETS); it is discovered at first use.
 * - Token lifetimes are seconds: access 60..86400 (default 3600), refresh (= session) 3600..
 *   7776000 (default 30 days).
 */
import { badRequest, type ErrorDetail } from "../../../core/errors";
import { PROVIDER_IDS, isProviderId, type ProviderId } from "../../../core/oidc";

/** A provider as stored (secret encrypted). */
export interface StoredProvider {
  issuer: string;
  client_id: string;
  client_secret_enc: string;
  client_secret_hint: string;
  native_client_ids: string[];
}

/** What settings updates need beyond the patch itself: encryption and the outbound URL check. */
export interface SettingsSecrets {
  encrypt(plain: string): string;
  /** Throws when the outbound guard would refuse the URL. */
  checkUrl(url: string): void;
}

export interface AppSettings {
  signup_enabled: boolean;
  signup_requires_pak: boolean;
  password_min_length: number;
  /** Refuse passwords from the bundled top-100,000 list (core/common-passwords.ts), case-insensitively. */
  block_common_passwords: boolean;
  default_role: string | null;
  allowed_redirect_origins: string[];
  access_token_ttl: number;
  refresh_token_ttl: number;
  mfa_policy: "optional" | "disabled";
  audience: string | null;
  mail_from: string | null;
  send_verification_email: boolean;
  mfa_for_federated: boolean;
  oauth_providers: Partial<Record<ProviderId, StoredProvider>>;
}

export const DEFAULT_SETTINGS: AppSettings = {
  signup_enabled: true,
  signup_requires_pak: false,
  password_min_length: 8,
  // On by default, existing Apps included (parseSettings fills missing keys): NIST SP
  // 800-63B asks verifiers to refuse commonly used passwords. Only new passwords are checked.
  block_common_passwords: true,
  default_role: null,
  allowed_redirect_origins: [],
  access_token_ttl: 3600,
  refresh_token_ttl: 30 * 24 * 3600,
  mfa_policy: "optional",
  audience: null,
  mail_from: null,
  send_verification_email: true,
  mfa_for_federated: true,
  oauth_providers: {},
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
export function applySettings(current: AppSettings, patch: Record<string, unknown>, roleExists: (name: string) => boolean, secrets?: SettingsSecrets): AppSettings {
  const next: AppSettings = { ...current, allowed_redirect_origins: [...current.allowed_redirect_origins], oauth_providers: { ...current.oauth_providers } };
  const details: ErrorDetail[] = [];
  const bad = (field: string, reason: string) => details.push({ field: `settings.${field}`, reason });
  for (const [k, v] of Object.entries(patch)) {
    switch (k) {
      case "signup_enabled":
      case "signup_requires_pak":
      case "send_verification_email":
      case "mfa_for_federated":
      case "block_common_passwords":
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
      case "oauth_providers":
        if (!v || typeof v !== "object" || Array.isArray(v)) {
          bad(k, `an object keyed by provider (${PROVIDER_IDS.join(", ")})`);
          break;
        }
        for (const [id, cfg] of Object.entries(v)) {
          if (!isProviderId(id)) bad(`${k}.${id}`, `unknown provider (one of ${PROVIDER_IDS.join(", ")})`);
          else if (cfg === null) delete next.oauth_providers[id];
          else {
            if (!secrets) throw new Error("applySettings: oauth_providers needs the secrets helper");
            const p = applyProvider(id, current.oauth_providers[id], cfg, secrets, (f, r) => bad(`${k}.${id}${f ? "." + f : ""}`, r));
            if (p) next.oauth_providers[id] = p;
          }
        }
        break;
      default:
        bad(k, "unknown setting");
    }
  }
  if (details.length) throw badRequest("Invalid App settings", details);
  return next;
}

const PROVIDER_KEYS = new Set(["issuer", "client_id", "client_secret", "native_client_ids"]);
const MAX_NATIVE_CLIENT_IDS = 10;

/** The stored form of one provider from its patch (merged over the current one), or null after reporting problems. */
function applyProvider(id: ProviderId, cur: StoredProvider | undefined, cfg: unknown, secrets: SettingsSecrets, bad: (field: string, reason: string) => void): StoredProvider | null {
  if (!cfg || typeof cfg !== "object" || Array.isArray(cfg)) {
    bad("", "an object {issuer, client_id, client_secret}, or null to remove the provider");
    return null;
  }
  const c = cfg as Record<string, unknown>;
  let ok = true;
  const fail = (f: string, r: string) => {
    ok = false;
    bad(f, r);
  };
  for (const key of Object.keys(c)) if (!PROVIDER_KEYS.has(key)) fail(key, "unknown field");
  const issuer = c.issuer ?? cur?.issuer;
  if (typeof issuer !== "string" || issuer.length > 512) fail("issuer", "the provider's issuer URL is required");
  else {
    try {
      const u = new URL(issuer);
      if (u.search || u.hash || u.username || u.password) throw new Error("an issuer URL has no query, fragment or credentials");
      secrets.checkUrl(issuer);
    } catch (e) {
      fail("issuer", e instanceof TypeError ? "must be an absolute http(s) URL" : (e as Error).message);
    }
  }
  const clientId = c.client_id ?? cur?.client_id;
  if (typeof clientId !== "string" || !clientId.trim() || clientId.length > 255) fail("client_id", "1-255 characters");
  let secretEnc = cur?.client_secret_enc;
  let hint = cur?.client_secret_hint;
  if (c.client_secret !== undefined) {
    if (typeof c.client_secret !== "string" || !c.client_secret || c.client_secret.length > 4096) fail("client_secret", "1-4096 characters");
    else {
      secretEnc = secrets.encrypt(c.client_secret);
      // Enough to recognise a secret, never enough to help guess a short one.
      hint = c.client_secret.length >= 16 ? `...${c.client_secret.slice(-4)}` : "...";
    }
  } else if (!secretEnc) fail("client_secret", "is required when the provider is first configured");
  let natives = cur?.native_client_ids ?? [];
  if (c.native_client_ids !== undefined) {
    const list = c.native_client_ids;
    if (id !== "idp_1") fail("native_client_ids", "only idp_1 offers the native flow");
    else if (!Array.isArray(list) || list.length > MAX_NATIVE_CLIENT_IDS || list.some((x) => typeof x !== "string" || !x || x.length > 255)) {
      fail("native_client_ids", `an array of at most ${MAX_NATIVE_CLIENT_IDS} client ids`);
    } else natives = [...new Set(list as string[])];
  }
  if (!ok) return null;
  return { issuer: issuer as string, client_id: clientId as string, client_secret_enc: secretEnc!, client_secret_hint: hint!, native_client_ids: natives };
}

/** Settings as shown to admins: provider secrets reduced to their hint. */
export function publicSettings(s: AppSettings) {
  const providers: Record<string, { issuer: string; client_id: string; client_secret_hint: string; native_client_ids: string[] }> = {};
  for (const [id, p] of Object.entries(s.oauth_providers)) {
    if (p) providers[id] = { issuer: p.issuer, client_id: p.client_id, client_secret_hint: p.client_secret_hint, native_client_ids: p.native_client_ids };
  }
  return { ...s, oauth_providers: providers };
}

export function parseSettings(json: string): AppSettings {
  return { ...DEFAULT_SETTINGS, ...(JSON.parse(json) as Partial<AppSettings>) };
}

export const isEmail = (s: string) => EMAIL_RE.test(s) && s.length <= 254;
