/**
 * `npm run bench -- auth`: the end-user Auth service's hot paths, each as a ratio to a bare
 * Bun.serve hello-world measured in the same run with the same client, and sign-in against
 * the argon2id ceiling (cores / one verify's time, also measured in this run).
 *
 *   baseline          GET /                                      bare Bun.serve, own process
 *   verify            POST /auth/{slug}/v1/verify                JSON {token}: a valid end-user access token
 *   introspect        POST /auth/{slug}/v1/oauth/introspect      form token=...: the same token (RFC 7662)
 *   refresh           POST /auth/{slug}/v1/auth/refresh          S sessions in parallel, each chaining its
 *                                                                 rotated refresh tokens (the next request
 *                                                                 sends the token the last one returned)
 *   sign-in           POST /auth/{slug}/v1/auth/signin           distinct end users, each used <= 5 times
 *                                                                 (the burst limit is 5 a minute per identifier)
 *
 * Targets (2 cores): token verification (verify, introspect) >= 30% of the baseline; sign-in
 * >= 80% of the hashing ceiling. Refresh is reported against the baseline without a target.
 * This is a report: it prints PASS/BELOW and exits 0 either way.
 *
 * How it is measured: Bunker runs as its own process (`bun src/main.ts serve`, fresh
 * DATA_DIR, production argon2 cost); fixtures are made over HTTP like a customer would.
 * verify, introspect and sign-in use lib.ts's closed-loop generator with the client setup
 * that gave the highest baseline. Refresh cannot replay a fixed request list (every answer
 * carries the next token), so it runs its own closed loop on the bench's main thread; its
 * baseline ratio is therefore against a (possibly) different client setup: see the note.
 *
 * Environment: BENCH_SECONDS (per target, default 5), BENCH_WARMUP (default 1),
 * BENCH_CLIENT (auto | inline | workers:<n>), BENCH_CONCURRENCY (verify/introspect, default 64),
 * BENCH_REFRESH_SESSIONS (parallel refresh chains, default 16), BENCH_SIGNIN_CONCURRENCY (default 8).
 */
import {
  ARGON2,
  BENCH_PASSWORD,
  api,
  benchOwner,
  benchPrelude,
  describeClient,
  envNumber,
  fmtNum,
  hashingCeiling,
  load,
  machine,
  mapLimit,
  measureBaseline,
  nowAbs,
  percentile,
  probe,
  sampleCpu,
  startBunker,
  table,
  type LoadResult,
  type RequestSpec,
} from "./lib";

const VERIFY_TARGET = 0.3;
const SIGNIN_TARGET = 0.8;
/** The sign-in burst limit: 5 attempts a minute per identifier. */
const SIGNIN_USES_PER_USER = 5;
const PASSWORD = BENCH_PASSWORD;

interface Row {
  name: string;
  result: LoadResult | null;
  reference: number | null;
  target: number | null;
  note?: string;
}

/**
 * Closed loop over refresh-token chains: `tokens.length` loops, each sending its current
 * refresh token and continuing with the one the answer carries. A failed answer ends that
 * chain (counted as an error), so a broken rotation cannot spin at full speed.
 */
async function refreshChains(base: string, path: string, tokens: string[], warmupSec: number, durationSec: number, serverPid: number): Promise<LoadResult> {
  const t0 = performance.now();
  const tMeasure = t0 + warmupSec * 1000;
  const tEnd = tMeasure + durationSec * 1000;
  const latencies: number[] = [];
  const statuses: Record<string, number> = {};
  let errors = 0;
  let firstError: string | null = null;
  const cpu = sampleCpu(serverPid, nowAbs() + warmupSec * 1000, nowAbs() + (warmupSec + durationSec) * 1000);
  const chain = async (token: string) => {
    while (performance.now() < tEnd) {
      const start = performance.now();
      let status = 0;
      let next: string | null = null;
      try {
        const r = await fetch(base + path, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ refresh_token: token }), signal: AbortSignal.timeout(30_000) });
        const body = (await r.json().catch(() => null)) as { refresh_token?: string } | null;
        status = r.status;
        next = r.ok && typeof body?.refresh_token === "string" ? body.refresh_token : null;
        if (!next && firstError === null) firstError = `${status} ${JSON.stringify(body).slice(0, 200)}`;
      } catch (e) {
        if (firstError === null) firstError = String((e as Error)?.message ?? e);
      }
      const end = performance.now();
      if (end >= tMeasure && end <= tEnd) {
        latencies.push(end - start);
        statuses[status] = (statuses[status] ?? 0) + 1;
        if (!next) errors++;
      }
      if (!next) return;
      token = next;
    }
  };
  await Promise.all(tokens.map(chain));
  const sorted = Float64Array.from(latencies).sort();
  return {
    rps: latencies.length / durationSec,
    completed: latencies.length,
    errors,
    statuses,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    seconds: durationSec,
    exhausted: false,
    firstError,
    ...cpu.result(),
  };
}

export default async function authBench(_args: string[]) {
  const { seconds, warmup, readConc, signinConc, m } = benchPrelude("auth", 180);
  const refreshSessions = Math.floor(envNumber("BENCH_REFRESH_SESSIONS", 16, 1));

  // 1. The hashing ceiling, measured while nothing else runs.
  const { verifyMs, ceiling } = await hashingCeiling(m.cores);

  // 2. Baseline, and the client setup every fixed-list target then uses.
  const { client, base } = await measureBaseline({ concurrency: readConc, warmupSec: warmup, durationSec: seconds });

  // 3. Bunker, and its fixtures over HTTP: an owner, a workspace, an App, end users.
  process.stdout.write("starting bunker ... ");
  const server = await startBunker();
  console.log(`pid ${server.pid} at ${server.url}`);
  const rows: Row[] = [];
  try {
    const U = server.url;
    const { session, workspaceId } = await benchOwner(U, "bench-ws");
    const slug = "bench-app";
    const created = await api(U, "POST", "/auth/v1/apps", { token: session, body: { workspace_id: workspaceId, slug, display_name: "Bench App" } });
    if (created.status !== 201) throw new Error(`App create failed: ${created.status} ${JSON.stringify(created.body)}`);
    const pk: string = created.body.publishable_key;
    const appPath = (p: string) => `/auth/${slug}/v1${p}`;

    // End users: enough that none signs in more than 5 times (warm-up included), with 50%
    // headroom over the ceiling. Sign-up hashes too, so it runs 4 at a time. Each sign-up
    // also starts a session: the first ones feed the refresh chains.
    const nUsers = Math.max(60, refreshSessions, Math.ceil((ceiling * (warmup + seconds) * 1.5) / SIGNIN_USES_PER_USER));
    process.stdout.write(`fixtures: workspace, App, ${nUsers} end users ... `);
    const t0 = performance.now();
    const users = await mapLimit(Array.from({ length: nUsers }, (_, i) => i), 4, async (i) => {
      const username = `bench_u${i}`;
      const r = await api(U, "POST", appPath("/auth/signup"), { token: pk, body: { username, email: `u${i}@bench.test`, password: PASSWORD } });
      if (r.status !== 200) throw new Error(`end-user signup of ${username} failed: ${r.status} ${JSON.stringify(r.body)}`);
      return { username, access: r.body.access_token as string, refresh: r.body.refresh_token as string };
    });
    console.log(`${((performance.now() - t0) / 1000).toFixed(1)} s`);
    const token = users[0].access;

    // Token verification: both routes, the same valid end-user token.
    const checks: { name: string; spec: RequestSpec; ok: (b: any) => boolean }[] = [
      {
        name: "verify",
        spec: { method: "POST", path: appPath("/verify"), headers: { "content-type": "application/json" }, body: JSON.stringify({ token }) },
        ok: (b) => b?.valid === true && typeof b?.claims?.sub === "string",
      },
      {
        name: "introspect",
        spec: { method: "POST", path: appPath("/oauth/introspect"), headers: { "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams({ token }).toString() },
        ok: (b) => b?.active === true,
      },
    ];
    for (const c of checks) {
      const problem = await probe(U, c.spec, c.ok);
      if (problem) {
        rows.push({ name: c.name, result: null, reference: base.rps, target: VERIFY_TARGET, note: `not measured: ${problem}` });
        continue;
      }
      process.stdout.write(`${c.name} ... `);
      const res = await load({ baseUrl: U, requests: [c.spec], concurrency: readConc, warmupSec: warmup, durationSec: seconds, client, serverPid: server.pid });
      console.log(`${fmtNum(res.rps)}/s`);
      rows.push({ name: c.name, result: res, reference: base.rps, target: VERIFY_TARGET });
    }

    // Refresh: parallel chains of rotated tokens, one per sign-up session.
    process.stdout.write(`refresh (${refreshSessions} chains) ... `);
    const rf = await refreshChains(U, appPath("/auth/refresh"), users.slice(0, refreshSessions).map((u) => u.refresh), warmup, seconds, server.pid);
    console.log(`${fmtNum(rf.rps)}/s`);
    rows.push({
      name: "refresh",
      result: rf,
      reference: base.rps,
      target: null,
      note: `own closed loop on the bench main thread (${refreshSessions} chains); the baseline ratio compares against the ${describeClient(client)} client`,
    });

    // Sign-in: user-major order repeated 5 times, so consecutive uses of one identifier are
    // nUsers requests apart; each entry is sent at most once.
    const signins: RequestSpec[] = [];
    for (let round = 0; round < SIGNIN_USES_PER_USER; round++) {
      for (const u of users) signins.push({ method: "POST", path: appPath("/auth/signin"), headers: { "content-type": "application/json" }, body: JSON.stringify({ identifier: u.username, password: PASSWORD }) });
    }
    process.stdout.write("sign-in ... ");
    const si = await load({ baseUrl: U, requests: signins, cycle: false, concurrency: signinConc, warmupSec: warmup, durationSec: seconds, client, serverPid: server.pid });
    console.log(`${fmtNum(si.rps, 1)}/s`);
    rows.push({ name: "sign-in", result: si, reference: ceiling, target: SIGNIN_TARGET, note: si.exhausted ? `user list ran out after ${si.seconds.toFixed(1)} s (rate over that window)` : undefined });
  } finally {
    await server.stop();
  }

  // 4. Report.
  const cell = (r: LoadResult | null, f: (r: LoadResult) => string) => (r ? f(r) : "-");
  const all: Row[] = [{ name: "baseline (Bun.serve)", result: base, reference: null, target: null }, ...rows];
  const body = all.map((row) => {
    const r = row.result;
    const ratio = r && row.reference ? r.rps / row.reference : null;
    const verdict = row.target === null ? "" : ratio === null ? "N/A" : ratio >= row.target ? "PASS" : "BELOW";
    return [
      row.name,
      cell(r, (x) => fmtNum(x.rps, x.rps < 1000 ? 1 : 0)),
      cell(r, (x) => x.p50.toFixed(2)),
      cell(r, (x) => x.p99.toFixed(2)),
      cell(r, (x) => String(x.errors)),
      cell(r, (x) => (x.serverCores === null ? "-" : x.serverCores.toFixed(2))),
      cell(r, (x) => (x.serverCores === null || !x.completed ? "-" : fmtNum((x.serverCores * x.seconds * 1e6) / x.completed))),
      cell(r, (x) => (x.clientCores === null ? "-" : x.clientCores.toFixed(2))),
      cell(r, (x) => (x.otherCores === null ? "-" : x.otherCores.toFixed(2))),
      ratio === null ? (row.reference === null && r ? "1.00" : "-") : ratio.toFixed(2),
      row.target === null ? "" : `≥ ${row.target.toFixed(2)}`,
      verdict,
    ];
  });
  console.log(
    "\n" +
      table(
        ["target", "req/s", "p50 ms", "p99 ms", "errors", "srv cores", "srv µs/req", "cli cores", "other", "ratio", "target", "result"],
        body,
        [false, true, true, true, true, true, true, true, true, true, false, false],
      ),
  );
  console.log(`
ratio: verify, introspect, refresh and the baseline against the baseline's req/s; sign-in against the argon2id
  ceiling (${m.cores} cores / ${verifyMs.toFixed(1)} ms per verify = ${fmtNum(ceiling, 1)}/s, argon2id m=${ARGON2.memoryCost} KiB t=${ARGON2.timeCost}).
client: ${describeClient(client)} in the bench process; verify/introspect at concurrency ${readConc}, sign-in at ${signinConc};
  refresh: ${refreshSessions} chains on the main thread. Client and server share this machine's ${m.cores} cores, so the
  baseline is bounded by the client as much as by Bun.serve. CPU over each window, in cores: "srv" the server
  process, "cli" this bench process, "other" everything else on the machine (noise).
errors: non-2xx answers and transport failures in the window.${all.some((r) => r.result && r.result.errors) ? "" : " (none)"}`);
  const noisy = all.filter((r) => (r.result?.otherCores ?? 0) > 0.15).map((r) => r.name);
  if (noisy.length) console.log(`WARNING: other processes used CPU during: ${noisy.join(", ")}; those numbers are unreliable, rerun on a quiet machine.`);
  for (const row of all) {
    if (row.note) console.log(`note ${row.name}: ${row.note}`);
    const r = row.result;
    if (r && r.errors) console.log(`note ${row.name}: statuses ${JSON.stringify(r.statuses)}${r.firstError ? `, first error: ${r.firstError}` : ""}`);
  }
}
