/**
 * A waitlist's own `settings` object (not the workspace-level waitlist settings, which live in
 * waitlists/workspace-settings.ts). PATCH merges it shallowly: each key given replaces that key; null
 * resets it to its default; unknown keys are 400.
 */
import { badRequest, type ErrorDetail } from "../../core/errors";

export const CUSTOM_FIELD_TYPES = ["text", "number", "select", "checkbox"] as const;
export type CustomFieldType = (typeof CUSTOM_FIELD_TYPES)[number];
export const CUSTOM_FIELDS_MAX = 20;
export const OPTIONS_MAX = 50;
export const CONFIRMATION_MAX = 1000;
export const ORIGINS_MAX = 20;
export const MAX_ENTRIES_MAX = 10_000_000;
export const BOOST_MAX = 1000;
export const DEFAULT_SIGNUPS_PER_MINUTE = 600;

export interface CustomField {
  name: string;
  type: CustomFieldType;
  required: boolean;
  options: string[] | null;
}

export interface WaitlistSettings {
  /** Sign-ups accepted in total; null: no limit. Reached: 409 WAITLIST_FULL. */
  max_entries: number | null;
  /** true: sign-ups wait as pending for review; false: they are approved at once (and invited). */
  approval_required: boolean;
  custom_fields: CustomField[];
  confirmation_message: string | null;
  /** Places an entry moves up per counted referral. */
  referral_boost: number;
  /** Origins allowed to call the public routes from a browser; ["*"] allows any. */
  allowed_origins: string[];
  /** Refuse addresses on the disposable-domain list. */
  block_disposable: boolean;
  /** The public GET shows signup_count. */
  show_signup_count: boolean;
  /** Per-waitlist sign-up rate limit (all clients together), per minute. */
  signups_per_minute: number;
  /** Page that accepts Auth invites; the approved mail's invite_link is it with ?invite_code=... (null: no link, the code only). */
  invite_accept_url: string | null;
}

export const defaultWaitlistSettings = (): WaitlistSettings => ({
  max_entries: null,
  approval_required: true,
  custom_fields: [],
  confirmation_message: null,
  referral_boost: 1,
  allowed_origins: ["*"],
  block_disposable: true,
  show_signup_count: false,
  signups_per_minute: DEFAULT_SIGNUPS_PER_MINUTE,
  invite_accept_url: null,
});

export const parseWaitlistSettings = (json: string): WaitlistSettings => ({ ...defaultWaitlistSettings(), ...(JSON.parse(json) as Partial<WaitlistSettings>) });

const FIELD_NAME_RE = /^[a-z][a-z0-9_]{0,39}$/;
const isInt = (v: unknown, min: number, max: number): v is number => typeof v === "number" && Number.isInteger(v) && v >= min && v <= max;

function origin(v: unknown): string | null {
  if (v === "*") return "*";
  if (typeof v !== "string" || !URL.canParse(v)) return null;
  const u = new URL(v);
  if (!["http:", "https:"].includes(u.protocol) || u.origin !== v.replace(/\/$/, "")) return null;
  return u.origin;
}

function customFields(v: unknown, details: ErrorDetail[]): CustomField[] {
  if (!Array.isArray(v)) {
    details.push({ field: "settings.custom_fields", reason: "must be an array of field definitions" });
    return [];
  }
  if (v.length > CUSTOM_FIELDS_MAX) details.push({ field: "settings.custom_fields", reason: `at most ${CUSTOM_FIELDS_MAX} fields` });
  const seen = new Set<string>();
  return v.map((f, i) => {
    const at = `settings.custom_fields[${i}]`;
    const o = (f ?? {}) as Record<string, unknown>;
    if (typeof f !== "object" || f === null || Array.isArray(f)) details.push({ field: at, reason: "must be an object {name, type, required, options}" });
    const name = typeof o.name === "string" ? o.name : "";
    if (!FIELD_NAME_RE.test(name)) details.push({ field: `${at}.name`, reason: "1-40 of a-z, 0-9 and _, starting with a letter" });
    else if (seen.has(name)) details.push({ field: `${at}.name`, reason: "duplicate name" });
    seen.add(name);
    const type = o.type as CustomFieldType;
    if (!CUSTOM_FIELD_TYPES.includes(type)) details.push({ field: `${at}.type`, reason: `one of ${CUSTOM_FIELD_TYPES.join(", ")}` });
    if (o.required !== undefined && typeof o.required !== "boolean") details.push({ field: `${at}.required`, reason: "must be a boolean" });
    let options: string[] | null = null;
    if (type === "select") {
      if (!Array.isArray(o.options) || o.options.length < 1 || o.options.length > OPTIONS_MAX || !o.options.every((x) => typeof x === "string" && x.length >= 1 && x.length <= 100)) {
        details.push({ field: `${at}.options`, reason: `a select needs 1-${OPTIONS_MAX} options of 1-100 characters` });
      } else options = o.options as string[];
    } else if (o.options !== undefined && o.options !== null) details.push({ field: `${at}.options`, reason: "only select fields have options" });
    return { name, type, required: o.required === true, options };
  });
}

/** Applies an input object to `base`; 400 listing every bad key. */
export function applyWaitlistSettings(base: WaitlistSettings, input: unknown): WaitlistSettings {
  return { ...base, ...settingsPatch(input) };
}

/**
 * The settings an input object sets (null: back to the default, or null where a key allows it);
 * 400 listing every bad key. No key's rule depends on the stored settings, so it is checked
 * before the waitlist is looked up.
 */
export function settingsPatch(input: unknown): Partial<WaitlistSettings> {
  if (typeof input !== "object" || input === null || Array.isArray(input)) throw badRequest("settings must be an object", [{ field: "settings", reason: "must be an object" }]);
  const out: Partial<WaitlistSettings> = {};
  const d = defaultWaitlistSettings();
  const details: ErrorDetail[] = [];
  for (const [k, v] of Object.entries(input as Record<string, unknown>)) {
    const field = `settings.${k}`;
    if (!(k in d)) {
      details.push({ field, reason: "unknown setting" });
      continue;
    }
    const key = k as keyof WaitlistSettings;
    if (v === null && key !== "max_entries" && key !== "confirmation_message" && key !== "invite_accept_url") {
      (out as unknown as Record<string, unknown>)[key] = d[key];
      continue;
    }
    switch (key) {
      case "max_entries":
        if (v === null || isInt(v, 1, MAX_ENTRIES_MAX)) out.max_entries = v as number | null;
        else details.push({ field, reason: `integer 1-${MAX_ENTRIES_MAX} or null (no limit)` });
        break;
      case "approval_required":
      case "block_disposable":
      case "show_signup_count":
        if (typeof v === "boolean") out[key] = v;
        else details.push({ field, reason: "must be a boolean" });
        break;
      case "custom_fields":
        out.custom_fields = customFields(v, details);
        break;
      case "confirmation_message":
        if (v === null || (typeof v === "string" && v.length <= CONFIRMATION_MAX)) out.confirmation_message = v as string | null;
        else details.push({ field, reason: `a string of at most ${CONFIRMATION_MAX} characters or null` });
        break;
      case "invite_accept_url":
        if (v === null || (typeof v === "string" && v.length <= 2000 && URL.canParse(v) && /^https?:$/.test(new URL(v).protocol))) out.invite_accept_url = v as string | null;
        else details.push({ field, reason: "an absolute http(s) URL or null" });
        break;
      case "referral_boost":
        if (isInt(v, 0, BOOST_MAX)) out.referral_boost = v;
        else details.push({ field, reason: `integer 0-${BOOST_MAX}` });
        break;
      case "signups_per_minute":
        if (isInt(v, 1, 1_000_000)) out.signups_per_minute = v;
        else details.push({ field, reason: "integer 1-1000000" });
        break;
      case "allowed_origins": {
        const list = Array.isArray(v) ? v.map(origin) : null;
        if (!list || list.length < 1 || list.length > ORIGINS_MAX || list.some((o) => o === null)) {
          details.push({ field, reason: `1-${ORIGINS_MAX} origins (scheme://host[:port]) or ["*"]` });
        } else out.allowed_origins = [...new Set(list as string[])];
        break;
      }
    }
  }
  if (details.length) throw badRequest("Invalid settings", details);
  return out;
}
