/**
 * Ids of the shared webhook routes ({scope}/webhooks/endpoints/{id}, /events/{id}, the
 * endpoint_id filters) and of the deprecated ones ({scope}/webhooks/{id}), on every scope
 * that mounts them: credential first (401), then a malformed id is 400 VALIDATION_ERROR
 * naming it, then a well-formed id that names nothing is 404. The OpenAPI says the shapes.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ownerWithKey, startTestApp, type TestApp } from "../helpers/app";

let app: TestApp;
let token: string;
let wsId: string;
beforeAll(async () => {
  app = await startTestApp();
  const o = await ownerWithKey(app);
  token = o.token;
  wsId = o.ws.id;
});
afterAll(() => app.stop());

const hex = "0123456789abcdef0123456789abcdef";
const EP = `ep_${hex}`;
const WHK = `whk_${hex}`;
const EVT = `evt_${hex}`;
/** Not an id of the kind asked for: wrong prefix, short, upper-case hex, a stray character. */
const malformed = (prefix: string, others: string[]) => [...others, `${prefix}_nope`, `${prefix}_${hex.slice(1)}`, `${prefix}_${hex.toUpperCase()}`, `${prefix}_${hex}x`];

type Route = { method: string; path: (id: string) => string; body?: unknown };
const scope = (product: string) => `/${product}/v1/workspaces/${wsId}/webhooks`;

const endpointRoutes = (s: string): Route[] => [
  { method: "GET", path: (id) => `${s}/endpoints/${id}` },
  { method: "PATCH", path: (id) => `${s}/endpoints/${id}`, body: {} },
  { method: "DELETE", path: (id) => `${s}/endpoints/${id}` },
  { method: "POST", path: (id) => `${s}/endpoints/${id}/test`, body: {} },
  { method: "POST", path: (id) => `${s}/endpoints/${id}/rotate-secret`, body: {} },
];
const eventRoutes = (s: string): Route[] => [
  { method: "GET", path: (id) => `${s}/events/${id}` },
  { method: "POST", path: (id) => `${s}/events/${id}/replay` },
];
const legacyRoutes = (s: string): Route[] => [
  { method: "GET", path: (id) => `${s}/${id}` },
  { method: "PATCH", path: (id) => `${s}/${id}`, body: {} },
  { method: "DELETE", path: (id) => `${s}/${id}` },
  { method: "GET", path: (id) => `${s}/${id}/deliveries` },
  { method: "POST", path: (id) => `${s}/${id}/rotate-secret` },
  { method: "POST", path: (id) => `${s}/${id}/test`, body: {} },
];

const fields = (r: { body: any }) => (r.body.error?.details ?? []).map((d: { field: string }) => d.field);

/** 401 without a credential, 400 naming `field` for each bad value, 404 for each well-formed unknown one. */
async function check(routes: Route[], field: string, bad: string[], unknown: string[]) {
  for (const r of routes) {
    const name = `${r.method} ${r.path("{id}")}`;
    expect([name, (await app.call(r.method, r.path(bad[0]!), { body: r.body })).status]).toEqual([name, 401]);
    for (const id of bad) {
      const res = await app.call(r.method, r.path(encodeURIComponent(id)), { token, body: r.body });
      expect([name, id, res.status, res.body.error?.code, fields(res)]).toEqual([name, id, 400, "VALIDATION_ERROR", [field]]);
    }
    for (const id of unknown) {
      const res = await app.call(r.method, r.path(id), { token, body: r.body });
      expect([name, id, res.status]).toEqual([name, id, 404]);
    }
  }
}

describe("shared webhook routes", () => {
  test("endpoint ids are ep_ or whk_ (a legacy record) and 32 hex digits, on every scope", async () => {
    for (const product of ["mail", "waitlist", "trawl"]) await check(endpointRoutes(scope(product)), "id", malformed("ep", [EVT, "x"]), [EP, WHK]);
  });

  test("event ids are evt_ and 32 hex digits", async () => {
    for (const product of ["mail", "trawl"]) await check(eventRoutes(scope(product)), "id", malformed("evt", [EP, "x"]), [EVT]);
  });

  test("endpoint_id in the query: the events filter and the replay target", async () => {
    for (const bad of ["x", EVT, `ep_${hex.toUpperCase()}`, ""]) {
      const list = await app.call("GET", `${scope("mail")}/events?endpoint_id=${bad}`, { token });
      expect([bad, list.status, fields(list)]).toEqual([bad, 400, ["endpoint_id"]]);
      const replay = await app.call("POST", `${scope("mail")}/events/${EVT}/replay?endpoint_id=${bad}`, { token });
      expect([bad, replay.status, fields(replay)]).toEqual([bad, 400, ["endpoint_id"]]);
    }
    const none = await app.call("GET", `${scope("mail")}/events?endpoint_id=${EP}`, { token });
    expect([none.status, none.body.data]).toEqual([200, []]);
  });
});

describe("legacy webhook routes", () => {
  test("legacy ids are whk_ and 32 hex digits: a shared endpoint's ep_ id is malformed here; the 400 is deprecated too", async () => {
    for (const product of ["mail", "waitlist", "trawl"]) await check(legacyRoutes(scope(product)), "id", malformed("whk", [EP, EVT]), [WHK]);
    const r = await app.call("GET", `${scope("trawl")}/${EP}`, { token });
    expect([r.status, r.headers.get("deprecation")]).toEqual([400, "true"]);
  });
});

describe("OpenAPI", () => {
  test("the id parameters and the endpoint_id filter carry their patterns", async () => {
    const doc = (await app.call("GET", "/docs/json")).body;
    const param = (path: string, method: string, name: string) => doc.paths[path][method].parameters.find((p: any) => p.name === name).schema.pattern;
    const s = "/trawl/v1/workspaces/{workspace_id}/webhooks";
    expect(param(`${s}/endpoints/{id}`, "get", "id")).toBe("^(ep|whk)_[0-9a-f]{32}$");
    expect(param(`${s}/events/{id}`, "get", "id")).toBe("^evt_[0-9a-f]{32}$");
    expect(param(`${s}/events`, "get", "endpoint_id")).toBe("^(ep|whk)_[0-9a-f]{32}$");
    expect(param(`${s}/{id}`, "get", "id")).toBe("^whk_[0-9a-f]{32}$");
  });
});
