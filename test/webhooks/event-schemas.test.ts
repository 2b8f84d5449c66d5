import { describe, expect, test } from "bun:test";
import { Value } from "@sinclair/typebox/value";
import { SERVICE_MODULES } from "../../src/app";

/** Every product's declared events: the example the catalogue serves is data its schema accepts. */
const PRODUCTS = SERVICE_MODULES.flatMap((m) => (m.webhooks ? [m.webhooks] : []));

describe("event schemas", () => {
  test("every product declares events", () => {
    expect(PRODUCTS.map((p) => p.product).sort()).toEqual(["auth", "mail", "social", "tack", "trawl", "waitlist"]);
  });

  for (const p of PRODUCTS) {
    test(`${p.product}: each example is valid data of its type`, () => {
      const failures = p.events.flatMap((e) => [...Value.Errors(e.data, e.example)].map((x) => `${e.type}: ${x.path || "/"} ${x.message}`));
      expect(failures).toEqual([]);
      expect(p.events.length).toBeGreaterThan(0);
    });
  }

  test("a schema refuses what its type never carries (the check is not vacuous)", () => {
    for (const p of PRODUCTS) for (const e of p.events) expect(Value.Check(e.data, "not an object")).toBe(false);
  });
});
