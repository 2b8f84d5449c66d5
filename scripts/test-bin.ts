/**
 * `npm run test:bin [files...]`: the HTTP tests against the shipped program.
 *
 * 1. Builds the binary once, with scripts/build.ts (what `npm run build` runs), into a folder of
 *    this run's own (so that runs side by side never replace each other's executable);
 *    BUNKER_TEST_BINARY=<path> runs an existing build instead.
 * 2. Runs `bun test` with BUNKER_TEST_BINARY pointing at it: test/helpers/app.ts and cli.ts then
 *    start that executable as a process and talk to it over loopback. Without file arguments:
 *    every test file except those marked `// source-only: <reason>` (printed), plus test/bin/
 *    (tests that only make sense on the binary: images, the data-directory lock, the smoke run).
 * 3. Prints how many tests ran against the binary, the source-only tests left out with their
 *    reasons, and which API routes (of the served OpenAPI, /docs/json) the run reached: every
 *    process's /metrics is read before it stops. A full run fails when an operation of the
 *    OpenAPI was never answered with a success status by the binary.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";
import { reaches } from "./testing/imports";
import { runShards, shardCount, testFiles } from "./testing/shards";

const root = resolve(import.meta.dir, "..");
const bun = process.execPath;
const args = process.argv.slice(2);
const full = args.length === 0;
const work = mkdtempSync(join(tmpdir(), "bunker-test-bin-"));
const binary = process.env.BUNKER_TEST_BINARY || join(work, "bunker");

function step(msg: string) {
  console.log(`test:bin: ${msg}`);
}

// 1. The binary, built once for the whole run.
if (!process.env.BUNKER_TEST_BINARY) {
  const started = performance.now();
  const built = spawnSync(bun, [join(root, "scripts/build.ts"), "--outfile", binary], { cwd: root, stdio: ["ignore", "inherit", "inherit"] });
  if (built.status !== 0) {
    console.error("test:bin: the build failed");
    console.log("0 pass\n1 fail");
    process.exit(1);
  }
  step(`built ${binary} in ${((performance.now() - started) / 1000).toFixed(1)} s`);
}

// 2. Which files.
const MARK = /^\s*\/\/\s*source-only:\s*(.+)$/m;
const sourceOnlyFiles: { file: string; reason: string }[] = [];
const unitFiles: string[] = [];
const files: string[] = [];
// Folders given (or the whole test/ tree) are filtered like the full run; a file named
// explicitly runs as asked.
const given = full ? [join(root, "test")] : args.map((a) => resolve(root, a));
for (const g of given) {
  if (!existsSync(g) || !statSync(g).isDirectory()) {
    files.push(relative(root, g));
    continue;
  }
  for (const f of testFiles(g)) {
    const head = readFileSync(f, "utf8").split("\n").slice(0, 30).join("\n");
    const m = MARK.exec(head);
    if (m) sourceOnlyFiles.push({ file: relative(root, f), reason: m[1].trim() });
    else if (startsTheProgram(f)) files.push(relative(root, f));
    else unitFiles.push(relative(root, f));
  }
}

/**
 * Whether a test file starts Bunker at all: it (or a test module it imports, transitively)
 * imports the helpers that start the app or the CLI. The others are unit tests of modules:
 * the binary has nothing to add to them.
 */
function startsTheProgram(file: string): boolean {
  const starters = ["test/helpers/app.ts", "test/helpers/cli.ts", "test/helpers/binary.ts"].map((p) => join(root, p));
  return reaches(file, (f) => starters.includes(f) || f.startsWith(join(root, "test/bin/")));
}

const routesFile = join(work, "routes.jsonl");
const tallyFile = join(work, "tally.jsonl");
writeFileSync(routesFile, "");
writeFileSync(tallyFile, "");

step(`${files.length} test files against ${binary}; ${sourceOnlyFiles.length} files source-only; ${unitFiles.length} unit-test files start no program and stay in npm test`);
if (files.length === 0) {
  // bun test without file arguments would run the whole tree in-process.
  step("nothing to run against the binary");
  process.exit(0);
}
// The binary's tests mostly wait (for a process to start, for its scheduler's next tick), so
// the files run in BUNKER_TEST_SHARDS bun processes side by side (default 3).
const shardRun = await runShards({
  kind: "binary",
  files,
  shards: shardCount(3),
  env: { BUNKER_TEST_BINARY: binary, BUNKER_TEST_ROUTES: routesFile, BUNKER_TEST_TALLY: tallyFile },
  record: full,
  log: step,
});
const { passed, failed } = shardRun;
const run = { status: shardRun.ok ? 0 : 1 };

// 3. What ran, what did not, and which routes were reached.
console.log("");
step(`${passed + failed} tests ran against the binary (${passed} passed, ${failed} failed)`);
const tally = readFileSync(tallyFile, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l) as { file: string; name: string; reason: string });
if (sourceOnlyFiles.length || tally.length) {
  const reasons = new Map<string, number>();
  for (const t of tally) reasons.set(t.reason, (reasons.get(t.reason) ?? 0) + 1);
  step(`source-only: ${sourceOnlyFiles.length} files and ${tally.length} tests of the other files (they run in npm test and test:pg)`);
  for (const f of sourceOnlyFiles) console.log(`  file ${f.file}: ${f.reason}`);
  for (const [reason, n] of [...reasons].sort((a, b) => b[1] - a[1])) console.log(`  ${n} test${n === 1 ? "" : "s"}: ${reason}`);
}

// A partial run reports (without failing) the routes of the services its tests reached.
let coverageFailed = false;
if (passed + failed > 0) coverageFailed = !(await reportRoutes()) && full;

rmSync(work, { recursive: true, force: true });
const ok = run.status === 0 && !coverageFailed;
// The summary line .ci/run reads (bun's own format).
console.log(`\n ${passed} pass\n ${failed + (ok || failed ? 0 : 1)} fail`);
process.exit(ok ? 0 : 1);

/** Every OpenAPI operation the binary serves, against what the run's processes answered. */
async function reportRoutes(): Promise<boolean> {
  const served = new Map<string, Set<number>>();
  for (const line of readFileSync(routesFile, "utf8").split("\n")) {
    if (!line) continue;
    const r = JSON.parse(line) as { method: string; route: string; status: number };
    const key = `${r.method} ${r.route}`;
    if (!served.has(key)) served.set(key, new Set());
    served.get(key)!.add(r.status);
  }
  const service = (op: string) => op.split(" ")[1].split("/")[1];
  const touched = new Set([...served.keys()].map(service));
  const operations = (await servedOperations()).filter((op) => full || touched.has(service(op)));
  const ok: string[] = [];
  const onlyErrors: string[] = [];
  const never: string[] = [];
  for (const op of operations) {
    const statuses = served.get(op);
    if (!statuses) never.push(op);
    else if ([...statuses].some((s) => s < 400)) ok.push(op);
    else onlyErrors.push(`${op} (${[...statuses].sort().join(", ")})`);
  }
  step(`routes: ${ok.length} of ${operations.length} OpenAPI operations answered with success by the binary; ${onlyErrors.length} only with errors; ${never.length} never reached`);
  for (const op of onlyErrors) console.log(`  only errors: ${op}`);
  for (const op of never) console.log(`  never reached: ${op}`);
  return onlyErrors.length === 0 && never.length === 0;
}

/** "METHOD /route/:template" for every operation of the binary's own /docs/json. */
async function servedOperations(): Promise<string[]> {
  const dir = mkdtempSync(join(tmpdir(), "bunker-openapi-"));
  const proc = Bun.spawn([binary, "serve"], { cwd: dir, env: { PATH: process.env.PATH ?? "/usr/bin:/bin", DATA_DIR: dir, HOST: "127.0.0.1", PORT: "0", SMTP_PORT: "off", LOG_LEVEL: "info" }, stdout: "pipe", stderr: "ignore" });
  try {
    let out = "";
    const decoder = new TextDecoder();
    const reader = (proc.stdout as ReadableStream<Uint8Array>).getReader();
    let port = 0;
    while (!port) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`bunker exited before listening:\n${out}`);
      out += decoder.decode(value, { stream: true });
      port = Number(/"msg":"bunker listening".*?"url":"http:\/\/[^"]*:(\d+)"/.exec(out)?.[1] ?? 0);
    }
    const doc = (await (await fetch(`http://127.0.0.1:${port}/docs/json`)).json()) as { paths: Record<string, Record<string, unknown>> };
    const methods = ["get", "put", "post", "delete", "patch"];
    return Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.keys(ops)
        .filter((m) => methods.includes(m))
        .map((m) => `${m.toUpperCase()} ${path.replace(/\{([^}]+)\}/g, ":$1")}`),
    );
  } finally {
    proc.kill("SIGKILL");
    await proc.exited;
    if (existsSync(dir)) rmSync(dir, { recursive: true, force: true });
  }
}
