/**
 * Builds the admin console (console/, Preact + uPlot) into static/admin/app.js and
 * static/admin/app.css, which the server imports as text (so the compiled binary embeds
 * them; src/admin-console.ts serves them).
 *
 *   bun scripts/build-console.ts           write the assets
 *   bun scripts/build-console.ts --check   exit 1 when the committed assets differ from the source
 *
 * The built files are committed: `bun test`, `bun src/main.ts` and `bun build --compile`
 * all work on a clean clone with no build step first, and test/console/bundle.test.ts
 * fails when someone edits console/ without rebuilding (bun's output is deterministic for
 * one bun version, which package.json pins). scripts/build.ts rebuilds them before compiling.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";

const root = resolve(import.meta.dir, "..");
export const CONSOLE_OUT = { js: join(root, "static/admin/app.js"), css: join(root, "static/admin/app.css") };

export async function buildConsole(): Promise<{ js: string; css: string }> {
  const res = await Bun.build({
    entrypoints: [join(root, "console/main.tsx")],
    target: "browser",
    format: "esm",
    minify: true,
    define: { "process.env.NODE_ENV": '"production"' },
  });
  if (!res.success) throw new Error(`console build failed:\n${res.logs.map(String).join("\n")}`);
  const js = await res.outputs.find((o) => o.kind === "entry-point")!.text();
  const css = [readFileSync(join(root, "node_modules/uplot/dist/uPlot.min.css"), "utf8"), readFileSync(join(root, "console/styles.css"), "utf8")].join("\n");
  return { js, css };
}

export function committedConsole(): { js: string; css: string } {
  const read = (p: string) => {
    try {
      return readFileSync(p, "utf8");
    } catch {
      return "";
    }
  };
  return { js: read(CONSOLE_OUT.js), css: read(CONSOLE_OUT.css) };
}

if (import.meta.main) {
  const built = await buildConsole();
  if (process.argv.includes("--check")) {
    const now = committedConsole();
    if (now.js !== built.js || now.css !== built.css) {
      console.error("build-console: static/admin/app.{js,css} are stale: run `bun scripts/build-console.ts` and commit them");
      process.exit(1);
    }
    console.log("build-console: static/admin assets match console/");
  } else {
    writeFileSync(CONSOLE_OUT.js, built.js);
    writeFileSync(CONSOLE_OUT.css, built.css);
    const gz = (s: string) => Bun.gzipSync(new TextEncoder().encode(s), { level: 9 }).length;
    console.log(`build-console: app.js ${(built.js.length / 1024).toFixed(1)} KiB (${(gz(built.js) / 1024).toFixed(1)} KiB gzipped), app.css ${(built.css.length / 1024).toFixed(1)} KiB (${(gz(built.css) / 1024).toFixed(1)} KiB gzipped)`);
  }
}
