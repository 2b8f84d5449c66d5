/**
 * The contract cases of one operation, generated from its OpenAPI description alone: what a
 * client that read only the document may send wrong, and what the document then promises.
 *
 * - credential: a secured operation called with no credential and an invalid body (wrong
 *   types, or not JSON at all) is 401 (the credential is judged before the input); so is a
 *   token that is nobody's, where the declared schemes are platform credentials or M2M tokens;
 * - wrong type, missing required field, out of range, for each top-level JSON body property
 *   and each typed query parameter: 400 VALIDATION_ERROR whose details name that field;
 * - malformed id: a path parameter with a declared format or pattern, given a value outside
 *   it, is 400 naming the parameter;
 * - unknown id: an operation without a body, every path parameter a well-formed unknown
 *   value, is 404.
 * Every answer is also checked to be below 500.
 */

export type Schema = Record<string, any>;

export interface Operation {
  method: string;
  path: string;
  op: Schema;
}

export interface Case {
  kind: "credential" | "wrong_type" | "missing" | "out_of_range" | "query" | "malformed_id" | "unknown_id";
  /** The field the 400 must name, when the case expects one. */
  field?: string;
  expect: number;
  /** Path with its parameters filled in, and the query string. */
  url: string;
  body?: unknown;
  /** The body's media type when it is not JSON. */
  contentType?: string;
  /** false: send no credential. */
  credential: boolean;
  /** A bearer token to send instead of the operation's credential. */
  token?: string;
  label: string;
}

export const UNKNOWN_UUID = "00000000-0000-4000-8000-00000000abcd";

/** Schemes whose token the server judges before the input (not an App user's or a publishable key). */
const JUDGED_FIRST = new Set(["consoleToken", "apiKey", "consoleCookie", "m2mToken"]);

/** A value the schema accepts, as far as its keywords tell (patterns are not generated). */
export function sample(s: Schema | undefined, depth = 0): unknown {
  if (!s || depth > 4) return "x";
  if (s.enum?.length) return s.enum.find((v: unknown) => v !== null);
  const variants = s.anyOf ?? s.oneOf;
  if (variants?.length) return sample(variants[0], depth + 1);
  if (s.allOf?.length) return sample(s.allOf[0], depth + 1);
  if (s.default !== undefined) return s.default;
  switch (s.type) {
    case "integer":
    case "number":
      return typeof s.minimum === "number" ? Math.ceil(s.minimum) + (s.exclusiveMinimum ? 1 : 0) : 1;
    case "boolean":
      return true;
    case "array":
      return Array.from({ length: s.minItems ?? 0 }, () => sample(s.items, depth + 1));
    case "object": {
      const out: Record<string, unknown> = {};
      for (const name of s.required ?? []) out[name] = sample(s.properties?.[name], depth + 1);
      return out;
    }
    default:
      return sampleString(s);
  }
}

function sampleString(s: Schema): string {
  switch (s.format) {
    case "uuid":
      return UNKNOWN_UUID;
    case "email":
      return "someone@example.com";
    case "date-time":
      return "2026-01-01T00:00:00.000Z";
    case "date":
      return "2026-01-01";
    case "uri":
      return "https://example.com/";
  }
  const min = s.minLength ?? 1;
  return "abcdefghij".repeat(Math.ceil(min / 10)).slice(0, Math.max(min, Math.min(s.maxLength ?? 3, 3)));
}

/** A JSON value of another type than the schema's (only for schemas with one plain type). */
function wrongType(s: Schema): unknown | undefined {
  if (s.anyOf || s.oneOf || s.allOf || !s.type) return undefined;
  switch (s.type) {
    case "string":
      return 12345;
    case "integer":
    case "number":
      return "5"; // a numeric string: JSON bodies are typed exactly
    case "boolean":
      return "true";
    case "array":
      return "not an array";
    case "object":
      return "not an object";
  }
  return undefined;
}

/** Values outside the schema's declared bounds (each one a case). */
function outOfRange(s: Schema): { value: unknown; why: string }[] {
  const out: { value: unknown; why: string }[] = [];
  if (s.type === "string" && !s.enum) {
    if (typeof s.maxLength === "number" && s.maxLength < 100_000) out.push({ value: "a".repeat(s.maxLength + 1), why: `maxLength ${s.maxLength} + 1` });
    if (typeof s.minLength === "number" && s.minLength > 0) out.push({ value: "", why: `below minLength ${s.minLength}` });
  }
  if (s.enum?.length && (s.type === "string" || s.type === undefined)) out.push({ value: "__not_one_of_them__", why: "not in enum" });
  if ((s.type === "integer" || s.type === "number") && !s.enum) {
    if (typeof s.maximum === "number") out.push({ value: s.maximum + 1, why: `maximum ${s.maximum} + 1` });
    if (typeof s.minimum === "number") out.push({ value: s.minimum - 1, why: `minimum ${s.minimum} - 1` });
    if (s.type === "integer") out.push({ value: 1.5, why: "not an integer" });
  }
  if (s.type === "array" && typeof s.maxItems === "number" && s.maxItems <= 1000) {
    out.push({ value: Array.from({ length: s.maxItems + 1 }, () => sample(s.items)), why: `maxItems ${s.maxItems} + 1` });
  }
  return out;
}

/** Whether a path parameter declares what a well-formed value looks like. */
const declaresShape = (s: Schema) => s.format === "uuid" || typeof s.pattern === "string";

/** A path with every parameter filled: `fill(name, schema)` decides each value. */
function fillPath(path: string, params: Schema[], fill: (p: Schema) => string) {
  return path.replace(/\{([^}]+)\}/g, (_, name: string) => {
    const p = params.find((x) => x.in === "path" && x.name === name) ?? { name, schema: { type: "string" } };
    return encodeURIComponent(fill(p));
  });
}

/** A well-formed value for a path parameter that names nothing that exists. */
export function unknownValue(p: Schema, known: Record<string, string>): string {
  if (known[p.name]) return known[p.name];
  const s = p.schema ?? {};
  if (s.format === "uuid") return UNKNOWN_UUID;
  if (s.enum?.length) return String(s.enum[0]);
  if (s.format !== "uuid" && typeof s.pattern === "string") return fromPattern(s.pattern) ?? "unknown-0000";
  return "unknown-0000";
}

/**
 * A value of the id patterns the API declares: `^<literal><class>{n}$` (e.g. job_ and 32 hex
 * digits), with the literal possibly a group of alternatives (`^(ep|whk)_[0-9a-f]{32}$`), or
 * a top-level choice of such patterns (an id or a slug): the first alternative that is one.
 * A class stands for its first character. Other patterns: undefined.
 */
export function fromPattern(pattern: string): string | undefined {
  const whole = /^\^\((.*)\)\$$/.exec(pattern);
  if (whole) {
    for (const alt of topLevel(whole[1])) {
      const v = fromPattern(`^${alt}$`);
      if (v !== undefined) return v;
    }
  }
  const m = /^\^(?:\(([A-Za-z0-9_|-]+)\))?([A-Za-z0-9_-]*)\[([^\]]+)\]\{(\d+)\}\$$/.exec(pattern);
  if (!m) return undefined;
  const prefix = (m[1]?.split("|")[0] ?? "") + m[2];
  return prefix + m[3][0].repeat(Number(m[4]));
}

/** The alternatives of a regex body at its top level (not inside groups or classes). */
function topLevel(body: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let inClass = false;
  let start = 0;
  for (let i = 0; i < body.length; i++) {
    const c = body[i];
    if (c === "\\") i++;
    else if (inClass) inClass = c !== "]";
    else if (c === "[") inClass = true;
    else if (c === "(") depth++;
    else if (c === ")") depth--;
    else if (c === "|" && depth === 0) {
      out.push(body.slice(start, i));
      start = i + 1;
    }
  }
  out.push(body.slice(start));
  return out;
}

/** A well-formed unknown value can be made for this parameter. */
const sampleable = (s: Schema) => s.format === "uuid" || (!s.enum && (!s.pattern || fromPattern(s.pattern) !== undefined));

export function casesOf(o: Operation, known: Record<string, string>): Case[] {
  const params: Schema[] = o.op.parameters ?? [];
  const base = fillPath(o.path, params, (p) => unknownValue(p, known));
  const json = o.op.requestBody?.content?.["application/json"]?.schema as Schema | undefined;
  const body = json?.type === "object" ? json : undefined;
  const secured = (o.op.security ?? []).length > 0 && !(o.op.security as Schema[]).some((r) => Object.keys(r).length === 0);
  const cases: Case[] = [];
  const label = `${o.method.toUpperCase()} ${o.path}`;
  const valid = body ? (sample(body) as Record<string, unknown>) : undefined;

  const invalidBody = body ? { __bad: true, ...Object.fromEntries(Object.keys(body.properties ?? {}).map((k) => [k, { not: "valid" }])) } : undefined;
  if (secured) {
    cases.push({ kind: "credential", expect: 401, url: base, body: invalidBody, credential: false, label });
    // Not even JSON: still a 401, the body is not read for a caller without a credential.
    if (json) cases.push({ kind: "credential", expect: 401, url: base, body: "{not json", credential: false, label: `${label} (unparseable body)` });
    // A token that is nobody's, where every declared credential is one the server can judge
    // without the input (platform callers, and M2M tokens, which are JWTs): 401 before any 400.
    const judged = (o.op.security as Schema[]).every((r) => Object.keys(r).every((name) => JUDGED_FIRST.has(name)));
    if (judged) cases.push({ kind: "credential", expect: 401, url: base, body: invalidBody, credential: false, token: "not-a-real-token", label: `${label} (unknown token)` });
  }

  if (body?.properties) {
    for (const [name, prop] of Object.entries<Schema>(body.properties)) {
      if (prop.readOnly) continue;
      const wrong = wrongType(prop);
      if (wrong !== undefined) cases.push({ kind: "wrong_type", field: name, expect: 400, url: base, body: { ...valid, [name]: wrong }, credential: true, label: `${label} body.${name}=${JSON.stringify(wrong)}` });
      for (const r of outOfRange(prop)) cases.push({ kind: "out_of_range", field: name, expect: 400, url: base, body: { ...valid, [name]: r.value }, credential: true, label: `${label} body.${name} ${r.why}` });
    }
    for (const name of body.required ?? []) {
      const without = { ...valid };
      delete without[name];
      cases.push({ kind: "missing", field: name, expect: 400, url: base, body: without, credential: true, label: `${label} body.${name} missing` });
    }
  }

  for (const p of params.filter((x) => x.in === "query")) {
    const s: Schema = p.schema ?? {};
    const bad = s.type === "integer" || s.type === "number" ? "abc" : s.type === "boolean" ? "maybe" : s.enum?.length ? "__not_one_of_them__" : undefined;
    if (bad === undefined) continue;
    const sep = base.includes("?") ? "&" : "?";
    cases.push({ kind: "query", field: p.name, expect: 400, url: `${base}${sep}${p.name}=${bad}`, body: valid, credential: true, label: `${label} ?${p.name}=${bad}` });
  }

  // A body the operation takes, so that only the id is wrong: raw bytes where it takes them.
  const bytes = o.op.requestBody?.content?.["application/octet-stream"] ? { body: "some bytes", contentType: "application/octet-stream" } : { body: valid };
  for (const p of params.filter((x) => x.in === "path" && declaresShape(x.schema ?? {}) && !known[x.name])) {
    const url = fillPath(o.path, params, (q) => (q.name === p.name ? "not a valid id!" : unknownValue(q, known)));
    cases.push({ kind: "malformed_id", field: p.name, expect: 400, url, ...bytes, credential: true, label: `${label} {${p.name}} malformed` });
  }

  // Names from a fixed list (an enum: providers, verbs) are not ids: nothing to be unknown.
  const pathParams = params.filter((x) => x.in === "path" && !known[x.name]);
  const ids = pathParams.every((x) => sampleable(x.schema ?? {}));
  if (!o.op.requestBody && pathParams.length && ids && !params.some((x) => x.in === "query" && x.required)) {
    cases.push({ kind: "unknown_id", expect: 404, url: base, credential: true, label: `${label} unknown ids` });
  }
  return cases;
}
