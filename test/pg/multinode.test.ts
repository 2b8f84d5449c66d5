/**
 * Several nodes on one PostgreSQL database (issue 12): two Bunker processes (the real app,
 * test/helpers/bunker-node.ts) share a throwaway cluster, a DATA_DIR (objects) and a
 * MASTER_KEY, and are driven over loopback HTTP.
 *
 * - webhooks emitted on either node reach the receiver once (unique webhook-id each);
 * - a node killed (SIGKILL) in the middle of a delivery: the other node takes the delivery
 *   over once the lease expires;
 * - a scheduled job runs once per tick across both nodes, not once per node;
 * - a sign-in lock-out reached on one node holds on the other;
 * - an API key revoked on one node is refused by the other within CACHE_TTL_MS.
 */
// source-only: nodes built from source with shortened webhook leases (test/helpers/bunker-node.ts); the engine is PostgreSQL, which test:bin does not run
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestApp } from "../helpers/app";
import { createAuthApp, signupEndUser } from "../helpers/auth";
import { startReceiver, type Receiver } from "../helpers/http-receiver";
import { type PgCluster, startPgCluster } from "../helpers/pg-cluster";

const MASTER_KEY = "a1".repeat(32);
const CACHE_TTL_MS = 2_000;
const LEASE_MS = 4_000;

interface Node {
  name: string;
  url: string;
  proc: ReturnType<typeof Bun.spawn>;
  /** Every JSON log line the node printed. */
  logs: Record<string, unknown>[];
  /** The TestApp-shaped client the test helpers take (only `call` is used). */
  api: TestApp;
}

let cluster: PgCluster;
let databaseUrl: string;
let dataDir: string;
let receiver: Receiver;
const nodes: Node[] = [];

async function startNode(name: string): Promise<Node> {
  const proc = Bun.spawn([process.execPath, join(import.meta.dir, "../helpers/bunker-node.ts")], {
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      DATA_DIR: dataDir,
      MASTER_KEY,
      PORT: "0",
      SMTP_PORT: "off",
      BUNKER_ENV: "test",
      LOG_LEVEL: "debug",
      CONSOLE_SIGNUP: "open",
      ALLOW_PRIVATE_TARGETS: "true",
      CACHE_TTL_MS: String(CACHE_TTL_MS),
      PG_POOL_SIZE: "4",
      TEST_LEASE_MS: String(LEASE_MS),
      TEST_REPLY_DEADLINE_MS: "2000",
      PUBLIC_URL: "http://localhost:8080",
    },
    stdout: "pipe",
    stderr: "inherit",
  });
  const logs: Record<string, unknown>[] = [];
  let port: number | null = null;
  const ready = Promise.withResolvers<void>();
  void (async () => {
    const decoder = new TextDecoder();
    let buf = "";
    for await (const chunk of proc.stdout as ReadableStream<Uint8Array>) {
      buf += decoder.decode(chunk, { stream: true });
      let nl: number;
      while ((nl = buf.indexOf("\n")) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        try {
          const obj = JSON.parse(line);
          if (typeof obj.port === "number" && port === null) {
            port = obj.port;
            ready.resolve();
          } else logs.push(obj);
        } catch {
          // not a log line
        }
      }
    }
    ready.reject(new Error(`node ${name} exited before listening`));
  })();
  await ready.promise;
  const url = `http://127.0.0.1:${port}`;
  const call: TestApp["call"] = async (method, path, opts = {}) => {
    const headers: Record<string, string> = { ...(opts.headers ?? {}) };
    if (opts.token) headers.authorization = `Bearer ${opts.token}`;
    if (opts.body !== undefined) headers["content-type"] ??= "application/json";
    const res = await fetch(`${url}${path}`, { method, headers, body: opts.body === undefined ? undefined : JSON.stringify(opts.body) });
    const text = await res.text();
    let body: any = text;
    try {
      body = text ? JSON.parse(text) : null;
    } catch {}
    return { status: res.status, body, headers: res.headers };
  };
  const node: Node = { name, url, proc, logs, api: { call } as TestApp };
  nodes.push(node);
  return node;
}

async function stopNode(n: Node, signal: "SIGTERM" | "SIGKILL" = "SIGTERM") {
  n.proc.kill(signal);
  await n.proc.exited;
}

let seq = 0;
async function signupAccount(n: Node) {
  const u = { email: `mn${++seq}-${Date.now()}@example.com`, username: `mn${seq}_${Date.now()}`, password: "correct horse battery" };
  const r = await n.api.call("POST", "/platform/v1/auth/signup", { body: u });
  expect(r.status).toBe(200);
  return { ...u, token: r.body.access_token as string };
}

async function until<T>(what: string, probe: () => Promise<T | null | undefined | false>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(50);
  }
}

let a: Node;
let b: Node;

beforeAll(async () => {
  cluster = await startPgCluster();
  databaseUrl = await cluster.createDatabase("multinode");
  dataDir = mkdtempSync(join(tmpdir(), "bunker-multinode-"));
  receiver = startReceiver();
}, 60_000);

afterAll(async () => {
  for (const n of nodes) if (n.proc.exitCode === null) await stopNode(n);
  await receiver?.stop();
  await cluster?.stop();
});

describe("two nodes on one PostgreSQL database", () => {
  test("a node killed mid-delivery: the other node takes the delivery over once the lease expires", async () => {
    // Node A alone, so that A is the node holding the delivery.
    a = await startNode("A");
    const app = await createAuthApp(a.api);
    let hang = true;
    const held = Promise.withResolvers<void>();
    receiver.setHandler(async (req) => {
      if (new URL(req.url).pathname === "/killed" && hang) {
        hang = false;
        held.resolve();
        await new Promise(() => {}); // never answers: A dies waiting
      }
      return new Response("ok");
    });
    const ep = await a.api.call("POST", `/auth/v1/apps/${app.id}/webhooks/endpoints`, { token: app.key, body: { url: `${receiver.url}/killed`, event_types: ["user.created"] } });
    expect(ep.status).toBe(201);
    await signupEndUser(a.api, app);
    await held.promise;
    const firstId = receiver.requests.find((r) => r.path === "/killed")!.headers["webhook-id"];

    // Killed at once, while the attempt is in flight: a node started first could take longer
    // than A's reply deadline on a loaded machine, and A would record a timeout (a retry a
    // minute later) instead of dying mid-delivery.
    await stopNode(a, "SIGKILL");
    b = await startNode("B");
    // Once the lease A took runs out, B's pump takes the delivery over: the lease plus a few
    // pump ticks, given room for a loaded CI machine (the point is that it comes, and once).
    const again = await until("the retry from node B", async () => receiver.requests.filter((r) => r.path === "/killed").length >= 2 && receiver.requests.filter((r) => r.path === "/killed"), 60_000);
    expect(again.map((r) => r.headers["webhook-id"])).toEqual([firstId, firstId]);
    const delivered = await until("the delivery recorded as delivered", async () => {
      const r = await b.api.call("GET", `/auth/v1/apps/${app.id}/webhooks/events?endpoint_id=${ep.body.id}&status=delivered`, { token: app.key });
      return r.status === 200 && r.body.data?.length > 0 && r.body.data;
    });
    expect(delivered.map((e: { id: string }) => e.id)).toEqual([firstId]);
  }, 120_000);

  test("webhooks emitted on either node are delivered once", async () => {
    if (a.proc.exitCode !== null || a.proc.signalCode !== null) a = await startNode("A2");
    receiver.setHandler(() => new Response("ok"));
    const app = await createAuthApp(a.api);
    const ep = await b.api.call("POST", `/auth/v1/apps/${app.id}/webhooks/endpoints`, { token: app.key, body: { url: `${receiver.url}/once`, event_types: ["user.created"] } });
    expect(ep.status).toBe(201);
    for (let i = 0; i < 6; i++) await signupEndUser(i % 2 ? b.api : a.api, app);
    await until("six deliveries", async () => receiver.requests.filter((r) => r.path === "/once").length >= 6);
    await Bun.sleep(2_500); // both pumps tick at least twice more: nothing is sent again
    const ids = receiver.requests.filter((r) => r.path === "/once").map((r) => r.headers["webhook-id"]);
    expect(ids.length).toBe(6);
    expect(new Set(ids).size).toBe(6);
  }, 60_000);

  test("a scheduled job runs once per tick across both nodes", async () => {
    const runs = (n: Node) => n.logs.filter((l) => l.msg === "job ok" && l.job === "platform.events").length;
    const ticks = (n: Node) => n.logs.filter((l) => l.msg === "job ok" && l.job === "webhooks.pump").length;
    const before = [runs(a) + runs(b), ticks(a) + ticks(b)];
    await Bun.sleep(10_500); // two ticks of the 5-second platform.events job, ten of the 1-second pump
    const platformRuns = runs(a) + runs(b) - before[0]!;
    const pumpRuns = ticks(a) + ticks(b) - before[1]!;
    expect(platformRuns).toBeGreaterThanOrEqual(2);
    expect(platformRuns).toBeLessThanOrEqual(3); // once per node would be 4
    expect(pumpRuns).toBeGreaterThanOrEqual(8);
    expect(pumpRuns).toBeLessThanOrEqual(12); // once per node would be about 20
  }, 30_000);

  test("a sign-in lock-out reached on one node holds on the other", async () => {
    const u = await signupAccount(a);
    for (let i = 0; i < 4; i++) expect((await a.api.call("POST", "/platform/v1/auth/signin", { body: { identifier: u.email, password: `wrong-${i}` } })).status).toBe(401);
    const onB = await b.api.call("POST", "/platform/v1/auth/signin", { body: { identifier: u.email, password: u.password } });
    expect(onB.status).toBe(429);
  });

  test("an API key revoked on one node is refused by the other within CACHE_TTL_MS", async () => {
    const u = await signupAccount(a);
    const ws = await a.api.call("POST", "/platform/v1/workspaces", { token: u.token, body: { slug: `mn-${Date.now()}`, display_name: "Multi node" } });
    expect(ws.status).toBe(201);
    const minted = await a.api.call("POST", `/platform/v1/workspaces/${ws.body.slug}/api-keys`, {
      token: u.token,
      body: { name: "all", policy: [{ effect: "allow", actions: ["*"], resources: ["*"] }] },
    });
    expect(minted.status).toBe(201);
    const read = () => b.api.call("GET", `/platform/v1/workspaces/${ws.body.slug}`, { token: minted.body.key });
    expect((await read()).status).toBe(200); // B has the key in its read cache now
    expect((await read()).status).toBe(200);
    const revoked = await a.api.call("DELETE", `/platform/v1/workspaces/${ws.body.slug}/api-keys/${minted.body.id}`, { token: u.token });
    expect(revoked.status).toBe(204);
    const t0 = Date.now();
    await until("B refusing the revoked key", async () => (await read()).status === 401, CACHE_TTL_MS + 3_000);
    expect(Date.now() - t0).toBeLessThan(CACHE_TTL_MS + 1_000);
  });
});
