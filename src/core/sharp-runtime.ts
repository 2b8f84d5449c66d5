/**
 * sharp (image processing), loaded on first use, from source and from the single executable.
 *
 * From source, `require("sharp")` finds its addon and libvips in node_modules. In the binary,
 * `bun build --compile` embeds both: the `.node` addon (it follows sharp's static require, and
 * at run time writes the addon to the temp dir to load it) and libvips-cpp.so (sharp's
 * platform package calls `require.resolve` on it, so bun embeds it as a file). But the
 * library stays a file inside bun's virtual filesystem, where the addon's RPATH (node_modules
 * beside it) cannot find it, and the addon fails to load. So this module writes the library to
 * $DATA_DIR/runtime/<sha256 prefix>/ and dlopens it before sharp loads: the dynamic linker
 * then satisfies the addon's DT_NEEDED entry with the library already in the process (glibc
 * matches it by SONAME; the file is named after the SONAME for linkers that match by name).
 *
 * Lazy, so start-up time does not grow: the first image to process pays for it (hash, write
 * on the first start only, dlopen: about 0.1 s). A binary without the library (built where
 * the platform's sharp packages were not installed) still starts; its uploads end
 * asset.failed with image_processing_unavailable, after one warning.
 */
import { RUNS_COMPILED } from "./compiled";
import { dlopen } from "bun:ffi";
import { createHash } from "node:crypto";
import { chmod, mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type Sharp from "sharp";
import type { Logger } from "./log";

export type SharpModule = typeof Sharp;

/**
 * One load per process, whatever the number of apps in it: a native library can only be
 * loaded once (a second copy of libvips under another path would be a second, separate
 * library in the same process). From source nothing is written, so the first app's DATA_DIR
 * only matters to the binary, which runs one app.
 */
let loading: Promise<SharpModule | null> | undefined;
/** The dlopen handle, kept referenced for the life of the process: sharp's addon uses the library. */
let libvips: { close(): void } | undefined;

export function loadSharp(dataDir: string, log: Logger): Promise<SharpModule | null> {
  loading ??= load(dataDir, log);
  return loading;
}

async function load(dataDir: string, log: Logger): Promise<SharpModule | null> {
  const lib = embeddedLibvips();
  try {
    if (lib) {
      const started = performance.now();
      const { path, reused } = await materialize(lib, join(dataDir, "runtime"));
      const h = dlopen(path, { vips_version: { args: ["i32"], returns: "i32" } });
      libvips = h;
      const version = [0, 1, 2].map((i) => h.symbols.vips_version(i)).join(".");
      log.info("libvips loaded", { path, version, reused, ms: Math.round(performance.now() - started) });
    }
    // A literal require (not import(), not a computed name): the bundler follows it into
    // sharp's CommonJS build, whose static require of the platform addon embeds the .node.
    return require("sharp") as SharpModule;
  } catch (e) {
    const reason = (e instanceof Error ? e.message : String(e)).split("\n")[0];
    // sharp's own message is generic ("Could not load ..."); say which case this is.
    const libvipsFrom = lib ? `embedded ${lib.name}` : RUNS_COMPILED ? "none: not embedded in this executable" : "node_modules";
    log.warn("image processing unavailable: image uploads will fail with image_processing_unavailable", { reason, libvips: libvipsFrom, data_dir: dataDir });
    return null;
  }
}

/** The libvips library bun embedded, or undefined (from source, or a binary built without it). */
function embeddedLibvips(): (Blob & { name: string }) | undefined {
  return (Bun.embeddedFiles as (Blob & { name: string })[]).find((f) => f.name.startsWith("libvips-cpp."));
}

/**
 * The embedded library as a file: reused when the copy on disk has the same SHA-256 (a torn
 * or altered copy is rewritten, so no fsync is needed), else written to a temp name and
 * renamed into place, so a concurrent reader never sees half a file. Read-only afterwards.
 */
async function materialize(lib: Blob & { name: string }, runtimeDir: string): Promise<{ path: string; reused: boolean }> {
  const bytes = new Uint8Array(await lib.arrayBuffer());
  const sha = sha256(bytes);
  const dir = join(runtimeDir, sha.slice(0, 16));
  const path = join(dir, soname(lib.name));
  const existing = await readFile(path).catch(() => null);
  if (existing && sha256(existing) === sha) return { path, reused: true };
  await mkdir(dir, { recursive: true, mode: 0o700 });
  // Left read-only by an earlier start: writable again while its bad copy is replaced.
  await chmod(dir, 0o700);
  const tmp = `${path}.${process.pid}.tmp`;
  await rm(tmp, { force: true });
  await writeFile(tmp, bytes, { mode: 0o400 });
  await rename(tmp, path);
  await chmod(dir, 0o500);
  return { path, reused: false };
}

/**
 * The library's own name from its embedded name: bun adds an 8-character content hash before
 * the last extension ("libvips-cpp.so.8.18-61s4p4t6.7" for libvips-cpp.so.8.18.7).
 */
function soname(embeddedName: string): string {
  return embeddedName.replace(/-[a-z0-9]{8}(\.[^.]+)$/, "$1");
}

function sha256(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}
