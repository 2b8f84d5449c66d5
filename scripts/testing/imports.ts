/**
 * Which test files reach a given helper through their relative imports (transitively, within
 * test/): the runners use it to decide where a file has something to prove. test:bin runs the
 * files that start the program; the PostgreSQL run leaves out the files whose outcome cannot
 * depend on the engine under test (they would run the very same code a second time).
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { root } from "./shards";

const testRoot = join(root, "test");

/** The test-tree modules `file` imports with a relative specifier. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, "utf8");
  const out: string[] = [];
  for (const m of text.matchAll(/(?:from|import)\s*\(?\s*"(\.{1,2}\/[^"]+)"/g)) {
    const target = resolve(dirname(file), m[1]!);
    const found = [target, `${target}.ts`, join(target, "index.ts")].find((c) => existsSync(c) && c.endsWith(".ts"));
    if (found && found.startsWith(testRoot)) out.push(found);
  }
  return out;
}

/** Whether `file` is, or imports (transitively), a module for which `hit` holds. */
export function reaches(file: string, hit: (file: string, text: () => string) => boolean, seen = new Set<string>()): boolean {
  if (seen.has(file)) return false;
  seen.add(file);
  if (hit(file, () => readFileSync(file, "utf8"))) return true;
  return importsOf(file).some((f) => reaches(f, hit, seen));
}

/**
 * Whether a test's outcome can depend on BUNKER_TEST_ENGINE: it reads it, or reaches the
 * helper that hands out databases on the run's engine (test/helpers/engine.ts, which the app
 * helper uses).
 */
export function dependsOnTestEngine(file: string): boolean {
  const engineHelper = join(root, "test/helpers/engine.ts");
  return reaches(file, (f, text) => f === engineHelper || text().includes("BUNKER_TEST_ENGINE") || text().includes("TEST_ENGINE"));
}
