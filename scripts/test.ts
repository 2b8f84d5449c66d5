/**
 * `npm test` and `npm run test:pg`: the suite in-process, on SQLite or (--engine postgres) on
 * a throwaway PostgreSQL cluster, in BUNKER_TEST_SHARDS `bun test` processes side by side
 * (scripts/testing/shards.ts). test/bin/ is left to `npm run test:bin`.
 *
 *   bun scripts/test.ts [--engine postgres] [files or folders...]
 *
 * Without paths: every test file. On PostgreSQL the files that only concern SQLite or the
 * source tree are left out (test/pg/ starts its own clusters; the type check, the floating
 * promise lint and the console's browser journeys run once, on SQLite, and the journeys again
 * against the binary), and so are the files whose outcome cannot depend on the engine: they
 * neither read BUNKER_TEST_ENGINE nor reach the helper that hands out the run's databases
 * (scripts/testing/imports.ts), so a second run would repeat the first exactly. One file with bun's own options: `bun test --timeout 60000 <file>`.
 */
import { existsSync, statSync } from "node:fs";
import { relative, resolve } from "node:path";
import { dependsOnTestEngine } from "./testing/imports";
import { root, runShards, shardCount, testFiles } from "./testing/shards";

const args = process.argv.slice(2);
const engineAt = args.indexOf("--engine");
const engine = engineAt >= 0 ? args.splice(engineAt, 2)[1] : "sqlite";
if (engine !== "sqlite" && engine !== "postgres") {
  console.error(`test: unknown engine "${engine}" (sqlite or postgres)`);
  process.exit(2);
}
const NOT_ON = {
  sqlite: ["test/bin/"],
  postgres: ["test/bin/", "test/pg/", "test/typecheck.test.ts", "test/arch/floating.test.ts", "test/console/"],
}[engine];
const leftOut = (f: string) => NOT_ON.some((p) => f === p || f.startsWith(p)) || (engine === "postgres" && !dependsOnTestEngine(resolve(root, f)));

const full = args.length === 0;
const files: string[] = [];
for (const a of full ? ["test"] : args) {
  const p = resolve(root, a);
  if (existsSync(p) && statSync(p).isDirectory()) files.push(...testFiles(p).map((f) => relative(root, f)).filter((f) => !leftOut(f)));
  else files.push(relative(root, p));
}

const log = (msg: string) => console.log(`test (${engine}): ${msg}`);
log(`${files.length} files in ${Math.min(files.length, shardCount(2))} processes`);
const { passed, failed, ok } = await runShards({
  kind: engine,
  files,
  shards: shardCount(2),
  env: engine === "postgres" ? { BUNKER_TEST_ENGINE: "postgres" } : {},
  record: full,
  log,
});
// The summary line .ci/run reads (bun's own format); a process that failed without a failed test counts as one.
console.log(`\n ${passed} pass\n ${failed + (ok || failed ? 0 : 1)} fail`);
process.exit(ok ? 0 : 1);
