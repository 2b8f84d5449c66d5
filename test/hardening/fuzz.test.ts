/**
 * Whole-API fuzz (issue 21 §2, issue 29): every operation of every served OpenAPI document
 * gets malformed requests — each body field of the wrong type, deep nesting, a huge string,
 * invalid UTF-8, a wrong content type, non-object JSON, malformed JSON, garbage path
 * parameters, garbage in every query parameter one at a time (fuzz-inputs.ts), and bodies
 * sent in chunks without a Content-Length (JSON, forms, multipart; a wrong type, and one
 * past the route's cap, which must be 413), form bodies where forms are taken and where
 * they are not (415) — with a credential that lets the request reach validation. No answer
 * may be a 5xx, and every 4xx carries the documented error body and x-request-id.
 *
 * Deterministic: operations in sorted order, choices from a seeded PRNG. On `npm run
 * test:bin` the same requests go over real HTTP, where chunked bodies are really chunked.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { type TestApp } from "../helpers/app";
import { createAuthApp, type TestAuthApp } from "../helpers/auth";
import { startWebhookTestApp, stopWebhookTestApp } from "../helpers/webhook-app";
import type { Receiver } from "../helpers/http-receiver";
import { ON_BINARY } from "../helpers/target";
import { unknownValue } from "../contract/cases";
import { SERVICE_MODULES } from "../../src/app";
import { DEFAULT_MAX_BODY_BYTES, RequestBodies } from "../../src/core/request-body";
import {
  chunked,
  chunkedPast,
  filePartHead,
  FORM_TYPE,
  garbageForms,
  JSON_TYPE,
  MORE_QUERY_VALUES,
  MULTIPART_TYPE,
  multipartFields,
  multipartType,
  openBody,
  prng,
  QUERY_VALUES,
  repeated,
} from "./fuzz-inputs";

let t: { app: TestApp; receiver: Receiver };
let authApp: TestAuthApp;
let communityId: string;

beforeAll(async () => {
  // The card board's per-key limits answer 429 before a body is read; off, so the fuzz reaches the body reader and validation.
  t = await startWebhookTestApp({ TACK_RATE_WRITES: "0", TACK_RATE_READS: "0", TACK_RATE_BATCH: "0" });
  authApp = await createAuthApp(t.app);
  const c = await t.app.call("POST", `/social/v1/workspaces/${authApp.workspace.id}/communities`, { token: authApp.key, body: { slug: "fuzz", display_name: "Fuzz" } });
  communityId = c.body.id;
});
afterAll(() => stopWebhookTestApp(t));

const random = prng(21);
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)];

const GARBAGE_SEGMENTS = ["%00", "..%2F..%2Fetc", "x".repeat(3000), "'%20OR%201=1--", "%F0%9F%98%80", "-1", "0", "%FF%FE", "null", "00000000-0000-0000-0000-000000000000"];
const GARBAGE_QUERY = ["abc", "-1", "1e309", "%FF", "[]", "x".repeat(5000), "%00"];
const HUGE = "a".repeat(900 * 1024);

/** Error shape every 4xx must have: {error:{code,message,details?:[{field,reason}]}}. */
function shapeProblem(body: unknown): string | null {
  if (!body || typeof body !== "object") return "not a JSON object";
  const keys = Object.keys(body);
  if (keys.length !== 1 || keys[0] !== "error") return `top-level keys ${keys.join(",")}`;
  const e = (body as any).error;
  if (!e || typeof e !== "object") return "error is not an object";
  const extra = Object.keys(e).filter((k) => !["code", "message", "details"].includes(k));
  if (extra.length) return `extra keys ${extra.join(",")}`;
  if (typeof e.code !== "string" || !/^[A-Z][A-Z0-9]*(_[A-Z0-9]+)*$/.test(e.code)) return `code ${JSON.stringify(e.code)}`;
  if (typeof e.message !== "string") return "message is not a string";
  if (e.details !== undefined) {
    if (!Array.isArray(e.details)) return "details is not an array";
    for (const d of e.details) {
      if (!d || typeof d.field !== "string" || typeof d.reason !== "string" || Object.keys(d).length !== 2) return `detail ${JSON.stringify(d)}`;
    }
  }
  return null;
}

/**
 * Operations whose errors the documents define in another shape. Only the token endpoint:
 * OAuth clients parse RFC 6749 §5.2 {error, error_description} (docs/auth.md).
 */
const OTHER_ERROR_SHAPE = new Set(["POST /auth/{app_slug}/v1/oauth/token"]);

interface Op {
  method: string;
  path: string;
  op: any;
}

/** A value of the schema's type, for the fields a mutation leaves alone. */
function sample(schema: any): unknown {
  if (!schema) return "x";
  if (schema.anyOf || schema.oneOf) return sample((schema.anyOf ?? schema.oneOf)[0]);
  if (schema.enum) return schema.enum[0];
  if (schema.const !== undefined) return schema.const;
  switch (schema.type) {
    case "object":
      return Object.fromEntries(Object.entries<any>(schema.properties ?? {}).map(([k, s]) => [k, sample(s)]));
    case "array":
      return [];
    case "integer":
    case "number":
      return schema.minimum ?? 1;
    case "boolean":
      return true;
    case "null":
      return null;
    default:
      return schema.format === "email" ? "fuzz@example.com" : "x".repeat(Math.max(1, schema.minLength ?? 1));
  }
}

/** A value of some other type than the schema's. */
function wrongType(schema: any): unknown {
  const type = schema?.type ?? (schema?.anyOf ? "union" : "string");
  const choices: Record<string, unknown[]> = {
    string: [12345, true, [], {}, null],
    integer: ["12", 1.5, true, [], {}],
    number: ["1", true, [], {}, null],
    boolean: ["true", 1, [], {}],
    array: ["x", 1, {}, true],
    object: ["x", 1, [], true],
    union: [{ nope: [1, 2] }, [[]], -1e308],
    null: ["x", 0, []],
  };
  return pick(choices[type] ?? choices.union);
}

/** The path with garbage in every parameter, or the fixtures' ids and a well-formed unknown value for the rest. */
function fillPath(path: string, garbage: boolean, params: any[] = []): string {
  const known: Record<string, string> = {
    workspace_id: authApp.workspace.id,
    workspace_slug: authApp.workspace.slug,
    app_id: authApp.id,
    app_slug: authApp.slug,
    community_id: communityId,
  };
  return path.replace(/\{([^}]+)\}/g, (_, name: string) => {
    if (garbage) return pick(GARBAGE_SEGMENTS);
    const p = params.find((x) => x.in === "path" && x.name === name) ?? { name, schema: { type: "string" } };
    return encodeURIComponent(unknownValue(p, known));
  });
}

/** End-user routes of an App take its publishable key; everything else the owner's all-actions key. */
const tokenFor = (path: string) => (path.startsWith("/auth/{app_slug}/") ? authApp.publishable_key : authApp.key);

interface Attempt {
  what: string;
  path: string;
  /** A factory for a body read once (a stream): called when the request is sent. */
  body?: BodyInit | (() => ReadableStream<Uint8Array>);
  contentType?: string;
  /** Authorization header value; default: the credential that reaches the route. */
  authorization?: string | null;
  /** The one status the request must get (a body past the cap 413, a type not taken 415). */
  status?: number;
}

/**
 * The media types and byte cap of each route, from the modules' own declarations (the
 * documents list the types but not the caps); the test app runs on the default cap.
 */
const bodies = new RequestBodies(DEFAULT_MAX_BODY_BYTES, SERVICE_MODULES.flatMap((m) => m.bodyRoutes ?? []));
/** How far past the cap the over-cap bodies go: enough to be past it, little to send. */
const PAST_CAP = 16 * 1024;

/** Garbage in each query parameter, one at a time: every class of QUERY_VALUES, a seeded few more, repeated. */
function queryAttempts(good: string, query: any[]): Attempt[] {
  const out: Attempt[] = [];
  for (const name of [...new Set<string>(query.map((p) => p.name))].sort()) {
    const key = encodeURIComponent(name);
    const values = [...QUERY_VALUES, pick(MORE_QUERY_VALUES), pick(MORE_QUERY_VALUES), pick(MORE_QUERY_VALUES)];
    for (const v of values) out.push({ what: `query ${name}=${v.slice(0, 40)}`, path: `${good}?${key}=${v}` });
    for (const qs of repeated(key)) out.push({ what: `query ${qs}`, path: `${good}?${qs}` });
  }
  return out;
}

/**
 * Bodies without a Content-Length, of each type the route documents: a wrong type, a
 * malformed one, one past the route's cap (413); a form where forms are not taken (415).
 */
function chunkedAttempts(key: string, method: string, good: string, content: Record<string, any>, base: Record<string, unknown>, props: [string, any][]): Attempt[] {
  const out: Attempt[] = [];
  const types = Object.keys(content);
  const policy = bodies.policyFor(method, good);
  const field = props[0]?.[0] ?? "x";
  // A raw route reads its body itself, after checks of its own (an upload's signature): past
  // the cap is 413 once it reads. The token endpoint always reads first (the client's
  // credentials may be in the body).
  const pastCap = !policy.raw || OTHER_ERROR_SHAPE.has(key) ? 413 : undefined;
  const stream = (what: string, contentType: string, body: string | Uint8Array, status?: number) => out.push({ what: `chunked ${what}`, path: good, contentType, body: () => chunked(body), status });
  for (const type of types) {
    const contentType = type === MULTIPART_TYPE ? multipartType : type;
    const prefix = openBody(type, field);
    out.push({ what: `chunked ${type} past the cap (${policy.maxBytes} bytes)`, path: good, contentType, body: () => chunkedPast(prefix, policy.maxBytes + PAST_CAP), status: pastCap });
    if (type === JSON_TYPE) {
      if (props.length) {
        const [name, schema] = pick(props);
        stream(`wrong type for ${name}`, type, JSON.stringify({ ...base, [name]: wrongType(schema) }));
      }
      stream("JSON", type, JSON.stringify(base));
      stream("malformed JSON", type, '{"a":[1,');
      stream("non-object JSON", type, pick(["[]", '"text"', "42", "null"]));
      // A four-byte character split across chunks is valid; a lone continuation byte is not.
      stream("UTF-8 across chunks", type, `{"${field}":"\u00e9😀😀"}`);
      stream("invalid UTF-8", type, new Uint8Array([123, 34, 97, 34, 58, 34, 0x80, 0xf0, 0x9f, 34, 125]));
    } else if (type === FORM_TYPE) {
      for (const form of garbageForms(props.map(([k]) => k))) {
        out.push({ what: `form ${form.slice(0, 40)}`, path: good, contentType: type, body: form });
        stream(`form ${form.slice(0, 40)}`, type, form);
      }
    } else if (type === MULTIPART_TYPE) {
      stream("multipart, a text field where a file goes", contentType, multipartFields(Object.fromEntries(props.map(([k]) => [k, "x"]))));
      stream("multipart, cut off", contentType, filePartHead() + "\x89PNG");
      stream("multipart, no boundary in the body", contentType, "not multipart at all");
    } else {
      stream(type, type, "\x89PNG\r\n");
    }
  }
  // A raw route (the token endpoint) answers a type it does not take itself, in its own shape.
  const unsupported = policy.raw ? undefined : 415;
  if (!policy.types.includes(FORM_TYPE)) stream("form on a route without forms", FORM_TYPE, "a=1&b=2", unsupported);
  if (!policy.types.includes(MULTIPART_TYPE)) stream("multipart on a route without it", multipartType, multipartFields({ a: "1" }), unsupported);
  return out;
}

function attemptsFor({ method, path, op }: Op): Attempt[] {
  // Deleting the fixtures would only make later operations answer 404.
  const good = method === "DELETE" ? fillPath(path, true) : fillPath(path, false, op.parameters);
  const out: Attempt[] = [
    { what: "garbage path", path: fillPath(path, true) },
    { what: "no credential", path: good, authorization: null },
    { what: "garbage credential", path: good, authorization: pick(["Bearer x", "Bearer " + "e".repeat(4000), "Basic %%%", "Bearer wsk_live_0000", "Bearer a.b.c"]) },
  ];
  const query = (op.parameters ?? []).filter((p: any) => p.in === "query");
  if (query.length) {
    const qs = query.map((p: any) => `${encodeURIComponent(p.name)}=${pick(GARBAGE_QUERY)}`).join("&");
    out.push({ what: "garbage query", path: `${good}?${qs}` });
    out.push(...queryAttempts(good, query));
  }
  const content = op.requestBody?.content;
  if (!content || method === "GET") return out;
  const schema = content["application/json"]?.schema ?? Object.values<any>(content)[0]?.schema;
  const base = (schema?.type === "object" ? sample(schema) : {}) as Record<string, unknown>;
  const props = Object.entries<any>(schema?.properties ?? {}).sort(([a], [b]) => a.localeCompare(b));
  const json = (what: string, body: string, contentType = "application/json") => out.push({ what, path: good, body, contentType });
  for (const [name, s] of props) json(`wrong type for ${name}`, JSON.stringify({ ...base, [name]: wrongType(s) }));
  const firstString = props.find(([, s]) => s.type === "string")?.[0] ?? "x";
  json("huge string", JSON.stringify({ ...base, [firstString]: HUGE }));
  json("deep nesting", `{"${firstString}":${"[".repeat(100_000)}${"]".repeat(100_000)}}`);
  out.push({ what: "invalid UTF-8", path: good, contentType: "application/json", body: new Uint8Array([...new TextEncoder().encode(`{"${firstString}":"`), 0xff, 0xc0, 0x80, 0xed, 0xa0, 0x80, 34, 125]) });
  json("wrong content type", JSON.stringify(base), "text/plain");
  if (!content[FORM_TYPE]) out.push({ what: "form content type", path: good, body: "a=1&b=2", contentType: FORM_TYPE, status: bodies.policyFor(method, good).raw ? undefined : 415 });
  for (const v of ["[]", '"text"', "42", "null", "true"]) json(`non-object JSON ${v}`, v);
  json("malformed JSON", '{"a":');
  out.push(...chunkedAttempts(`${method} ${path}`, method, good, content, base, props));
  return out;
}

/** Bun's HTTP server refuses a request line plus headers above 16 KiB (431, no body). */
const MAX_REQUEST_LINE = 16 * 1024;

/** Each per-service OpenAPI document the app routes: from its route table, or (the binary) the list the docs page offers. */
async function servedDocuments(app: TestApp): Promise<string[]> {
  if (!ON_BINARY) return app.app.routes.map((r: any) => r.path as string).filter((p) => p.endsWith("/openapi.json")).sort();
  const page = (await app.call("GET", "/docs/swagger-initializer.js")).body as string;
  return [...new Set([...page.matchAll(/"url":\s*"(\/[^"]+\/openapi\.json)"/g)].map((m) => m[1]))].sort();
}

test("no operation of any served document answers 5xx or an undocumented error shape to malformed input", async () => {
  const app = t.app;
  // The documents the app serves: the full one and each per-service one it routes.
  const docPaths = ["/docs/json", ...(await servedDocuments(app))];
  expect(docPaths.length).toBeGreaterThan(5);
  const ops = new Map<string, Op>();
  for (const docPath of docPaths) {
    const doc = await app.call("GET", docPath);
    expect([docPath, doc.status]).toEqual([docPath, 200]);
    for (const [path, item] of Object.entries<any>(doc.body.paths ?? {})) {
      for (const [method, op] of Object.entries<any>(item)) {
        if (["get", "post", "put", "patch", "delete"].includes(method)) ops.set(`${method.toUpperCase()} ${path}`, { method: method.toUpperCase(), path, op });
      }
    }
  }
  expect(ops.size).toBeGreaterThan(200);

  const problems: string[] = [];
  let sent = 0;
  let transportLimited = 0;
  for (const key of [...ops.keys()].sort()) {
    const op = ops.get(key)!;
    for (const a of attemptsFor(op)) {
      const headers: Record<string, string> = {};
      const authorization = a.authorization === undefined ? `Bearer ${tokenFor(op.path)}` : a.authorization;
      if (authorization !== null) headers.authorization = authorization;
      if (a.contentType) headers["content-type"] = a.contentType;
      const sentBody = typeof a.body === "function" ? a.body() : a.body;
      const res = await app.handle(new Request(`http://localhost${a.path}`, { method: op.method, headers, body: sentBody, duplex: "half" } as RequestInit));
      sent++;
      const text = await res.text();
      const where = `${key} [${a.what}] -> ${res.status}`;
      if (a.status !== undefined && res.status !== a.status) problems.push(`${where}: expected ${a.status}: ${text.slice(0, 200)}`);
      // Over real HTTP (the binary), Bun's parser answers a request line and headers over
      // 16 KiB with a bare 431 before any route runs: the one transport limit, documented.
      if (res.status === 431 && ON_BINARY && a.path.length > MAX_REQUEST_LINE) {
        transportLimited++;
        continue;
      }
      // A status the operation documents with a body of its own (the readiness probe's 503
      // while the scheduler is stopped, as in this in-process app) is its contract, not a fault.
      const own = op.op.responses?.[String(res.status)]?.content?.["application/json"]?.schema;
      if (own && !own.$ref) continue;
      if (res.status >= 500) problems.push(`${where}: ${text.slice(0, 200)}`);
      if (res.status < 400 || res.status >= 500) continue;
      if (!res.headers.get("x-request-id")) problems.push(`${where}: no x-request-id`);
      if (OTHER_ERROR_SHAPE.has(key)) continue;
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        body = text;
      }
      const problem = shapeProblem(body);
      if (problem) problems.push(`${where}: ${problem}: ${text.slice(0, 200)}`);
    }
  }
  expect(sent).toBeGreaterThan(1000);
  expect(problems).toEqual([]);
  expect(transportLimited).toBeLessThan(sent / 100);
  // Thousands of requests over every operation (480 and growing); over real HTTP on a loaded
  // CI machine that is more than the suite's 60 s default (it took 240 s once beside two other runs).
}, 480_000);
