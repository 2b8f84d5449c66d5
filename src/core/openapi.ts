/**
 * OpenAPI 3.0 documents built from the mounted routes: one for the whole instance (/docs/json)
 * and one per service prefix (/<service>/openapi.json).
 *
 * The contracts say the descriptions are OpenAPI 3.0.0, but route schemas are TypeBox, i.e.
 * JSON Schema 2020 (`type: "null"` unions, `const`, `patternProperties`, `$id`), which a 3.0
 * Schema Object does not allow. `toOpenApi30Schema` converts them; the rest of this module
 * turns each route's hooks (params, query, body, response map, `detail`) into an operation:
 * - security: the route's `detail.security` (set by the guard helpers of access/openapi.ts);
 * - every declared error status answers the shared `ErrorBody` component, and the statuses
 *   every operation can produce are added (400 with input, 401/403 when secured, 404 with path
 *   parameters, `default` for the rest: 413, 415, 429, 500 ...);
 * - success statuses are the route's declared 2xx/3xx (a route that answers 204 or redirects
 *   says so in `detail.responses`, see `noContent` / `redirect` below).
 * apiDocs (core/docs.ts) builds the documents once, on the first request for one, from the
 * routes then mounted (Elysia's `app.routes`), never per request.
 */

export interface ServiceDescription {
  prefix: string;
  title: string;
  version: string;
  description?: string;
  /** Headers on every response of the service's operations (errors included), as OpenAPI header objects. */
  responseHeaders?: Record<string, { description: string; schema: Record<string, unknown> }>;
}

/** The part of an Elysia route this module reads (`app.routes` entries). */
export interface RouteInfo {
  method: string;
  path: string;
  hooks?: Record<string, any>;
}

export type OpenApiDocument = {
  openapi: string;
  info: { title: string; version: string; description?: string };
  servers?: { url: string }[];
  paths: Record<string, Record<string, any>>;
  components: { schemas: Record<string, any>; securitySchemes?: Record<string, any> };
};

export interface OpenApiOptions {
  info: { title: string; version: string; description?: string };
  services: readonly ServiceDescription[];
  securitySchemes: Record<string, unknown>;
  serverUrl: string;
}

/** The contracts' version line: 3.0.0 (3.0.x documents share one schema). */
export const OPENAPI_VERSION = "3.0.0";

const ERROR_REF = { $ref: "#/components/schemas/ErrorBody" };

/** The one error body of core/errors.ts, as an OpenAPI 3.0 schema. */
export const ERROR_BODY_SCHEMA = {
  type: "object",
  required: ["error"],
  properties: {
    error: {
      type: "object",
      required: ["code", "message"],
      properties: {
        code: { type: "string", description: "UPPER_SNAKE error code, e.g. VALIDATION_ERROR" },
        message: { type: "string" },
        details: { type: "array", items: { type: "object", required: ["field", "reason"], properties: { field: { type: "string" }, reason: { type: "string" } } } },
      },
    },
  },
};

// --- Route-side helpers (spread into a route's `detail`) ------------------------------------

/** A route that answers 204 with no body. */
export const noContent = (description = "No content") => ({ 204: { description } });

/** A route that answers a redirect (Location header). */
export const redirect = (status: 302 | 303, description: string) => ({
  [status]: { description, headers: { Location: { description: "Where to go next", schema: { type: "string" as const } } } },
});

// --- JSON Schema 2020 (TypeBox) -> OpenAPI 3.0 Schema Object --------------------------------

const TYPES_30 = new Set(["string", "number", "integer", "boolean", "array", "object"]);
/** Keywords a 3.0 Schema Object shares with JSON Schema, copied as they are. */
const PLAIN_KEYWORDS = [
  "title", "description", "format", "default", "pattern", "multipleOf", "maximum", "minimum",
  "maxLength", "minLength", "maxItems", "minItems", "uniqueItems", "maxProperties", "minProperties",
  "readOnly", "writeOnly", "deprecated", "example",
] as const;

const jsonType = (v: unknown) => (v === null ? undefined : Array.isArray(v) ? "array" : typeof v === "number" ? (Number.isInteger(v) ? "integer" : "number") : typeof v);
const isNullSchema = (s: any) => s && typeof s === "object" && (s.type === "null" || (s.const === null && !s.type));

/** Converts one schema (recursively). Keywords 3.0 does not know are dropped, never passed on. */
export function toOpenApi30Schema(input: unknown): any {
  if (input === true || input === undefined) return {};
  if (input === false) return { not: {} };
  if (!input || typeof input !== "object") return {};
  const s = input as Record<string, any>;
  if (typeof s.$ref === "string") return { $ref: s.$ref.startsWith("#/") ? s.$ref : `#/components/schemas/${s.$ref}` };

  const out: Record<string, any> = {};
  for (const k of PLAIN_KEYWORDS) if (s[k] !== undefined) out[k] = s[k];
  for (const k of Object.keys(s)) if (k.startsWith("x-")) out[k] = s[k];
  if (out.example === undefined && Array.isArray(s.examples) && s.examples.length) out.example = s.examples[0];
  // 2020 numeric exclusive bounds -> 3.0 boolean flags on minimum/maximum.
  if (typeof s.exclusiveMinimum === "number") Object.assign(out, { minimum: s.exclusiveMinimum, exclusiveMinimum: true });
  else if (typeof s.exclusiveMinimum === "boolean") out.exclusiveMinimum = s.exclusiveMinimum;
  if (typeof s.exclusiveMaximum === "number") Object.assign(out, { maximum: s.exclusiveMaximum, exclusiveMaximum: true });
  else if (typeof s.exclusiveMaximum === "boolean") out.exclusiveMaximum = s.exclusiveMaximum;

  let nullable = s.nullable === true;
  let types: string[] = Array.isArray(s.type) ? s.type : s.type !== undefined ? [s.type] : [];
  if (types.includes("null")) nullable = true;
  types = types.filter((t) => TYPES_30.has(t));
  if (types.length === 1) out.type = types[0];
  else if (types.length > 1) out.anyOf = types.map((type) => ({ type }));

  if (s.const !== undefined) {
    if (s.const === null) nullable = true;
    else {
      out.enum = [s.const];
      out.type ??= jsonType(s.const);
    }
  }
  if (Array.isArray(s.enum)) {
    if (s.enum.includes(null)) nullable = true;
    out.enum = s.enum.filter((v: unknown) => v !== null);
  }

  for (const key of ["anyOf", "oneOf"] as const) {
    if (!Array.isArray(s[key])) continue;
    const variants = s[key].filter((v: any) => !isNullSchema(v));
    if (variants.length < s[key].length) nullable = true;
    let converted = variants.map(toOpenApi30Schema);
    // A query string's number or boolean (t.QueryInteger, Elysia's query coercion): digits or
    // the typed value. The wire form of a query is always text, so the typed value is the type.
    const typed = converted.filter((v: any) => !(v.type === "string" && CODED_FORMATS.has(v.format)));
    if (typed.length === 1 && converted.length === 2) converted = typed;
    const literalType = converted.every((v: any) => Array.isArray(v.enum) && Object.keys(v).every((k) => k === "enum" || k === "type" || k === "description"))
      ? new Set(converted.map((v: any) => v.type))
      : null;
    if (converted.length && literalType && literalType.size === 1) {
      // A union of literals (t.Union([t.Literal("a"), t.Literal("b")])) is one enum.
      out.enum = converted.flatMap((v: any) => v.enum);
      const [type] = literalType;
      if (type) out.type ??= type;
    } else if (converted.length === 1) {
      for (const [k, v] of Object.entries(converted[0])) if (out[k] === undefined) out[k] = v;
    } else if (converted.length > 1) out[key] = converted;
  }
  if (Array.isArray(s.allOf)) out.allOf = s.allOf.map(toOpenApi30Schema);
  if (s.not !== undefined) out.not = toOpenApi30Schema(s.not);

  if (s.properties && typeof s.properties === "object") {
    out.properties = Object.fromEntries(Object.entries(s.properties).map(([k, v]) => [k, toOpenApi30Schema(v)]));
  }
  if (Array.isArray(s.required) && s.required.length) out.required = [...new Set(s.required)];
  // t.Record(t.String(), X) is patternProperties {"^(.*)$": X}: 3.0 only has additionalProperties.
  const patterns = s.patternProperties && typeof s.patternProperties === "object" ? Object.values(s.patternProperties) : [];
  if (patterns.length) out.additionalProperties = patterns.length === 1 ? toOpenApi30Schema(patterns[0]) : { anyOf: patterns.map(toOpenApi30Schema) };
  else if (typeof s.additionalProperties === "boolean") out.additionalProperties = s.additionalProperties;
  else if (s.additionalProperties && typeof s.additionalProperties === "object") out.additionalProperties = toOpenApi30Schema(s.additionalProperties);

  if (Array.isArray(s.items) || Array.isArray(s.prefixItems)) {
    // Tuples: 3.0 has no positional items; keep the element types and the length.
    const items = (s.prefixItems ?? s.items) as unknown[];
    out.items = items.length === 1 ? toOpenApi30Schema(items[0]) : { anyOf: items.map(toOpenApi30Schema) };
  } else if (s.items !== undefined) out.items = toOpenApi30Schema(s.items);
  if (out.type === undefined && out.items !== undefined && !out.anyOf) out.type = "array";
  if (out.type === "array" && out.items === undefined) out.items = {};
  if (out.type === undefined && (out.properties || out.additionalProperties !== undefined) && !out.anyOf) out.type = "object";

  if (nullable) markNullable(out);
  return out;
}

/** String formats that stand for a typed value carried as text (Elysia's coercing unions). */
const CODED_FORMATS = new Set(["integer", "numeric", "boolean"]);

/**
 * 3.0 `nullable` needs a `type` beside it. A union takes it on each variant (a $ref variant
 * cannot carry siblings: a null alternative is added instead); a schema with no type at all
 * (any JSON value) already admits null and says so in words only.
 */
function markNullable(out: Record<string, any>) {
  if (out.type !== undefined) {
    out.nullable = true;
    return;
  }
  const key = Array.isArray(out.anyOf) ? "anyOf" : Array.isArray(out.oneOf) ? "oneOf" : null;
  if (!key) return;
  const variants = out[key].map((v: any) => (v.$ref || v.type === undefined ? v : { ...v, nullable: true }));
  if (variants.some((v: any) => v.$ref || v.type === undefined)) variants.push({ type: "string", nullable: true, enum: [null] });
  out[key] = variants;
}

// --- Routes -> operations --------------------------------------------------------------------

const METHODS = new Set(["get", "put", "post", "delete", "patch"]);
const REASONS: Record<number, string> = {
  200: "OK", 201: "Created", 202: "Accepted", 204: "No content", 301: "Moved permanently", 302: "Found (redirect)", 303: "See other (redirect)",
  400: "Bad request", 401: "Missing or invalid credentials", 403: "Not allowed", 404: "Not found", 409: "Conflict",
  410: "Gone", 413: "Payload too large", 415: "Unsupported media type", 422: "Unprocessable", 423: "Locked", 429: "Too many requests", 500: "Internal error", 503: "Unavailable",
};
const ERROR_DEFAULTS = { secured: [401, 403], input: [400], pathParams: [404] };

const toTemplate = (path: string) => path.split("/").map((x) => (x.startsWith(":") ? `{${x.slice(1).replace(/\?$/, "")}}` : x)).join("/");
const plainJson = (schema: unknown) => JSON.parse(JSON.stringify(schema ?? {}));

function operationId(method: string, template: string) {
  const words = template.split("/").filter(Boolean).map((seg) => (seg.startsWith("{") ? `By_${seg.slice(1, -1)}` : seg));
  const camel = words.join("_").replace(/[^A-Za-z0-9]+(.)?/g, (_, c: string | undefined) => (c ? c.toUpperCase() : ""));
  return method + camel.charAt(0).toUpperCase() + camel.slice(1);
}

/** Query / header parameters from an object schema (each property one parameter). */
function parametersOf(where: "query" | "header", schema: unknown) {
  const s = schema ? plainJson(schema) : null;
  if (!s?.properties) return [];
  const required = new Set<string>(s.required ?? []);
  return Object.entries(s.properties).map(([name, prop]: [string, any]) => {
    const converted = toOpenApi30Schema(prop);
    const { description, ...rest } = converted;
    return { name, in: where, required: required.has(name), ...(description ? { description } : {}), schema: rest };
  });
}

function pathParameters(template: string, schema: unknown) {
  const props = (schema ? plainJson(schema) : {}).properties ?? {};
  return [...template.matchAll(/\{([^}]+)\}/g)].map(([, name]) => {
    const { description, ...rest } = toOpenApi30Schema(props[name] ?? { type: "string" });
    return { name, in: "path", required: true, ...(description ? { description } : {}), schema: rest.type ? rest : { ...rest, type: "string" } };
  });
}

const isErrorShape = (s: any) => !!s?.properties?.error?.properties?.code && !!s.properties.error.properties.message;

function responseOf(status: number, schema: unknown) {
  const converted = toOpenApi30Schema(plainJson(schema));
  const description = REASONS[status] ?? `Status ${status}`;
  if (status >= 400 && isErrorShape(converted)) return { description, content: { "application/json": { schema: ERROR_REF } } };
  if (converted.type === undefined && !converted.anyOf && !converted.oneOf && !converted.allOf && !converted.$ref && !converted.enum) {
    return { description }; // t.Void / t.Undefined / no body
  }
  const type = converted.type === "string" ? "text/plain" : "application/json";
  return { description: converted.description ?? description, content: { [type]: { schema: converted } } };
}

/** A raw OpenAPI content map written in a route's detail, its schemas converted like the others. */
const convertContent = (content: Record<string, any>) =>
  Object.fromEntries(Object.entries(content).map(([type, c]) => [type, { ...c, ...(c?.schema ? { schema: toOpenApi30Schema(c.schema) } : {}) }]));

/** detail.responses (raw OpenAPI written in a route: 204, redirects, hand-written shapes). */
function rawResponses(responses: Record<string, any> | undefined) {
  if (!responses) return {};
  return Object.fromEntries(Object.entries(responses).map(([status, r]) => [
    status,
    { ...r, description: r?.description ?? REASONS[Number(status)] ?? `Status ${status}`, ...(r?.content ? { content: convertContent(r.content) } : {}) },
  ]));
}

/** Elysia's short `type` names -> media types. */
const BODY_TYPES: Record<string, string> = { json: "application/json", text: "text/plain", formdata: "multipart/form-data", urlencoded: "application/x-www-form-urlencoded", arrayBuffer: "application/octet-stream" };

function requestBodyOf(hooks: Record<string, any>) {
  const detail = hooks.detail ?? {};
  if (detail.requestBody) return { ...detail.requestBody, content: convertContent(detail.requestBody.content ?? {}) };
  if (!hooks.body) return undefined;
  const type = typeof hooks.type === "string" ? (BODY_TYPES[hooks.type] ?? hooks.type) : "application/json";
  return { required: true, content: { [type]: { schema: toOpenApi30Schema(plainJson(hooks.body)) } } };
}

function operationOf(route: RouteInfo, template: string) {
  const hooks = route.hooks ?? {};
  const detail = hooks.detail ?? {};
  const method = route.method.toLowerCase();
  const parameters = [...pathParameters(template, hooks.params), ...parametersOf("query", hooks.query), ...parametersOf("header", hooks.headers)];
  const requestBody = requestBodyOf(hooks);

  const responses: Record<string, any> = {};
  const declared = hooks.response;
  if (declared && typeof declared === "object") {
    // One schema (a TypeBox object with a type) is the 200 answer; otherwise a status map.
    const map = "type" in declared || "anyOf" in declared || "$ref" in declared ? { 200: declared } : declared;
    for (const [status, schema] of Object.entries(map)) responses[status] = responseOf(Number(status), schema);
  }
  Object.assign(responses, rawResponses(detail.responses));
  if (!Object.keys(responses).some((s) => /^[23]/.test(s))) responses[200] = { description: REASONS[200] };

  const security = detail.security as unknown[] | undefined;
  const defaults = [
    ...(parameters.length || requestBody ? ERROR_DEFAULTS.input : []),
    ...(security?.length ? ERROR_DEFAULTS.secured : []),
    ...(parameters.some((p) => p.in === "path") ? ERROR_DEFAULTS.pathParams : []),
  ];
  for (const status of defaults) responses[status] ??= { description: REASONS[status], content: { "application/json": { schema: ERROR_REF } } };
  responses.default ??= { description: "Any other error, same body (e.g. 413, 415, 429, 500)", content: { "application/json": { schema: ERROR_REF } } };

  const op: Record<string, any> = { operationId: detail.operationId ?? operationId(method, template) };
  for (const k of ["summary", "description", "tags", "deprecated", "externalDocs"] as const) if (detail[k] !== undefined) op[k] = detail[k];
  if (security !== undefined) op.security = security;
  if (parameters.length) op.parameters = parameters;
  if (requestBody) op.requestBody = requestBody;
  op.responses = responses;
  declareKernelHeaders(op);
  return op;
}

/** Every documented operation of the routes, keyed by path template then method. */
export function pathsOf(routes: readonly RouteInfo[], services: readonly ServiceDescription[] = []) {
  const paths: Record<string, Record<string, any>> = {};
  for (const route of routes) {
    const method = route.method.toLowerCase();
    if (!METHODS.has(method) || route.hooks?.detail?.hide === true || route.path.includes("*")) continue;
    const template = toTemplate(route.path);
    const op = operationOf(route, template);
    for (const s of services) if (s.responseHeaders && template.startsWith(s.prefix + "/")) addResponseHeaders(op, s.responseHeaders);
    (paths[template] ??= {})[method] = op;
  }
  return paths;
}

function addResponseHeaders(op: Record<string, any>, headers: Record<string, unknown>) {
  for (const r of Object.values<any>(op.responses)) r.headers = { ...headers, ...r.headers };
}

/**
 * The headers the kernel's helpers add, declared where they apply: Idempotency-Key on the
 * operations that say they accept it (the house sentence "Accepts Idempotency-Key" in their
 * description, which every such route carries) with Idempotent-Replay on their successes,
 * and Retry-After on the answers that may be a 429.
 */
export const ACCEPTS_IDEMPOTENCY_KEY = "Accepts Idempotency-Key";
const IDEMPOTENCY_KEY_PARAMETER = {
  name: "Idempotency-Key",
  in: "header",
  required: false,
  description: "1-256 of letters, digits, _ - :. A retry with the same key within 24 h answers the first response (Idempotent-Replay: true); the same key with another body is 409 IDEMPOTENCY_KEY_REUSE.",
  schema: { type: "string", minLength: 1, maxLength: 256, pattern: "^[A-Za-z0-9_:-]+$" },
};
const REPLAY_HEADER = { "Idempotent-Replay": { description: "true when this is the stored answer of an earlier request with the same Idempotency-Key", schema: { type: "string", enum: ["true"] } } };
const RETRY_AFTER = { "Retry-After": { description: "On a 429: seconds to wait before trying again", schema: { type: "integer" } } };

function declareKernelHeaders(op: Record<string, any>) {
  if (typeof op.description === "string" && op.description.includes(ACCEPTS_IDEMPOTENCY_KEY)) {
    op.parameters = [...(op.parameters ?? []), IDEMPOTENCY_KEY_PARAMETER];
    for (const [status, r] of Object.entries<any>(op.responses)) if (/^2/.test(status)) r.headers = { ...REPLAY_HEADER, ...r.headers };
  }
  for (const status of ["429", "default"]) if (op.responses[status]) op.responses[status].headers = { ...RETRY_AFTER, ...op.responses[status].headers };
}

function usedSchemes(paths: OpenApiDocument["paths"], schemes: Record<string, unknown>) {
  const used = new Set<string>();
  for (const ops of Object.values(paths)) for (const op of Object.values(ops)) for (const req of op.security ?? []) for (const name of Object.keys(req)) used.add(name);
  return Object.fromEntries(Object.entries(schemes).filter(([name]) => used.has(name)));
}

function document(info: OpenApiDocument["info"], paths: OpenApiDocument["paths"], opts: OpenApiOptions): OpenApiDocument {
  return {
    openapi: OPENAPI_VERSION,
    info,
    servers: [{ url: opts.serverUrl }],
    paths,
    components: { schemas: { ErrorBody: ERROR_BODY_SCHEMA }, securitySchemes: usedSchemes(paths, opts.securitySchemes) },
  };
}

/** The whole instance's document and one per service (paths under its prefix). */
export function buildOpenApiDocuments(routes: readonly RouteInfo[], opts: OpenApiOptions) {
  const paths = pathsOf(routes, opts.services);
  const full = document(opts.info, paths, opts);
  const services = new Map<string, OpenApiDocument>();
  // Routes served for older clients that a service's own document leaves out (`detail.unlisted`):
  // they stay in the whole instance's document, marked deprecated.
  const unlisted = new Set(routes.filter((r) => r.hooks?.detail?.unlisted === true).map((r) => `${r.method.toLowerCase()} ${toTemplate(r.path)}`));
  const listed = (path: string, ops: Record<string, any>) => Object.fromEntries(Object.entries(ops).filter(([method]) => !unlisted.has(`${method} ${path}`)));
  for (const s of opts.services) {
    const own = Object.fromEntries(
      Object.entries(paths)
        .filter(([p]) => p.startsWith(s.prefix + "/"))
        .map(([p, ops]): [string, Record<string, any>] => [p, listed(p, ops)])
        .filter(([, ops]) => Object.keys(ops).length > 0),
    );
    services.set(s.prefix, document({ title: s.title, version: s.version, ...(s.description ? { description: s.description } : {}) }, own, opts));
  }
  return { full, services };
}
