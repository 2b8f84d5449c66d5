/**
 * Garbage for the whole-API fuzz (fuzz.test.ts): query values, and bodies sent in chunks
 * without a Content-Length (JSON, form-urlencoded, multipart, octet-stream), including
 * bodies past the route's cap. Everything is a value or a factory: a stream is built when
 * its request is sent (a body stream is read once).
 */

/** mulberry32: small, seedable, good enough to pick garbage deterministically. */
export function prng(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let x = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

export const JSON_TYPE = "application/json";
export const FORM_TYPE = "application/x-www-form-urlencoded";
export const MULTIPART_TYPE = "multipart/form-data";

/**
 * Values every query parameter gets, as they appear in the query string (already encoded):
 * the classes issue 29 found answering 500 (negative, null, booleans, numbers past a
 * double or a 64-bit integer, calendar dates that do not exist) and their neighbours.
 */
export const QUERY_VALUES: readonly string[] = [
  "-1",
  "null",
  "true",
  "1e309",
  "99999999999999999999",
  "",
  "x".repeat(5000),
  "%F0%9F%98%80%E2%80%AE%E0%A4%A8%CC%81",
  "2026-02-30",
  "275760-09-14T00:00:00.000Z",
];
/** More of the same, of which each parameter gets a seeded few (the run stays fast). */
export const MORE_QUERY_VALUES: readonly string[] = [
  "0",
  "-0",
  "1.5",
  "NaN",
  "0x10",
  "%20",
  "%00",
  "%FF%FE",
  "%",
  "[]",
  "{}",
  "__proto__",
  "false",
  "undefined",
  "-99999999999999999999",
  "9007199254740993",
  "2026-13-01",
  "0000-00-00",
  "-271821-04-19T00:00:00Z",
  "2026-11-21T25:61:61Z",
  "yesterday",
  // Cursors: base64 of JSON that is cut, of the wrong shape, of numbers past a double.
  "eyJpZCI6",
  btoa(JSON.stringify({ id: null, t: -1 })),
  btoa("[1e309]"),
  btoa("\u0000\u00ff"),
];

/** The same parameter twice (?x=a&x=b), which a parser may hand on as an array. */
export const repeated = (name: string): string[] => [`${name}=1&${name}=2`, `${name}=2026-01-01&${name}=-1`];

const encoder = new TextEncoder();

/** `body` in chunks of `size` bytes, no Content-Length: how a client streams an upload. */
export function chunked(body: string | Uint8Array, size = 7): ReadableStream<Uint8Array> {
  const bytes = typeof body === "string" ? encoder.encode(body) : body;
  let at = 0;
  return new ReadableStream({
    pull(c) {
      if (at >= bytes.length) return c.close();
      c.enqueue(bytes.slice(at, at + size));
      at += size;
    },
  });
}

const FILL_CHUNK = 64 * 1024;

/**
 * `prefix`, then filler until the stream holds `total` bytes, made while it is read (a
 * server that stops at its cap stops the making too).
 */
export function chunkedPast(prefix: string, total: number): ReadableStream<Uint8Array> {
  let sent = 0;
  return new ReadableStream({
    pull(c) {
      if (sent >= total) return c.close();
      // A fresh chunk each time: a stream that feeds a native sink (fetch) may detach what it is given.
      const part = sent === 0 && prefix ? encoder.encode(prefix) : new Uint8Array(Math.min(FILL_CHUNK, total - sent)).fill(0x61);
      c.enqueue(part);
      sent += part.length;
    },
  });
}

/** A multipart body's boundary and the opening of its first part (a file). */
export const BOUNDARY = "fuzzfuzzfuzz";
export const multipartType = `${MULTIPART_TYPE}; boundary=${BOUNDARY}`;
export const filePartHead = (name = "file") => `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"; filename="a.png"\r\nContent-Type: image/png\r\n\r\n`;
/** A whole multipart body of text fields (no file where one is expected: a wrong type). */
export const multipartFields = (fields: Record<string, string>) =>
  Object.entries(fields).map(([k, v]) => `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`).join("") + `--${BOUNDARY}--\r\n`;

/** The prefix of a body of `type` that a filler can extend past any cap. */
export function openBody(type: string, field: string): string {
  if (type === JSON_TYPE) return `{"${field}":"`;
  if (type === FORM_TYPE) return `${field}=`;
  if (type === MULTIPART_TYPE) return filePartHead();
  return "";
}

/**
 * Form bodies a route that takes forms meets: every field empty or garbage, a field twice,
 * bad percent-escapes, invalid UTF-8 once decoded, names without values, a huge value.
 */
export function garbageForms(fields: string[]): string[] {
  const names = fields.length ? fields : ["x"];
  const all = (v: string) => names.map((n) => `${n}=${v}`).join("&");
  return [
    all(""),
    all("-1"),
    all("%FF%FE"),
    all("%ZZ%"),
    all("null"),
    names.map((n) => `${n}=a&${n}=b`).join("&"),
    "=&&=&" + names.join("&"),
    `${names[0]}=${"%F0%9F%98%80".repeat(2000)}`,
    `${names[0]}[]=1&${names[0]}[a]=2`,
    "%00=%00",
  ];
}
