import { expect, test } from "bun:test";
import { DeferredWork } from "../../src/core/deferred";
import type { Logger } from "../../src/core/log";

test("runs after the caller returns, logs failures, idle() waits for everything", async () => {
  const errors: { msg: string; fields: any }[] = [];
  const log = { error: (msg: string, fields: any) => errors.push({ msg, fields }) } as unknown as Logger;
  const d = new DeferredWork(log);
  const order: string[] = [];
  d.run("first", async () => {
    await Bun.sleep(5);
    order.push("first");
  });
  d.run("second", () => {
    throw new Error("smtp down");
  }, { app_id: "a1" });
  order.push("caller");
  await d.idle();
  expect(order).toEqual(["caller", "first"]);
  expect(errors).toEqual([{ msg: "second failed", fields: { app_id: "a1", err: "Error: smtp down" } }]);
});
