/**
 * `npm run bench -- platform`: requests/s of the platform's hot paths, each as a ratio to a
 * bare Bun.serve hello-world measured in the same run with the same client, and sign-in
 * against the argon2id ceiling (cores / one verify's time, also measured in this run).
 *
 *   baseline             GET /                                    bare Bun.serve, own process
 *   introspect api-key   POST /platform/v1/introspect/api-key     Bearer svc_live_...
 *   introspect session   GET  /platform/v1/introspect             Bearer <session access token>
 *   workspace read (key) GET  /platform/v1/workspaces/{slug}      Bearer svc_live_... (policy: workspace.read)
 *   sign-in              POST /platform/v1/auth/signin            distinct accounts, each used <= 5 times
 *
 * Targets (2 cores): authenticated reads >= 40% of the baseline; sign-in >= 80% of the
 * hashing ceiling. This is a report: it prints PASS/BELOW and exits 0 either way.
 *
 * Environment: BENCH_SECONDS (per target, default 5), BENCH_WARMUP (default 1),
 * BENCH_CLIENT (auto | inline | workers:<n>, default auto: the setup with the highest
 * baseline), BENCH_CONCURRENCY (reads, default 64), BENCH_SIGNIN_CONCURRENCY (default 8).
 */
import {
  ARGON2,
  BENCH_PASSWORD,
  api,
  benchOwner,
  benchPrelude,
  describeClient,
  fmtNum,
  hashingCeiling,
  load,
  machine,
  mapLimit,
  measureBaseline,
  startBunker,
  table,
  type LoadResult,
  type RequestSpec,
} from "./lib";

const READ_TARGET = 0.4;
const SIGNIN_TARGET = 0.8;
/** The sign-in burst limit: 5 attempts a minute per identifier. */
const SIGNIN_USES_PER_ACCOUNT = 5;
const PASSWORD = BENCH_PASSWORD;

interface Row {
  name: string;
  what: string;
  result: LoadResult | null;
  reference: number | null;
  target: number | null;
  note?: string;
}

async function expectOk(base: string, spec: RequestSpec, what: string): Promise<string | null> {
  const r = await fetch(base + spec.path, { method: spec.method, headers: spec.headers, body: spec.body, signal: AbortSignal.timeout(30_000) });
  const text = await r.text();
  return r.ok ? null : `${what}: ${spec.method} ${spec.path} answered ${r.status} ${text.slice(0, 200)}`;
}

export default async function platformBench(_args: string[]) {
  const { seconds, warmup, readConc, signinConc, m } = benchPrelude("platform", 120);

  // 1. The hashing ceiling, measured while nothing else runs.
  const { verifyMs, ceiling } = await hashingCeiling(m.cores);

  // 2. Baseline, and the client setup every target then uses.
  const { client, base } = await measureBaseline({ concurrency: readConc, warmupSec: warmup, durationSec: seconds });

  // 3. Bunker, and its fixtures over HTTP.
  process.stdout.write("starting bunker ... ");
  const server = await startBunker();
  console.log(`pid ${server.pid} at ${server.url}`);
  const rows: Row[] = [];
  try {
    const U = server.url;
    const slug = "bench-ws";
    const { session } = await benchOwner(U, slug);

    let apiKey: string | null = null;
    let keyProblem: string | null = null;
    const k = await api(U, "POST", `/platform/v1/workspaces/${slug}/api-keys`, {
      token: session,
      body: { name: "bench", policy: [{ effect: "allow", actions: ["workspace.read"], resources: ["*"] }] },
    });
    if (k.status === 201 && typeof k.body?.key === "string") apiKey = k.body.key;
    else keyProblem = `minting an API key failed: ${k.status} ${JSON.stringify(k.body).slice(0, 200)}`;

    // Sign-in accounts: enough that none is used more than 5 times (warm-up included),
    // with 50% headroom over the ceiling. Sign-up hashes too, so it runs 4 at a time.
    const signinBudget = Math.ceil(ceiling * (warmup + seconds) * 1.5);
    const nAccounts = Math.max(60, Math.ceil(signinBudget / SIGNIN_USES_PER_ACCOUNT));
    process.stdout.write(`fixtures: workspace, API key, ${nAccounts} sign-in accounts ... `);
    const t0 = performance.now();
    const accounts = await mapLimit(Array.from({ length: nAccounts }, (_, i) => i), 4, async (i) => {
      const username = `bench_u${i}`;
      const r = await api(U, "POST", "/platform/v1/auth/signup", { body: { email: `u${i}@bench.test`, username, password: PASSWORD } });
      if (r.status !== 200) throw new Error(`signup of ${username} failed: ${r.status} ${JSON.stringify(r.body)}`);
      return username;
    });
    console.log(`${((performance.now() - t0) / 1000).toFixed(1)} s`);

    const json = { "content-type": "application/json" };
    const reads: { name: string; what: string; spec: RequestSpec | null; problem: string | null }[] = [
      {
        name: "introspect api-key",
        what: "POST /platform/v1/introspect/api-key (svc_live_ key)",
        spec: apiKey ? { method: "POST", path: "/platform/v1/introspect/api-key", headers: { authorization: `Bearer ${apiKey}` } } : null,
        problem: keyProblem,
      },
      {
        name: "introspect session",
        what: "GET /platform/v1/introspect (session token)",
        spec: { method: "GET", path: "/platform/v1/introspect", headers: { authorization: `Bearer ${session}` } },
        problem: null,
      },
      {
        name: "workspace read (key)",
        what: `GET /platform/v1/workspaces/${slug} (svc_live_ key, policy workspace.read)`,
        spec: apiKey ? { method: "GET", path: `/platform/v1/workspaces/${slug}`, headers: { authorization: `Bearer ${apiKey}` } } : null,
        problem: keyProblem,
      },
    ];
    for (const r of reads) {
      if (!r.spec) {
        rows.push({ name: r.name, what: r.what, result: null, reference: base.rps, target: READ_TARGET, note: r.problem ?? "not available" });
        continue;
      }
      const problem = await expectOk(U, r.spec, r.name);
      if (problem) {
        rows.push({ name: r.name, what: r.what, result: null, reference: base.rps, target: READ_TARGET, note: problem });
        continue;
      }
      process.stdout.write(`${r.name} ... `);
      const res = await load({ baseUrl: U, requests: [r.spec], concurrency: readConc, warmupSec: warmup, durationSec: seconds, client, serverPid: server.pid });
      console.log(`${fmtNum(res.rps)}/s`);
      rows.push({ name: r.name, what: r.what, result: res, reference: base.rps, target: READ_TARGET });
    }

    // Sign-in: account-major order repeated 5 times, so consecutive uses of one identifier
    // are nAccounts requests apart; each entry is sent at most once.
    const signins: RequestSpec[] = [];
    for (let round = 0; round < SIGNIN_USES_PER_ACCOUNT; round++) {
      for (const u of accounts) signins.push({ method: "POST", path: "/platform/v1/auth/signin", headers: json, body: JSON.stringify({ identifier: u, password: PASSWORD }) });
    }
    process.stdout.write("sign-in ... ");
    const si = await load({ baseUrl: U, requests: signins, cycle: false, concurrency: signinConc, warmupSec: warmup, durationSec: seconds, client, serverPid: server.pid });
    console.log(`${fmtNum(si.rps, 1)}/s`);
    rows.push({
      name: "sign-in",
      what: "POST /platform/v1/auth/signin (vs argon2id ceiling)",
      result: si,
      reference: ceiling,
      target: SIGNIN_TARGET,
      note: si.exhausted ? `account list ran out after ${si.seconds.toFixed(1)} s (rate over that window)` : undefined,
    });
  } finally {
    await server.stop();
  }

  // 4. Report.
  const cell = (r: LoadResult | null, f: (r: LoadResult) => string) => (r ? f(r) : "-");
  const all: Row[] = [{ name: "baseline (Bun.serve)", what: "GET / hello-world, bare Bun.serve", result: base, reference: null, target: null }, ...rows];
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
      ratio === null ? (row.target === null && r ? "1.00" : "-") : ratio.toFixed(2),
      row.target === null ? "" : `≥ ${row.target.toFixed(2)}`,
      verdict,
    ];
  });
  console.log("\n" + table(
    ["target", "req/s", "p50 ms", "p99 ms", "errors", "srv cores", "srv µs/req", "cli cores", "other", "ratio", "target", "result"],
    body,
    [false, true, true, true, true, true, true, true, true, true, false, false],
  ));
  console.log(`
ratio: reads and baseline against the baseline's req/s; sign-in against the argon2id ceiling
  (${m.cores} cores / ${verifyMs.toFixed(1)} ms per verify = ${fmtNum(ceiling, 1)}/s, argon2id m=${ARGON2.memoryCost} KiB t=${ARGON2.timeCost}).
client: ${describeClient(client)} in the bench process; reads at concurrency ${readConc}, sign-in at ${signinConc}.
  The client and the server share this machine's ${m.cores} cores (on 2 cores roughly one each), so the
  baseline is bounded by the client as much as by Bun.serve. CPU over each window, in cores: "srv" the
  server process, "cli" this bench process, "other" everything else on the machine (noise).
errors: non-2xx answers and transport failures in the window.${all.some((r) => r.result && r.result.errors) ? "" : " (none)"}`);
  const noisy = all.filter((r) => (r.result?.otherCores ?? 0) > 0.15).map((r) => r.name);
  if (noisy.length) console.log(`WARNING: other processes used CPU during: ${noisy.join(", ")}; those numbers are unreliable, rerun on a quiet machine.`);
  for (const row of all) {
    if (row.note) console.log(`note ${row.name}: ${row.note}`);
    const r = row.result;
    if (r && r.errors) console.log(`note ${row.name}: statuses ${JSON.stringify(r.statuses)}${r.firstError ? `, first error: ${r.firstError}` : ""}`);
  }
}
