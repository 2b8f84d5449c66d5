import { expect, test } from "bun:test";
import { join } from "node:path";

// bun runs TypeScript without checking it; this keeps the whole tree type-correct.
test("the project type-checks (tsc --noEmit)", () => {
  const root = join(import.meta.dir, "..");
  const r = Bun.spawnSync([process.execPath, join(root, "node_modules/typescript/bin/tsc"), "--noEmit", "-p", root], { cwd: root });
  const out = r.stdout.toString() + r.stderr.toString();
  expect(out.split("\n").filter((l) => l.includes("error TS"))).toEqual([]);
  expect(r.exitCode).toBe(0);
}, 300_000);
