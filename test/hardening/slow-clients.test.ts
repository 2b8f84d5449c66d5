/**
 * Slow and greedy clients over real sockets: a body must arrive at a minimum pace (408 and
 * the connection closed otherwise), one address may have only so many requests in progress
 * (429), a refused body is drained so the client reads the answer instead of a reset, and
 * the body rules hold under any Host header.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { connect, type Socket } from "node:net";
import { startTestApp, type TestApp } from "../helpers/app";
import { ON_BINARY } from "../helpers/target";
import { until } from "../helpers/until";

const TIMEOUT_MS = 600;
const MAX_IN_PROGRESS = 3;
const NIL = "00000000-0000-4000-8000-000000000000";

let app: TestApp;
let port: number;
beforeAll(async () => {
  app = await startTestApp({
    HTTP_BODY_TIMEOUT_MS: String(TIMEOUT_MS),
    HTTP_BODY_MIN_RATE: "4096",
    HTTP_MAX_REQUESTS_PER_CLIENT: String(MAX_IN_PROGRESS),
  });
  port = app.listen(0, "127.0.0.1").port!;
});
afterAll(async () => {
  if (!ON_BINARY) void app.app.server?.stop(true);
  await app.stop();
});

interface Exchange {
  /** Everything the server sent, as text. */
  text: string;
  /** The status of each response on the connection, in order. */
  statuses: number[];
  /** A socket error (EPIPE, ECONNRESET) seen before the server closed. */
  error: string | null;
  /** The server closed the connection. */
  closed: boolean;
  ms: number;
}

/**
 * One raw HTTP/1.1 connection: writes `head`, then `body` in 64 KiB pieces (honouring
 * backpressure), or a byte every `trickleMs`; resolves when the server closes or `waitMs` passes. `to`: another port than the main app's.
 */
function exchange(head: string, opts: { body?: Buffer; trickleMs?: number; then?: string; waitMs?: number; to?: number } = {}): Promise<Exchange> {
  return new Promise((resolve) => {
    const t0 = performance.now();
    const sock: Socket = connect(opts.to ?? port, "127.0.0.1");
    let text = "";
    let error: string | null = null;
    let trickle: ReturnType<typeof setInterval> | undefined;
    const finish = (closed: boolean) => {
      clearInterval(trickle);
      clearTimeout(wait);
      sock.destroy();
      const statuses = [...text.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => Number(m[1]));
      resolve({ text, statuses, error, closed, ms: performance.now() - t0 });
    };
    const wait = setTimeout(() => finish(false), opts.waitMs ?? 15_000);
    sock.on("data", (d) => (text += d.toString("latin1")));
    sock.on("error", (e: NodeJS.ErrnoException) => (error = e.code ?? String(e)));
    sock.on("close", () => finish(true));
    sock.write(head);
    if (opts.trickleMs) {
      trickle = setInterval(() => sock.writable && sock.write("a"), opts.trickleMs);
      return;
    }
    const body = opts.body ?? Buffer.alloc(0);
    let sent = 0;
    const pump = () => {
      while (sent < body.length) {
        const piece = body.subarray(sent, sent + 65536);
        sent += piece.length;
        if (!sock.write(piece)) return void sock.once("drain", pump);
      }
      if (opts.then) sock.write(opts.then);
    };
    pump();
  });
}

const post = (path: string, type: string, length: number, extra = "") =>
  `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: ${type}\r\nContent-Length: ${length}\r\n${extra}\r\n`;
const healthz = (extra = "") => `GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n${extra}\r\n`;
/** The first response's JSON body (by its Content-Length: a second response may follow at once). */
function bodyOf(x: Exchange) {
  const start = x.text.indexOf("\r\n\r\n") + 4;
  const length = Number(/^content-length: (\d+)/im.exec(x.text.slice(0, start))![1]);
  return JSON.parse(x.text.slice(start, start + length));
}

describe("slow request bodies", () => {
  test("a body trickled below the pace is 408 REQUEST_TIMEOUT and its connection is closed; /healthz answers meanwhile", async () => {
    const slow = exchange(post("/platform/v1/auth/signin", "application/json", 100), { trickleMs: 100 });
    const h = await fetch(`http://127.0.0.1:${port}/healthz`);
    expect(h.status).toBe(200);
    const x = await slow;
    expect(x.statuses).toEqual([408]);
    expect(bodyOf(x).error.code).toBe("REQUEST_TIMEOUT");
    expect(x.text).toMatch(/^connection: close/im);
    expect(x.closed).toBe(true);
    expect(x.ms).toBeGreaterThanOrEqual(TIMEOUT_MS - 50);
    expect(x.ms).toBeLessThan(TIMEOUT_MS + 3_000);
  });

  test("a large streamed body earns time as it arrives: trickled it is 408, sent at a fair pace it is read past the timeout", async () => {
    const large = 200_000;
    const slow = await exchange(post("/platform/v1/auth/signin", "application/json", large), { trickleMs: 50 });
    expect(slow.statuses).toEqual([408]);
    // 32 KiB pieces every 150 ms (~220 KB/s, far above 4 KiB/s): ~0.9 s in all, past the 0.6 s
    // timeout. The first piece goes with the headers: a timer of this process that fires late
    // on a loaded machine must not leave the server with no byte at all past its deadline.
    const json = Buffer.from(JSON.stringify({ identifier: "x".repeat(large - 40), password: "pw" }));
    const r = await new Promise<Exchange>((resolve) => {
      const t0 = performance.now();
      const sock = connect(port, "127.0.0.1");
      let text = "";
      sock.on("data", (d) => (text += d));
      sock.on("close", () => resolve({ text, statuses: [...text.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => Number(m[1])), error: null, closed: true, ms: performance.now() - t0 }));
      sock.write(post("/platform/v1/auth/signin", "application/json", json.length, "Connection: close\r\n"));
      let at = 0;
      const piece = () => {
        sock.write(json.subarray(at, at + 32_768));
        at += 32_768;
        if (at >= json.length) clearInterval(step);
      };
      const step = setInterval(piece, 150);
      piece();
    });
    expect(r.ms).toBeGreaterThan(TIMEOUT_MS);
    expect(r.statuses).toHaveLength(1);
    expect(r.statuses[0]).not.toBe(408);
    expect([400, 401]).toContain(r.statuses[0]);
  });
});

/**
 * A request held in progress: a 200 KB body sent at 40 KB/s (well within the pace, so it
 * lasts ~5 s whatever the load), until `release` closes the socket.
 */
function hold(p: number, extra = "") {
  const sock = connect(p, "127.0.0.1");
  sock.on("error", () => {});
  sock.write(post("/platform/v1/auth/signin", "application/json", 200_000, extra));
  const piece = Buffer.alloc(4096, 32);
  const t = setInterval(() => sock.writable && sock.write(piece), 100);
  const closed = new Promise<void>((resolve) => sock.on("close", () => resolve()));
  return {
    release: () => {
      clearInterval(t);
      sock.destroy();
      return closed;
    },
  };
}

/** Polls a raw /healthz until it is refused with 429 (the held requests are all admitted by then). */
async function refusedHealthz(p: number, extra = ""): Promise<Exchange> {
  let last: Exchange | undefined;
  await until("the held requests to fill the client's allowance", async () => {
    last = await exchange(healthz(extra), { to: p });
    return last.statuses[0] === 429;
  }, 10_000);
  return last!;
}

describe("requests in progress per client address", () => {
  test(`past ${MAX_IN_PROGRESS} at once from one address: 429 RATE_LIMITED with Retry-After, closed; X-Forwarded-For from an untrusted peer changes nothing; the slots come back`, async () => {
    const holds = [1, 2, 3].map((i) => hold(port, `X-Forwarded-For: 198.51.100.${i}\r\n`));
    const refused = await refusedHealthz(port, "X-Forwarded-For: 203.0.113.9\r\n");
    expect(refused.statuses).toEqual([429]);
    expect(bodyOf(refused).error.code).toBe("RATE_LIMITED");
    expect(refused.text).toMatch(/^retry-after: 1/im);
    expect(refused.text).toMatch(/^connection: close/im);
    await Promise.all(holds.map((h) => h.release()));
    await until("the slots to come back", async () => (await exchange(healthz())).statuses[0] === 200, 10_000);
  });

  test("a body trickled below the pace frees its place when it times out", async () => {
    const slow = [1, 2, 3].map(() => exchange(post("/platform/v1/auth/signin", "application/json", 100), { trickleMs: 100 }));
    expect((await Promise.all(slow)).map((x) => x.statuses)).toEqual([[408], [408], [408]]);
    expect((await exchange(healthz())).statuses).toEqual([200]);
  });
});

describe("refused bodies are drained, not reset", () => {
  const big = Buffer.alloc(2 * 1024 * 1024, 97); // twice the JSON routes' 1 MiB cap

  test("413 (Content-Length past the cap), 415 and 401 with a 2 MiB body: the client reads the answer, and the connection carries the next request", async () => {
    const cases = [
      { head: post("/platform/v1/auth/signup", "application/json", big.length), status: 413, code: "PAYLOAD_TOO_LARGE" },
      { head: post("/platform/v1/auth/signup", "text/plain", big.length), status: 415, code: "UNSUPPORTED_MEDIA_TYPE" },
      { head: post(`/waitlist/v1/workspaces/${NIL}/waitlists`, "application/json", big.length), status: 401, code: "UNAUTHORIZED" },
    ];
    for (const c of cases) {
      const x = await exchange(c.head, { body: big, then: healthz() });
      expect({ error: x.error, statuses: x.statuses }).toEqual({ error: null, statuses: [c.status, 200] });
      expect(bodyOf(x).error.code).toBe(c.code);
    }
  });
});

describe("Host header", () => {
  test("a Host of one character: an upload route keeps its own body rules (403 for the bad signature, not 415)", async () => {
    const x = await exchange(
      `PUT /social/v1/communities/${NIL}/assets/${NIL}/upload?expires=1&sig=x HTTP/1.1\r\nHost: a\r\nContent-Type: application/octet-stream\r\nContent-Length: 3\r\nConnection: close\r\n\r\nabc`,
    );
    expect(x.statuses).toEqual([403]);
  });
});

describe("the token endpoint", () => {
  test("a chunked form body over 1 MiB is 413, not 500", async () => {
    const payload = Buffer.alloc(1024 * 1024 + 16 * 1024, 97);
    payload.write("grant_type=");
    const framed = Buffer.concat([Buffer.from(payload.length.toString(16) + "\r\n"), payload, Buffer.from("\r\n0\r\n\r\n")]);
    const x = await exchange(
      `POST /auth/some-app/v1/oauth/token HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n`,
      { body: framed },
    );
    expect(x.statuses).toEqual([413]);
    expect(bodyOf(x).error.code).toBe("PAYLOAD_TOO_LARGE");
  });
});

describe("behind a trusted proxy (TRUSTED_PROXIES)", () => {
  let proxied: TestApp;
  let base: string;
  beforeAll(async () => {
    proxied = await startTestApp({ TRUSTED_PROXIES: "127.0.0.1,::1", HTTP_BODY_TIMEOUT_MS: String(TIMEOUT_MS), HTTP_MAX_REQUESTS_PER_CLIENT: "2", SIGNUPS_PER_ADDRESS_PER_HOUR: "1" });
    base = `http://127.0.0.1:${proxied.listen(0, "127.0.0.1").port}`;
  });
  afterAll(async () => {
    if (!ON_BINARY) void proxied.app.server?.stop(true);
    await proxied.stop();
  });

  const signupAs = (client: string, n: number) =>
    fetch(`${base}/platform/v1/auth/signup`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-forwarded-for": `192.0.2.200, ${client}` },
      body: JSON.stringify({ email: `proxied${n}@example.test`, username: `proxied${n}`, password: "correct horse battery" }),
    });

  test("per-address limits count the client X-Forwarded-For names (its rightmost untrusted hop), not the proxy", async () => {
    expect((await signupAs("203.0.113.10", 1)).status).toBe(200);
    const second = await signupAs("203.0.113.10", 2);
    expect(second.status).toBe(429);
    expect(Number(second.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    // Another client behind the same proxy keeps its own allowance; the spoofed left part of the header is ignored.
    expect((await signupAs("203.0.113.11", 3)).status).toBe(200);
  });

  test("requests in progress are counted per forwarded client", async () => {
    const p = Number(new URL(base).port);
    const holds = [hold(p, "X-Forwarded-For: 203.0.113.20\r\n"), hold(p, "X-Forwarded-For: 203.0.113.20\r\n")];
    expect((await refusedHealthz(p, "X-Forwarded-For: 203.0.113.20\r\n")).statuses).toEqual([429]);
    expect((await fetch(`${base}/healthz`, { headers: { "x-forwarded-for": "203.0.113.21" } })).status).toBe(200);
    await Promise.all(holds.map((h) => h.release()));
    await until("the forwarded client's slots to come back", async () => (await fetch(`${base}/healthz`, { headers: { "x-forwarded-for": "203.0.113.20" } })).status === 200, 10_000);
  });
});
