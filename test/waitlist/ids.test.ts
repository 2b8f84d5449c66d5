/**
 * Ids on every admin route with one: credential first (401), then a malformed id is 400
 * VALIDATION_ERROR naming its field, then a well-formed id that names nothing is 404.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestApp, type TestApp } from "../helpers/app";
import { createWaitlist, join, type TestWaitlist } from "../helpers/waitlist";

let app: TestApp;
let w: TestWaitlist;
let entryId: string;
let variantId: string;
beforeAll(async () => {
  app = await startTestApp();
  w = await createWaitlist(app);
  entryId = (await join(app, w, { email: "ada@example.com" })).body.id;
  variantId = (await app.call("GET", `${w.base}/variants`, { token: w.token })).body.data[0].id;
});
afterAll(() => app.stop());

const UNKNOWN = "0192f3a1-7c2e-7a10-9b1e-3f5d2c8a4e61";
const BAD = "not-a-uuid";

/** Every route with an id in its path, the id to vary marked {id}; body where the route needs one. */
const routes = (): { name: string; field: string; method: string; path: (id: string) => string; body?: unknown }[] => {
  const ws = `/waitlist/v1/workspaces/${w.ws.id}/waitlists`;
  const wl = (id: string) => `${ws}/${id}`;
  const waitlistRoutes = [
    ["GET", ""], ["PATCH", "", { display_name: "X" }], ["DELETE", ""], ["PATCH", "/status", { status: "paused" }],
    ["GET", "/entries"], ["GET", "/entries/count"], ["GET", "/entries/export.csv"], ["GET", `/entries/${entryId}`],
    ["POST", "/entries/bulk", { action: "approve", top: 1 }], ["GET", "/variants"], ["POST", "/variants", { name: "b" }],
    ["PATCH", `/variants/${variantId}`, { weight: 2 }], ["GET", "/analytics"],
  ] as const;
  const entryRoutes = [["GET", ""], ["PATCH", "", { name: "Ada" }], ["DELETE", ""], ["POST", "/approve"], ["POST", "/reject"]] as const;
  const variantRoutes = [["PATCH", "", { weight: 3 }], ["DELETE", ""]] as const;
  return [
    ...waitlistRoutes.map(([method, rest, body]) => ({ name: `${method} waitlists/{id}${rest}`, field: "waitlist_id", method, path: (id: string) => `${wl(id)}${rest}`, body })),
    ...entryRoutes.map(([method, rest, body]) => ({ name: `${method} entries/{id}${rest}`, field: "entry_id", method, path: (id: string) => `${wl(w.id)}/entries/${id}${rest}`, body })),
    ...variantRoutes.map(([method, rest, body]) => ({ name: `${method} variants/{id}${rest}`, field: "variant_id", method, path: (id: string) => `${wl(w.id)}/variants/${id}${rest}`, body })),
  ];
};

describe("path ids", () => {
  test("every route: 401 without a credential, 400 naming the malformed id, 404 for an unknown one", async () => {
    const seen: string[] = [];
    for (const r of routes()) {
      const anon = await app.call(r.method, r.path(BAD), { body: r.body });
      expect([r.name, anon.status]).toEqual([r.name, 401]);
      const bad = await app.call(r.method, r.path(BAD), { token: w.token, body: r.body });
      expect([r.name, bad.status, bad.body.error?.code, bad.body.error?.details]).toEqual([r.name, 400, "VALIDATION_ERROR", [{ field: r.field, reason: "must be a UUID" }]]);
      const unknown = await app.call(r.method, r.path(UNKNOWN), { token: w.token, body: r.body });
      expect([r.name, unknown.status]).toEqual([r.name, 404]);
      seen.push(r.name);
    }
    expect(seen).toHaveLength(20);
    // Upper-case ids name the same entry.
    expect((await app.call("GET", `${w.base}/entries/${entryId.toUpperCase()}`, { token: w.token })).body.id).toBe(entryId);
  });

  test("a malformed entry id is 400 even on a waitlist that does not exist (validation before existence)", async () => {
    const r = await app.call("GET", `/waitlist/v1/workspaces/${w.ws.id}/waitlists/${UNKNOWN}/entries/${BAD}`, { token: w.token });
    expect(r.status).toBe(400);
    expect(r.body.error.details).toEqual([{ field: "entry_id", reason: "must be a UUID" }]);
  });
});

describe("ids in a body", () => {
  test("bulk entry_ids: a malformed one is 400 naming entry_ids, an unknown one 404, and nothing changes", async () => {
    const bad = await app.call("POST", `${w.base}/entries/bulk`, { token: w.token, body: { action: "approve", entry_ids: [entryId, BAD] } });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: "VALIDATION_ERROR", details: [{ field: "entry_ids", reason: `"${BAD}" is not a UUID` }] });
    const unknown = await app.call("POST", `${w.base}/entries/bulk`, { token: w.token, body: { action: "approve", entry_ids: [entryId, UNKNOWN] } });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toMatchObject({ code: "NOT_FOUND", details: [{ field: "entry_ids", reason: `${UNKNOWN} is not an entry of this waitlist` }] });
    expect((await app.call("GET", `${w.base}/entries/${entryId}`, { token: w.token })).body.status).toBe("pending");
  });

  test("required body fields are required: a missing one is 400 naming it", async () => {
    const ws = `/waitlist/v1/workspaces/${w.ws.id}/waitlists`;
    const cases: [string, string, unknown, string][] = [
      ["POST", ws, { display_name: "No slug" }, "slug"],
      ["POST", ws, { slug: "no-name" }, "display_name"],
      ["PATCH", `${w.base}/status`, {}, "status"],
      ["POST", `${w.base}/entries/bulk`, { top: 1 }, "action"],
      ["POST", `${w.base}/variants`, { weight: 1 }, "name"],
      ["POST", `${w.pub}/entries`, { name: "Nobody" }, "email"],
    ];
    for (const [method, path, body, field] of cases) {
      const r = await app.call(method, path, { token: w.token, body });
      expect([path, field, r.status, r.body.error?.code]).toEqual([path, field, 400, "VALIDATION_ERROR"]);
      expect(r.body.error.details.map((d: any) => d.field)).toContain(field);
    }
  });
});
