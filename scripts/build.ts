/**
 * Builds the single Bunker executable: `npm run build` -> dist/bunker.
 *
 *   bun scripts/build.ts [--outfile <path>] [--target <bun-target>] [--no-bytecode] [--no-verify]
 *
 * - Uses the bun binary running this script (process.execPath): there is no global bun;
 *   npm brings it as a devDependency.
 * - Rebuilds the admin console (scripts/build-console.ts) into static/admin/ first.
 * - Code, SQL migrations (each migrations/index.ts) and the admin console are imported as text,
 *   so they are embedded: the output needs no repository files next to it.
 * - sharp needs no flag: bun follows its static require of the platform addon and embeds the
 *   .node, and the addon package's `require.resolve("@img/sharp-libvips-<platform>/binary")`
 *   embeds libvips as a file; src/core/sharp-runtime.ts writes that file out and loads it
 *   before the addon. test/bin/images.test.ts fails if a sharp upgrade stops either.
 * - No minification of any kind: Elysia reads each handler's source text (Function#toString)
 *   to decide what it needs and whether it returns a promise. --minify-syntax rewrote that
 *   text and the JWKS route answered 400 from the binary while it answered 200 from source;
 *   whitespace minification saves 2.6 MiB of 126 and no measurable start time, so nothing
 *   that rewrites handler text is worth the risk. `npm run test:bin` runs the HTTP tests
 *   against this output.
 * - Bytecode (`--bytecode --format=esm`): JavaScriptCore's compiled form ships beside the
 *   source, so a start does not parse 1,800 modules first: start to listening on a fresh
 *   DATA_DIR 0.42-0.59 s against 0.82-1.06 s, `bunker version` 0.21-0.30 s against 0.59-0.72
 *   s, for 20.7 MiB more (166.2 against 145.5). It keeps the source text Elysia reads (the
 *   whole test:bin run passes on it, JWKS included). --no-bytecode builds without.
 * - The source map is embedded in the executable (stack traces name src/... lines); the
 *   loose `.map` file bun also writes is removed so dist/ holds one file.
 * - Verifies the result by copying it to an empty temp directory and running
 *   `./bunker version` there (skipped with --no-verify or when cross-compiling).
 */
import { spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { buildConsole, CONSOLE_OUT } from "./build-console";

const root = resolve(import.meta.dir, "..");
const args = process.argv.slice(2);
const flag = (name: string) => args.includes(name);
const option = (name: string) => {
  const i = args.indexOf(name);
  if (i < 0) return undefined;
  const v = args[i + 1];
  if (!v || v.startsWith("--")) fail(`${name} needs a value`);
  return v;
};

function fail(msg: string): never {
  console.error(`build: ${msg}`);
  process.exit(1);
}

const entry = join(root, "src/main.ts");
// Worker threads' entry points are embedded only when listed beside the main one.
const workers = [join(root, "src/services/mail/inbound/check-worker.ts")];
const outfile = resolve(option("--outfile") ?? join(root, "dist/bunker"));
const target = option("--target");
const bun = process.execPath;
const mib = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MiB`;

// The console's assets are embedded as they are in static/admin/: rebuild them from console/ first.
const consoleAssets = await buildConsole();
writeFileSync(CONSOLE_OUT.js, consoleAssets.js);
writeFileSync(CONSOLE_OUT.css, consoleAssets.css);

mkdirSync(dirname(outfile), { recursive: true });
const cmd = [
  "build",
  "--compile",
  "--sourcemap",
  ...(flag("--no-bytecode") ? [] : ["--bytecode", "--format=esm"]),
  ...(target ? [`--target=${target}`] : []),
  entry,
  ...workers,
  "--outfile",
  outfile,
];
console.log(`build: compiling ${relative(root, entry)} -> ${outfile}`);
console.log(`build: using ${bun} (bun ${Bun.version})${target ? `, target ${target}` : ""}`);

const started = performance.now();
const res = spawnSync(bun, cmd, { cwd: root, stdio: ["ignore", "inherit", "inherit"] });
if (res.error) fail(`could not run ${bun}: ${res.error.message}`);
if (res.status !== 0) fail(`bun build failed (exit ${res.status})`);
if (!existsSync(outfile)) fail(`bun build reported success but ${outfile} does not exist`);
rmSync(`${outfile}.map`, { force: true });
const seconds = ((performance.now() - started) / 1000).toFixed(1);
console.log(`build: wrote ${outfile} (${mib(statSync(outfile).size)}) in ${seconds} s`);

if (!flag("--no-verify") && !target) {
  // Run it where no repository file can help it: an empty temp dir, as on a fresh VM.
  const dir = mkdtempSync(join(tmpdir(), "bunker-verify-"));
  try {
    const copy = join(dir, "bunker");
    copyFileSync(outfile, copy);
    const v = spawnSync(copy, ["version"], { cwd: dir, encoding: "utf8", env: { PATH: process.env.PATH ?? "/usr/bin:/bin" }, timeout: 30_000 });
    const out = (v.stdout ?? "").trim();
    if (v.status !== 0 || !out) fail(`verification failed: "bunker version" from ${dir} exited ${v.status}: ${v.stderr || out}`);
    console.log(`build: verified: bunker version -> ${out} (run from an empty directory)`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
