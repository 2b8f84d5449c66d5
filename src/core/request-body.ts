/**
 * Request bodies: what a route accepts (media types, byte cap) and the one JSON reader
 * every route shares. The HTTP kernel runs `parse` as Elysia's parse hook, so a body is
 * judged before anything reads, validates or hashes it:
 *
 * - 415 UNSUPPORTED_MEDIA_TYPE for a media type the route does not take. JSON routes (all
 *   but the few in `BodyRoute` lists) take application/json and application/<x>+json only:
 *   a text/plain body once reached TypeBox validation as a string, and Elysia's defaults
 *   step (`Object.assign(defaults, body)`) copied it character by character, ~1 s per MB
 *   with the event loop blocked; a JSON string or array root does the same, hence the
 *   object-root rule below.
 * - 413 PAYLOAD_TOO_LARGE beyond the route's cap: from Content-Length before a byte is
 *   read, else counted while streaming (chunked bodies), never after buffering all of it.
 *   Bun's maxRequestBodySize (`ceiling`) is the hard limit under all of this; above it Bun
 *   answers a bare 413 itself and closes the connection.
 * - JSON: strict UTF-8, nesting and width within json-limits.ts (checked on the raw text,
 *   before JSON.parse), and the root must be an object: 400 otherwise.
 * - 408 REQUEST_TIMEOUT for a body that arrives too slowly: it gets `timeoutMs`, plus one
 *   second per `minRate` bytes received (Apache's mod_reqtimeout, body=...,MinRate=...), then
 *   the connection closes. Slow headers and idle connections are closed by Bun's idleTimeout;
 *   without this, a client trickling bodies held a connection (a file handle) per request for
 *   as long as it liked.
 *
 * Every body is read here, once (a small JSON body as text, the rest as a capped, timed
 * stream); a route that reads its own body (forms, uploads, raw) gets the bytes read here.
 */
import { ApiError } from "./errors";
import { joinChunks } from "./streams";
import { jsonLimitExceeded, MAX_JSON_DEPTH, MAX_JSON_ITEMS } from "./json-limits";

export const MiB = 1024 * 1024;
export const DEFAULT_MAX_BODY_BYTES = MiB;
/**
 * Bun.serve's maxRequestBodySize floor. Well above every route cap so a client that
 * overshoots one gets the documented 413 body from the kernel; only absurd declared sizes
 * meet Bun's own bodyless 413.
 */
export const RUNTIME_BODY_CEILING = 64 * MiB;

export const JSON_TYPE = "application/json";
export const FORM_TYPE = "application/x-www-form-urlencoded";
export const MULTIPART_TYPE = "multipart/form-data";
/** OAuth and OIDC endpoints take form posts as the RFCs say, and JSON as well. */
export const OAUTH_FORM_TYPES: readonly string[] = [FORM_TYPE, JSON_TYPE];

/** A route whose body is not "JSON object up to the global cap". */
export interface BodyRoute {
  /** HTTP method, or "*" for every method (a route that answers other methods itself). */
  method: string;
  /** The route's path as Elysia writes it: ":name" matches one segment. */
  path: string;
  /** Media types taken; JSON_TYPE also admits application/<x>+json. */
  types: readonly string[];
  /** Cap in bytes (default: the global cap). Uploads name theirs; document it in docs/operations.md. */
  maxBytes?: number;
  /**
   * The handler reads the request itself (route option `parse: "none"`) and answers a
   * media type it does not take: the kernel only caps the size and leaves the body
   * unread. Such routes must be listed: Elysia honours "none" only while it is a route's
   * single parse hook, so behind the kernel's hook it would parse the body by type.
   */
  raw?: boolean;
}

/** Slow-body rule (config HTTP_BODY_TIMEOUT_MS, HTTP_BODY_MIN_RATE). */
export interface BodyPace {
  timeoutMs: number;
  /** Bytes per second: each `minRate` bytes received earn one more second. */
  minRate: number;
}
export const DEFAULT_BODY_PACE: BodyPace = { timeoutMs: 10_000, minRate: 1024 };

/**
 * Bodies up to this size with a Content-Length are read in one call (request.text() for JSON,
 * bytes() for forms: the fast path) and get `timeoutMs` alone; larger ones are streamed, and
 * earn time as bytes arrive.
 */
const TEXT_READ_MAX = 16 * 1024;

interface Policy {
  types: readonly string[];
  maxBytes: number;
  raw: boolean;
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

export class RequestBodies {
  private readonly jsonPolicy: Policy;
  private readonly routes: { method: string; re: RegExp; policy: Policy }[];

  private readonly clock: BodyClock;

  constructor(
    readonly maxBytes = DEFAULT_MAX_BODY_BYTES,
    routes: BodyRoute[] = [],
    pace: BodyPace = DEFAULT_BODY_PACE,
  ) {
    this.clock = new BodyClock(pace);
    this.jsonPolicy = { types: [JSON_TYPE], maxBytes, raw: false };
    this.routes = routes.map((r) => ({
      method: r.method.toUpperCase(),
      re: pathPattern(r.path),
      policy: { types: r.types, maxBytes: r.maxBytes ?? maxBytes, raw: r.raw ?? false },
    }));
  }

  /** For Bun.serve's maxRequestBodySize. */
  get ceiling(): number {
    return Math.max(RUNTIME_BODY_CEILING, this.jsonPolicy.maxBytes, ...this.routes.map((r) => r.policy.maxBytes));
  }

  policyFor(method: string, path: string): Policy {
    for (const r of this.routes) if ((r.method === method || r.method === "*") && r.re.test(path)) return r.policy;
    return this.jsonPolicy;
  }

  /**
   * Elysia parse hook. Returns the parsed JSON object; null for an empty body and on raw
   * routes (a defined result stops Elysia's own parsing); undefined to leave a non-JSON
   * body the route accepts to Elysia's parser, which then reads the bytes read here.
   */
  async parse(request: Request, path: string): Promise<unknown> {
    const header = request.headers.get("content-length");
    const length = header === null ? null : Number(header);
    if (length === 0) return null;
    // `request.body` builds a ReadableStream: only looked at when no Content-Length says there is a body.
    if (length === null && !request.body) return undefined;
    const policy = this.policyFor(request.method, path);
    const type = mediaType(request.headers.get("content-type"));
    // A raw route answers a wrong type itself, in its own error shape (OAuth's, at /oauth/token).
    if (!policy.raw && !policy.types.some((t) => t === type || (t === JSON_TYPE && isJsonSuffix(type)))) throw unsupportedType(policy.types);
    if (length !== null && !(length <= policy.maxBytes)) throw tooLarge(policy.maxBytes);
    const json = !policy.raw && (type === JSON_TYPE || isJsonSuffix(type));
    if (json && length !== null && length <= TEXT_READ_MAX) {
      // With a Content-Length (Bun reads exactly that much), as text: about 3.7 µs of server CPU
      // less per request than through an ArrayBuffer and a fatal TextDecoder (wrk, /verify's
      // 900-byte body). text() replaces bad bytes with U+FFFD, so their absence is checked.
      const text = await this.clock.within(request.text());
      // A string of n UTF-16 units is at least n bytes (an in-process Request may misstate its length).
      if (text.length > policy.maxBytes) throw tooLarge(policy.maxBytes);
      return parseJsonText(checkedUtf8(text, length));
    }
    if (policy.raw) {
      // The handler reads the body when it chooses (an upload checks its signature first).
      const body = request.body!;
      let bytes: Promise<Uint8Array<ArrayBuffer>> | undefined;
      serveBody(request, () => (bytes ??= this.cutOnRefusal(request, this.clock.read(body, policy.maxBytes))));
      return null;
    }
    // A small form with a Content-Length in one read (a stream reader costs ~15 µs more: the token introspection's form).
    const bytes = await (length !== null && length <= TEXT_READ_MAX
      ? this.clock.within(request.bytes())
      : this.cutOnRefusal(request, this.clock.read(request.body!, policy.maxBytes)));
    if (bytes.byteLength > policy.maxBytes) throw tooLarge(policy.maxBytes);
    if (json) return parseJsonText(strictUtf8(bytes));
    serveBody(request, async () => bytes);
    return undefined;
  }

  /**
   * The connection's state once `response` is made: when the body was left unread, reads and
   * discards it (DRAIN_MAX_BYTES at most, at the body pace) so the connection stays usable and
   * the client reads the answer; when that is not possible (a body cut off mid-read, too
   * large or too slow), marks the answer Connection: close.
   */
  settle(request: Request, response: Response): Response | Promise<Response> {
    const header = request.headers.get("content-length");
    if (header === null ? request.headers.get("transfer-encoding") === null : header === "0") return response;
    // Read to its end (the usual case; a timed-out small read answers Connection: close itself), or cut off by a refusal.
    if (request.bodyUsed) return (request as { [CUT]?: true })[CUT] ? closing(response) : response;
    if (response.headers.get("connection") === "close") return response;
    const length = header === null ? null : Number(header);
    if (length === null || !(length <= DRAIN_MAX_BYTES) || !request.body) return closing(response);
    return this.clock.discard(request.body, DRAIN_MAX_BYTES).then((ok) => (ok ? response : closing(response)));
  }

  /** `read`, marking the request's body as cut off when the read is refused (413, 408). */
  private async cutOnRefusal<T>(request: Request, read: Promise<T>): Promise<T> {
    try {
      return await read;
    } catch (e) {
      (request as { [CUT]?: true })[CUT] = true;
      throw e;
    }
  }
}

/** Marks a request whose body read was abandoned part-way: its connection cannot be reused. */
const CUT = Symbol("bunker.body-cut");

function closing(response: Response): Response {
  response.headers.set("connection", "close");
  return response;
}

/**
 * Times body reads. One timer for all of them (a sweep every quarter second while any read
 * is in progress) rather than one per request: a request's cost stays a Set insert and delete.
 */
class BodyClock {
  private readonly reads = new Set<{ deadline: number; expire(): void }>();
  private sweeper: ReturnType<typeof setInterval> | null = null;

  constructor(private readonly pace: BodyPace) {}

  /**
   * `read` (a small body in one call), or 408 once it has taken `timeoutMs`. A promise per
   * read, dropped with it: one shared by many reads would keep each read's result alive
   * until it settled.
   */
  async within<T>(read: Promise<T>): Promise<T> {
    let expire!: () => void;
    const expired = new Promise<never>((_, reject) => (expire = () => reject(requestTimeout())));
    const watch = { deadline: performance.now() + this.pace.timeoutMs, expire };
    this.track(watch);
    try {
      // The race subscribes to `read`: should it fail after a timeout, that is not unhandled.
      return await Promise.race([read, expired]);
    } finally {
      this.reads.delete(watch);
    }
  }

  /** The whole stream within `max` bytes and the pace; 413 past `max`, 408 when too slow. */
  async read(body: ReadableStream<Uint8Array>, max: number): Promise<Uint8Array<ArrayBuffer>> {
    const chunks: Uint8Array[] = [];
    const { size, outcome } = await this.pull(body, max, (c) => chunks.push(c));
    if (outcome === "too-large") throw tooLarge(max);
    if (outcome === "too-slow") throw requestTimeout();
    return joinChunks(chunks, size);
  }

  /** Reads the stream to its end and throws it away; false when it passed `max` or came too slowly. */
  async discard(body: ReadableStream<Uint8Array>, max: number): Promise<boolean> {
    try {
      return (await this.pull(body, max, () => {})).outcome === "done";
    } catch {
      return false; // the connection went away
    }
  }

  /** The read loop: chunks to `take` until the end, `max` bytes, or the pace's deadline. */
  private async pull(body: ReadableStream<Uint8Array>, max: number, take: (chunk: Uint8Array) => void) {
    const reader = body.getReader();
    const start = performance.now();
    let timedOut = false;
    const watch = {
      deadline: start + this.pace.timeoutMs,
      expire: () => {
        timedOut = true;
        void reader.cancel().catch(() => {});
      },
    };
    this.track(watch);
    let size = 0;
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (timedOut) return { size, outcome: "too-slow" as const };
        if (done) return { size, outcome: "done" as const };
        size += value.byteLength;
        if (size > max) {
          void reader.cancel().catch(() => {});
          return { size, outcome: "too-large" as const };
        }
        take(value);
        watch.deadline = start + this.pace.timeoutMs + (size * 1000) / this.pace.minRate;
      }
    } finally {
      this.reads.delete(watch);
    }
  }

  private track(watch: { deadline: number; expire(): void }) {
    this.reads.add(watch);
    if (this.sweeper) return;
    this.sweeper = setInterval(() => {
      const now = performance.now();
      for (const w of this.reads) {
        if (w.deadline > now) continue;
        this.reads.delete(w);
        w.expire();
      }
      if (this.reads.size === 0 && this.sweeper) {
        clearInterval(this.sweeper);
        this.sweeper = null;
      }
    }, 250);
    this.sweeper.unref?.();
  }
}

/** Bytes as UTF-8 text; 400 unless they are valid UTF-8. */
function strictUtf8(bytes: Uint8Array): string {
  try {
    return utf8.decode(bytes);
  } catch {
    throw notUtf8();
  }
}

/**
 * `text` as decoded (with replacement) from a body of `byteLength` bytes: 400 when the body was
 * not valid UTF-8. Valid UTF-8 re-encodes to exactly its own length; a replaced sequence of 1
 * or 2 bytes becomes the 3-byte U+FFFD, so the length changes. The one case this cannot tell
 * from a literal U+FFFD is a 4-byte sequence cut after its third byte (3 bytes in, 3 out): that
 * body is taken, with U+FFFD in place of the cut character, as any lenient decoder would.
 */
function checkedUtf8(text: string, byteLength: number): string {
  if (text.includes("\uFFFD") && Buffer.byteLength(text, "utf8") !== byteLength) throw notUtf8();
  return text;
}

const notUtf8 = () => new ApiError(400, "INVALID_BODY", "Request body is not valid UTF-8");

/** A \\u0000 escape that is not itself an escaped backslash followed by "u0000". */
const NUL_ESCAPE = /(?:^|[^\\])(?:\\\\)*\\u0000/;

/** Strict JSON of a request body's text: depth-bounded, an object at the root (null when empty). */
function parseJsonText(text: string): Record<string, unknown> | null {
  if (text.trim() === "") return null;
  // U+0000 in a string: PostgreSQL text cannot hold it (SQLite can), so no engine gets one.
  if (text.includes("\\u0000") && NUL_ESCAPE.test(text)) {
    throw new ApiError(400, "VALIDATION_ERROR", "Text may not contain the NUL character (\\u0000)", [{ field: "body", reason: "contains \\u0000" }]);
  }
  const exceeded = jsonLimitExceeded(text, MAX_JSON_DEPTH, MAX_JSON_ITEMS);
  if (exceeded === "depth") {
    throw new ApiError(400, "VALIDATION_ERROR", `JSON nesting is limited to ${MAX_JSON_DEPTH} levels`, [
      { field: "body", reason: `nested deeper than ${MAX_JSON_DEPTH} levels` },
    ]);
  }
  if (exceeded === "items") {
    throw new ApiError(400, "VALIDATION_ERROR", `A JSON body holds at most ${MAX_JSON_ITEMS} array elements and object members`, [
      { field: "body", reason: `more than ${MAX_JSON_ITEMS} array elements and object members` },
    ]);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new ApiError(400, "INVALID_BODY", "Request body could not be parsed as JSON");
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new ApiError(400, "VALIDATION_ERROR", "Request body must be a JSON object", [{ field: "body", reason: "must be a JSON object" }]);
  }
  return value as Record<string, unknown>;
}

/**
 * Makes the body readers of `request` answer from `read` (the kernel's capped, timed read).
 * In place rather than a new Request, because Bun's server.requestIP only knows the original
 * object (client addresses feed audit entries and per-client limits).
 */
function serveBody(request: Request, read: () => Promise<Uint8Array<ArrayBuffer>>) {
  const type = request.headers.get("content-type") ?? "";
  const fixed = (fn: () => Promise<unknown>) => ({ value: fn, configurable: true });
  Object.defineProperties(request, {
    bytes: fixed(read),
    arrayBuffer: fixed(async () => (await read()).slice().buffer),
    text: fixed(async () => new TextDecoder().decode(await read())),
    json: fixed(async () => JSON.parse(new TextDecoder().decode(await read()))),
    blob: fixed(async () => new Blob([await read()], { type })),
    formData: fixed(async () => new Response(await read(), { headers: { "content-type": type } }).formData()),
  });
}

function mediaType(header: string | null): string {
  if (!header) return "";
  const semi = header.indexOf(";");
  return (semi === -1 ? header : header.slice(0, semi)).trim().toLowerCase();
}

const isJsonSuffix = (type: string) => type.startsWith("application/") && type.endsWith("+json");

function pathPattern(path: string): RegExp {
  const source = path
    .split("/")
    .map((seg) => (seg.startsWith(":") ? "[^/]+" : seg.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")))
    .join("/");
  // Elysia answers with and without a trailing slash.
  return new RegExp(`^${source}/?$`);
}

/**
 * An answer made before the body was read (a 401 from the credential gate, a 413 from
 * Content-Length, a 415, a 404) leaves it on the connection. Closed then, the socket was
 * reset while the client was still sending, and a client such as curl saw a broken pipe
 * instead of the answer; left to Bun, the rest is discarded after the answer, where no
 * deadline or count of requests in progress sees a client trickling it. So the kernel reads
 * and discards up to this much, at the body pace, before it answers (nginx's lingering
 * close, bounded); a larger or slower rest is answered with Connection: close.
 */
export const DRAIN_MAX_BYTES = 8 * MiB;

/** Connection: close (RFC 9112 §9.6): the connection cannot carry another request. */
export const CLOSE = { connection: "close" };

function tooLarge(max: number) {
  return new ApiError(413, "PAYLOAD_TOO_LARGE", `Request body is larger than this route accepts (${max} bytes)`, [
    { field: "body", reason: `at most ${max} bytes` },
  ]);
}

function requestTimeout() {
  return new ApiError(408, "REQUEST_TIMEOUT", "The request body arrived too slowly", [], CLOSE);
}

function unsupportedType(types: readonly string[]) {
  return new ApiError(415, "UNSUPPORTED_MEDIA_TYPE", `Content-Type must be ${types.join(" or ")}`, [
    { field: "content-type", reason: `one of ${types.join(", ")}` },
  ]);
}
