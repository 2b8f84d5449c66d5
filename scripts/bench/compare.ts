/**
 * `npm run bench -- compare <git-rev>`: the hot read paths of this checkout against another
 * revision (e.g. the one before a refactor), both servers running side by side on SQLite,
 * measured with wrk in interleaved rounds (bare Bun.serve, then each path on the old server,
 * then on the new one, repeated). Reports each path's req/s before and after and the ratio
 * after / before per round (median), against the issue 12 target: within 10% (>= 0.90), and
 * the checkout's ratio to a plain Elysia app serving the same request (lib.ts interleaved).
 *
 *   workspace read (key)   GET  /platform/v1/workspaces/{slug}        API key
 *   introspect api-key     POST /platform/v1/introspect/api-key      API key
 *   verify                 POST /auth/{app}/v1/verify                 end-user access token
 *   introspect             POST /auth/{app}/v1/oauth/introspect       the same token (form)
 *   me                     GET  /auth/{app}/v1/me                     the same token
 *   workspace write (key)  PATCH /platform/v1/workspaces/{slug}       API key; one write transaction
 *                                                                    (reported, no target)
 *
 * BENCH_ONLY=<substring> measures only the paths whose name contains it.
 * The old revision is checked out with `git worktree add` into a temp folder (removed
 * afterwards) and run with this checkout's node_modules. Report only; exits 0 either way.
 *
 * Environment: BENCH_SECONDS (default 5), BENCH_WARMUP (1), BENCH_ROUNDS (3), BENCH_THREADS /
 * BENCH_CONNECTIONS (wrk, 2 / 64).
 */
import { spawnSync } from "node:child_process";
import { symlinkSync } from "node:fs";
import { join } from "node:path";
import {
  REPO_ROOT,
  api,
  benchOwner,
  benchPrelude,
  fmtNum,
  vsBunServe,
  median,
  medians,
  probe,
  startBaseline,
  startBunker,
  table,
  tempDir,
  wrkFootnote,
  wrkSettings,
  type RequestSpec,
  type ServerProc,
  type WrkTarget,
} from "./lib";

const TARGET = 0.9;

/** The fixtures of the compared paths, created over HTTP on one server. */
async function paths(url: string): Promise<{ name: string; spec: RequestSpec }[]> {
  const { session, workspaceId } = await benchOwner(url, "bench-ws");
  const k = await api(url, "POST", "/platform/v1/workspaces/bench-ws/api-keys", {
    token: session,
    body: { name: "bench", policy: [{ effect: "allow", actions: ["workspace.read", "workspace.update"], resources: ["*"] }] },
  });
  if (k.status !== 201) throw new Error(`minting an API key failed: ${k.status}`);
  const key = `Bearer ${k.body.key}`;
  const app = await api(url, "POST", "/auth/v1/apps", { token: session, body: { workspace_id: workspaceId, slug: "bench-app", display_name: "Bench App" } });
  if (app.status !== 201) throw new Error(`App create failed: ${app.status}`);
  const user = await api(url, "POST", "/auth/bench-app/v1/auth/signup", { token: app.body.publishable_key, body: { username: "bench_u0", email: "u0@bench.test", password: "bench-password-123" } });
  if (user.status !== 200) throw new Error(`end-user signup failed: ${user.status}`);
  const token: string = user.body.access_token;
  const all: { name: string; spec: RequestSpec }[] = [
    { name: "workspace read (key)", spec: { method: "GET", path: "/platform/v1/workspaces/bench-ws", route: "/platform/v1/workspaces/:workspace_slug", headers: { authorization: key } } },
    { name: "introspect api-key", spec: { method: "POST", path: "/platform/v1/introspect/api-key", headers: { authorization: key } } },
    { name: "verify", spec: { method: "POST", path: "/auth/bench-app/v1/verify", route: "/auth/:app_slug/v1/verify", headers: { "content-type": "application/json" }, body: JSON.stringify({ token }) } },
    { name: "introspect", spec: { method: "POST", path: "/auth/bench-app/v1/oauth/introspect", route: "/auth/:app_slug/v1/oauth/introspect", headers: { "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams({ token }).toString() } },
    { name: "me", spec: { method: "GET", path: "/auth/bench-app/v1/me", route: "/auth/:app_slug/v1/me", headers: { authorization: `Bearer ${token}` } } },
    {
      name: "workspace write (key)",
      spec: { method: "PATCH", path: "/platform/v1/workspaces/bench-ws", route: "/platform/v1/workspaces/:workspace_slug", headers: { authorization: key, "content-type": "application/json" }, body: JSON.stringify({ display_name: "Bench workspace, renamed" }) },
    },
  ];
  return all.filter((p) => !process.env.BENCH_ONLY || p.name.includes(process.env.BENCH_ONLY));
}

export default async function compareBench(args: string[]) {
  const rev = args[0];
  if (!rev) throw new Error("usage: npm run bench -- compare <git-rev>   (e.g. main~1)");
  const ws = wrkSettings();
  const { seconds, warmup, m } = benchPrelude("compare", 180, ws.rounds * 11 + 3);

  const oldRoot = join(tempDir("bunker-bench-compare-"), "old");
  const git = (...a: string[]) => spawnSync("git", a, { cwd: REPO_ROOT, encoding: "utf8" });
  const added = git("worktree", "add", "--detach", oldRoot, rev);
  if (added.status !== 0) throw new Error(`git worktree add ${rev} failed: ${added.stderr}`);
  const sha = git("rev-parse", "--short", rev).stdout.trim();
  symlinkSync(join(REPO_ROOT, "node_modules"), join(oldRoot, "node_modules"));

  const servers: ServerProc[] = [];
  const baseline = await startBaseline();
  try {
    const before = await startBunker({ root: oldRoot });
    const after = await startBunker();
    servers.push(before, after);
    console.log(`before: ${rev} (${sha}) pid ${before.pid}; after: this checkout pid ${after.pid}; baseline pid ${baseline.pid}`);
    const [pb, pa] = [await paths(before.url), await paths(after.url)];
    const targets: WrkTarget[] = [];
    for (let i = 0; i < pa.length; i++) {
      for (const [label, s, p] of [["before", before, pb[i]!], ["after", after, pa[i]!]] as const) {
        const problem = await probe(s.url, p.spec);
        if (problem) throw new Error(`${p.name} (${label}): ${problem}`);
        targets.push({ name: `${p.name} ${label}`, baseUrl: s.url, spec: p.spec, serverPid: s.pid });
      }
    }
    const res = await vsBunServe(baseline, targets, ws, seconds, warmup);
    const rows: string[][] = [];
    for (let i = 0; i < pa.length; i++) {
      const b = res.targets[2 * i]!;
      const a = res.targets[2 * i + 1]!;
      const ratios = a.runs.map((r, k) => r.rps / b.runs[k]!.rps);
      const ratio = median(ratios);
      const mb = medians(b);
      const ma = medians(a);
      rows.push([
        pa[i]!.name,
        fmtNum(mb.rps),
        fmtNum(ma.rps),
        Number.isFinite(mb.cpuUs) ? fmtNum(mb.cpuUs, 1) : "-",
        Number.isFinite(ma.cpuUs) ? fmtNum(ma.cpuUs, 1) : "-",
        `${ratio.toFixed(2)} (${Math.min(...ratios).toFixed(2)}-${Math.max(...ratios).toFixed(2)})`,
        a.plain ? median(a.runs.map((r, k) => r.rps / a.plain!.runs[k]!.rps)).toFixed(2) : "-",
        pa[i]!.name.includes("write") ? "" : `≥ ${TARGET.toFixed(2)}`,
        pa[i]!.name.includes("write") ? "" : ratio >= TARGET ? "PASS" : "BELOW",
      ]);
    }
    console.log(`\nbaseline (bare Bun.serve): ${fmtNum(medians(res.baseline).rps)} req/s`);
    for (const p of res.plain) console.log(`${p.name}: ${fmtNum(medians(p).rps)} req/s, ${fmtNum(medians(p).cpuUs, 1)} srv µs/req`);
    console.log(
      table(
        ["path", `req/s ${sha}`, "req/s now", `srv µs/req ${sha}`, "srv µs/req now", "after/before (min-max)", "now x Elysia", "target", "result"],
        rows,
        [false, true, true, true, true, true, true, false, false],
      ),
    );
    console.log("\n" + wrkFootnote(ws, seconds, warmup, m));
  } finally {
    for (const s of servers) await s.stop();
    await baseline.stop();
    git("worktree", "remove", "--force", oldRoot);
  }
}
