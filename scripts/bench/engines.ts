/**
 * `npm run bench -- engines`: the same platform read and write on each database engine,
 * under wrk, as ratios to a bare Bun.serve hello-world measured in the same run
 * (interleaved rounds, medians):
 *
 *   sqlite  read / write    one node on the embedded SQLite file (the default)
 *   pg      read / write    one node on PostgreSQL (DATABASE_URL; a throwaway local cluster)
 *   pg x2   read / write    two nodes on one PostgreSQL database, each driven by its own wrk
 *                           with half the connections (as behind a load balancer); summed
 *
 *   read   GET   /platform/v1/workspaces/{slug}   API key (the read cache answers; auth + policy)
 *   write  PATCH /platform/v1/workspaces/{slug}   API key; one transaction: row, audit entry,
 *                                                 cache invalidation (and NOTIFY on PostgreSQL)
 *
 * All of it runs on this machine's cores: PostgreSQL's own processes compete with Bunker and
 * wrk, so two nodes on one 2-core box show the cost of coordination, not the gain of a
 * second machine. Report only; exits 0 either way.
 *
 * Environment: BENCH_SECONDS (default 5), BENCH_WARMUP (1), BENCH_ROUNDS (3), BENCH_THREADS /
 * BENCH_CONNECTIONS (wrk, 2 / 64).
 */
import { randomBytes } from "node:crypto";
import { startPgCluster } from "../../test/helpers/pg-cluster";
import {
  api,
  benchOwner,
  benchPrelude,
  vsBunServe,
  startBaseline,
  startBunker,
  wrkFootnote,
  wrkRun,
  wrkSettings,
  wrkTable,
  type LoadResult,
  type LocalTarget,
  type RequestSpec,
  type ServerProc,
  type WrkTarget,
} from "./lib";

interface Fixture {
  read: RequestSpec;
  write: RequestSpec;
}

/** Owner, workspace and an API key allowed to read and update it, created through `url`. */
async function fixture(url: string): Promise<Fixture> {
  const slug = "bench-ws";
  const { session } = await benchOwner(url, slug);
  const k = await api(url, "POST", `/platform/v1/workspaces/${slug}/api-keys`, {
    token: session,
    body: { name: "bench", policy: [{ effect: "allow", actions: ["workspace.read", "workspace.update"], resources: ["*"] }] },
  });
  if (k.status !== 201) throw new Error(`minting an API key failed: ${k.status} ${JSON.stringify(k.body).slice(0, 200)}`);
  const authorization = `Bearer ${k.body.key}`;
  return {
    read: { method: "GET", path: `/platform/v1/workspaces/${slug}`, headers: { authorization } },
    write: {
      method: "PATCH",
      path: `/platform/v1/workspaces/${slug}`,
      headers: { authorization, "content-type": "application/json" },
      body: JSON.stringify({ display_name: "Bench workspace, renamed" }),
    },
  };
}

/** wrk on two nodes at once, half the connections each; one LoadResult summed over both. */
function twoNodes(name: string, nodes: ServerProc[], spec: RequestSpec, threads: number, connections: number): LocalTarget {
  return {
    name,
    async run(durationSec: number): Promise<LoadResult> {
      const per = Math.max(1, Math.floor(connections / nodes.length));
      const parts = await Promise.all(nodes.map((n) => wrkRun({ baseUrl: n.url, spec, threads: Math.max(1, Math.floor(threads / nodes.length)), connections: per, durationSec, serverPid: n.pid })));
      const sum = (f: (r: LoadResult) => number | null) => parts.reduce((s, r) => s + (f(r) ?? 0), 0);
      const statuses: Record<string, number> = {};
      for (const p of parts) for (const [k, v] of Object.entries(p.statuses)) statuses[k] = (statuses[k] ?? 0) + v;
      return {
        rps: sum((r) => r.rps),
        completed: sum((r) => r.completed),
        errors: sum((r) => r.errors),
        statuses,
        p50: Math.max(...parts.map((r) => r.p50)),
        p99: Math.max(...parts.map((r) => r.p99)),
        seconds: Math.max(...parts.map((r) => r.seconds)),
        exhausted: false,
        firstError: parts.find((r) => r.firstError)?.firstError ?? null,
        serverCores: sum((r) => r.serverCores),
        // Each wrk saw the other as "other": report the pair's own share once.
        clientCores: sum((r) => r.clientCores),
        otherCores: parts[0]!.otherCores === null ? null : Math.max(0, (parts[0]!.otherCores ?? 0) - (parts[1]?.clientCores ?? 0) - (parts[1]?.serverCores ?? 0)),
      };
    },
  };
}

export default async function enginesBench(_args: string[]) {
  const ws = wrkSettings();
  const { seconds, warmup, m } = benchPrelude("engines", 180, ws.rounds * 7 + 3);
  const masterKey = randomBytes(32).toString("hex");

  const baseline = await startBaseline();
  process.stdout.write("starting a throwaway PostgreSQL cluster ... ");
  const cluster = await startPgCluster();
  console.log(`port ${cluster.port}`);
  const servers: ServerProc[] = [];
  try {
    const sqlite = await startBunker();
    servers.push(sqlite);
    const pgOne = await startBunker({ env: { DATABASE_URL: await cluster.createDatabase("bench_one"), MASTER_KEY: masterKey } });
    servers.push(pgOne);
    const twoUrl = await cluster.createDatabase("bench_two");
    const nodeA = await startBunker({ env: { DATABASE_URL: twoUrl, MASTER_KEY: masterKey, SMTP_PORT: "off" } });
    const nodeB = await startBunker({ env: { DATABASE_URL: twoUrl, MASTER_KEY: masterKey, SMTP_PORT: "off" } });
    servers.push(nodeA, nodeB);
    console.log(`bunker: sqlite pid ${sqlite.pid}, pg pid ${pgOne.pid}, pg x2 pids ${nodeA.pid} + ${nodeB.pid}; baseline pid ${baseline.pid}`);

    const fx = { sqlite: await fixture(sqlite.url), pg: await fixture(pgOne.url), two: await fixture(nodeA.url) };
    const one = (name: string, s: ServerProc, spec: RequestSpec): WrkTarget => ({ name, baseUrl: s.url, spec, serverPid: s.pid });
    const targets = [
      one("sqlite read", sqlite, fx.sqlite.read),
      one("pg read", pgOne, fx.pg.read),
      twoNodes("pg x2 read", [nodeA, nodeB], fx.two.read, ws.threads, ws.connections),
      one("sqlite write", sqlite, fx.sqlite.write),
      one("pg write", pgOne, fx.pg.write),
      twoNodes("pg x2 write", [nodeA, nodeB], fx.two.write, ws.threads, ws.connections),
    ];
    const res = await vsBunServe(baseline, targets, ws, seconds, warmup);
    const what: Record<string, string> = {
      "sqlite read": "GET workspace (API key), SQLite",
      "pg read": "GET workspace (API key), PostgreSQL, one node",
      "pg x2 read": "GET workspace (API key), PostgreSQL, two nodes",
      "sqlite write": "PATCH workspace (API key), SQLite",
      "pg write": "PATCH workspace (API key), PostgreSQL, one node",
      "pg x2 write": "PATCH workspace (API key), PostgreSQL, two nodes",
    };
    console.log("\n" + wrkTable(res.baseline, res.targets.map((r) => ({ result: r, what: what[r.name] ?? r.name, target: null }))));
    for (const r of res.targets) console.log(`  ${r.name}: ${what[r.name]}${r.runs.some((x) => x.errors) ? ` (errors: ${JSON.stringify(r.runs.map((x) => x.statuses))})` : ""}`);
    console.log("\n" + wrkFootnote(ws, seconds, warmup, m));
    console.log("  srv µs/req of the two-node rows is both nodes' CPU; PostgreSQL's own CPU is in \"other\".");
  } finally {
    for (const s of servers) await s.stop();
    await baseline.stop();
    await cluster.stop();
  }
}
