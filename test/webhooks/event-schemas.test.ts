import { describe, expect, test } from "bun:test";
import { Value } from "@sinclair/typebox/value";
import { SERVICE_MODULES } from "../../src/app";
import { emitEvent } from "../../src/kernel/webhooks";
import { TACK_WEBHOOKS } from "../../src/services/tack/board/events";
import { startTestApp } from "../helpers/app";
import { inProcess } from "../helpers/target";

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

  inProcess("calls the product's emit over the in-process engine (app.webhooks) and counts the outbox (app.ctx)")(
    "a product's emit refuses a type it does not declare, before recording anything",
    async () => {
      const app = await startTestApp();
      // Nothing fans the outbox out meanwhile: the counts below are the emits'.
      app.webhooks.options.autoKick = false;
      try {
        // The type check refuses this call; the casts stand for code that got past it.
        expect(() => emitEvent(app.webhooks, TACK_WEBHOOKS, app.ctx.db, "ws_1", "card.deleted" as never, {} as never)).toThrow(/tack declares no event type "card.deleted"/);
        expect(await app.ctx.events.pendingCount("webhook:")).toBe(0);
        await emitEvent(app.webhooks, TACK_WEBHOOKS, app.ctx.db, "ws_1", "list.deleted", { id: "list_1", project_id: "proj_1", name: "todo", deleted_at: "2026-11-02T09:20:41.000Z", actor_id: "key_1" });
        expect(await app.ctx.events.pendingCount("webhook:")).toBe(1);
      } finally {
        await app.stop();
      }
    },
  );
});
