/**
 * The console's API types (console/lib/api-types/) are what openapi-typescript makes of the
 * documents the server builds now: a change to a documented schema reruns
 * `bun scripts/console-api-types.ts` (then `bun scripts/build-console.ts`).
 */
import { expect, test } from "bun:test";
import { buildApiTypes, committedApiTypes, staleApiTypes } from "../../scripts/console-api-types";

test("console/lib/api-types/ matches the server's OpenAPI documents (run `bun scripts/console-api-types.ts` after changing a documented schema)", async () => {
  const built = await buildApiTypes();
  expect(built.size).toBeGreaterThan(2);
  expect(staleApiTypes(built, committedApiTypes())).toEqual([]);
}, 120_000);
