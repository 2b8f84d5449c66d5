/**
 * Runs test files in several `bun test` processes side by side and sums their reports.
 *
 * The suite mostly waits (for a process to start, a scheduler tick, a browser, a socket), so
 * one `bun test` process leaves the machine idle while a long file runs; several processes
 * each run whole files (a file's tests keep their order and shared fixtures). Files are dealt
 * longest first to the process with the least work so far, by the durations the last full
 * run recorded (scripts/testing/timings.json, per run kind); a file it does not know weighs
 * by its size at the median seconds per byte of the files it does. The timings only steer
 * the dealing: stale or missing ones make the shards end less together, never fail a run.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";

export const root = resolve(import.meta.dir, "../..");
const TIMINGS = join(root, "scripts/testing/timings.json");

/** Every *.test.ts under dir (fixtures and helpers folders left out), sorted. */
export function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => {
      const p = join(dir, e.name);
      if (e.isDirectory()) return e.name === "fixtures" || e.name === "helpers" ? [] : testFiles(p);
      return e.name.endsWith(".test.ts") ? [p] : [];
    })
    .sort();
}

type Timings = Record<string, Record<string, number>>;

function readTimings(): Timings {
  try {
    return JSON.parse(readFileSync(TIMINGS, "utf8")) as Timings;
  } catch {
    return {};
  }
}

/** Longest processing time first: each file to the shard with the least work so far. */
export function deal(files: string[], shards: number, seconds: Record<string, number>): string[][] {
  const size = (f: string) => (existsSync(resolve(root, f)) ? statSync(resolve(root, f)).size : 0);
  const known = files.filter((f) => seconds[f] !== undefined && size(f) > 0).map((f) => seconds[f]! / size(f)).sort((a, b) => a - b);
  // No timings at all: sizes alone, at 1 s per 4 kB (the order is all that matters then).
  const perByte = known.length ? known[Math.floor(known.length / 2)]! : 1 / 4096;
  const weight = (f: string) => seconds[f] ?? size(f) * perByte;
  const n = Math.max(1, Math.min(files.length, shards));
  const groups: string[][] = Array.from({ length: n }, () => []);
  const load = new Array<number>(n).fill(0);
  for (const f of [...files].sort((a, b) => weight(b) - weight(a) || a.localeCompare(b))) {
    const i = load.indexOf(Math.min(...load));
    groups[i]!.push(f);
    load[i] += weight(f);
  }
  return groups.filter((g) => g.length);
}

export interface ShardRun {
  /** The run's kind: its key in timings.json ("sqlite", "postgres", "binary"). */
  kind: string;
  files: string[];
  shards: number;
  env?: Record<string, string | undefined>;
  /** Record the per-file durations of this run (full runs only: a partial run would forget the rest). */
  record: boolean;
  log(msg: string): void;
}

/** Runs the shards; passes their output through; returns bun's summed counts and whether every process succeeded. */
export async function runShards(run: ShardRun): Promise<{ passed: number; failed: number; ok: boolean }> {
  const timings = readTimings();
  const groups = deal(run.files, run.shards, timings[run.kind] ?? {});
  const work = mkdtempSync(join(tmpdir(), "bunker-shards-"));
  const started = performance.now();
  const bun = process.execPath;
  const results = await Promise.all(
    groups.map(async (group, i) => {
      const report = join(work, `shard-${i}.xml`);
      const files = group.map((f) => (f.startsWith("/") || f.startsWith(".") ? f : `./${f}`));
      const proc = Bun.spawn([bun, "test", "--timeout", "60000", "--reporter=junit", `--reporter-outfile=${report}`, ...files], {
        cwd: root,
        stdout: "pipe",
        stderr: "pipe",
        env: { ...process.env, ...run.env },
      });
      const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
      run.log(`shard ${i + 1}/${groups.length} (${group.length} files) ended with ${code} after ${((performance.now() - started) / 1000).toFixed(0)} s`);
      return { out, err, code, report };
    }),
  );
  // bun test writes its report on stderr: pass each shard's through, and sum their counts.
  const count = (report: string, what: string) => Number([...report.matchAll(new RegExp(`^\\s*(\\d+) ${what}$`, "gm"))].at(-1)?.[1] ?? 0);
  let passed = 0;
  let failed = 0;
  const seconds: Record<string, number> = {};
  for (const r of results) {
    process.stdout.write(r.out);
    process.stderr.write(r.err);
    passed += count(r.err, "pass");
    failed += count(r.err, "fail");
    if (existsSync(r.report)) Object.assign(seconds, fileSeconds(readFileSync(r.report, "utf8")));
  }
  const ok = results.every((r) => r.code === 0);
  if (run.record && ok && Object.keys(seconds).length) {
    const next = { ...readTimings(), [run.kind]: Object.fromEntries(Object.entries(seconds).sort(([a], [b]) => a.localeCompare(b))) };
    writeFileSync(TIMINGS, JSON.stringify(next, null, 1) + "\n");
  }
  rmSync(work, { recursive: true, force: true });
  return { passed, failed, ok };
}

/** file -> seconds, from bun's JUnit report (one <testsuite> per file, nested ones per describe). */
function fileSeconds(xml: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const m of xml.matchAll(/<testsuite name="[^"]*" file="([^"]+)"[^>]*\btime="([\d.]+)"/g)) {
    const file = relative(root, resolve(root, m[1]!));
    // The first <testsuite> of a file is the file's own (its describes nest inside it).
    out[file] ??= Math.round(Number(m[2]) * 10) / 10;
  }
  return out;
}

/** The shard count: BUNKER_TEST_SHARDS, else the run's default. */
export const shardCount = (fallback: number) => Math.max(1, Number(process.env.BUNKER_TEST_SHARDS ?? fallback) || fallback);
