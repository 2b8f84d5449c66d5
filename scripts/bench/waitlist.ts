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
import {
  api,
  benchOwner,
  benchPrelude,
  fmtNum,
  vsBunServe,
  median,
  startBaseline,
  startBunker,
  wrkFootnote,
  wrkRunScript,
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
`;
}

let runSeq = 0;

function wrkSignups(o: { baseUrl: string; path: string; codes: string[]; threads: number; connections: number; durationSec: number; serverPid: number }): Promise<LoadResult> {
  return wrkRunScript(signupScript(o.path, o.codes, `${Date.now().toString(36)}${++runSeq}`), o);
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
    const res = await vsBunServe(baseline, [{ name: "GET public config", baseUrl: bunker.url, spec: { method: "GET", path: pub }, serverPid: bunker.pid }, signups], ws, seconds, warmup);
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
