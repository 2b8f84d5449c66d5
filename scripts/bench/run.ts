#!/usr/bin/env bun
/**
 * Benchmark runner: `bun scripts/bench/run.ts <name> [args...]` (or `npm run bench -- <name>`)
 * runs scripts/bench/<name>.ts, whose default export is `(args: string[]) => Promise<void>`.
 * Benches report; they never fail the build (exit 0 unless the bench itself broke).
 */
import { readdirSync } from "node:fs";
import { join } from "node:path";

const DIR = import.meta.dir;
const NOT_BENCHES = new Set(["run", "lib"]);

function available(): string[] {
  return readdirSync(DIR)
    .filter((f) => f.endsWith(".ts") && !f.endsWith(".d.ts"))
    .map((f) => f.slice(0, -3))
    .filter((n) => !NOT_BENCHES.has(n))
    .sort();
}

function usage(to: (s: string) => void) {
  const names = available();
  to(`Usage: bun scripts/bench/run.ts <name> [args...]   (npm run bench -- <name>)\n\nAvailable benches:\n${names.map((n) => `  ${n}`).join("\n") || "  (none)"}\n\nCommon environment: BENCH_SECONDS (measurement per target, default 5), BENCH_WARMUP (default 1),\nBENCH_CLIENT (auto | inline | workers:<n>), BENCH_CONCURRENCY.`);
}

const [name, ...args] = process.argv.slice(2);
if (!name || name === "-h" || name === "--help" || name === "help") {
  usage(console.log);
  process.exit(name ? 0 : 2);
}
if (!/^[a-z0-9][a-z0-9_-]*$/i.test(name) || !available().includes(name)) {
  console.error(`unknown bench: ${name}\n`);
  usage(console.error);
  process.exit(2);
}

const mod = await import(join(DIR, `${name}.ts`));
if (typeof mod.default !== "function") {
  console.error(`scripts/bench/${name}.ts has no default export function`);
  process.exit(2);
}
try {
  await mod.default(args);
} catch (e) {
  console.error(`\nbench ${name} failed: ${(e as Error)?.stack ?? e}`);
  process.exitCode = 1;
}
// Anything left (servers, workers) is stopped by lib.ts's exit hook.
process.exit(process.exitCode ?? 0);
