/**
 * `npm run bench -- tack`: issue 15 "Speed", against a real Bunker server (subprocess,
 * SQLite), everything on 127.0.0.1. The card board's per-key rate limits are switched off
 * for the bench (TACK_RATE_WRITES/READS/BATCH=0): at thousands of requests per second one
 * key's sliding log would hold hundreds of thousands of hits per minute, and the bench would
 * measure the limiter rather than the board.
 *
 * (a) card creates: POST /tack/api/v1/workspaces/{ws}/projects/{project}/cards (title, body,
 *     priority, two labels; appended to one list) under wrk -t<BENCH_THREADS> -c<BENCH_CONNECTIONS>,
 *     interleaved with a bare Bun.serve hello-world (same run, same wrk settings) for the
 *     ratio. Target >= 5,000 creates/s.
 * (b) search: a second project ("search"; the creates of (a) went to "web" and stay in the
 *     same tables) is seeded with BENCH_TACK_CARDS cards (default 100,000; titles and
 *     bodies from a 2,000-word vocabulary, so one word sits in about 0.7% of the cards), then
 *     GET .../cards?q=<4-letter prefix of a vocabulary word>&limit=50 and the same with a
 *     priority filter, under wrk -t1 -c<BENCH_TACK_SEARCH_CONNECTIONS> (4: latency below
 *     saturation), interleaved with the baseline at the same settings. Target p50 < 10 ms.
 *
 * Environment: BENCH_SECONDS (5), BENCH_WARMUP (1), BENCH_ROUNDS (3), BENCH_THREADS /
 * BENCH_CONNECTIONS (wrk, 2 / 64), BENCH_TACK_CARDS (100000), BENCH_TACK_SEARCH_CONNECTIONS (4).
 * Report only; exits 0 whether targets are met or not.
 */
import {
  api,
  benchOwner,
  benchPrelude,
  envNumber,
  fmtNum,
  vsBunServe,
  mapLimit,
  median,
  medians,
  startBaseline,
  startBunker,
  wrkFootnote,
  wrkRun,
  wrkSettings,
  wrkTable,
  type LoadResult,
  type LocalTarget,
  type RequestSpec,
} from "./lib";

/** A deterministic vocabulary of pronounceable words (seeded, so every run searches the same text). */
function vocabulary(n: number): string[] {
  const c = "bcdfghjklmnprstvz";
  const v = "aeiou";
  let seed = 42;
  const rnd = (k: number) => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) % k);
  const words = new Set<string>();
  while (words.size < n) {
    let w = "";
    for (let i = 0, len = 3 + rnd(2); i < len; i++) w += c[rnd(c.length)] + v[rnd(v.length)];
    words.add(w);
  }
  return [...words];
}

async function setup(url: string) {
  const { session } = await benchOwner(url, "bench-board");
  const minted = await api(url, "POST", "/platform/v1/workspaces/bench-board/api-keys", { token: session, body: { name: "board", policy: [{ effect: "allow", actions: ["tack.*"], resources: ["*"] }] } });
  if (minted.status !== 201) throw new Error(`key: ${minted.status} ${JSON.stringify(minted.body)}`);
  const token = minted.body.key as string;
  const B = "/tack/api/v1/workspaces";
  const ok = (r: { status: number; body: unknown }, what: string) => {
    if (r.status >= 300) throw new Error(`${what}: ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
  };
  ok(await api(url, "POST", B, { token, body: { name: "acme" } }), "workspace");
  // (a) creates into "web"; (b) searches "search", seeded with its own searchable text (the
  // creates of (a) would otherwise make up most of the corpus, all with the same words).
  for (const name of ["web", "search"]) ok(await api(url, "POST", `${B}/acme/projects`, { token, body: { name, lists: [{ name: "todo" }, { name: "doing" }, { name: "done" }] } }), "project");
  for (const name of ["bug", "ui"]) ok(await api(url, "POST", `${B}/acme/labels`, { token, body: { name } }), "label");
  return { token, cards: `${B}/acme/projects/web/cards`, searchCards: `${B}/acme/projects/search/cards` };
}

export default async function tackBench(_args: string[]) {
  const ws = wrkSettings();
  const total = Math.floor(envNumber("BENCH_TACK_CARDS", 100_000, 1000));
  const searchConns = Math.floor(envNumber("BENCH_TACK_SEARCH_CONNECTIONS", 4, 1));
  const { seconds, warmup, m } = benchPrelude("tack", 300, ws.rounds * 4);
  const baseline = await startBaseline();
  const bunker = await startBunker({ env: { TACK_RATE_WRITES: "0", TACK_RATE_READS: "0", TACK_RATE_BATCH: "0" } });
  try {
    console.log(`bunker pid ${bunker.pid} (SQLite), baseline pid ${baseline.pid}; card-board rate limits off`);
    const fx = await setup(bunker.url);
    const auth = { authorization: `Bearer ${fx.token}`, "content-type": "application/json" };

    // ---- (a) card creates
    const create: RequestSpec = {
      method: "POST",
      path: fx.cards,
      headers: auth,
      body: JSON.stringify({ title: "Bench card", body: "Created under **wrk**", priority: "medium", labels: ["bug", "ui"], list: "todo" }),
    };
    const probe = await api(bunker.url, "POST", fx.cards, { token: fx.token, body: JSON.parse(create.body!) });
    if (probe.status !== 201) throw new Error(`create: ${probe.status} ${JSON.stringify(probe.body).slice(0, 300)}`);
    console.log(`(a) POST ${fx.cards} under wrk`);
    const a = await vsBunServe(baseline, [{ name: `card create -c${ws.connections}`, baseUrl: bunker.url, spec: create, serverPid: bunker.pid }], ws, seconds, warmup);
    console.log("\n" + wrkTable(a.baseline, a.targets.map((r) => ({ result: r, what: r.name, target: null }))));
    console.log("\n" + wrkFootnote(ws, seconds, warmup, m) + "\n");
    const creates = median(a.targets[0]!.runs.map((r) => (r.completed - r.errors) / r.seconds));

    // ---- (b) top up to `total` cards with searchable text, then search
    const words = vocabulary(2000);
    const pick = (i: number, k: number) => words[(i * 7919 + k * 104729) % words.length]!;
    const have = (await api(bunker.url, "GET", `${fx.searchCards}?limit=1`, { token: fx.token })).body.pagination.total as number;
    const missing = Math.max(0, total - have);
    process.stdout.write(`(b) seeding ${fmtNum(missing)} cards (project has ${fmtNum(have)}) ... `);
    const t0 = performance.now();
    const priorities = ["urgent", "high", "medium", "low", "none"];
    await mapLimit(Array.from({ length: missing }, (_, i) => i), 32, async (i) => {
      const title = [0, 1, 2].map((k) => pick(i, k)).join(" ");
      const body = Array.from({ length: 10 }, (_, k) => pick(i, k + 3)).join(" ");
      const r = await api(bunker.url, "POST", fx.searchCards, { token: fx.token, body: { title, body, priority: priorities[i % 5], list: ["todo", "doing", "done"][i % 3] } });
      if (r.status !== 201) throw new Error(`seed: ${r.status} ${JSON.stringify(r.body).slice(0, 200)}`);
    });
    console.log(`${((performance.now() - t0) / 1000).toFixed(1)} s`);
    const word = pick(12345, 1);
    const q = word.slice(0, 4);
    const search: RequestSpec = { method: "GET", path: `${fx.searchCards}?q=${q}&limit=50`, headers: auth };
    const filtered: RequestSpec = { method: "GET", path: `${fx.searchCards}?q=${q}&priority=high&limit=50`, headers: auth };
    const check = await api(bunker.url, "GET", search.path, { token: fx.token });
    if (check.status !== 200) throw new Error(`search: ${check.status} ${JSON.stringify(check.body).slice(0, 300)}`);
    const matches = check.body.pagination.total as number;
    const filteredMatches = (await api(bunker.url, "GET", filtered.path, { token: fx.token })).body.pagination.total as number;
    console.log(`q=${q} (prefix of "${word}") matches ${fmtNum(matches)} of ${fmtNum(Math.max(total, have))} cards; with priority=high ${fmtNum(filteredMatches)}`);
    const at = (name: string, spec: RequestSpec): LocalTarget => ({
      name,
      run: (durationSec: number): Promise<LoadResult> => wrkRun({ baseUrl: bunker.url, spec, threads: 1, connections: searchConns, durationSec, serverPid: bunker.pid }),
    });
    const baseLow: LocalTarget = {
      name: `baseline -c${searchConns}`,
      run: (durationSec: number) => wrkRun({ baseUrl: baseline.url, spec: { method: "GET", path: "/" }, threads: 1, connections: searchConns, durationSec, serverPid: baseline.pid }),
    };
    const b = await vsBunServe(baseline, [baseLow, at(`q search -c${searchConns}`, search), at(`q + priority -c${searchConns}`, filtered)], ws, seconds, warmup);
    console.log("\n" + wrkTable(b.baseline, b.targets.map((r) => ({ result: r, what: r.name, target: null }))));
    console.log(`  search rows: wrk -t1 -c${searchConns}; the first row's baseline is wrk -t${ws.threads} -c${ws.connections} (ratios are against it).`);
    const sp = medians(b.targets[1]!);
    const fp = medians(b.targets[2]!);
    const pass = (ok: boolean) => (ok ? "PASS" : "BELOW");
    console.log(`
Speed (issue 15), ${m.cores} cores (${m.cpuModel}), bun ${m.bun}:
  (a) card creates/s (wrk -c${ws.connections}):  ${fmtNum(creates)}/s   target >= 5,000/s  ${pass(creates >= 5000)}   (${median(a.targets[0]!.ratios).toFixed(2)} of bare Bun.serve; p50 ${medians(a.targets[0]!).p50.toFixed(2)} ms)
  (b) q search over ${fmtNum(Math.max(total, have))} cards (-c${searchConns}): p50 ${sp.p50.toFixed(2)} ms, p99 ${sp.p99.toFixed(2)} ms, ${fmtNum(sp.rps)}/s   target p50 < 10 ms  ${pass(sp.p50 < 10)}
      q + priority filter:           p50 ${fp.p50.toFixed(2)} ms, p99 ${fp.p99.toFixed(2)} ms, ${fmtNum(fp.rps)}/s   target p50 < 10 ms  ${pass(fp.p50 < 10)}`);
  } finally {
    await bunker.stop();
    await baseline.stop();
  }
}
