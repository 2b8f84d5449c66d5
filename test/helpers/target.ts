/**
 * Which program a test runs against, and how a test that can only run in-process says so.
 *
 * `npm test` / `npm run test:pg` build the app in-process; `npm run test:bin` runs the same
 * HTTP tests against the compiled binary (test/helpers/binary.ts). Two ways to stay source-only:
 * - a whole file: a line `// source-only: <reason>` among its first lines; scripts/test-bin.ts
 *   leaves the file out and prints the reason;
 * - one test: `inProcess("<reason>")("name", fn, timeout)` instead of `test(...)`. On the
 *   binary run it is not registered; its name and reason are written to BUNKER_TEST_TALLY so
 *   the run's summary counts it (nothing is silently skipped).
 */
import { appendFileSync } from "node:fs";
import { test } from "bun:test";
import { ON_BINARY } from "./binary";

export { ON_BINARY };

type TestFn = typeof test;

export function inProcess(reason: string): (name: string, fn: () => unknown, timeout?: number) => void {
  if (!ON_BINARY) return (name, fn, timeout) => test(name, fn as Parameters<TestFn>[1], timeout);
  return (name) => {
    const tally = process.env.BUNKER_TEST_TALLY;
    if (tally) appendFileSync(tally, JSON.stringify({ file: Bun.main, name, reason }) + "\n");
  };
}
