/**
 * The mail routes' bodies hold to the spec's field tables: a required field missing, or a
 * field of the wrong JSON type, is a 400 VALIDATION_ERROR naming it (every one of them), never
 * a default; object fields (data, variables) are taken whole and only as objects.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createTemplate, startSendingApp, workspaceWithDomain, type MailWorkspace, type SendingEnv } from "../helpers/mail-sending";

let e: SendingEnv;
let w: MailWorkspace;
beforeAll(async () => {
  e = await startSendingApp();
  w = await workspaceWithDomain(e);
  await createTemplate(e, w, { name: "welcome", subject: "Hi {{name}}", body_html: "<p>Hi {{name}}</p>" });
});
afterAll(() => e.stop());

const call = (method: string, path: string, body?: unknown) => e.app.call(method, `${w.base}${path}`, { token: w.token, body });
const fields = (r: { body: any }) => r.body.error.details.map((d: { field: string }) => d.field).sort();
function expect400(r: { status: number; body: any }, names: string[]) {
  expect(r.status).toBe(400);
  expect(r.body.error.code).toBe("VALIDATION_ERROR");
  expect(fields(r)).toEqual([...names].sort());
}

describe("send and render: data is a required object", () => {
  test("send without data, or with data that is not an object, is 400 naming data; nothing is queued", async () => {
    const base = { from: `hello@${w.fqdn}`, to: "ada@example.test" };
    for (const data of [undefined, null, "name=Ada", ["Ada"], 5]) expect400(await call("POST", "/templates/welcome/send", { ...base, data }), ["data"]);
    expect((await call("GET", "/messages")).body.data).toEqual([]);
    expect((await call("POST", "/templates/welcome/send", { ...base, data: { name: "Ada" } })).status).toBe(202);
  });

  test("send with every required field missing names all three", async () => {
    expect400(await call("POST", "/templates/welcome/send", {}), ["data", "from", "to"]);
  });

  test("send-batch rows need data too; test-send may leave it out but not send a non-object", async () => {
    expect400(await call("POST", "/templates/welcome/send-batch", { from: `hello@${w.fqdn}`, messages: [{ to: "a@example.test" }, { to: "b@example.test", data: "x" }] }), ["messages.0.data", "messages.1.data"]);
    expect400(await call("POST", "/templates/welcome/test-send", { from: `hello@${w.fqdn}`, to: "a@example.test", data: "x" }), ["data"]);
    expect((await call("POST", "/templates/welcome/test-send", { from: `hello@${w.fqdn}`, to: "a@example.test" })).status).toBe(202);
  });

  test("render without data, or with a non-object, is 400 naming data; data arrives whole", async () => {
    expect400(await call("POST", "/templates/welcome/render", {}), ["data"]);
    expect400(await call("POST", "/templates/welcome/render", { data: [] }), ["data"]);
    const r = await call("POST", "/templates/welcome/render", { data: { name: "Ada" } });
    expect(r.status).toBe(200);
    expect(r.body.subject).toBe("Hi Ada");
  });
});

describe("templates", () => {
  test("upsert names every missing or mistyped field at once", async () => {
    expect400(await call("POST", "/templates", {}), ["body_html", "name", "subject"]);
    expect400(await call("POST", "/templates", { name: "Bad Name", kind: "email", subject: 5, body_html: "", tags: "a,b", variables_schema: "x" }), [
      "body_html",
      "kind",
      "name",
      "subject",
      "tags",
      "variables_schema",
    ]);
  });

  test("variables_schema comes back whole", async () => {
    const variables_schema = { version: 1, vars: { name: { type: "string", required: true } } };
    const r = await call("POST", "/templates", { name: "typed", subject: "Hi {{name}}", body_html: "<p>{{name}}</p>", variables_schema });
    expect(r.status).toBe(201);
    expect(r.body.variables_schema).toEqual(variables_schema);
    expect((await call("GET", "/templates/typed")).body.variables_schema).toEqual(variables_schema);
  });

  test("preview and lint need body_html; data, when given, is an object", async () => {
    for (const path of ["/templates/preview", "/templates/lint"]) {
      expect400(await call("POST", path, { subject: "x" }), ["body_html"]);
      expect400(await call("POST", path, { body_html: "<p>x</p>", data: "x", subject: 5 }), ["data", "subject"]);
      expect((await call("POST", path, { body_html: "<p>{{a}}</p>", data: { a: "b" } })).status).toBe(200);
    }
  });
});

describe("other bodies", () => {
  test("PATCH /messages/settings requires redact_bodies, a boolean", async () => {
    expect400(await call("PATCH", "/messages/settings", {}), ["redact_bodies"]);
    expect400(await call("PATCH", "/messages/settings", { redact_bodies: "true" }), ["redact_bodies"]);
    expect((await call("PATCH", "/messages/settings", { redact_bodies: false })).status).toBe(200);
  });

  test("POST /domains requires fqdn", async () => {
    expect400(await call("POST", "/domains", { intent: "send" }), ["fqdn"]);
  });
});
