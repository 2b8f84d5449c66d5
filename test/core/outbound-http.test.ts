import { afterEach, describe, expect, test } from "bun:test";
import { createServer } from "node:net";
import { createOutboundHttp, isPublicAddress, OutboundError } from "../../src/core/outbound-http";
import { startReceiver, type Receiver } from "../helpers/http-receiver";

import { LOCALHOST_CERT, LOCALHOST_KEY } from "../helpers/test-cert";

const cleanup: (() => unknown)[] = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0)) await fn();
});
function receiver(handler?: Parameters<typeof startReceiver>[0]): Receiver {
  const r = startReceiver(handler);
  cleanup.push(() => r.stop());
  return r;
}

async function failure(p: Promise<unknown>): Promise<OutboundError> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(OutboundError);
    return e as OutboundError;
  }
  throw new Error("expected the request to fail");
}

describe("isPublicAddress", () => {
  const cases: [string, boolean][] = [
    // public
    ["8.8.8.8", true],
    ["1.1.1.1", true],
    ["93.184.216.34", true],
    ["100.63.255.255", true], // just below CGNAT
    ["100.128.0.1", true], // just above CGNAT
    ["172.15.255.255", true],
    ["172.32.0.1", true],
    ["192.169.0.1", true],
    ["2606:4700:4700::1111", true],
    ["2001:4860:4860::8888", true],
    ["[2a00:1450:4001::200e]", true],
    ["::ffff:8.8.8.8", true], // mapped public v4 reaches a public host
    ["64:ff9b::808:808", true], // NAT64 of 8.8.8.8
    ["2002:808:808::1", true], // 6to4 of 8.8.8.8
    // IPv4 special purpose
    ["0.0.0.0", false],
    ["0.1.2.3", false],
    ["10.0.0.1", false],
    ["10.255.255.255", false],
    ["100.64.0.1", false],
    ["100.127.255.254", false],
    ["127.0.0.1", false],
    ["127.255.255.254", false],
    ["169.254.169.254", false],
    ["172.16.0.1", false],
    ["172.31.255.255", false],
    ["192.168.1.1", false],
    ["192.0.0.8", false],
    ["192.0.2.10", false],
    ["198.18.0.1", false],
    ["198.51.100.7", false],
    ["203.0.113.9", false],
    ["224.0.0.1", false],
    ["239.255.255.250", false],
    ["240.0.0.1", false],
    ["255.255.255.255", false],
    // IPv6 special purpose
    ["::", false],
    ["::1", false],
    ["[::1]", false],
    ["0:0:0:0:0:0:0:1", false],
    ["::ffff:127.0.0.1", false],
    ["::ffff:7f00:1", false],
    ["0:0:0:0:0:ffff:10.0.0.1", false],
    ["::ffff:169.254.169.254", false],
    ["::127.0.0.1", false], // IPv4-compatible
    ["::8.8.8.8", false], // IPv4-compatible: deprecated, never a legitimate target
    ["64:ff9b::a00:1", false], // NAT64 of 10.0.0.1
    ["64:ff9b::127.0.0.1", false],
    ["64:ff9b:1::1", false], // local-use NAT64
    ["2002:7f00:1::1", false], // 6to4 of 127.0.0.1
    ["2001::1", false], // Teredo
    ["2001:db8::1", false],
    ["3fff::1", false],
    ["100::1", false],
    ["fc00::1", false],
    ["fd12:3456:789a::1", false],
    ["fe80::1", false],
    ["fe80::1%eth0", false],
    ["febf:ffff::1", false],
    ["fec0::1", false],
    ["ff02::1", false],
    // not an IP address at all: never "public"
    ["localhost", false],
    ["example.com", false],
    ["1.2.3", false],
    ["01.2.3.4", false],
    ["256.1.1.1", false],
    ["1::2::3", false],
    ["", false],
  ];
  test.each(cases)("%p -> %p", (ip, expected) => {
    expect(isPublicAddress(ip)).toBe(expected);
  });
});

describe("blocked targets", () => {
  const strict = createOutboundHttp({ allowPrivateTargets: false, requireHttps: false, defaultTimeoutMs: 2000 });

  test.each([
    "http://localhost/",
    "http://LOCALHOST./x",
    "http://api.localhost/",
    "http://127.0.0.1/",
    "http://127.1/",
    "http://[::1]/",
    "http://[::ffff:127.0.0.1]/",
    "http://[0:0:0:0:0:ffff:7f00:1]/",
    "http://10.1.2.3/",
    "http://192.168.0.10:8080/",
    "http://169.254.169.254/latest/meta-data/",
    "http://0x7f.1/",
    "http://2130706433/",
    "http://0177.0.0.1/",
    "http://0/",
    "http://[fd00::1]/",
    "http://[fe80::1]/",
  ])("%s is refused before any connection", async (url) => {
    const err = await failure(strict.request(url));
    expect(err.kind).toBe("blocked");
    expect(err.message).toMatch(/not a public address/);
    expect(err.status).toBe(400);
    expect(() => strict.checkUrl(url)).toThrow(OutboundError);
  });

  test("a loopback server that is really listening is never reached", async () => {
    const r = receiver();
    const err = await failure(strict.request(`http://localhost:${r.port}/hook`, { method: "POST", body: "x" }));
    expect(err.kind).toBe("blocked");
    const err2 = await failure(strict.request(`${r.url}/hook`));
    expect(err2.kind).toBe("blocked");
    expect(r.requests).toHaveLength(0);
  });

  test("a name is refused when any of its addresses is private", async () => {
    const client = createOutboundHttp({
      allowPrivateTargets: false,
      requireHttps: false,
      resolve: async () => ["93.184.216.34", "10.0.0.7"],
    });
    const err = await failure(client.request("http://mixed.example/"));
    expect(err.kind).toBe("blocked");
    expect(err.message).toContain("resolves to 10.0.0.7");
  });

  test("malformed URLs, other schemes and plain http under requireHttps", async () => {
    expect((await failure(strict.request("not a url"))).kind).toBe("invalid_url");
    expect((await failure(strict.request("ftp://example.com/file"))).kind).toBe("invalid_url");
    expect((await failure(strict.request("file:///etc/passwd"))).kind).toBe("invalid_url");
    const httpsOnly = createOutboundHttp({ allowPrivateTargets: false, requireHttps: true });
    const err = await failure(httpsOnly.request("http://example.com/hook"));
    expect(err.kind).toBe("blocked");
    expect(err.message).toBe("URL must use https");
  });
});

describe("requests (allowPrivateTargets: true)", () => {
  const dev = createOutboundHttp({ allowPrivateTargets: true, requireHttps: true, defaultTimeoutMs: 2000 });

  test("method, headers and body arrive; status, headers and body come back", async () => {
    const r = receiver(() => new Response("accepted", { status: 202, headers: { "x-reply": "yes" } }));
    const res = await dev.request(`${r.url}/hooks/in?x=1`, {
      method: "POST",
      headers: { "content-type": "application/json", "webhook-id": "msg_1" },
      body: JSON.stringify({ hello: "world" }),
    });
    expect(res.status).toBe(202);
    expect(res.headers["x-reply"]).toBe("yes");
    expect(new TextDecoder().decode(res.body)).toBe("accepted");
    expect(res.address).toBe("127.0.0.1");
    expect(r.requests).toHaveLength(1);
    const got = r.requests[0];
    expect(got.method).toBe("POST");
    expect(got.path).toBe("/hooks/in?x=1");
    expect(got.headers["content-type"]).toBe("application/json");
    expect(got.headers["webhook-id"]).toBe("msg_1");
    expect(got.headers.host).toBe(`127.0.0.1:${r.port}`);
    expect(JSON.parse(got.body)).toEqual({ hello: "world" });
  });

  test("the request goes to the address that was checked, with the original Host", async () => {
    const r = receiver();
    const resolved: string[] = [];
    // "hook.test" does not exist: reaching the receiver proves fetch never resolved it again.
    const client = createOutboundHttp({
      allowPrivateTargets: true,
      requireHttps: false,
      resolve: async (host) => {
        resolved.push(host);
        return ["127.0.0.1"];
      },
    });
    const res = await client.request(`http://user:s%40cret@hook.test:${r.port}/p`, { body: new Uint8Array([1, 2, 3]), method: "PUT" });
    expect(res.status).toBe(200);
    expect(res.address).toBe("127.0.0.1");
    expect(resolved).toEqual(["hook.test"]);
    expect(r.requests[0].headers.host).toBe(`hook.test:${r.port}`);
    expect(r.requests[0].headers.authorization).toBe("Basic " + btoa("user:s@cret"));
    expect(r.requests[0].method).toBe("PUT");
    expect(r.requests[0].headers["content-length"]).toBe("3");
  });

  test("https: connects to the IP but verifies the certificate against the host name", async () => {
    const server = Bun.serve({ port: 0, hostname: "127.0.0.1", tls: { cert: LOCALHOST_CERT, key: LOCALHOST_KEY }, fetch: (req) => new Response(`tls ok ${req.headers.get("host")}`) });
    cleanup.push(() => server.stop(true));
    const client = createOutboundHttp({ allowPrivateTargets: true, requireHttps: true, tlsCa: LOCALHOST_CERT });
    const res = await client.request(`https://localhost:${server.port}/`);
    expect(res.address).toBe("127.0.0.1");
    expect(new TextDecoder().decode(res.body)).toBe(`tls ok localhost:${server.port}`);
    // The same server by IP: the certificate does not name 127.0.0.1.
    const err = await failure(client.request(`https://127.0.0.1:${server.port}/`));
    expect(err.kind).toBe("tls");
    // Without the test CA the self-signed certificate is not trusted.
    const untrusting = createOutboundHttp({ allowPrivateTargets: true, requireHttps: true });
    expect((await failure(untrusting.request(`https://localhost:${server.port}/`))).kind).toBe("tls");
  });

  test("redirects are returned, not followed", async () => {
    const r = receiver((req) => (new URL(req.url).pathname === "/start" ? Response.redirect("http://169.254.169.254/latest/meta-data/", 302) : new Response("followed")));
    const res = await dev.request(`${r.url}/start`);
    expect(res.status).toBe(302);
    expect(res.headers.location).toBe("http://169.254.169.254/latest/meta-data/");
    expect(r.requests).toHaveLength(1);
  });

  test("a slow target times out with kind timeout", async () => {
    const r = receiver(async () => {
      await Bun.sleep(1500);
      return new Response("late");
    });
    const started = performance.now();
    const err = await failure(dev.request(r.url, { timeoutMs: 150 }));
    expect(err.kind).toBe("timeout");
    expect(err.status).toBe(502);
    expect(performance.now() - started).toBeLessThan(1000);
  });

  test("a closed port is a connection error", async () => {
    // Take a free port and close it again, so nothing listens there.
    const port = await new Promise<number>((resolve) => {
      const s = createServer().listen(0, "127.0.0.1", () => {
        const p = (s.address() as { port: number }).port;
        s.close(() => resolve(p));
      });
    });
    const err = await failure(dev.request(`http://127.0.0.1:${port}/`));
    expect(err.kind).toBe("connection");
    expect(err.message).toContain("ECONNREFUSED");
  });

  test("the response body read stops at the cap", async () => {
    const big = "x".repeat(300_000);
    const r = receiver(() => new Response(big));
    const client = createOutboundHttp({ allowPrivateTargets: true, requireHttps: false, maxBodyBytes: 64 * 1024 });
    const res = await client.request(r.url);
    expect(res.status).toBe(200);
    expect(res.body.byteLength).toBe(64 * 1024);
  });
});
