import { expect, test } from "bun:test";
import { FormatRegistry } from "@sinclair/typebox";
import { TypeCompiler } from "@sinclair/typebox/compiler";
import { t } from "elysia";
import "../../src/core/formats";

const check = TypeCompiler.Compile(t.Object({ at: t.String({ format: "date-time" }) }));
const ok = (at: string) => check.Check({ at });

test("the fast path is installed over Elysia's date-time checker", () => {
  expect((FormatRegistry.Get("date-time") as { fast?: true }).fast).toBe(true);
});

test("toISOString timestamps pass; impossible ones in the same shape do not", () => {
  expect(ok(new Date(0).toISOString())).toBe(true);
  expect(ok("2026-11-23T19:56:49.123Z")).toBe(true);
  expect(ok("2024-02-29T23:59:59.999Z")).toBe(true);
  for (const bad of ["2026-13-01T00:00:00.000Z", "2026-00-10T00:00:00.000Z", "2026-01-32T00:00:00.000Z", "2026-01-01T00:60:00.000Z", "2026-01-01T00:00:60.000Z"]) {
    expect(ok(bad)).toBe(false);
  }
});

test("other shapes keep Elysia's lenient answer (RFC 3339 offsets and no fraction accepted, junk refused)", () => {
  expect(ok("2026-11-23T19:56:49Z")).toBe(true);
  expect(ok("2026-11-23T19:56:49.5+02:00")).toBe(true);
  expect(ok("2026-11-23T19:56:49.123456Z")).toBe(true);
  expect(ok("yesterday")).toBe(false);
  expect(ok("")).toBe(false);
  expect(ok("2026-11-23T19:56:49.123Zx")).toBe(false);
});
