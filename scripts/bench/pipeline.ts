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
 * The creates (card-create, waitlist-signup, job-create) are answered after their commit: one
 * at a time each pays a commit of its own, so measure them with BENCH_CONCURRENCY=64, where
 * they share commits as they do under wrk -c64.
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
  /** A fresh body per request (a sign-up's address must be new, or it is another path). */
  bodyOf?: (i: number) => string;
  /** The status a success answers (default 200). */
  status?: number;
}

export default async function pipelineBench(args: string[]) {
  const seconds = envNumber("BENCH_SECONDS", 2, 0.2);
  const concurrency = envNumber("BENCH_CONCURRENCY", 1, 1);
  const dir = mkdtempSync(join(tmpdir(), "bunker-bench-pipeline-"));
  // The writes' own limits off (as their wrk benches have them): the bench measures the
  // create, not a limiter at its ceiling.
  const config = loadConfig({
    DATA_DIR: dir, LOG_LEVEL: "warn", BUNKER_ENV: "development", PUBLIC_URL: "http://127.0.0.1:8080", ARGON2_MEMORY_KIB: "19456", ARGON2_TIME_COST: "2", CONSOLE_SIGNUP: "open",
    TACK_RATE_WRITES: "0", TACK_RATE_READS: "0", TACK_RATE_BATCH: "0", WAITLIST_SIGNUPS_PER_IP_PER_MINUTE: "1000000", ALLOW_PRIVATE_TARGETS: "true", TRAWL_CONCURRENCY: "1",
  });
  const bunker = await createApp(config);
  // The extraction worker takes a created job and waits on this page, which never answers:
  // it holds one job while the creates are measured, as the trawl bench's slow page does.
  const stall = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Promise<Response>(() => {}) });
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
    const json = { "content-type": "application/json" };
    // Writes: a card (the tack bench's body), a public waitlist sign-up (the waitlist bench's
    // body, a new address each time), an extraction job (the trawl bench's body).
    const boardKey = await call("POST", "/platform/v1/workspaces/bench-ws/api-keys", { name: "board", policy: [{ effect: "allow", actions: ["tack.*"], resources: ["*"] }] }, session);
    const B = "/tack/api/v1/workspaces";
    await call("POST", B, { name: "acme" }, boardKey.key);
    await call("POST", `${B}/acme/projects`, { name: "web", lists: [{ name: "todo" }, { name: "doing" }, { name: "done" }] }, boardKey.key);
    for (const name of ["bug", "ui"]) await call("POST", `${B}/acme/labels`, { name }, boardKey.key);
    const wl = await call("POST", `/waitlist/v1/workspaces/${ws.id}/waitlists`, { slug: "launch", display_name: "Launch", settings: { signups_per_minute: 1_000_000, referral_boost: 2, custom_fields: [{ name: "company", type: "text" }] } }, session);
    await call("PATCH", `/waitlist/v1/workspaces/${ws.id}/waitlists/${wl.id}/status`, { status: "open" }, session);
    const referrer = await call("POST", "/waitlist/v1/waitlists/bench-ws/launch/entries", { email: "referrer@bench.test" });
    const run = Date.now().toString(36);
    const trawlSchema = { type: "object", properties: { name: { type: "string" }, price: { type: "number" }, currency: { type: "string" }, sku: { type: "string" } }, required: ["name", "price"] };

    const all: Target[] = [
      { name: "healthz", method: "GET", path: "/healthz" },
      { name: "not-found", method: "GET", path: "/no/such/route" },
      { name: "workspace-read-key", method: "GET", path: "/platform/v1/workspaces/bench-ws", headers: { authorization: `Bearer ${key.key}` } },
      { name: "introspect-key", method: "POST", path: "/platform/v1/introspect/api-key", headers: { authorization: `Bearer ${key.key}` } },
      { name: "introspect-session", method: "GET", path: "/platform/v1/introspect", headers: { authorization: `Bearer ${session}` } },
      { name: "verify", method: "POST", path: "/auth/bench-app/v1/verify", headers: { "content-type": "application/json" }, body: JSON.stringify({ token }) },
      { name: "introspect", method: "POST", path: "/auth/bench-app/v1/oauth/introspect", headers: form, body: new URLSearchParams({ token }).toString() },
      { name: "me", method: "GET", path: "/auth/bench-app/v1/me", headers: { authorization: `Bearer ${token}` } },
      { name: "card-create", method: "POST", path: `${B}/acme/projects/web/cards`, status: 201, headers: { ...json, authorization: `Bearer ${boardKey.key}` }, body: JSON.stringify({ title: "Bench card", body: "Created under **wrk**", priority: "medium", labels: ["bug", "ui"], list: "todo" }) },
      {
        name: "waitlist-signup", method: "POST", path: "/waitlist/v1/waitlists/bench-ws/launch/entries", status: 201, headers: json,
        bodyOf: (i) => JSON.stringify({ email: `u${run}-${i}@example.com`, name: `Bench ${i}`, utm: { source: "bench" }, ...(i % 2 ? {} : { referral_code: referrer.referral_code }) }),
      },
      {
        name: "job-create", method: "POST", path: `/trawl/v1/workspaces/${ws.id}/jobs`, status: 201, headers: { ...json, authorization: `Bearer ${session}` },
        body: JSON.stringify({ json_schema: trawlSchema, description: "Extract the product name and price", suggested_urls: [`http://127.0.0.1:${stall.port}/slow?bench=1`], timeout_s: 10 }),
      },
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
      let seq = 0;
      const once = async () => {
        const body = t.bodyOf?.(seq++);
        const h = body === undefined ? headers : { ...t.headers, "content-length": String(Buffer.byteLength(body)) };
        const r = await bunker.handle(new Request(`http://127.0.0.1:8080${t.path}`, { method: t.method, headers: h, body: body ?? t.body }));
        await r.arrayBuffer();
        return r.status;
      };
      const status = await once();
      const expected = t.status ?? (t.name === "not-found" ? 404 : t.name === "introspect-key" ? 201 : 200);
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
    await stall.stop(true);
    await bunker.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
