/**
 * Ids on every admin route with one: credential first (401), then a malformed id is 400
 * VALIDATION_ERROR naming its field, then a well-formed id that names nothing is 404. The
 * shapes are the route schemas', so the OpenAPI shows them. Input rules that need no stored
 * record are checked before the lookup too: a bad body on an unknown waitlist is 400.
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
const fields = (r: { body: any }) => (r.body.error?.details ?? []).map((d: { field: string }) => d.field);

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
      expect([r.name, bad.status, bad.body.error?.code, fields(bad)]).toEqual([r.name, 400, "VALIDATION_ERROR", [r.field]]);
      // Elysia's uuid format alone would take the urn form.
      const urn = await app.call(r.method, r.path(`urn:uuid:${UNKNOWN}`), { token: w.token, body: r.body });
      expect([r.name, urn.status, fields(urn)]).toEqual([r.name, 400, [r.field]]);
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
    expect(fields(r)).toEqual(["entry_id"]);
  });

  test("workspace_id: 401 without a credential, 400 naming it when malformed, 404 when unknown (admin and webhook routes)", async () => {
    for (const rest of ["/waitlist/settings", "/waitlists", `/waitlists/${w.id}`, `/waitlists/${w.id}/entries/${entryId}`, "/webhooks/endpoints", "/webhooks/events"]) {
      const path = (ws: string) => `/waitlist/v1/workspaces/${ws}${rest}`;
      expect([rest, (await app.call("GET", path(BAD))).status]).toEqual([rest, 401]);
      const bad = await app.call("GET", path(BAD), { token: w.token });
      expect([rest, bad.status, bad.body.error?.code, fields(bad)]).toEqual([rest, 400, "VALIDATION_ERROR", ["workspace_id"]]);
      expect([rest, (await app.call("GET", path(UNKNOWN), { token: w.token })).status]).toEqual([rest, 404]);
      // Upper case names the same workspace (the webhook routes resolve it in the webhooks service).
      if (!rest.startsWith("/webhooks")) expect([rest, (await app.call("GET", path(w.ws.id.toUpperCase()), { token: w.token })).status]).toEqual([rest, 200]);
    }
  });

  test("public slugs: malformed 400 naming the slug, well-formed unknown 404, any case served", async () => {
    const wsSlug = w.ws.slug;
    for (const [path, field] of [
      [`/waitlist/v1/waitlists/not_a_slug/${w.slug}`, "workspace_slug"],
      [`/waitlist/v1/waitlists/${wsSlug}/-bad-`, "waitlist_slug"],
      [`/waitlist/v1/waitlists/${wsSlug}/${"a".repeat(64)}`, "waitlist_slug"],
    ] as const) {
      for (const [method, suffix, body] of [["GET", ""], ["POST", "/entries", { email: "x@example.com" }], ["OPTIONS", ""]] as const) {
        const r = await app.call(method, `${path}${suffix}`, { body });
        expect([method, path, r.status, fields(r)]).toEqual([method, path, 400, [field]]);
      }
    }
    expect((await app.call("GET", `/waitlist/v1/waitlists/${wsSlug}/no-such-list`)).status).toBe(404);
    expect((await app.call("POST", `/waitlist/v1/waitlists/no-such-ws/${w.slug}/entries`, { body: { email: "x@example.com" } })).status).toBe(404);
    expect((await app.call("GET", `/waitlist/v1/waitlists/${wsSlug.toUpperCase()}/${w.slug.toUpperCase()}`)).status).toBe(200);
  });
});

describe("ids in a body", () => {
  test("bulk entry_ids: a malformed one is 400 naming entry_ids, an unknown one 404, and nothing changes", async () => {
    const bad = await app.call("POST", `${w.base}/entries/bulk`, { token: w.token, body: { action: "approve", entry_ids: [entryId, BAD] } });
    expect(bad.status).toBe(400);
    expect([bad.body.error.code, fields(bad)]).toEqual(["VALIDATION_ERROR", ["entry_ids.1"]]);
    const unknown = await app.call("POST", `${w.base}/entries/bulk`, { token: w.token, body: { action: "approve", entry_ids: [entryId, UNKNOWN] } });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toMatchObject({ code: "NOT_FOUND", details: [{ field: "entry_ids", reason: `${UNKNOWN} is not an entry of this waitlist` }] });
    expect((await app.call("GET", `${w.base}/entries/${entryId}`, { token: w.token })).body.status).toBe("pending");
  });

  test("settings default_sender_domain_id: malformed is 400 naming it (not 'no such domain'); unknown is 400 no such domain", async () => {
    const path = `/waitlist/v1/workspaces/${w.ws.id}/waitlist/settings`;
    const bad = await app.call("PUT", path, { token: w.token, body: { default_sender_domain_id: BAD } });
    expect([bad.status, bad.body.error.code, fields(bad)]).toEqual([400, "VALIDATION_ERROR", ["default_sender_domain_id"]]);
    expect(bad.body.error.details[0].reason).not.toContain("no such");
    const unknown = await app.call("PUT", path, { token: w.token, body: { default_sender_domain_id: UNKNOWN } });
    expect(unknown.body.error.details).toEqual([{ field: "default_sender_domain_id", reason: "no such mail domain in this workspace" }]);
    // Unknown keys still reach the settings check, which names them.
    const extra = await app.call("PUT", path, { token: w.token, body: { brand_name: "Acme", colour: "red" } });
    expect(extra.body.error.details).toEqual([{ field: "colour", reason: "unknown field" }]);
    expect((await app.call("PUT", path, { token: w.token, body: { default_sender_domain_id: null, brand_name: "Acme" } })).body.brand_name).toBe("Acme");
  });

  test("sign-up variant_id: malformed is 400 naming it, empty or null is none, an unknown one is not an active variant", async () => {
    const bad = await join(app, w, { email: "v1@example.com", variant_id: BAD });
    expect([bad.status, fields(bad)]).toEqual([400, ["variant_id"]]);
    const unknown = await join(app, w, { email: "v2@example.com", variant_id: UNKNOWN });
    expect(unknown.body.error.details).toEqual([{ field: "variant_id", reason: "not an active variant of this waitlist" }]);
    expect((await join(app, w, { email: "v3@example.com", variant_id: "" })).status).toBe(201);
    expect((await join(app, w, { email: "v4@example.com", variant_id: null })).status).toBe(201);
    const upper = await join(app, w, { email: "v5@example.com", variant_id: variantId.toUpperCase() });
    expect(upper.status).toBe(201);
    expect((await app.call("GET", `${w.base}/entries/${upper.body.id}`, { token: w.token })).body.variant_id).toBe(variantId);
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

describe("validation before existence", () => {
  test("a bad body or query on an unknown waitlist (or entry, or variant) is 400 naming the field, not 404", async () => {
    const gone = `/waitlist/v1/workspaces/${w.ws.id}/waitlists/${UNKNOWN}`;
    const cases: [string, string, unknown, string][] = [
      ["PATCH", gone, { settings: { referral_boost: -1 } }, "settings.referral_boost"],
      ["PATCH", gone, { display_name: "" }, "display_name"],
      ["PATCH", `${gone}/status`, { status: "gone" }, "status"],
      ["GET", `${gone}/entries?status=maybe`, undefined, "status"],
      ["GET", `${gone}/entries?sort=email`, undefined, "sort"],
      ["PATCH", `${gone}/entries/${UNKNOWN}`, { metadata: [1] }, "metadata"],
      ["PATCH", `${w.base}/entries/${UNKNOWN}`, { name: "x".repeat(201) }, "name"],
      ["POST", `${gone}/entries/bulk`, { action: "maybe", top: 1 }, "action"],
      ["POST", `${gone}/entries/bulk`, { action: "approve", top: 0 }, "top"],
      ["POST", `${gone}/variants`, { name: "Bad Name" }, "name"],
      ["PATCH", `${gone}/variants/${UNKNOWN}`, { weight: -1 }, "weight"],
      ["PATCH", `${w.base}/variants/${UNKNOWN}`, { weight: -1 }, "weight"],
      ["GET", `${gone}/analytics?since=yesterday`, undefined, "since"],
      ["GET", `${gone}/analytics?until=2026-02-30`, undefined, "until"],
    ];
    for (const [method, path, body, field] of cases) {
      const r = await app.call(method, path, { token: w.token, body });
      expect([method, path, r.status, r.body.error?.code, fields(r)]).toEqual([method, path, 400, "VALIDATION_ERROR", [field]]);
    }
    // The same bodies, well-formed, on the unknown records: 404.
    expect((await app.call("PATCH", gone, { token: w.token, body: { settings: { referral_boost: 2 } } })).status).toBe(404);
    expect((await app.call("PATCH", `${w.base}/entries/${UNKNOWN}`, { token: w.token, body: { metadata: { a: 1 } } })).status).toBe(404);
    expect((await app.call("PATCH", `${w.base}/variants/${UNKNOWN}`, { token: w.token, body: { weight: 1 } })).status).toBe(404);
    expect((await app.call("GET", `${gone}/analytics?since=2026-01-01&until=2026-01-02`, { token: w.token })).status).toBe(404);
  });

  test("a caller without the action is refused before its bad input is judged", async () => {
    const stranger = await createWaitlist(app);
    const r = await app.call("POST", `/waitlist/v1/workspaces/${w.ws.id}/waitlists/${w.id}/entries/bulk`, { token: stranger.token, body: { action: "maybe", top: 1 } });
    expect(r.status).toBe(404);
  });
});

describe("OpenAPI", () => {
  test("every id and slug parameter declares its shape", async () => {
    const doc = (await app.call("GET", "/waitlist/openapi.json")).body;
    const seen = new Map<string, string>();
    for (const [path, ops] of Object.entries<any>(doc.paths)) {
      for (const op of Object.values<any>(ops)) {
        for (const p of op.parameters ?? []) {
          // The webhook routes' own ids ({id}) are the webhooks service's.
          if (p.in !== "path" || (path.includes("/webhooks") && p.name !== "workspace_id")) continue;
          expect([path, p.name, p.schema.pattern === undefined]).toEqual([path, p.name, false]);
          seen.set(p.name, p.schema.format ?? "pattern");
        }
      }
    }
    expect(Object.fromEntries(seen)).toMatchObject({ workspace_id: "uuid", waitlist_id: "uuid", entry_id: "uuid", variant_id: "uuid", workspace_slug: "pattern", waitlist_slug: "pattern" });
  });
});
