/**
 * `npm run bench -- pipeline [name...]`: CPU per request of each hot path through Bunker's
 * whole in-process pipeline (Elysia, the HTTP kernel, principal resolution, policy, queries),
 * without sockets: `app.handle(new Request(...))` in a serial loop. This is the figure to
 * watch while cutting per-request work: it does not depend on a load generator and is much
 * less disturbed by other processes than req/s (it is CPU time of this process). The wrk
 * benches (`platform`, `auth`) give the throughput that matters to users.
 *
 * With `--cpu-prof` (bun --cpu-prof scripts/bench/run.ts pipeline me) the profile shows
 * where a route's time goes.
 *
 * Environment: BENCH_SECONDS (per target, default 2), BENCH_CONCURRENCY (loops in parallel,
 * default 1).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createApp } from "../../src/app";
import { loadConfig } from "../../src/config";
import { envNumber, fmtNum, table } from "./lib";

interface Target {
  name: string;
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: string;
}

export default async function pipelineBench(args: string[]) {
  const seconds = envNumber("BENCH_SECONDS", 2, 0.2);
  const concurrency = envNumber("BENCH_CONCURRENCY", 1, 1);
  const dir = mkdtempSync(join(tmpdir(), "bunker-bench-pipeline-"));
  const config = loadConfig({ DATA_DIR: dir, LOG_LEVEL: "warn", BUNKER_ENV: "development", PUBLIC_URL: "http://127.0.0.1:8080", ARGON2_MEMORY_KIB: "19456", ARGON2_TIME_COST: "2", CONSOLE_SIGNUP: "open" });
  const bunker = await createApp(config);
  try {
    const call = async (method: string, path: string, body?: unknown, token?: string) => {
      const headers: Record<string, string> = {};
      if (token) headers.authorization = `Bearer ${token}`;
      if (body !== undefined) headers["content-type"] = "application/json";
      const r = await bunker.handle(new Request(`http://127.0.0.1:8080${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) }));
      const json = (await r.json().catch(() => null)) as any;
      if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(json)}`);
      return json;
    };
    // Fixtures: a console owner, a workspace, an API key, an App, an end user, an M2M client.
    const owner = await call("POST", "/platform/v1/auth/signup", { email: "owner@bench.test", username: "bench_owner", password: "bench-password-123" });
    const session: string = owner.access_token;
    const ws = await call("POST", "/platform/v1/workspaces", { slug: "bench-ws", display_name: "Bench" }, session);
    const key = await call("POST", "/platform/v1/workspaces/bench-ws/api-keys", { name: "bench", policy: [{ effect: "allow", actions: ["workspace.read"], resources: ["*"] }] }, session);
    const app = await call("POST", "/auth/v1/apps", { workspace_id: ws.id, slug: "bench-app", display_name: "Bench App" }, session);
    const user = await call("POST", "/auth/bench-app/v1/auth/signup", { username: "bench_u", email: "u@bench.test", password: "bench-password-123" }, app.publishable_key);
    const m2m = await call("POST", `/auth/v1/apps/${app.id}/m2m-clients`, { name: "bench", permissions: ["auth.user.read"] }, session);
    const token: string = user.access_token;
    const form = { "content-type": "application/x-www-form-urlencoded" };

    const all: Target[] = [
      { name: "healthz", method: "GET", path: "/healthz" },
      { name: "not-found", method: "GET", path: "/no/such/route" },
      { name: "workspace-read-key", method: "GET", path: "/platform/v1/workspaces/bench-ws", headers: { authorization: `Bearer ${key.key}` } },
      { name: "introspect-key", method: "POST", path: "/platform/v1/introspect/api-key", headers: { authorization: `Bearer ${key.key}` } },
      { name: "introspect-session", method: "GET", path: "/platform/v1/introspect", headers: { authorization: `Bearer ${session}` } },
      { name: "verify", method: "POST", path: "/auth/bench-app/v1/verify", headers: { "content-type": "application/json" }, body: JSON.stringify({ token }) },
      { name: "introspect", method: "POST", path: "/auth/bench-app/v1/oauth/introspect", headers: form, body: new URLSearchParams({ token }).toString() },
      { name: "me", method: "GET", path: "/auth/bench-app/v1/me", headers: { authorization: `Bearer ${token}` } },
      { name: "client-credentials", method: "POST", path: "/auth/bench-app/v1/oauth/token", headers: form, body: new URLSearchParams({ grant_type: "client_credentials", client_id: m2m.client_id, client_secret: m2m.client_secret }).toString() },
    ];
    const unknown = args.filter((a) => !all.some((t) => t.name === a));
    if (unknown.length) throw new Error(`unknown target(s) ${unknown.join(", ")}; known: ${all.map((t) => t.name).join(", ")}`);
    const targets = args.length ? all.filter((t) => args.includes(t.name)) : all;

    const rows: string[][] = [];
    for (const t of targets) {
      // With a Content-Length, as every HTTP/1.1 client sends and as Bun's server passes on:
      // without one the body reader takes the slower chunked path.
      const headers = t.body === undefined ? t.headers : { ...t.headers, "content-length": String(Buffer.byteLength(t.body)) };
      const once = async () => {
        const r = await bunker.handle(new Request(`http://127.0.0.1:8080${t.path}`, { method: t.method, headers, body: t.body }));
        await r.arrayBuffer();
        return r.status;
      };
      const status = await once();
      const expected = t.name === "not-found" ? 404 : t.name === "introspect-key" ? 201 : 200;
      if (status !== expected) throw new Error(`${t.name} answered ${status}`);
      // Warm-up (JIT, caches), then a timed serial loop.
      const warmEnd = performance.now() + Math.min(1000, seconds * 500);
      while (performance.now() < warmEnd) await once();
      const cpu0 = process.cpuUsage();
      const t0 = performance.now();
      const end = t0 + seconds * 1000;
      let n = 0;
      // BENCH_CONCURRENCY loops side by side (default 1: serial), as a server sees requests
      // from many connections at once (more live objects, promises interleaved).
      await Promise.all(
        Array.from({ length: concurrency }, async () => {
          while (performance.now() < end) {
            for (let i = 0; i < 50; i++) await once();
            n += 50;
          }
        }),
      );
      const wall = performance.now() - t0;
      const cpu = process.cpuUsage(cpu0);
      rows.push([t.name, `${t.method} ${t.path.length > 48 ? t.path.slice(0, 45) + "..." : t.path}`, fmtNum(n), fmtNum((wall * 1000) / n, 1), fmtNum((cpu.user + cpu.system) / n, 1)]);
      console.log(`${t.name}: ${fmtNum((wall * 1000) / n, 1)} µs/request`);
    }
    console.log("\n" + table(["target", "request", "requests", "wall µs/req", "cpu µs/req"], rows, [false, false, true, true, true]));
    console.log(`\n${concurrency === 1 ? "serial" : `${concurrency} concurrent loops of`} app.handle() in one process, ${seconds} s per target after a warm-up; no sockets, so Bun's HTTP parsing is not included.
cpu µs/req can exceed wall when work runs off the main thread (RS256 signing on WebCrypto's pool).`);
  } finally {
    await bunker.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
