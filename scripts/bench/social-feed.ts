/**
 * bench social-feed: the community content read and write paths at scale.
 *
 * Setup: a Bunker server (SQLite) with one community; BENCH_ACTORS actors (default 10,000),
 * each following BENCH_FOLLOWS others (default 50), and BENCH_POSTS posts (default
 * 1,000,000) spread over 30 days across the actors, seeded with bulk SQL straight into the
 * server's database file (WAL; one transaction) after the server ran its migrations. The
 * seeding time is reported.
 *
 * The seed's random picks (authors of posts, followed actors) take the high bits of a linear
 * congruential generator: its low bits cycle, and `rnd % 10000` on them made 786 of the
 * 10,000 actors write every post (1,272 each) and 1,007 of them take every follow.
 *
 * Measured:
 * 1. single-request latency (one request at a time, many different actors): home feed,
 *    discover latest and discover hot: p50 / p99 (target: home p50 < 5 ms);
 * 2. throughput with wrk (-t2 -c64 by default) interleaved with a bare Bun.serve and the
 *    plain Elysia app (same routes), with server CPU per request: the home feed of one reader
 *    (its first page, kept by the feed page cache after the first read), the home feeds of
 *    BENCH_READERS different readers in turn (default: every actor, more first pages than the
 *    cache keeps: mostly built from the database), the home feed of one reader while posts are
 *    created at BENCH_WRITES_PER_SEC (default 100; each empties the page cache), discover,
 *    and POST /posts (targets: home and discover >= 10,000 reads/s at <= 150 µs server CPU
 *    and p99 < 20 ms; posts >= 15,000/s at <= 60 µs).
 * Benches report; they never fail. Figures depend on the machine's load (see the header).
 */
import { Database } from "bun:sqlite";
import { dirname, join } from "node:path";
import { benchOwner, benchPrelude, envNumber, fmtNum, median, medians, percentile, startBaseline, startBunker, table, vsBunServe, wrkFootnote, wrkRunScript, wrkSettings, wrkTable, api, type LocalTarget, type PlainRoute } from "./lib";

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
    return (rnd >>> 8) % n; // the high bits: the low ones cycle with a short period
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
  const headers = { ...auth, "content-type": "application/json" };
  const homeRoute: PlainRoute = { method: "GET", route: "/social/v1/communities/:community_id/actors/:actor_id/feeds/home", body: false };
  const lua = (paths: string[]) =>
    `wrk.headers["authorization"] = ${JSON.stringify(auth.authorization)}\nlocal paths = {${paths.map((x) => JSON.stringify(x)).join(",")}}\nlocal i = 0\nrequest = function()\n  i = i + 1\n  return wrk.format("GET", paths[(i % #paths) + 1])\nend`;
  // A wrk run over many readers' paths in turn, on Bunker or on the plain Elysia twin.
  const rotating = (name: string, paths: string[]): LocalTarget => {
    const run = (url: string, pid: number, d: number) => wrkRunScript(lua(paths), { baseUrl: url, path: paths[0]!, threads: w.threads, connections: w.connections, durationSec: d, serverPid: pid });
    return { name, run: (d) => run(server.url, server.pid, d), plain: { route: homeRoute, run: (s, d) => run(s.url, s.pid, d) } };
  };
  const readersN = Math.min(actorsN, Math.floor(envNumber("BENCH_READERS", actorsN, 1)));
  const writesPerSec = envNumber("BENCH_WRITES_PER_SEC", 100, 1);
  // One reader's home while posts are created beside it (each empties the page cache).
  const underWrites: LocalTarget = {
    name: `home, ${fmtNum(writesPerSec)} posts/s beside`,
    run: async (d) => {
      let stop = false;
      const poster = (async () => {
        for (let next = performance.now(); !stop; next += 1000 / writesPerSec) {
          await Bun.sleep(Math.max(0, next - performance.now()));
          const r = await fetch(`${server.url}${base}/posts`, { method: "POST", headers, body: JSON.stringify({ actor_id: writer, body: "beside the readers" }) });
          await r.arrayBuffer();
        }
      })();
      try {
        return await wrkRunScript(lua([home(actors[1])]), { baseUrl: server.url, path: home(actors[1]), threads: w.threads, connections: w.connections, durationSec: d, serverPid: server.pid });
      } finally {
        stop = true;
        await poster;
      }
    },
    plain: { route: homeRoute, run: (s, d) => wrkRunScript(lua([home(actors[1])]), { baseUrl: s.url, path: home(actors[1]), threads: w.threads, connections: w.connections, durationSec: d, serverPid: s.pid }) },
  };
  const res = await vsBunServe(baseline, [
    { name: "home, one reader", baseUrl: server.url, spec: { method: "GET", path: home(actors[1]), headers: auth, route: homeRoute.route }, serverPid: server.pid },
    rotating(`home, ${fmtNum(readersN)} readers in turn`, Array.from({ length: readersN }, (_, i) => home(actors[i]))),
    underWrites,
    { name: "discover", baseUrl: server.url, spec: { method: "GET", path: `${base}/feeds/discover?limit=50`, headers: auth, route: "/social/v1/communities/:community_id/feeds/discover" }, serverPid: server.pid },
    { name: "create post", baseUrl: server.url, spec: { method: "POST", path: `${base}/posts`, headers, body: JSON.stringify({ actor_id: writer, body: "bench post #bench" }), route: "/social/v1/communities/:community_id/posts" }, serverPid: server.pid },
  ], w, seconds, warmup);
  console.log();
  console.log(wrkTable(res.baseline, res.targets.map((r) => ({ result: r, what: r.name, target: null }))));
  const verdict = (name: string, minRps: number, maxCpu: number, maxP99: number | null) => {
    const x = medians(res.targets.find((t) => t.name === name)!);
    const ok = x.rps >= minRps && x.cpuUs <= maxCpu && (maxP99 === null || x.p99 < maxP99);
    return `${name}: ${fmtNum(x.rps)}/s, ${fmtNum(x.cpuUs, 1)} µs server CPU, p99 ${x.p99.toFixed(2)} ms (target >= ${fmtNum(minRps)}/s, <= ${maxCpu} µs${maxP99 === null ? "" : `, p99 < ${maxP99} ms`}: ${ok ? "PASS" : "BELOW"})`;
  };
  console.log();
  console.log(verdict("home, one reader", 10_000, 150, 20));
  console.log(verdict("discover", 10_000, 150, 20));
  console.log(verdict("create post", 15_000, 60, null));
  console.log(`home p50 one request at a time: ${lat[0][1].p50.toFixed(2)} ms (target < 5 ms: ${lat[0][1].p50 < 5 ? "PASS" : "BELOW"})`);
  console.log(wrkFootnote(w, seconds, warmup, m));
  await server.stop();
  await baseline.stop();
}
