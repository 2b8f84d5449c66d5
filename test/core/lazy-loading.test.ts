// source-only: reads the module registry of a source-run process (the binary bundles every module into one file)
/**
 * The heavy libraries (mail parsing and authentication, HTML and markdown tooling, templates,
 * image processing, JSON-schema validation of extraction jobs) load when first used, not at
 * start (core/lazy.ts): a start that imported them took several times the CPU and memory.
 * A started app that answered its health, readiness and OpenAPI routes must have loaded none
 * of them; rendering a guide then loads its two (the registry shows a lazy load).
 */
import { expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const HEAVY = [
  "@mozilla/readability",
  "ajv",
  "disposable-email-domains",
  "dompurify",
  "handlebars",
  "html-to-text",
  "juice",
  "linkedom",
  "mailauth",
  "mailparser",
  "marked",
  "nodemailer",
  "postal-mime",
  "sanitize-html",
  "sharp",
  "turndown",
];

test("a started app has loaded none of the heavy libraries; the first guide loads its markdown renderer and sanitiser", async () => {
  const dir = mkdtempSync(join(tmpdir(), "bunker-lazy-"));
  try {
    const child = Bun.spawn([process.execPath, join(import.meta.dir, "lazy-loading-child.ts")], {
      env: { PATH: process.env.PATH, DATA_DIR: join(dir, "data") },
      stdout: "pipe",
      stderr: "pipe",
    });
    const [out, err, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
    expect({ code, err: code ? err : "" }).toEqual({ code: 0, err: "" });
    const { started, afterGuide } = JSON.parse(out.trim().split("\n").at(-1)!) as { started: string[]; afterGuide: string[] };
    // The registry is read: the app's own framework is there.
    expect(started).toContain("elysia");
    expect(started.filter((p) => HEAVY.includes(p))).toEqual([]);
    expect(afterGuide.filter((p) => HEAVY.includes(p))).toEqual(["marked", "sanitize-html"]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
