/**
 * `npm run bench -- footprint`: what the shipped binary costs to start and to keep, beside a
 * compiled bare `Bun.serve` (the floor any Bun executable pays).
 *
 * The binary is dist/bunker rebuilt by `npm run build` first, or BUNKER_BENCH_BINARY=<path>
 * as it is. The baseline is a hello-world `Bun.serve` compiled here with the same bun
 * (`bun build --compile`). Both run from an empty working directory on 127.0.0.1.
 *
 * 1. Starts, interleaved (Bunker on an empty DATA_DIR, Bunker on an existing one, baseline;
 *    repeated BENCH_STARTS times): spawn -> the first 200 from GET /healthz (Bunker answers
 *    503 from its placeholder until it is built), polled every 2 ms. Reported per kind: the
 *    median and p90 of that time, the CPU the process used until then (user+system from
 *    /proc/<pid>/stat, 10 ms ticks: the figure a busy machine disturbs least), and the RSS
 *    BENCH_IDLE_MS (2000) after ready (VmRSS from /proc/<pid>/status).
 * 2. A mixed load: one more Bunker start on the existing DATA_DIR, fixtures over HTTP (an
 *    owner, a workspace, an API key, a card board, a community and an actor, an App and an
 *    end user), then wrk (BENCH_THREADS / BENCH_CONNECTIONS, 2 / 64) for BENCH_SECONDS (5)
 *    sending, in turn: GET /healthz, a workspace read with the key, GET /me of the end user,
 *    a card create and a post create. RSS right after the load and its peak (VmHWM) are
 *    reported, beside the baseline under the same requests (it answers each with its hello).
 *
 * SMTP listens on a free port, as in production. Rate limits of the card board are off
 * (TACK_RATE_*=0) so that the creates run at full speed. Linux only (/proc). Report only;
 * exits 0.
 */
import { spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { loadavg } from "node:os";
import { REPO_ROOT, api, benchOwner, envNumber, fmtNum, freePort, machine, median, percentile, procCpuSeconds, sleep, table, tempDir, watchdog, wrkRunScript, wrkSettings } from "./lib";

/** One process of the binary or the baseline, with what the bench reads of it. */
interface Started {
  pid: number;
  url: string;
  readyMs: number;
  cpuMs: number;
  stop(): Promise<void>;
}

interface StartKind {
  name: string;
  start(): Promise<Started>;
  ready: number[];
  cpu: number[];
  rss: number[];
}

/** VmRSS or VmHWM of a process, in MiB (from /proc/<pid>/status). */
function memoryMiB(pid: number, field: "VmRSS" | "VmHWM"): number {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  if (!m) throw new Error(`no ${field} in /proc/${pid}/status`);
  return Number(m[1]) / 1024;
}

/** Spawns `argv` and waits for the first 200 from /healthz: the time and CPU from spawn to that answer. */
async function startProcess(argv: string[], cwd: string, env: Record<string, string>, port: number): Promise<Started> {
  const url = `http://127.0.0.1:${port}`;
  const log = join(cwd, `server-${port}.log`);
  const t0 = performance.now();
  const proc = Bun.spawn(argv, { cwd, env, stdin: "ignore", stdout: Bun.file(log), stderr: Bun.file(log) });
  process.on("exit", () => proc.kill("SIGKILL"));
  const deadline = t0 + 60_000;
  for (;;) {
    if (proc.exitCode !== null || proc.signalCode !== null) throw new Error(`${argv[0]} exited (${proc.exitCode ?? proc.signalCode}) before it was ready:\n${readFileSync(log, "utf8").slice(-2000)}`);
    if (performance.now() > deadline) throw new Error(`${argv[0]} not ready after 60 s:\n${readFileSync(log, "utf8").slice(-2000)}`);
    const ok = await fetch(`${url}/healthz`).then((r) => r.arrayBuffer().then(() => r.status === 200), () => false);
    if (ok) break;
    await sleep(2);
  }
  const readyMs = performance.now() - t0;
  const cpuMs = (procCpuSeconds(proc.pid) ?? NaN) * 1000;
  return {
    pid: proc.pid,
    url,
    readyMs,
    cpuMs,
    async stop() {
      proc.kill("SIGTERM");
      const done = await Promise.race([proc.exited.then(() => true), sleep(15_000).then(() => false)]);
      if (!done) proc.kill("SIGKILL");
    },
  };
}

/** A hello-world Bun.serve compiled with the bun running this bench. */
function compileBaseline(dir: string): string {
  const src = join(dir, "hello.ts");
  writeFileSync(src, `Bun.serve({ hostname: "127.0.0.1", port: Number(process.env.PORT), fetch: () => new Response("Hello, world!") });\n`);
  const out = join(dir, "hello");
  const r = spawnSync(process.execPath, ["build", "--compile", src, "--outfile", out], { encoding: "utf8" });
  if (r.status !== 0) throw new Error(`bun build --compile of the baseline failed: ${r.stderr}`);
  return out;
}

/** The binary to measure: BUNKER_BENCH_BINARY as it is, else `npm run build` now. */
function binary(): string {
  const given = process.env.BUNKER_BENCH_BINARY;
  if (given) {
    if (!existsSync(given)) throw new Error(`BUNKER_BENCH_BINARY=${given} does not exist`);
    return given;
  }
  console.log("building dist/bunker (npm run build; BUNKER_BENCH_BINARY=<path> measures a given binary instead) ...");
  const r = spawnSync(process.execPath, [join(REPO_ROOT, "scripts/build.ts"), "--no-verify"], { cwd: REPO_ROOT, stdio: ["ignore", "inherit", "inherit"] });
  if (r.status !== 0) throw new Error("npm run build failed");
  return join(REPO_ROOT, "dist/bunker");
}

/** A Lua string with no escaping: a long bracket whose level the text does not close. */
function luaLong(s: string): string {
  let eq = "";
  while (s.includes(`]${eq}]`)) eq += "=";
  return `[${eq}[${s}]${eq}]`;
}

/** A wrk script sending the requests in turn (each wrk thread keeps its own turn). */
function rotation(requests: { method: string; path: string; headers: Record<string, string>; body?: string }[]): string {
  const formatted = requests.map((r) => {
    const headers = Object.entries(r.headers).map(([k, v]) => `[ ${luaLong(k)} ] = ${luaLong(v)}`).join(", ");
    return `  wrk.format(${luaLong(r.method)}, ${luaLong(r.path)}, { ${headers} }, ${r.body === undefined ? "nil" : luaLong(r.body)}),`;
  });
  return ["local requests", "init = function()", "  requests = {", ...formatted, "  }", "end", "local turn = 0", "request = function()", "  turn = turn % #requests + 1", "  return requests[turn]", "end"].join("\n");
}

/** Everything the mixed load needs, made over HTTP: returns the requests it sends in turn. */
async function fixtures(url: string) {
  const ok = (r: { status: number; body: any }, what: string) => {
    if (r.status >= 300) throw new Error(`${what}: ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
    return r.body;
  };
  const slug = "bench-footprint";
  const { session, workspaceId } = await benchOwner(url, slug);
  const key = ok(await api(url, "POST", `/platform/v1/workspaces/${slug}/api-keys`, { token: session, body: { name: "footprint", policy: [{ effect: "allow", actions: ["*"], resources: ["*"] }] } }), "api key").key as string;
  const T = "/tack/api/v1/workspaces";
  ok(await api(url, "POST", T, { token: key, body: { name: "acme" } }), "tack workspace");
  ok(await api(url, "POST", `${T}/acme/projects`, { token: key, body: { name: "web", lists: [{ name: "todo" }] } }), "tack project");
  const community = ok(await api(url, "POST", `/social/v1/workspaces/${workspaceId}/communities`, { token: key, body: { slug: "footprint", display_name: "Footprint" } }), "community").id as string;
  const S = `/social/v1/communities/${community}`;
  const actor = ok(await api(url, "POST", `${S}/actors/batch`, { token: key, body: { actors: [{ external_id: "writer", display_name: "Writer" }] } }), "actor").data[0].actor.id as string;
  const app = ok(await api(url, "POST", "/auth/v1/apps", { token: session, body: { workspace_id: workspaceId, slug: "footprint-app", display_name: "Footprint" } }), "auth app");
  const user = ok(await api(url, "POST", "/auth/footprint-app/v1/auth/signup", { token: app.publishable_key, body: { username: "reader", email: "reader@bench.test", password: "bench-password-123" } }), "end user");
  const bearer = (t: string) => ({ authorization: `Bearer ${t}` });
  const json = { "content-type": "application/json" };
  return [
    { method: "GET", path: "/healthz", headers: {} },
    { method: "GET", path: `/platform/v1/workspaces/${slug}`, headers: bearer(key) },
    { method: "GET", path: "/auth/footprint-app/v1/me", headers: bearer(user.access_token) },
    { method: "POST", path: `${T}/acme/projects/web/cards`, headers: { ...bearer(key), ...json }, body: JSON.stringify({ title: "Footprint card", body: "Created under **wrk**", priority: "medium", list: "todo" }) },
    { method: "POST", path: `${S}/posts`, headers: { ...bearer(key), ...json }, body: JSON.stringify({ actor_id: actor, body: "footprint post #bench" }) },
  ];
}

export default async function footprint(_args: string[]) {
  const starts = Math.floor(envNumber("BENCH_STARTS", 10, 1));
  const idleMs = envNumber("BENCH_IDLE_MS", 2000, 0);
  const seconds = envNumber("BENCH_SECONDS", 5, 1);
  const ws = wrkSettings();
  watchdog((600 + starts * 3 * (idleMs / 1000 + 20) + 4 * seconds) * 1000, "bench footprint");
  const m = machine();
  console.log(`bench footprint: ${m.cores} cores (${m.cpuModel}), bun ${m.bun}, ${m.platform}, load average ${loadavg().map((x) => x.toFixed(2)).join(" ")}`);

  const dir = tempDir("bunker-bench-footprint-");
  const vm = join(dir, "vm");
  mkdirSync(vm);
  const bunker = join(vm, "bunker");
  copyFileSync(binary(), bunker);
  const hello = compileBaseline(dir);
  console.log(`binary ${bunker}; baseline ${hello} (bun build --compile of a bare Bun.serve)\n`);

  const env = (dataDir: string, port: number): Record<string, string> => ({
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: vm,
    DATA_DIR: dataDir,
    HOST: "127.0.0.1",
    PORT: String(port),
    SMTP_PORT: String(freePort()),
    PUBLIC_URL: `http://127.0.0.1:${port}`,
    LOG_LEVEL: "warn",
    CONSOLE_SIGNUP: "open",
    TACK_RATE_WRITES: "0",
    TACK_RATE_READS: "0",
    TACK_RATE_BATCH: "0",
  });
  let fresh = 0;
  const existing = join(dir, "data-existing");
  const startBunker = (dataDir: () => string) => {
    const port = freePort();
    return startProcess([bunker, "serve"], vm, env(dataDir(), port), port);
  };
  const startHello = () => {
    const port = freePort();
    return startProcess([hello], dir, { PATH: process.env.PATH ?? "/usr/bin:/bin", PORT: String(port) }, port);
  };
  // The existing DATA_DIR: database, master key and migrations made by one unmeasured start.
  await (await startBunker(() => existing)).stop();

  const kinds: StartKind[] = [
    { name: "bunker, empty DATA_DIR", start: () => startBunker(() => join(dir, `data-fresh-${++fresh}`)), ready: [], cpu: [], rss: [] },
    { name: "bunker, existing DATA_DIR", start: () => startBunker(() => existing), ready: [], cpu: [], rss: [] },
    { name: "bare Bun.serve (compiled)", start: startHello, ready: [], cpu: [], rss: [] },
  ];
  for (let i = 0; i < starts; i++) {
    process.stdout.write(`start ${i + 1}/${starts}:`);
    for (const k of kinds) {
      const s = await k.start();
      await sleep(idleMs);
      k.ready.push(s.readyMs);
      k.cpu.push(s.cpuMs);
      k.rss.push(memoryMiB(s.pid, "VmRSS"));
      await s.stop();
      process.stdout.write(` ${k.name.split(",")[0]} ${s.readyMs.toFixed(0)} ms`);
    }
    process.stdout.write("\n");
  }
  const p90 = (xs: number[]) => percentile([...xs].sort((a, b) => a - b), 90);
  const base = kinds[2]!;
  console.log(
    "\n" +
      table(
        ["start", "ready p50 ms", "ready p90 ms", "CPU to ready ms (p50)", "idle RSS MiB (p50)", "x baseline ready", "x baseline RSS"],
        kinds.map((k) => [
          k.name,
          fmtNum(median(k.ready), 1),
          fmtNum(p90(k.ready), 1),
          fmtNum(median(k.cpu)),
          fmtNum(median(k.rss), 1),
          k === base ? "" : (median(k.ready) / median(base.ready)).toFixed(1),
          k === base ? "" : (median(k.rss) / median(base.rss)).toFixed(1),
        ]),
        [false, true, true, true, true, true, true],
      ),
  );
  console.log(`  ${starts} starts of each, interleaved; ready = spawn -> first 200 from GET /healthz; idle RSS ${idleMs} ms after ready.\n`);

  // ---- the mixed load
  const server = await startBunker(() => existing);
  const helloServer = await startHello();
  try {
    const requests = await fixtures(server.url);
    const lua = rotation(requests);
    console.log(`mixed load: wrk -t${ws.threads} -c${ws.connections} ${seconds} s over ${requests.map((r) => `${r.method} ${r.path.replace(/\/[0-9a-f-]{36}/g, "/{id}")}`).join(", ")}`);
    const run = async (name: string, s: Started) => {
      const before = memoryMiB(s.pid, "VmRSS");
      const r = await wrkRunScript(lua, { baseUrl: s.url, path: "/healthz", threads: ws.threads, connections: ws.connections, durationSec: seconds, serverPid: s.pid });
      return { name, r, before, after: memoryMiB(s.pid, "VmRSS"), peak: memoryMiB(s.pid, "VmHWM") };
    };
    const loaded = [await run("bunker", server), await run("bare Bun.serve (compiled)", helloServer)];
    const rows = loaded.map((x) => [x.name, fmtNum(x.r.rps), String(x.r.errors), fmtNum(x.before, 1), fmtNum(x.after, 1), fmtNum(x.peak, 1)]);
    console.log("\n" + table(["server", "req/s", "errors", "RSS before MiB", "RSS after MiB", "peak RSS MiB"], rows, [false, true, true, true, true, true]));
    console.log(`  RSS after the load: ${(loaded[0]!.after / loaded[1]!.after).toFixed(1)} x the baseline's; errors are answers >= 400 and socket errors.`);
  } finally {
    await server.stop();
    await helloServer.stop();
  }
}
