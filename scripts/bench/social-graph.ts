/**
 * `npm run bench -- social-graph`: issue 18 "Tests and speed", against a real Bunker server
 * (subprocess, SQLite), everything on 127.0.0.1:
 *
 * (a) follows/s: POST /social/v1/communities/{id}/follows, each request a new pair (400
 *     actors, every ordered pair at most once), closed loop with BENCH_CONCURRENCY (64)
 *     requests in flight from this process (lib.ts load(), a list used once: wrk cannot vary
 *     the body). Each follow is one transaction: edge, both counters, edge.follow.created.
 *     Same-run baseline: the same client against a bare Bun.serve hello-world. Target >= 3,000/s.
 * (b) counters reads/s: GET /counters?actor_ids=<100 ids> under wrk, interleaved with the
 *     baseline (ratios per round).
 * (c) followers page: GET /actors/{hub}/followers?limit=50 where hub has 100,000 followers
 *     (BENCH_SOCIAL_FOLLOWERS), the first page and a page 5,000 edges deep (opaque cursor),
 *     under wrk -c64 (throughput) and wrk -t1 -c4 (latency below saturation). Target: p50 < 5 ms.
 *
 * Setup goes over HTTP: actors by /actors/batch (200 a request), the hub's followers by
 * /follows/batch with suppress_notifications (200 a request), several requests in flight.
 * Environment: BENCH_SECONDS (5), BENCH_WARMUP (1), BENCH_ROUNDS (3), BENCH_THREADS /
 * BENCH_CONNECTIONS (wrk, 2 / 64), BENCH_CONCURRENCY (64), BENCH_SOCIAL_FOLLOWERS (100000).
 * Report only; exits 0 whether targets are met or not.
 */
import {
  api,
  benchOwner,
  benchPrelude,
  envNumber,
  fmtNum,
  vsBunServe,
  load,
  mapLimit,
  median,
  medians,
  startBaseline,
  startBunker,
  table,
  wrkFootnote,
  wrkRun,
  wrkSettings,
  wrkTable,
  type LoadResult,
  type LocalTarget,
  type RequestSpec,
} from "./lib";

async function setup(url: string, followers: number) {
  const { session, workspaceId } = await benchOwner(url, "bench-social");
  const key = await api(url, "POST", "/platform/v1/workspaces/bench-social/api-keys", { token: session, body: { name: "bench", policy: [{ effect: "allow", actions: ["*"], resources: ["*"] }] } });
  if (key.status !== 201) throw new Error(`key: ${key.status} ${JSON.stringify(key.body)}`);
  const token = key.body.key as string;
  const c = await api(url, "POST", `/social/v1/workspaces/${workspaceId}/communities`, { token, body: { slug: "bench", display_name: "Bench" } });
  if (c.status !== 201) throw new Error(`community: ${c.status} ${JSON.stringify(c.body)}`);
  const base = `/social/v1/communities/${c.body.id}`;

  const upsert = async (prefix: string, n: number): Promise<string[]> => {
    const chunks = Array.from({ length: Math.ceil(n / 200) }, (_, i) => Array.from({ length: Math.min(200, n - i * 200) }, (_, j) => ({ external_id: `${prefix}-${i * 200 + j}`, display_name: `${prefix} ${i * 200 + j}` })));
    const out = await mapLimit(chunks, 4, async (actors) => {
      const r = await api(url, "POST", `${base}/actors/batch`, { token, body: { actors } });
      if (r.status !== 201 || r.body.failed) throw new Error(`actors/batch: ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
      return r.body.data.map((d: any) => d.actor.id as string);
    });
    return out.flat();
  };

  const t0 = performance.now();
  const pairActors = await upsert("p", 400);
  const [hub] = await upsert("hub", 1);
  const fans = await upsert("fan", followers);
  const t1 = performance.now();
  const chunks = Array.from({ length: Math.ceil(fans.length / 200) }, (_, i) => fans.slice(i * 200, i * 200 + 200));
  await mapLimit(chunks, 4, async (ids) => {
    const r = await api(url, "POST", `${base}/follows/batch`, { token, body: { suppress_notifications: true, follows: ids.map((id) => ({ actor_id: id, dst_actor_id: hub })) } });
    if (r.status !== 201 || r.body.failed) throw new Error(`follows/batch: ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
  });
  const t2 = performance.now();
  const counters = await api(url, "GET", `${base}/actors/${hub}/counters`, { token });
  if (counters.body.follower_count !== followers) throw new Error(`hub has ${counters.body.follower_count} followers, expected ${followers}`);
  console.log(
    `setup: ${fmtNum(pairActors.length + 1 + fans.length)} actors in ${((t1 - t0) / 1000).toFixed(1)} s (${fmtNum((pairActors.length + 1 + fans.length) / ((t1 - t0) / 1000))}/s by /actors/batch), ` +
      `${fmtNum(followers)} follows of the hub in ${((t2 - t1) / 1000).toFixed(1)} s (${fmtNum(followers / ((t2 - t1) / 1000))}/s by /follows/batch)`,
  );

  // A cursor 5,000 edges deep: walk 25 pages of 200.
  let cursor: string | null = null;
  for (let i = 0; i < 25 && followers > 5000; i++) {
    const r = await api(url, "GET", `${base}/actors/${hub}/followers?limit=200${cursor ? `&cursor=${cursor}` : ""}`, { token });
    if (r.status !== 200) throw new Error(`followers: ${r.status}`);
    cursor = r.body.pagination.next_cursor;
  }
  return { token, base, hub, pairActors, deepCursor: cursor };
}

export default async function socialGraphBench(_args: string[]) {
  const ws = wrkSettings();
  const followers = Math.floor(envNumber("BENCH_SOCIAL_FOLLOWERS", 100_000, 1000));
  const { seconds, warmup, readConc, m } = benchPrelude("social-graph", 600, ws.rounds * 6 + 2);
  const baseline = await startBaseline();
  const bunker = await startBunker();
  try {
    console.log(`bunker pid ${bunker.pid} (SQLite), baseline pid ${baseline.pid}`);
    const fx = await setup(bunker.url, followers);
    const auth = { authorization: `Bearer ${fx.token}` };

    // ---- (a) follows/s: every request a fresh pair.
    const specs: RequestSpec[] = [];
    for (const a of fx.pairActors) for (const b of fx.pairActors) if (a !== b) specs.push({ method: "POST", path: `${fx.base}/follows`, headers: { ...auth, "content-type": "application/json" }, body: JSON.stringify({ actor_id: a, dst_actor_id: b }) });
    for (let i = specs.length - 1; i > 0; i--) {
      const j = Math.floor(((i * 2654435761) % 4294967296) / 4294967296 * (i + 1));
      [specs[i], specs[j]] = [specs[j], specs[i]];
    }
    console.log(`\n(a) POST ${"/social/v1/communities/{id}/follows"}, ${fmtNum(specs.length)} distinct pairs available, ${readConc} in flight`);
    const baseRun = await load({ baseUrl: baseline.url, requests: [{ method: "GET", path: "/" }], concurrency: readConc, warmupSec: warmup, durationSec: seconds, client: { kind: "inline" }, serverPid: baseline.pid });
    const followRun = await load({ baseUrl: bunker.url, requests: specs, cycle: false, concurrency: readConc, warmupSec: warmup, durationSec: seconds, client: { kind: "inline" }, serverPid: bunker.pid });
    const ok = (r: LoadResult) => (r.completed - r.errors) / r.seconds;
    console.log(
      table(
        ["(a) same client", "req/s", "p50 ms", "p99 ms", "errors", "srv cores"],
        [
          ["baseline (Bun.serve)", fmtNum(baseRun.rps), baseRun.p50.toFixed(2), baseRun.p99.toFixed(2), String(baseRun.errors), baseRun.serverCores?.toFixed(2) ?? "-"],
          ["follow", fmtNum(followRun.rps), followRun.p50.toFixed(2), followRun.p99.toFixed(2), String(followRun.errors) + (followRun.firstError ? ` (${followRun.firstError.slice(0, 60)})` : ""), followRun.serverCores?.toFixed(2) ?? "-"],
        ],
        [false, true, true, true, true, true],
      ),
    );
    if (followRun.exhausted) console.log("  (the pair list ran out before the window ended; the rate covers the requests sent)");

    // ---- (b) counters of 100 ids and (c) followers pages under wrk.
    const counters: RequestSpec = { method: "GET", path: `${fx.base}/counters?actor_ids=${fx.pairActors.slice(0, 100).join(",")}`, headers: auth };
    const first: RequestSpec = { method: "GET", path: `${fx.base}/actors/${fx.hub}/followers?limit=50`, headers: auth };
    const deep: RequestSpec = { method: "GET", path: `${fx.base}/actors/${fx.hub}/followers?limit=50${fx.deepCursor ? `&cursor=${fx.deepCursor}` : ""}`, headers: auth };
    for (const s of [counters, first, deep]) {
      const r = await api(bunker.url, s.method, s.path, { token: fx.token });
      if (r.status !== 200) throw new Error(`${s.path}: ${r.status} ${JSON.stringify(r.body).slice(0, 200)}`);
    }
    const lowConc = (name: string, spec: RequestSpec): LocalTarget => ({ name, run: (d: number) => wrkRun({ baseUrl: bunker.url, spec, threads: 1, connections: 4, durationSec: d, serverPid: bunker.pid }) });
    console.log(`\n(b) GET /counters (100 ids) and (c) GET /actors/{hub}/followers?limit=50 (hub: ${fmtNum(followers)} followers) under wrk`);
    const res = await vsBunServe(baseline, [
        { name: "counters x100", baseUrl: bunker.url, spec: counters, serverPid: bunker.pid },
        { name: "followers p1", baseUrl: bunker.url, spec: first, serverPid: bunker.pid },
        { name: "followers deep", baseUrl: bunker.url, spec: deep, serverPid: bunker.pid },
        lowConc("followers p1 -c4", first),
        lowConc("followers deep -c4", deep),
      ], ws, seconds, warmup);
    console.log("\n" + wrkTable(res.baseline, res.targets.map((r) => ({ result: r, what: r.name, target: null }))));
    console.log("\n" + wrkFootnote(ws, seconds, warmup, m));
    console.log(`  "-c4" rows: wrk -t1 -c4 (latency below saturation); their ratio column compares unlike loads.`);

    const [cnt, , , p1Low, deepLow] = res.targets;
    const follows = ok(followRun);
    const pass = (b: boolean) => (b ? "PASS" : "BELOW");
    console.log(`
Speed (issue 18), ${m.cores} cores (${m.cpuModel}), bun ${m.bun}:
  (a) follows/s:                    ${fmtNum(follows)}/s   target >= 3,000/s  ${pass(follows >= 3000)}   (${(follows / baseRun.rps).toFixed(3)} of bare Bun.serve with the same client, ${fmtNum(baseRun.rps)}/s)
  (b) counters reads/s (100 ids):   ${fmtNum(medians(cnt).rps)}/s   (${median(cnt.ratios).toFixed(2)} of bare Bun.serve under wrk)
  (c) followers page p50 at -c4:    first ${medians(p1Low).p50.toFixed(2)} ms, 5,000 deep ${medians(deepLow).p50.toFixed(2)} ms   target < 5 ms  ${pass(Math.max(medians(p1Low).p50, medians(deepLow).p50) < 5)}
  Machine shared with other work: compare ratios, not absolute figures.`);
  } finally {
    await bunker.stop();
    await baseline.stop();
  }
}
