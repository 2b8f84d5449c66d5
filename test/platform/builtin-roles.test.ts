// source-only: reads the built-in roles straight from the store and the action registry (app.ctx); the roles as served are checked over HTTP in platform/roles and platform/every-route
import { expect, test } from "bun:test";
import { isValidActionPattern } from "../../src/access/policy";
import { startTestApp } from "../helpers/app";

// A built-in role naming an unregistered action could never be covered by an API key's
// (validated) policy, so no key could ever grant that role. Keep them in step.
test("built-in role policies name only registered actions (or wildcards)", async () => {
  const app = await startTestApp();
  const rows = await app.ctx.db.all<{ name: string; policy: string }>("SELECT name, policy FROM platform_roles WHERE builtin = 1");
  expect(rows.map((r) => r.name).sort()).toEqual(["admin", "member", "owner"]);
  for (const r of rows) {
    for (const s of JSON.parse(r.policy)) {
      for (const a of s.actions as string[]) {
        const ok = a === "*" || (a.endsWith(".*") ? app.ctx.actions.matching(a).length > 0 || isValidActionPattern(a) : app.ctx.actions.has(a));
        expect({ role: r.name, action: a, ok }).toEqual({ role: r.name, action: a, ok: true });
      }
    }
  }
  await app.stop();
});
