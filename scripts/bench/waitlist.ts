/**
 * `npm run bench -- waitlist`: issue 16 "Speed", against a real Bunker server (subprocess,
 * SQLite), everything on 127.0.0.1, interleaved with a bare Bun.serve hello-world (same run,
 * same wrk settings) for the ratios:
 *
 * (a) public sign-ups: POST /waitlist/v1/waitlists/{ws}/{slug}/entries under wrk, every request
 *     a new address (a Lua counter per wrk thread), one in two carrying the referral code of
 *     one of 50 earlier entries. Rate limits raised by configuration
 *     (WAITLIST_SIGNUPS_PER_IP_PER_MINUTE and the waitlist's signups_per_minute). Every
 *     answer must be 201. Target >= 3,000 sign-ups/s.
 * (b) public GET /waitlist/v1/waitlists/{ws}/{slug} (the landing page's configuration).
 *     Target >= 50% of bare Bun.serve.
 *
 * Environment: BENCH_SECONDS (5), BENCH_WARMUP (1), BENCH_ROUNDS (3), BENCH_THREADS /
 * BENCH_CONNECTIONS (wrk, 2 / 64). Report only; exits 0 whether targets are met or not.
 */
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  api,
  benchOwner,
  benchPrelude,
  ensureWrk,
  fmtNum,
  interleaved,
  machineBusySeconds,
  median,
  procCpuSeconds,
  startBaseline,
  startBunker,
  tempDir,
  wrkFootnote,
  wrkSettings,
  wrkTable,
  type LoadResult,
  type LocalTarget,
} from "./lib";

/** wrk script: each request a new email (thread id + counter + run tag), every other one with a referral code. */
function signupScript(path: string, codes: string[], tag: string): string {
  return `
local codes = { ${codes.map((c) => `"${c}"`).join(", ")} }
local counter = 0
local tid = 0
local threads = {}
local next_id = 1
function setup(thread)
  thread:set("tid", next_id)
  next_id = next_id + 1
end
function init(args)
  tid = wrk.thread:get("tid") or 0
end
request = function()
  counter = counter + 1
  local ref = ""
  if counter % 2 == 0 then ref = ', "referral_code": "' .. codes[(counter % #codes) + 1] .. '"' end
  local body = '{"email": "u${tag}-' .. tid .. '-' .. counter .. '@example.com", "name": "Bench ' .. counter .. '", "utm": {"source": "bench"}' .. ref .. '}'
  return wrk.format("POST", "${path}", { ["content-type"] = "application/json" }, body)
end
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format("BENCH_RESULT %d %d %d %d %d %d\\n", summary.requests, summary.duration, e.status, e.connect + e.read + e.write + e.timeout, latency:percentile(50), latency:percentile(99)))
end
`;
}

let runSeq = 0;

async function wrkSignups(o: { baseUrl: string; path: string; codes: string[]; threads: number; connections: number; durationSec: number; serverPid: number }): Promise<LoadResult> {
  const dir = tempDir("bunker-bench-wl-");
  const script = join(dir, "signup.lua");
  writeFileSync(script, signupScript(o.path, o.codes, `${Date.now().toString(36)}${++runSeq}`));
  const secs = Math.max(1, Math.round(o.durationSec));
  const s0 = procCpuSeconds(o.serverPid);
  const m0 = machineBusySeconds();
  const t0 = performance.now();
  const proc = Bun.spawn([ensureWrk(), "-t", String(o.threads), "-c", String(o.connections), "-d", `${secs}s`, "--timeout", "10s", "-s", script, o.baseUrl + o.path], { stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
  await proc.exited;
  const wall = (performance.now() - t0) / 1000;
  const s1 = procCpuSeconds(o.serverPid);
  const m1 = machineBusySeconds();
  rmSync(dir, { recursive: true, force: true });
  const m = /BENCH_RESULT (\d+) (\d+) (\d+) (\d+) (\d+) (\d+)/.exec(stdout);
  if (!m) throw new Error(`wrk gave no result (exit ${proc.exitCode}): ${stderr.trim() || stdout.trim()}`);
  const [requests, durationUs, non2xx, sockErrors, p50us, p99us] = m.slice(1).map(Number) as [number, number, number, number, number, number];
  const seconds = durationUs / 1e6;
  const usage = proc.resourceUsage();
  const clientCpu = usage ? (Number(usage.cpuTime.user) + Number(usage.cpuTime.system)) / 1e6 : null;
  const serverCores = s0 !== null && s1 !== null ? (s1 - s0) / wall : null;
  const clientCores = clientCpu !== null ? clientCpu / wall : null;
  const busy = m0 !== null && m1 !== null ? (m1 - m0) / wall : null;
  return {
    rps: requests / seconds,
    completed: requests,
    errors: non2xx + sockErrors,
    statuses: { non2xx, socket_errors: sockErrors },
    p50: p50us / 1000,
    p99: p99us / 1000,
    seconds,
    exhausted: false,
    firstError: non2xx + sockErrors ? `${non2xx} non-2xx answers, ${sockErrors} socket errors` : null,
    serverCores,
    clientCores,
    otherCores: busy !== null && serverCores !== null && clientCores !== null ? Math.max(0, busy - serverCores - clientCores) : null,
  };
}

export default async function waitlistBench(_args: string[]) {
  const ws = wrkSettings();
  const { seconds, warmup, m } = benchPrelude("waitlist", 60, ws.rounds * 3);
  const baseline = await startBaseline();
  const bunker = await startBunker({ env: { WAITLIST_SIGNUPS_PER_IP_PER_MINUTE: "1000000" } });
  try {
    console.log(`bunker pid ${bunker.pid} (SQLite), baseline pid ${baseline.pid}`);
    const { session, workspaceId } = await benchOwner(bunker.url, "bench");
    const created = await api(bunker.url, "POST", `/waitlist/v1/workspaces/${workspaceId}/waitlists`, {
      token: session,
      body: { slug: "launch", display_name: "Launch", description: "The bench waitlist", settings: { signups_per_minute: 1_000_000, referral_boost: 2, custom_fields: [{ name: "company", type: "text" }] } },
    });
    if (created.status !== 201) throw new Error(`waitlist: ${created.status} ${JSON.stringify(created.body)}`);
    const base = `/waitlist/v1/workspaces/${workspaceId}/waitlists/${created.body.id}`;
    const open = await api(bunker.url, "PATCH", `${base}/status`, { token: session, body: { status: "open" } });
    if (open.status !== 200) throw new Error(`open: ${open.status} ${JSON.stringify(open.body)}`);
    const pub = "/waitlist/v1/waitlists/bench/launch";
    const codes: string[] = [];
    for (let i = 0; i < 50; i++) {
      const r = await api(bunker.url, "POST", `${pub}/entries`, { body: { email: `referrer${i}@example.com` } });
      if (r.status !== 201) throw new Error(`referrer: ${r.status} ${JSON.stringify(r.body)}`);
      codes.push(r.body.referral_code);
    }
    const g = await api(bunker.url, "GET", pub);
    if (g.status !== 200) throw new Error(`public GET: ${g.status} ${JSON.stringify(g.body)}`);
    console.log(`setup done: waitlist open, 50 referrers\n`);

    const signups: LocalTarget = {
      name: "POST sign-up",
      run: (durationSec) => wrkSignups({ baseUrl: bunker.url, path: `${pub}/entries`, codes, threads: ws.threads, connections: ws.connections, durationSec, serverPid: bunker.pid }),
    };
    const res = await interleaved({
      baseline: { name: "baseline (Bun.serve)", baseUrl: baseline.url, spec: { method: "GET", path: "/" }, serverPid: baseline.pid },
      targets: [{ name: "GET public config", baseUrl: bunker.url, spec: { method: "GET", path: pub }, serverPid: bunker.pid }, signups],
      rounds: ws.rounds,
      warmupSec: warmup,
      durationSec: seconds,
      threads: ws.threads,
      connections: ws.connections,
    });
    console.log("\n" + wrkTable(res.baseline, [{ result: res.targets[0]!, what: "public GET", target: 0.5 }, { result: res.targets[1]!, what: "sign-ups", target: null }]));
    console.log("\n" + wrkFootnote(ws, seconds, warmup, m));
    const count = await api(bunker.url, "GET", `${base}/entries/count`, { token: session });
    const getRatio = median(res.targets[0]!.ratios);
    const signupRate = median(res.targets[1]!.runs.map((r) => (r.completed - r.errors) / r.seconds));
    const errors = res.targets[1]!.runs.reduce((s, r) => s + r.errors, 0);
    const pass = (ok: boolean) => (ok ? "PASS" : "BELOW");
    console.log(`
Speed (issue 16), ${m.cores} cores (${m.cpuModel}), bun ${m.bun}:
  (a) public sign-ups/s (201s, half with a referral code): ${fmtNum(signupRate)}/s   target >= 3,000/s  ${pass(signupRate >= 3000)}   (${errors} non-201 or socket errors)
  (b) public GET vs bare Bun.serve:                      ${getRatio.toFixed(2)}   target >= 0.50     ${pass(getRatio >= 0.5)}
  entries at the end: ${fmtNum(count.body.total)} (pending ${fmtNum(count.body.pending)}); wrk, the server and the baseline share the machine's ${m.cores} cores.`);
  } finally {
    await bunker.stop();
    await baseline.stop();
  }
}
