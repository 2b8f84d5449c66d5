/**
 * Community settings: a JSON object of known keys, each with a default and a range. The
 * stored and returned object always carries every key (defaults filled in), so clients
 * never guess. Unknown keys are 400: a typo must not be silently ignored. Later slices add
 * their keys here (e.g. the comment depth cap).
 */
import { invalidField } from "../../../core/errors";

interface IntSetting {
  default: number;
  min: number;
  max: number;
  description: string;
}

export const SETTINGS = {
  max_group_conversation_size: {
    default: 50,
    min: 2,
    max: 1000,
    description: "Most participants a group conversation may have, its creator included",
  },
  // Community part 2: comment threads and flags.
  max_comment_depth: {
    default: 5,
    min: 0,
    max: 50,
    description: "Deepest comment reply level (0 = top-level only); a reply below it joins its parent's level",
  },
  flag_auto_hide_threshold: {
    default: 3,
    min: 1,
    max: 1000,
    description: "Distinct flaggers that hide a post or comment automatically until a moderator decides",
  },
} as const satisfies Record<string, IntSetting>;

export type SettingKey = keyof typeof SETTINGS;
export type CommunitySettings = { [K in SettingKey]: number };

export const defaultSettings = (): CommunitySettings =>
  Object.fromEntries(Object.entries(SETTINGS).map(([k, s]) => [k, s.default])) as CommunitySettings;

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * Applies a settings object (create: onto the defaults; update: onto the current
 * settings, so only the keys sent change). A key set to null goes back to its default.
 */
export function applySettings(base: CommunitySettings, input: unknown): CommunitySettings {
  if (!isPlainObject(input)) throw invalidField("settings", "must be an object");
  const out = { ...base };
  for (const [key, value] of Object.entries(input)) {
    if (!Object.hasOwn(SETTINGS, key)) {
      throw invalidField(`settings.${key}`, `unknown setting; known: ${Object.keys(SETTINGS).join(", ")}`);
    }
    const spec: IntSetting = SETTINGS[key as SettingKey];
    if (value === null) {
      out[key as SettingKey] = spec.default;
      continue;
    }
    if (typeof value !== "number" || !Number.isInteger(value) || value < spec.min || value > spec.max) {
      throw invalidField(`settings.${key}`, `an integer from ${spec.min} to ${spec.max}`);
    }
    out[key as SettingKey] = value;
  }
  return out;
}

/** Stored settings, with defaults for keys added after the row was written. */
export function parseSettings(json: string): CommunitySettings {
  const stored = JSON.parse(json) as Record<string, unknown>;
  const out = defaultSettings();
  for (const k of Object.keys(SETTINGS) as SettingKey[]) if (typeof stored[k] === "number") out[k] = stored[k] as number;
  return out;
}
