/**
 * Settings as declarations: each names its environment variables, the default
 * docs/operations.md shows, what it means and how its value is read. The kernel declares its
 * own (config.ts), each service module its (services/<name>/settings.ts, ServiceModule.settings);
 * loadConfig reads them all with one reader, so every problem lands in the one list start-up
 * prints. A test holds the operations table to the declarations.
 *
 * An unset or empty variable means the default. A bad value records a problem (and reads as
 * the default, so the other settings still get checked).
 */

export type Env = Record<string, string | undefined>;

export interface SettingReader {
  /** A variable's value; undefined when unset or empty. */
  get(name: string): string | undefined;
  problem(message: string): void;
  /** Another setting's value, without its problems (it reports them itself): for a default that follows it. */
  peek<T>(s: Setting<T>): T;
}

export interface Setting<T> {
  /** Its environment variables (most settings have one). */
  readonly env: readonly string[];
  /** The default as docs/operations.md shows it: a value, or words ("unset", "PUBLIC_URL's host"). */
  readonly default: string;
  readonly description: string;
  read(r: SettingReader): T;
  /** A group's settings (group()): docs and checks see each of them. */
  readonly members?: Settings;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Settings = Readonly<Record<string, Setting<any>>>;

/** The values a declaration reads to (what Static<> is to a TypeBox schema). */
export type SettingValues<D extends Settings> = { -readonly [N in keyof D]: D[N] extends Setting<infer T> ? T : never };

export function settingReader(env: Env, problems: string[]): SettingReader {
  const r: SettingReader = {
    get: (name) => (env[name] === undefined || env[name] === "" ? undefined : env[name]),
    problem: (message) => void problems.push(message),
    peek: (s) => s.read({ ...r, problem: () => {} }),
  };
  return r;
}

export function readSettings<D extends Settings>(declaration: D, r: SettingReader): SettingValues<D> {
  return Object.fromEntries(Object.entries(declaration).map(([key, s]) => [key, s.read(r)])) as SettingValues<D>;
}

/** A setting read by its own rule (several variables, a default that follows another setting). */
export function custom<T>(env: readonly string[], def: string, description: string, read: (r: SettingReader) => T): Setting<T> {
  return { env, default: def, description, read };
}

export const text = (name: string, def: string, description: string): Setting<string> => custom([name], def, description, (r) => r.get(name) ?? def);

/** Unset: null (documented as `shown`). `check` returns what is wrong with a value, or null. */
export const optional = (name: string, description: string, check?: (v: string) => string | null, shown = "unset"): Setting<string | null> =>
  custom([name], shown, description, (r) => {
    const v = r.get(name) ?? null;
    const wrong = v === null ? null : check?.(v);
    if (wrong) r.problem(wrong);
    return v;
  });

export const int = (name: string, def: number, min: number, max: number, description: string): Setting<number> =>
  custom([name], String(def), description, (r) => {
    const raw = r.get(name);
    if (raw === undefined) return def;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < min || n > max) {
      r.problem(`${name} must be an integer from ${min} to ${max} (got "${raw}")`);
      return def;
    }
    return n;
  });

export const bool = (name: string, def: boolean, description: string): Setting<boolean> =>
  custom([name], String(def), description, (r) => {
    const raw = r.get(name);
    if (raw === undefined) return def;
    if (["1", "true", "yes", "on"].includes(raw.toLowerCase())) return true;
    if (["0", "false", "no", "off"].includes(raw.toLowerCase())) return false;
    r.problem(`${name} must be true or false (got "${raw}")`);
    return def;
  });

/** `raw` as a URL of one of `protocols`, without trailing slashes; null when it is null or bad (a problem). */
export function checkUrl(r: SettingReader, name: string, raw: string | null, protocols: readonly string[]): string | null {
  if (raw === null) return null;
  try {
    const u = new URL(raw);
    if (!protocols.includes(u.protocol)) throw new Error();
    return raw.replace(/\/+$/, "");
  } catch {
    r.problem(`${name} must be a URL with scheme ${protocols.join(" or ")} (got "${raw}")`);
    return null;
  }
}

/** Unset: null. */
export const url = (name: string, protocols: readonly string[], description: string): Setting<string | null> =>
  custom([name], "unset", description, (r) => checkUrl(r, name, r.get(name) ?? null, protocols));

/** "a, b or c". */
const alternatives = (values: readonly string[]) => (values.length > 1 ? `${values.slice(0, -1).join(", ")} or ${values.at(-1)}` : values.join(""));

/**
 * One of `values`; `def` may follow other variables (its documented form is `shown`). The
 * message quotes the value given when `quoteGot` (the older settings' messages do not).
 */
export function oneOf<const V extends readonly string[]>(
  name: string,
  values: V,
  def: V[number] | ((r: SettingReader) => V[number]),
  description: string,
  opts: { shown?: string; quoteGot?: boolean } = {},
): Setting<V[number]> {
  return custom([name], opts.shown ?? String(def), description, (r) => {
    const fallback = typeof def === "function" ? def(r) : def;
    const v = r.get(name) ?? fallback;
    if (values.includes(v)) return v;
    r.problem(`${name} must be ${alternatives(values)}${opts.quoteGot ? ` (got "${v}")` : ""}`);
    return fallback;
  });
}

/**
 * A comma list (items trimmed, empty ones dropped); unset: an empty list. `check` returns what
 * is wrong with an item ("is not an origin"), or null.
 */
export const list = (name: string, description: string, check: (item: string) => string | null, def = "empty"): Setting<string[]> =>
  custom([name], def, description, (r) => {
    const items = (r.get(name) ?? "").split(",").map((s) => s.trim()).filter(Boolean);
    for (const item of items) {
      const wrong = check(item);
      if (wrong) r.problem(`${name}: "${item}" ${wrong}`);
    }
    return items;
  });

/** Settings read as one object value (a service's limits that go together). */
export function group<D extends Settings>(description: string, members: D): Setting<SettingValues<D>> {
  const all = Object.values(members);
  return { env: all.flatMap((s) => s.env), default: all.map((s) => s.default).join(", "), description, members, read: (r) => readSettings(members, r) };
}

/** Every single setting of a declaration, groups opened. */
export function leaves(declaration: Settings): Setting<unknown>[] {
  return Object.values(declaration).flatMap((s) => (s.members ? leaves(s.members) : [s]));
}
