/**
 * Request bodies cannot stall the server (issue 21 §1): oversized bodies are refused from
 * Content-Length or while streaming (413), bodies a route does not take are refused by
 * media type (415), both in the one error body, while /healthz keeps answering fast.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startTestApp, type TestApp } from "../helpers/app";
import { ON_BINARY } from "../helpers/target";
import { bunkerCommand, cliEnv } from "../helpers/cli";

const MiB = 1024 * 1024;
const SIGNUP = "/platform/v1/auth/signup";

let app: TestApp;
let base: string;
beforeAll(async () => {
  app = await startTestApp();
  base = `http://127.0.0.1:${app.listen(0, "127.0.0.1").port}`;
});
afterAll(async () => {
  if (!ON_BINARY) void app.app.server?.stop(true);
  await app.stop();
});

function expectErrorBody(r: { status: number; headers: Headers }, body: any, status: number, code: string) {
  expect(r.status).toBe(status);
  expect(body.error.code).toBe(code);
  expect(typeof body.error.message).toBe("string");
  expect(r.headers.get("x-request-id")).toBeTruthy();
}

async function post(path: string, body: BodyInit, contentType: string, extra: RequestInit = {}) {
  const r = await fetch(base + path, { method: "POST", headers: { "content-type": contentType }, body, ...extra });
  return { status: r.status, headers: r.headers, body: (await r.json()) as any };
}

/** A body sent in chunks without Content-Length (transfer-encoding: chunked). */
function chunked(total: number, chunk = 64 * 1024): ReadableStream<Uint8Array> {
  let sent = 0;
  return new ReadableStream({
    pull(c) {
      if (sent >= total) return c.close();
      const n = Math.min(chunk, total - sent);
      c.enqueue(new Uint8Array(n).fill(0x20));
      sent += n;
    },
  });
}

/**
 * Sends a request whose head declares a 50 MB body but only its first KiB, over a raw socket,
 * and returns the status the server answers with while the rest is still unsent. An answer at
 * all proves the server judged the request without waiting for (or buffering) the body; a
 * server that read it first would never answer, and the hang guard would fail the test.
 * Before the fix, 1 MB and 2 MB text/plain bodies alone held the event loop for 0.65 s and
 * 1.55 s while they were read.
 */
async function statusBeforeBody(base: string, path: string, contentType: string, whileOpen: () => Promise<void>): Promise<number> {
  const { hostname, port } = new URL(base);
  let received = "";
  let answered!: (status: number) => void;
  const status = new Promise<number>((resolve) => (answered = resolve));
  const socket = await Bun.connect({
    hostname,
    port: Number(port),
    socket: {
      data(_s, chunk) {
        received += chunk.toString();
        const line = /^HTTP\/1\.1 (\d{3})/.exec(received);
        if (line) answered(Number(line[1]));
      },
    },
  });
  try {
    socket.write(`POST ${path} HTTP/1.1\r\nHost: ${hostname}:${port}\r\nContent-Type: ${contentType}\r\nContent-Length: ${50 * MiB}\r\n\r\n`);
    socket.write(new Uint8Array(1024).fill(0x61));
    const hang = new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`no answer to ${contentType} before its body was sent`)), 20_000));
    const code = await Promise.race([status, hang]);
    // The connection still owes 50 MB; the server keeps serving others meanwhile.
    await whileOpen();
    return code;
  } finally {
    socket.end();
  }
}

describe("request-body caps and media types", () => {
  test("a 50 MB body gets 413 and a 2 MB text/plain body 415, in the error body (the served entry point is checked below)", async () => {
    const big = await post(SIGNUP, new Uint8Array(50 * MiB).fill(0x61), "application/json");
    expectErrorBody(big, big.body, 413, "PAYLOAD_TOO_LARGE");
    const text = await post(SIGNUP, "a".repeat(2 * MiB), "text/plain");
    expectErrorBody(text, text.body, 415, "UNSUPPORTED_MEDIA_TYPE");
  });

  test("MAX_BODY_BYTES (1 MiB) is inclusive: exactly 1 MiB reaches validation, one byte more is 413", async () => {
    const pad = (n: number) => {
      const prefix = '{"email":"a@example.com","username":"u","password":"';
      return prefix + "x".repeat(n - prefix.length - 2) + '"}';
    };
    const at = await post(SIGNUP, pad(MiB), "application/json");
    expect(Buffer.byteLength(pad(MiB))).toBe(MiB);
    expectErrorBody(at, at.body, 400, "VALIDATION_ERROR");
    const over = await post(SIGNUP, pad(MiB + 1), "application/json");
    expectErrorBody(over, over.body, 413, "PAYLOAD_TOO_LARGE");
  });

  test("a chunked body is cut off while streaming once it passes the cap", async () => {
    const r = await post(SIGNUP, chunked(20 * MiB), "application/json", { duplex: "half" } as RequestInit);
    expectErrorBody(r, r.body, 413, "PAYLOAD_TOO_LARGE");
    const small = await post(SIGNUP, chunked(10), "application/json", { duplex: "half" } as RequestInit);
    expect(small.status).toBe(400); // ten spaces: not a JSON object, but read and judged
  });

  test("JSON routes take application/json and +json; other types are 415 before anything reads them", async () => {
    const body = JSON.stringify({ email: "x" });
    for (const type of ["application/json", "application/json; charset=utf-8", "application/merge-patch+json"]) {
      const r = await post(SIGNUP, body, type);
      expectErrorBody(r, r.body, 400, "VALIDATION_ERROR");
    }
    for (const type of ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/octet-stream", "application/jsonp"]) {
      const r = await post(SIGNUP, body, type);
      expectErrorBody(r, r.body, 415, "UNSUPPORTED_MEDIA_TYPE");
    }
    const untyped = await fetch(base + SIGNUP, { method: "POST", body: new Uint8Array([123, 125]) });
    expect(untyped.status).toBe(415);
  });

  test("a JSON body must be an object in strict UTF-8: strings, arrays and bad bytes are 400 with the field named", async () => {
    for (const [body, code] of [[JSON.stringify("a".repeat(MiB - 16)), "VALIDATION_ERROR"], ["[1,2]", "VALIDATION_ERROR"], ["null", "VALIDATION_ERROR"]] as const) {
      const r = await post(SIGNUP, body, "application/json");
      expectErrorBody(r, r.body, 400, code);
      expect(r.body.error.details).toEqual([{ field: "body", reason: "must be a JSON object" }]);
    }
    const bad = await post(SIGNUP, new Uint8Array([123, 34, 97, 34, 58, 34, 0xff, 0xfe, 34, 125]), "application/json");
    expectErrorBody(bad, bad.body, 400, "INVALID_BODY");
  });

  test("UTF-8 with a Content-Length is checked after text decoding: bad bytes are 400, a literal U+FFFD is text", async () => {
    const enc = new TextEncoder();
    const body = (...mid: number[]) => new Uint8Array([...enc.encode('{"display_name":"a'), ...mid, ...enc.encode('"}')]);
    // A lone byte, a lone continuation, a cut 3-byte sequence, a UTF-16 surrogate, an overlong form.
    for (const bad of [[0xff], [0x80], [0xe2, 0x82], [0xed, 0xa0, 0x80], [0xc0, 0xaf]]) {
      const r = await post(SIGNUP, body(...bad), "application/json");
      expectErrorBody(r, r.body, 400, "INVALID_BODY");
    }
    // The replacement character itself (EF BF BD) is valid UTF-8: the body parses (then fails
    // validation for its missing fields, not as bad bytes).
    const literal = await post(SIGNUP, body(0xef, 0xbf, 0xbd), "application/json");
    expectErrorBody(literal, literal.body, 400, "VALIDATION_ERROR");
    // The one case decoded text cannot tell from it: a 4-byte sequence cut after 3 bytes is
    // taken as U+FFFD (docs/operations.md, "Request limits").
    const cut = await post(SIGNUP, body(0xf0, 0x9f, 0x98), "application/json");
    expectErrorBody(cut, cut.body, 400, "VALIDATION_ERROR");
    // Without a Content-Length (chunked) the bytes are decoded strictly.
    const stream = new ReadableStream<Uint8Array>({ start(c) { c.enqueue(body(0xf0, 0x9f, 0x98)); c.close(); } });
    const chunkedBad = await post(SIGNUP, stream, "application/json", { duplex: "half" } as RequestInit);
    expectErrorBody(chunkedBad, chunkedBad.body, 400, "INVALID_BODY");
  });

  test("uploads declare a larger cap: the avatar route takes multipart up to 2 MB plus the envelope", async () => {
    const form = (bytes: number) => {
      const f = new FormData();
      f.append("file", new Blob([new Uint8Array(bytes)]), "a.png");
      return f;
    };
    // A credential is judged before any body: without one, even 3 MB is a 401 and is not read.
    const anonymous = await fetch(`${base}/platform/v1/workspaces/nope/avatar`, { method: "POST", body: form(3 * MiB) });
    expectErrorBody(anonymous, await anonymous.json(), 401, "UNAUTHORIZED");
    // With one (here not a valid one: that is judged after the body reader), the caps apply.
    const authorization = "Bearer not-a-real-token";
    // Over the JSON cap but within the avatar's: reaches the route (401: the token is unknown).
    const within = await fetch(`${base}/platform/v1/workspaces/nope/avatar`, { method: "POST", headers: { authorization }, body: form(2 * MiB) });
    expect(within.status).toBe(401);
    const over = await fetch(`${base}/platform/v1/workspaces/nope/avatar`, { method: "POST", headers: { authorization }, body: form(3 * MiB) });
    expectErrorBody(over, await over.json(), 413, "PAYLOAD_TOO_LARGE");
    const json = await post("/platform/v1/workspaces/nope/avatar", "{}", "application/json", { headers: { "content-type": "application/json", authorization } });
    expectErrorBody(json, json.body, 415, "UNSUPPORTED_MEDIA_TYPE");
  });
});

describe("the served binary entry point", () => {
  test("a 50 MB body is refused from its head while other requests are served, and the process exits cleanly on SIGTERM", async () => {
    const free = () => {
      const s = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
      const port = s.port;
      s.stop(true);
      return port;
    };
    const port = free();
    // The source entry point on npm test, the compiled binary on test:bin.
    const proc = Bun.spawn(bunkerCommand(["serve"]), {
      cwd: join(import.meta.dir, "../.."),
      env: cliEnv({ DATA_DIR: mkdtempSync(join(tmpdir(), "bunker-sigterm-")), PORT: String(port), SMTP_PORT: String(free()), LOG_LEVEL: "silent", BUNKER_ENV: "test" }),
      stdout: "ignore",
      stderr: "pipe",
    });
    try {
      const url = `http://127.0.0.1:${port}`;
      for (let i = 0; i < 200; i++) {
        if (await fetch(`${url}/healthz`).then((r) => r.ok, () => false)) break;
        await Bun.sleep(50);
      }
      const healthy = async () => expect((await fetch(`${url}/healthz`)).status).toBe(200);
      // Judged from the head alone: the wrong type, then a declared length past the JSON cap.
      expect(await statusBeforeBody(url, SIGNUP, "text/plain", healthy)).toBe(415);
      expect(await statusBeforeBody(url, SIGNUP, "application/json", healthy)).toBe(413);
      // And sent whole: the same answers, and the process still serves.
      const fifty = new Uint8Array(50 * MiB);
      const big = await fetch(url + SIGNUP, { method: "POST", headers: { "content-type": "text/plain" }, body: fifty });
      expect(big.status).toBe(415);
      const bigJson = await fetch(url + SIGNUP, { method: "POST", headers: { "content-type": "application/json" }, body: fifty });
      expect(bigJson.status).toBe(413);
      expect((await bigJson.json()).error.code).toBe("PAYLOAD_TOO_LARGE");
      const text = await fetch(url + SIGNUP, { method: "POST", headers: { "content-type": "text/plain" }, body: "a".repeat(2 * MiB) });
      expect(text.status).toBe(415);
      await healthy();
      proc.kill("SIGTERM");
      expect(await proc.exited).toBe(0);
    } finally {
      proc.kill("SIGKILL");
    }
  });
});
