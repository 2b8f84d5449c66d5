/**
 * Ids in the Platform API: every path parameter with a declared shape (the served document's
 * table) is 400 VALIDATION_ERROR naming it when malformed, after the credential (401 without
 * one), and a well-formed unknown one is 404. workspace_slug is a slug, never the workspace's
 * id. Ids in bodies and query strings are checked the same way, and input before existence.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createWorkspace, startTestApp, type TestApp } from "../helpers/app";
import { createOperator } from "../helpers/console-app";

let app: TestApp;
let operator: string;
let ws: { id: string; slug: string };
let ops: { method: string; path: string; shaped: string[]; secured: boolean; body: Record<string, unknown> | undefined }[];

const MALFORMED: Record<string, string> = { workspace_slug: "Not_A_Slug" };
const UNKNOWN_SLUG = "no-such-workspace-0000";
/** Parameters that are names from a fixed list, not ids. */
const FIXED: Record<string, string> = { verb: "suspend", service: "tack" };

beforeAll(async () => {
  app = await startTestApp();
  // The operator reaches the operator routes too, and owns the workspace used below.
  operator = await createOperator(app);
  ws = await createWorkspace(app, operator);
  const doc = (await app.call("GET", "/platform/openapi.json")).body;
  ops = [];
  for (const [path, item] of Object.entries<any>(doc.paths)) {
    for (const [method, op] of Object.entries<any>(item)) {
      const params: any[] = (op.parameters ?? []).filter((p: any) => p.in === "path");
      const shaped = params.filter((p) => p.schema?.format === "uuid" || typeof p.schema?.pattern === "string").map((p) => p.name);
      if (!shaped.length) continue;
      const content = op.requestBody?.content;
      // The avatar upload takes multipart: its workspace_slug is the same schema as the JSON routes'.
      if (content && !content["application/json"]) continue;
      const schema = content?.["application/json"]?.schema;
      const body = schema ? Object.fromEntries((schema.required ?? []).map((f: string) => [f, "x"])) : undefined;
      ops.push({ method: method.toUpperCase(), path, shaped, secured: (op.security ?? []).some((s: object) => Object.keys(s).length > 0), body });
    }
  }
});
afterAll(() => app.stop());

const fill = (path: string, values: Record<string, string>) =>
  path.replace(/\{([a-z_]+)\}/g, (_, p: string) => values[p] ?? FIXED[p] ?? (p === "workspace_slug" ? ws.slug : crypto.randomUUID()));
const fields = (r: { body: any }) => r.body?.error?.details?.map((d: { field: string }) => d.field);
const shape = (r: { status: number; body: any }) => ({ status: r.status, code: r.body?.error?.code, fields: fields(r) });
const invalid = (...names: string[]) => ({ status: 400, code: "VALIDATION_ERROR", fields: names });

test("the table covers every kind of id of the Platform routes", () => {
  expect([...new Set(ops.flatMap((o) => o.shaped))].sort()).toEqual([
    "account_id",
    "factor_id",
    "identity_id",
    "invitation_id",
    "key_id",
    "member_id",
    "role_id",
    "token_id",
    "workspace_id",
    "workspace_slug",
  ]);
});

test("each id parameter: malformed is 400 naming it, without a credential 401, well-formed and unknown 404", async () => {
  for (const op of ops) {
    for (const id of op.shaped) {
      const name = `${op.method} ${op.path} (${id})`;
      const url = fill(op.path, { [id]: MALFORMED[id] ?? "not-an-id" });
      const malformed = await app.call(op.method, url, { token: operator, body: op.body });
      expect({ name, ...shape(malformed) }).toEqual({ name, ...invalid(id) });
      if (op.secured) expect({ name, status: (await app.call(op.method, url, { body: op.body })).status }).toEqual({ name, status: 401 });
    }
    if (op.body || op.path === "/platform/v1/introspect/workspaces/{workspace_id}") continue;
    const name = `${op.method} ${op.path}`;
    for (const slug of op.path.includes("{workspace_slug}") && op.shaped.length > 1 ? [ws.slug, UNKNOWN_SLUG] : [UNKNOWN_SLUG]) {
      const unknown = await app.call(op.method, fill(op.path, { workspace_slug: slug }), { token: operator });
      expect({ name, slug, status: unknown.status }).toEqual({ name, slug, status: 404 });
    }
  }
});

test("workspace_slug is the slug only: the workspace's id in its place is 404; the document gives the slug rules", async () => {
  expect((await app.call("GET", `/platform/v1/workspaces/${ws.slug}`, { token: operator })).body.id).toBe(ws.id);
  expect((await app.call("GET", `/platform/v1/workspaces/${ws.id}`, { token: operator })).status).toBe(404);
  for (const bad of ["-leading", "double--hyphen", "UPPER", "a".repeat(64)]) {
    expect({ bad, ...shape(await app.call("GET", `/platform/v1/workspaces/${bad}`, { token: operator })) }).toEqual({ bad, ...invalid("workspace_slug") });
  }
  const doc = (await app.call("GET", "/platform/openapi.json")).body;
  const slug = doc.paths["/platform/v1/workspaces/{workspace_slug}"].get.parameters.find((p: { name: string }) => p.name === "workspace_slug").schema;
  expect(slug).toMatchObject({ type: "string", pattern: "^[a-z0-9]+(?:-[a-z0-9]+)*$", maxLength: 63 });
  const key = doc.paths["/platform/v1/workspaces/{workspace_slug}/api-keys/{key_id}"].get.parameters.find((p: { name: string }) => p.name === "key_id").schema;
  expect(key).toMatchObject({ type: "string", format: "uuid", pattern: expect.stringMatching(/^\^/) });
});

test("a workspace's introspection takes its id: malformed 400, unknown answers is_member false", async () => {
  expect(shape(await app.call("GET", "/platform/v1/introspect/workspaces/my-workspace", { token: operator }))).toEqual(invalid("workspace_id"));
  const unknown = await app.call("GET", `/platform/v1/introspect/workspaces/${crypto.randomUUID()}`, { token: operator });
  expect({ status: unknown.status, is_member: unknown.body.is_member }).toEqual({ status: 200, is_member: false });
  expect((await app.call("GET", `/platform/v1/introspect/workspaces/${ws.id}`, { token: operator })).body.is_member).toBe(true);
});

test("ids in bodies and query strings: role_id and actor_id malformed are 400 naming them, unknown ones as before", async () => {
  const W = `/platform/v1/workspaces/${ws.slug}`;
  const members = (await app.call("GET", `${W}/members`, { token: operator })).body.data;
  expect(shape(await app.call("PATCH", `${W}/members/${members[0].id}`, { token: operator, body: { role_id: "admin" } }))).toEqual(invalid("role_id"));
  expect(shape(await app.call("POST", `${W}/invitations`, { token: operator, body: { email: "x@example.com", role_id: "admin" } }))).toEqual(invalid("role_id"));
  expect((await app.call("POST", `${W}/invitations`, { token: operator, body: { email: "x@example.com", role_id: crypto.randomUUID() } })).status).toBe(404);
  expect(shape(await app.call("GET", `${W}/audit-log?actor_id=nobody`, { token: operator }))).toEqual(invalid("actor_id"));
  const none = await app.call("GET", `${W}/audit-log?actor_id=${crypto.randomUUID()}`, { token: operator });
  expect({ status: none.status, data: none.body.data }).toEqual({ status: 200, data: [] });
});

test("input before existence: a malformed code is 400 also for an unknown factor", async () => {
  expect(shape(await app.call("POST", `/platform/v1/me/mfa/totp/${crypto.randomUUID()}/confirm`, { token: operator, body: { code: "12" } }))).toEqual({
    status: 400,
    code: "VALIDATION_ERROR",
    fields: ["code"],
  });
  expect((await app.call("POST", `/platform/v1/me/mfa/totp/${crypto.randomUUID()}/confirm`, { token: operator, body: { code: "123456" } })).status).toBe(404);
});
