import { expect, test } from "bun:test";
import { join } from "node:path";
import { floatingPromises } from "../../scripts/check-floating";

// With async stores a forgotten `await` is a write that may land after its transaction
// committed (or on another connection): no promise may float unnoticed.
test("no promise is left floating (scripts/check-floating.ts)", () => {
  expect(floatingPromises(join(import.meta.dir, "../.."))).toEqual([]);
}, 120_000);
