/**
 * Ids and keys in the mail routes' paths, queries and bodies: credential first (401), then a
 * malformed value is 400 VALIDATION_ERROR naming its field (before anything is looked up),
 * then a well-formed value that names nothing is 404. The shapes are the route schemas'
 * (src/services/mail/schemas.ts), so the OpenAPI shows them.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ownerWithKey, startTestApp, type TestApp } from "../helpers/app";

let app: TestApp;
let token: string;
let wsId: string;
let base: string;
let domainId: string;
beforeAll(async () => {
  app = await startTestApp();
  ({ token, ws: { id: wsId } } = await ownerWithKey(app));
  base = `/mail/v1/workspaces/${wsId}`;
  const d = await app.call("POST", `${base}/domains`, { token, body: { fqdn: `ids${Date.now()}.example`, intent: "send_receive" } });
  domainId = d.body.id;
});
afterAll(() => app.stop());

const UNKNOWN = "0192f3a1-7c2e-7a10-9b1e-3f5d2c8a4e61";
const BAD = "not-a-uuid";
const fields = (r: { body: any }) => (r.body.error?.details ?? []).map((d: { field: string }) => d.field);
const send = { from: "hello@nowhere.example", to: "ada@example.com", data: {} };

interface Row {
  method: string;
  /** The path under the workspace, the value to vary as {v}. */
  path: string;
  field: string;
  malformed: string[];
  unknown: string;
  body?: unknown;
}

const uuidRows = (prefix: string, field: string, rests: [string, string, unknown?][]): Row[] =>
  rests.map(([method, rest, body]) => ({ method, path: `${prefix}${rest}`, field, malformed: [BAD, `urn:uuid:${UNKNOWN}`, UNKNOWN.replaceAll("-", "")], unknown: UNKNOWN, body }));

const rows = (): Row[] => [
  ...uuidRows("/domains/{v}", "domain_id", [["GET", ""], ["PATCH", "", { dns_provider: "x" }], ["DELETE", ""], ["POST", "/verify"], ["POST", "/dkim/rotate"]]),
  ...uuidRows("/messages/{v}", "id", [["GET", ""], ["GET", "/body"]]),
  ...uuidRows("/mailboxes/{v}", "id", [["GET", ""], ["PATCH", "", { display_name: "x" }], ["DELETE", ""], ["GET", "/messages"], ["GET", `/messages/${UNKNOWN}`]]),
  ...uuidRows(`/mailboxes/${UNKNOWN}/messages/{v}`, "mid", [["GET", ""], ["DELETE", ""], ["POST", "/read"], ["GET", "/raw"], ["GET", "/attachments/0"]]),
  ...[["GET", ""], ["DELETE", ""], ["POST", "/render", { data: {} }], ["GET", "/variables"], ["POST", "/send", send], ["POST", "/send-batch", { from: send.from, messages: [{ to: send.to, data: {} }] }], ["POST", "/test-send", { from: send.from, to: send.to }]].map(
    ([method, rest, body]) => ({ method: method as string, path: `/templates/{v}${rest}`, field: "name", malformed: ["Welcome", "a b", "x".repeat(65)], unknown: "no-such-template", body }),
  ),
  { method: "DELETE", path: "/suppressions/{v}", field: "email", malformed: ["not-an-address", `${"a".repeat(250)}@example.com`], unknown: "nobody@example.com" },
  { method: "GET", path: `/mailboxes/${UNKNOWN}/messages/${UNKNOWN}/attachments/{v}`, field: "position", malformed: ["-1", "x", "12345"], unknown: "0" },
];

const at = (r: Row, v: string) => `${base}${r.path.replace("{v}", encodeURIComponent(v))}`;

describe("path ids", () => {
  test("every route with an id: 401 without a credential, 400 naming the malformed id, 404 for an unknown one", async () => {
    for (const r of rows()) {
      const name = `${r.method} ${r.path}`;
      expect([name, (await app.call(r.method, at(r, r.malformed[0]!), { body: r.body })).status]).toEqual([name, 401]);
      for (const v of r.malformed) {
        const bad = await app.call(r.method, at(r, v), { token, body: r.body });
        expect([name, v, bad.status, bad.body.error?.code, fields(bad)]).toEqual([name, v, 400, "VALIDATION_ERROR", [r.field]]);
      }
      const unknown = await app.call(r.method, at(r, r.unknown), { token, body: r.body });
      expect([name, unknown.status, unknown.body.error?.code]).toEqual([name, 404, "NOT_FOUND"]);
    }
  });

  test("workspace_id on every mail operation: 400 naming it when malformed, after the credential", async () => {
    const doc = (await app.call("GET", "/mail/openapi.json")).body;
    let n = 0;
    for (const [path, ops] of Object.entries<any>(doc.paths)) {
      for (const method of Object.keys(ops)) {
        const url = path.replace("{workspace_id}", BAD).replace(/\{[^}]+\}/g, (m) => (m === "{name}" ? "welcome" : m === "{email}" ? "a@example.com" : m === "{position}" ? "0" : UNKNOWN));
        expect([method, path, (await app.call(method.toUpperCase(), url)).status]).toEqual([method, path, 401]);
        const r = await app.call(method.toUpperCase(), url, { token });
        // The webhook routes' own ids may be named beside it.
        expect([method, path, r.status, fields(r).includes("workspace_id")]).toEqual([method, path, 400, true]);
        n++;
      }
    }
    expect(n).toBeGreaterThan(50);
  });

  test("ids of any case name the same record; an unknown workspace is 404", async () => {
    expect((await app.call("GET", `${base.toUpperCase().replace("/MAIL/V1/WORKSPACES/", "/mail/v1/workspaces/")}/domains/${domainId.toUpperCase()}`, { token })).body.id).toBe(domainId);
    expect((await app.call("GET", `/mail/v1/workspaces/${UNKNOWN}/domains`, { token })).status).toBe(404);
  });
});

describe("ids in a query or a body", () => {
  test("mailboxes: domain_id malformed is 400 naming it (create and list filter); unknown is 404 on create, an empty list as a filter", async () => {
    const bad = await app.call("POST", `${base}/mailboxes`, { token, body: { domain_id: BAD, local_part: "ada" } });
    expect([bad.status, fields(bad)]).toEqual([400, ["domain_id"]]);
    expect((await app.call("POST", `${base}/mailboxes`, { token, body: { domain_id: UNKNOWN, local_part: "ada" } })).status).toBe(404);
    const list = await app.call("GET", `${base}/mailboxes?domain_id=${BAD}`, { token });
    expect([list.status, fields(list)]).toEqual([400, ["domain_id"]]);
    expect((await app.call("GET", `${base}/mailboxes?domain_id=${UNKNOWN}`, { token })).body.data).toEqual([]);
    const created = await app.call("POST", `${base}/mailboxes`, { token, body: { domain_id: domainId.toUpperCase(), local_part: "ada" } });
    expect([created.status, created.body.domain_id]).toEqual([201, domainId]);
    expect((await app.call("GET", `${base}/mailboxes/${created.body.id.toUpperCase()}`, { token })).body.id).toBe(created.body.id);
  });

  test("a suppressed address is found by its path in any case", async () => {
    expect((await app.call("POST", `${base}/suppressions`, { token, body: { email: "Grace@Example.com" } })).status).toBe(201);
    expect((await app.call("DELETE", `${base}/suppressions/${encodeURIComponent("GRACE@example.COM")}`, { token })).status).toBe(204);
  });
});

describe("OpenAPI", () => {
  test("every path parameter of the mail routes declares its shape", async () => {
    const doc = (await app.call("GET", "/mail/openapi.json")).body;
    const seen = new Map<string, string>();
    for (const [path, ops] of Object.entries<any>(doc.paths)) {
      for (const op of Object.values<any>(ops)) {
        for (const p of op.parameters ?? []) {
          // The webhook routes' own ids ({id}) are the webhooks service's.
          if (p.in !== "path" || (path.includes("/webhooks") && p.name !== "workspace_id")) continue;
          expect([path, p.name, typeof p.schema.pattern]).toEqual([path, p.name, "string"]);
          seen.set(p.name, p.schema.format ?? "pattern");
        }
      }
    }
    expect(Object.fromEntries(seen)).toEqual({ workspace_id: "uuid", domain_id: "uuid", id: "uuid", mid: "uuid", name: "pattern", email: "pattern", position: "pattern" });
  });
});
