/**
 * JSON Schema handling of extraction jobs with a real validator (ajv): draft 2020-12 by
 * default, draft-07 when the schema's $schema says so. A job's schema must compile, have
 * root type "object", fit in 64 KB and reference nothing remote ($ref only "#..." fragments).
 *
 * Compiled validators are cached by the schema's text (a bounded LRU) and removed from the
 * ajv instance when evicted, so a stream of distinct schemas does not grow memory.
 */
import type Ajv2020 from "ajv/dist/2020";
import type AjvDraft07 from "ajv";
import type { ErrorObject, ValidateFunction } from "ajv";
import type { ErrorDetail } from "../../core/errors";
import { defaultOf, lazy } from "../../core/lazy";

// Loaded when the first job schema is compiled, not at start-up (core/lazy.ts).
const ajvLib = lazy(() => ({
  Ajv2020: defaultOf(require("ajv/dist/2020") as typeof import("ajv/dist/2020")),
  AjvDraft07: defaultOf(require("ajv") as typeof import("ajv")),
  addFormats: defaultOf(require("ajv-formats") as typeof import("ajv-formats")),
}));

export const SCHEMA_MAX_BYTES = 64 * 1024;
const CACHE_MAX = 500;

type AnyAjv = Ajv2020 | AjvDraft07;

export type JsonObject = Record<string, unknown>;
export const isObject = (v: unknown): v is JsonObject => typeof v === "object" && v !== null && !Array.isArray(v);

function makeAjv<T extends AnyAjv>(A: new (o: object) => T): T {
  // strict false: real-world schemas carry keywords ajv does not know (examples, x-...).
  const ajv = new A({ strict: false, allErrors: true, validateFormats: true, loadSchema: undefined });
  ajvLib().addFormats(ajv as never);
  return ajv;
}

export class SchemaCompiler {
  private a2020?: Ajv2020;
  private a07?: AjvDraft07;
  private readonly cache = new Map<string, { fn: ValidateFunction; ajv: AnyAjv; schema: JsonObject }>();

  private ajvFor(schema: JsonObject): AnyAjv {
    const declared = typeof schema.$schema === "string" ? schema.$schema : "";
    return /draft-0[4-7]/.test(declared) ? (this.a07 ??= makeAjv(ajvLib().AjvDraft07)) : (this.a2020 ??= makeAjv(ajvLib().Ajv2020));
  }

  /** The validator of a schema (compiled once per distinct text). Throws ajv's error when it does not compile. */
  compile(schema: JsonObject, text = JSON.stringify(schema)): ValidateFunction {
    const hit = this.cache.get(text);
    if (hit) {
      this.cache.delete(text);
      this.cache.set(text, hit);
      return hit.fn;
    }
    const ajv = this.ajvFor(schema);
    // The same $id with other content must not collide with an earlier job's schema.
    const copy = structuredClone(schema);
    delete copy.$id;
    const fn = ajv.compile(copy);
    this.cache.set(text, { fn, ajv, schema: copy });
    if (this.cache.size > CACHE_MAX) {
      const [oldKey, old] = this.cache.entries().next().value!;
      this.cache.delete(oldKey);
      old.ajv.removeSchema(old.schema);
    }
    return fn;
  }

  /** Problems of a job's json_schema as 400 details (field json_schema...); empty when usable. `text`: its JSON, when the caller has it. */
  check(schema: unknown, text: string = JSON.stringify(schema)): ErrorDetail[] {
    if (!isObject(schema) || Object.keys(schema).length === 0) return [{ field: "json_schema", reason: "must be a non-empty JSON Schema object" }];
    if (Buffer.byteLength(text) > SCHEMA_MAX_BYTES) return [{ field: "json_schema", reason: `must be at most ${SCHEMA_MAX_BYTES} bytes as JSON` }];
    if (schema.type !== "object") return [{ field: "json_schema.type", reason: 'the root must have type "object"' }];
    const remote = findRemoteRef(schema, "json_schema");
    if (remote) return [{ field: remote, reason: "remote $ref is not allowed: only local references (#/...)" }];
    try {
      this.compile(schema, text);
    } catch (e) {
      return [{ field: "json_schema", reason: `does not compile: ${(e as Error).message}` }];
    }
    return [];
  }
}

/** Path of the first $ref (or $dynamicRef) that is not a local "#..." fragment, or null. */
function findRemoteRef(v: unknown, path: string): string | null {
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const r = findRemoteRef(v[i], `${path}[${i}]`);
      if (r) return r;
    }
    return null;
  }
  if (!isObject(v)) return null;
  for (const [k, x] of Object.entries(v)) {
    if ((k === "$ref" || k === "$dynamicRef" || k === "$recursiveRef") && typeof x === "string" && !x.startsWith("#")) return `${path}.${k}`;
    const r = findRemoteRef(x, `${path}.${k}`);
    if (r) return r;
  }
  return null;
}

/** A copy of the schema without any "required" lists: per-page answers are judged by this (partial results merge later). */
export function withoutRequired(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(withoutRequired);
  if (!isObject(v)) return v;
  const out: JsonObject = {};
  for (const [k, x] of Object.entries(v)) {
    if (k === "required" && Array.isArray(x)) continue;
    out[k] = withoutRequired(x);
  }
  return out;
}

/** ajv errors as short lines ("/price must be number"). */
export const describeErrors = (errors: ErrorObject[] | null | undefined): string[] =>
  (errors ?? []).slice(0, 20).map((e) => `${e.instancePath || "/"} ${e.message ?? "is invalid"}${e.keyword === "required" ? "" : ""}`);

/** Required properties (top level) that are missing or empty in a result. */
export function missingRequired(schema: JsonObject, result: JsonObject): string[] {
  const req = Array.isArray(schema.required) ? (schema.required as unknown[]).filter((x): x is string => typeof x === "string") : [];
  return req.filter((k) => isEmpty(result[k]));
}

export const isEmpty = (v: unknown): boolean =>
  v === undefined || v === null || (typeof v === "string" && v.trim() === "") || (Array.isArray(v) && v.length === 0) || (isObject(v) && Object.keys(v).length === 0);
