/**
 * bench social-feed: the community content read and write paths at scale.
 *
 * Setup: a Bunker server (SQLite) with one community; BENCH_ACTORS actors (default 10,000),
 * each following BENCH_FOLLOWS others (default 50), and BENCH_POSTS posts (default
 * 1,000,000) spread over 30 days across the actors, seeded with bulk SQL straight into the
 * server's database file (WAL; one transaction) after the server ran its migrations. The
 * seeding time is reported.
 *
 * Measured:
 * 1. single-request latency (one request at a time, many different actors): home feed,
 *    discover latest and discover hot: p50 / p99 (target: home p50 < 5 ms);
 * 2. throughput with wrk against a same-run bare Bun.serve baseline: home feed reads,
 *    discover reads, and POST /posts (target: >= 3,000 posts/s).
 * Benches report; they never fail. Figures depend on the machine's load (see the header).
 */
import { Database } from "bun:sqlite";
import { dirname, join } from "node:path";
import { benchOwner, benchPrelude, envNumber, fmtNum, interleaved, median, percentile, startBaseline, startBunker, table, wrkFootnote, wrkSettings, wrkTable, api } from "./lib";

export default async function main() {
  const actorsN = Math.floor(envNumber("BENCH_ACTORS", 10_000, 10));
  const postsN = Math.floor(envNumber("BENCH_POSTS", 1_000_000, 100));
  const followsN = Math.floor(envNumber("BENCH_FOLLOWS", 50, 1));
  const samples = Math.floor(envNumber("BENCH_SAMPLES", 300, 10));
  const { seconds, warmup, m } = benchPrelude("social-feed", 900, 12);
  const w = wrkSettings();

  const server = await startBunker();
  const baseline = await startBaseline();
  const { session, workspaceId } = await benchOwner(server.url, "bench-social");
  const c = await api(server.url, "POST", `/social/v1/workspaces/${workspaceId}/communities`, { token: session, body: { slug: "bench-feed", display_name: "Bench feed" } });
  if (c.status !== 201) throw new Error(`community create failed: ${c.status} ${JSON.stringify(c.body)}`);
  const cid = c.body.id as string;

  // --- seeding (bulk SQL, one transaction) -------------------------------------------------
  console.log(`seeding ${fmtNum(actorsN)} actors, ${fmtNum(actorsN * followsN)} follows, ${fmtNum(postsN)} posts ...`);
  const dbFile = join(dirname(server.logFile), "data", "bunker.db");
  const t0 = performance.now();
  const db = new Database(dbFile);
  db.exec("PRAGMA busy_timeout = 30000");
  const now = Date.now();
  const iso = (ms: number) => new Date(ms).toISOString();
  const actors: string[] = [];
  let rnd = 42;
  const rand = (n: number) => {
    rnd = (rnd * 1103515245 + 12345) & 0x7fffffff;
    return rnd % n;
  };
  db.transaction(() => {
    const ia = db.prepare("INSERT INTO social_actors (id, community_id, external_id, display_name, metadata, status, is_private, created_at, updated_at) VALUES (?, ?, ?, ?, '{}', 'active', 0, ?, ?)");
    const ic = db.prepare("INSERT INTO social_counters (actor_id, community_id, follower_count, following_count, post_count, comment_count, blocks_count, updated_at) VALUES (?, ?, 0, ?, ?, 0, 0, ?)");
    const ie = db.prepare("INSERT INTO social_edges (id, community_id, kind, src_actor_id, dst_actor_id, dst_post_id, payload, created_at) VALUES (?, ?, 'follow', ?, ?, NULL, '{}', ?) ON CONFLICT DO NOTHING");
    const ip = db.prepare(
      `INSERT INTO social_posts (id, community_id, actor_id, kind, status, visibility, body, attributes, assets, hashtags, mentions, published_at, reaction_count, comment_count, repost_count, view_count, created_at, updated_at)
       VALUES (?, ?, ?, 'text', 'published', ?, ?, '{}', '[]', '[]', '[]', ?, ?, ?, 0, 0, ?, ?)`,
    );
    const stamp = iso(now);
    for (let i = 0; i < actorsN; i++) {
      const id = Bun.randomUUIDv7();
      actors.push(id);
      ia.run(id, cid, `bench-${i}`, `Bench ${i}`, stamp, stamp);
      ic.run(id, cid, followsN, Math.floor(postsN / actorsN), stamp);
    }
    for (const a of actors) for (let f = 0; f < followsN; f++) ie.run(Bun.randomUUIDv7(), cid, a, actors[rand(actorsN)], stamp);
    const span = 30 * 86_400_000;
    for (let i = 0; i < postsN; i++) {
      const at = iso(now - span + Math.floor((i / postsN) * span));
      ip.run(Bun.randomUUIDv7(), cid, actors[rand(actorsN)], rand(10) === 0 ? "followers" : "public", `post ${i}`, at, rand(20), rand(5), at, at);
    }
  })();
  db.exec("ANALYZE");
  db.close();
  const seedSec = (performance.now() - t0) / 1000;
  console.log(`seeded in ${seedSec.toFixed(1)} s (${fmtNum(postsN / seedSec)} posts/s of bulk SQL)\n`);

  const auth = { authorization: `Bearer ${session}` };
  const base = `/social/v1/communities/${cid}`;
  const home = (a: string) => `${base}/actors/${a}/feeds/home?limit=50`;

  // --- 1. single-request latency ---------------------------------------------------------------
  const latency = async (paths: string[]) => {
    const ms: number[] = [];
    for (const p of paths) {
      const s = performance.now();
      const r = await fetch(server.url + p, { headers: auth });
      const b = (await r.json()) as { data?: unknown[] };
      ms.push(performance.now() - s);
      if (r.status !== 200 || !Array.isArray(b.data)) throw new Error(`${p}: ${r.status}`);
    }
    ms.sort((x, y) => x - y);
    return { p50: percentile(ms, 50), p99: percentile(ms, 99) };
  };
  const pick = (n: number) => Array.from({ length: n }, () => actors[rand(actorsN)]);
  await latency(pick(30).map(home)); // warm-up
  const lat = [
    ["home feed (50 posts)", await latency(pick(samples).map(home)), "< 5 ms p50"],
    ["home feed, page 2", await latency(await Promise.all(pick(Math.min(100, samples)).map(async (a) => {
      const r = await fetch(server.url + home(a), { headers: auth });
      const b = (await r.json()) as { pagination: { next_cursor: string | null } };
      return `${home(a)}&cursor=${b.pagination.next_cursor ?? ""}`;
    }))), ""],
    ["discover latest", await latency(Array.from({ length: Math.min(100, samples) }, () => `${base}/feeds/discover?limit=50`)), ""],
    ["discover hot (7d)", await latency(Array.from({ length: Math.min(50, samples) }, () => `${base}/feeds/discover?ranking=hot&limit=50`)), ""],
  ] as const;
  console.log(table(["read", "p50 ms", "p99 ms", "target"], lat.map(([n, r, tgt]) => [n, r.p50.toFixed(2), r.p99.toFixed(2), tgt]), [false, true, true, false]));
  console.log(`(${samples} sequential requests per row over different actors, keep-alive, 127.0.0.1)\n`);

  // --- 2. throughput under wrk ---------------------------------------------------------------
  const writer = actors[0];
  const res = await interleaved({
    baseline: { name: "baseline", baseUrl: baseline.url, spec: { method: "GET", path: "/" }, serverPid: baseline.pid },
    targets: [
      { name: "home", baseUrl: server.url, spec: { method: "GET", path: home(actors[1]), headers: auth }, serverPid: server.pid },
      { name: "discover", baseUrl: server.url, spec: { method: "GET", path: `${base}/feeds/discover?limit=50`, headers: auth }, serverPid: server.pid },
      { name: "create post", baseUrl: server.url, spec: { method: "POST", path: `${base}/posts`, headers: { ...auth, "content-type": "application/json" }, body: JSON.stringify({ actor_id: writer, body: "bench post #bench" }) }, serverPid: server.pid },
    ],
    rounds: w.rounds,
    warmupSec: warmup,
    durationSec: seconds,
    threads: w.threads,
    connections: w.connections,
  });
  console.log();
  console.log(wrkTable(res.baseline, [
    { result: res.targets[0], what: "home feed", target: null },
    { result: res.targets[1], what: "discover", target: null },
    { result: res.targets[2], what: "POST /posts", target: null },
  ]));
  const postsPerSec = median(res.targets[2].runs.map((r) => r.rps));
  console.log(`\nposts created/s (median): ${fmtNum(postsPerSec)} (target >= 3,000: ${postsPerSec >= 3000 ? "PASS" : "BELOW"}); home p50 ${lat[0][1].p50.toFixed(2)} ms (target < 5 ms: ${lat[0][1].p50 < 5 ? "PASS" : "BELOW"})`);
  console.log(wrkFootnote(w, seconds, warmup, m));
  await server.stop();
  await baseline.stop();
}
