/**
 * The jobs API: create (Idempotency-Key, every validation at its boundary), list (newest
 * first, status filter, cursor), get, cancel (JOB_NOT_CANCELLABLE), workspace isolation.
 * The worker does not run here (the scheduler is not started): jobs stay queued.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ownerWithKey, startTestApp, type TestApp } from "../helpers/app";
import { base, createJob, jobBody, PRODUCT_SCHEMA } from "./helpers";
import { inProcess } from "../helpers/target";

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.stop());

const post = (token: string, wsId: string, body: unknown, headers: Record<string, string> = {}) => app.call("POST", `${base(wsId)}/jobs`, { token, body, headers });
const fields = (r: { body: any }) => (r.body.error?.details ?? []).map((d: any) => d.field);

describe("create", () => {
  inProcess("enqueued_at/created_at equal the frozen injected clock; expects the job to stay queued (the in-process app runs no worker, the binary its own)")("201 queued with defaults and the spec's fields", async () => {
    const { token, ws } = await ownerWithKey(app);
    const r = await post(token, ws.id, { json_schema: PRODUCT_SCHEMA, description: "  Extract the product  " });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({
      workspace_id: ws.id,
      status: "queued",
      json_schema: PRODUCT_SCHEMA,
      description: "Extract the product",
      suggested_urls: [],
      max_steps: 10,
      timeout_s: 120,
      model_tier: "standard",
      webhook_id: null,
      result: null,
      error: null,
      attempts: 0,
      started_at: null,
      completed_at: null,
    });
    expect(r.body.id).toMatch(/^job_/);
    expect(r.body.enqueued_at).toBe(app.clock.iso());
    expect(r.body.created_at).toBe(app.clock.iso());
    const got = await app.call("GET", `${base(ws.id)}/jobs/${r.body.id}`, { token });
    expect(got.body).toEqual(r.body);
  });

  test("Idempotency-Key: replay answers the original with Idempotent-Replay; another body 409; bad key 400", async () => {
    const { token, ws } = await ownerWithKey(app);
    const headers = { "idempotency-key": "job:create_1-A" };
    const a = await post(token, ws.id, jobBody(), headers);
    const b = await post(token, ws.id, jobBody(), headers);
    expect(a.status).toBe(201);
    expect(b.status).toBe(201);
    expect(b.body).toEqual(a.body);
    expect(b.headers.get("idempotent-replay")).toBe("true");
    const list = await app.call("GET", `${base(ws.id)}/jobs`, { token });
    expect(list.body.data.length).toBe(1);
    const c = await post(token, ws.id, jobBody({ description: "other" }), headers);
    expect(c.status).toBe(409);
    expect(c.body.error.code).toBe("IDEMPOTENCY_KEY_REUSE");
    expect((await post(token, ws.id, jobBody(), { "idempotency-key": "a".repeat(256) })).status).toBe(201);
    expect((await post(token, ws.id, jobBody(), { "idempotency-key": "a".repeat(257) })).status).toBe(400);
    expect((await post(token, ws.id, jobBody(), { "idempotency-key": "bad key!" })).status).toBe(400);
  });

  test("limits at their boundaries", async () => {
    const { token, ws } = await ownerWithKey(app);
    const ok = async (over: Record<string, unknown>) => expect((await post(token, ws.id, jobBody(over))).status).toBe(201);
    const bad = async (over: Record<string, unknown>, field: string) => {
      const r = await post(token, ws.id, jobBody(over));
      expect(r.status).toBe(400);
      expect(r.body.error.code).toBe("VALIDATION_ERROR");
      expect(fields(r).some((f: string) => f.includes(field))).toBe(true);
    };
    await ok({ description: "x".repeat(4000) });
    await bad({ description: "x".repeat(4001) }, "description");
    await bad({ description: "" }, "description");
    await bad({ description: "   " }, "description");
    const urls = (n: number) => Array.from({ length: n }, (_, i) => `https://shop.example/p/${i}`);
    await ok({ suggested_urls: urls(20) });
    await bad({ suggested_urls: urls(21) }, "suggested_urls");
    const long = (n: number) => `https://shop.example/${"a".repeat(n - "https://shop.example/".length)}`;
    await ok({ suggested_urls: [long(2048)] });
    await bad({ suggested_urls: [long(2049)] }, "suggested_urls[0]");
    await bad({ suggested_urls: ["/relative"] }, "suggested_urls[0]");
    await bad({ suggested_urls: ["ftp://shop.example/x"] }, "suggested_urls[0]");
    await ok({ max_steps: 1 });
    await ok({ max_steps: 50 });
    await bad({ max_steps: 0 }, "max_steps");
    await bad({ max_steps: 51 }, "max_steps");
    await ok({ timeout_s: 10 });
    await ok({ timeout_s: 900 });
    await bad({ timeout_s: 9 }, "timeout_s");
    await bad({ timeout_s: 901 }, "timeout_s");
    await ok({ model_tier: "pro" });
    await bad({ model_tier: "ultra" }, "model_tier");
  });

  test("several problems answer together, one detail each", async () => {
    const { token, ws } = await ownerWithKey(app);
    const r = await post(token, ws.id, { json_schema: { type: "array" }, description: "", suggested_urls: ["nope"], model_tier: "x" });
    expect(r.status).toBe(400);
    expect(fields(r)).toEqual(["json_schema.type", "description", "suggested_urls[0]", "model_tier"]);
  });

  test("json_schema: compiles with ajv (2020-12 and draft-07), root object, 64 KB, no remote $ref", async () => {
    const { token, ws } = await ownerWithKey(app);
    const schema = (s: Record<string, unknown>) => jobBody({ json_schema: s });
    expect((await post(token, ws.id, schema({ type: "object", properties: { a: { type: "nope" } } }))).status).toBe(400);
    expect((await post(token, ws.id, schema({ type: "string" }))).status).toBe(400);
    expect((await post(token, ws.id, schema({}))).status).toBe(400);
    const remote = await post(token, ws.id, schema({ type: "object", properties: { a: { $ref: "https://evil.example/s.json" } } }));
    expect(remote.status).toBe(400);
    expect(fields(remote)).toEqual(["json_schema.properties.a.$ref"]);
    expect((await post(token, ws.id, schema({ type: "object", $defs: { p: { type: "number" } }, properties: { a: { $ref: "#/$defs/p" } } }))).status).toBe(201);
    expect((await post(token, ws.id, schema({ $schema: "http://json-schema.org/draft-07/schema#", type: "object", definitions: { p: { type: "number" } }, properties: { a: { $ref: "#/definitions/p" } } }))).status).toBe(201);
    expect((await post(token, ws.id, schema({ $schema: "https://json-schema.org/draft/2020-12/schema", type: "object", properties: { pair: { type: "array", prefixItems: [{ type: "string" }, { type: "number" }] } } }))).status).toBe(201);
    // 64 KB as JSON: exactly at the limit is accepted, one byte more is not.
    const sized = (n: number) => {
      const s = { type: "object", description: "" };
      s.description = "d".repeat(n - JSON.stringify(s).length);
      return s;
    };
    expect(JSON.stringify(sized(65536)).length).toBe(65536);
    const body = (s: object) => ({ ...jobBody({ json_schema: s }) });
    const atLimit = await app.call("POST", `${base(ws.id)}/jobs`, { token, body: body(sized(65536)) });
    expect(atLimit.status).toBe(201);
    const over = await app.call("POST", `${base(ws.id)}/jobs`, { token, body: body(sized(65537)) });
    expect(over.status).toBe(400);
    expect(fields(over)).toEqual(["json_schema"]);
  });

  test("webhook_id: a legacy webhook of the workspace; malformed 400 naming it, unknown or another workspace's 404 naming it", async () => {
    const { token, ws } = await ownerWithKey(app);
    const other = await ownerWithKey(app);
    const hook = await app.call("POST", `${base(ws.id)}/webhooks`, { token, body: { url: "https://hooks.example/x" } });
    expect(hook.status).toBe(201);
    const otherHook = await app.call("POST", `${base(other.ws.id)}/webhooks`, { token: other.token, body: { url: "https://hooks.example/y" } });
    const ok = await post(token, ws.id, jobBody({ webhook_id: hook.body.id }));
    expect(ok.status).toBe(201);
    expect(ok.body.webhook_id).toBe(hook.body.id);
    for (const id of ["whk_nope", `ep_${"0".repeat(32)}`, `whk_${"A".repeat(32)}`, 42]) {
      const r = await post(token, ws.id, jobBody({ webhook_id: id }));
      expect(r.status).toBe(400);
      expect(r.body.error.code).toBe("VALIDATION_ERROR");
      expect(fields(r)).toEqual(["webhook_id"]);
    }
    for (const id of [`whk_${"0".repeat(32)}`, otherHook.body.id]) {
      const r = await post(token, ws.id, jobBody({ webhook_id: id }));
      expect(r.status).toBe(404);
      expect(r.body.error.message).toContain(id);
      expect(fields(r)).toEqual(["webhook_id"]);
    }
  });
});

describe("list, get, cancel", () => {
  inProcess("moves the injected clock between creations; expects the jobs to stay queued (the in-process app runs no worker, the binary its own)")("newest first, status filter, cursor pages, limit bounds", async () => {
    const { token, ws } = await ownerWithKey(app);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      ids.push((await createJob(app, token, ws.id)).id);
      app.clock.advance(1000);
    }
    await app.call("POST", `${base(ws.id)}/jobs/${ids[1]}/cancel`, { token });
    const all = await app.call("GET", `${base(ws.id)}/jobs`, { token });
    expect(all.body.data.map((j: any) => j.id)).toEqual([...ids].reverse());
    expect(all.body.pagination).toEqual({ next_cursor: null, has_more: false });
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const q: string = `?limit=2${cursor ? `&cursor=${cursor}` : ""}`;
      const page: any = await app.call("GET", `${base(ws.id)}/jobs${q}`, { token });
      expect(page.status).toBe(200);
      seen.push(...page.body.data.map((j: any) => j.id));
      cursor = page.body.pagination.next_cursor;
    } while (cursor);
    expect(seen).toEqual([...ids].reverse());
    const cancelled = await app.call("GET", `${base(ws.id)}/jobs?status=cancelled`, { token });
    expect(cancelled.body.data.map((j: any) => j.id)).toEqual([ids[1]]);
    const queued = await app.call("GET", `${base(ws.id)}/jobs?status=queued&limit=100`, { token });
    expect(queued.body.data.length).toBe(4);
    expect((await app.call("GET", `${base(ws.id)}/jobs?status=done`, { token })).status).toBe(400);
    expect((await app.call("GET", `${base(ws.id)}/jobs?cursor=!!`, { token })).body.error.code).toBe("INVALID_CURSOR");
    expect((await app.call("GET", `${base(ws.id)}/jobs?limit=101`, { token })).status).toBe(400);
    expect((await app.call("GET", `${base(ws.id)}/jobs?limit=0`, { token })).status).toBe(400);
  });

  inProcess("expects the job still queued when cancelled (the in-process app runs no worker, the binary its own); completed_at equals the frozen injected clock")("cancel: queued -> cancelled with completed_at; again 409 JOB_NOT_CANCELLABLE", async () => {
    const { token, ws } = await ownerWithKey(app);
    const job = await createJob(app, token, ws.id);
    const r = await app.call("POST", `${base(ws.id)}/jobs/${job.id}/cancel`, { token });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ id: job.id, status: "cancelled", completed_at: app.clock.iso(), result: null });
    const again = await app.call("POST", `${base(ws.id)}/jobs/${job.id}/cancel`, { token });
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe("JOB_NOT_CANCELLABLE");
    const events = await app.call("GET", `${base(ws.id)}/webhooks/events`, { token });
    expect(events.status).toBe(200);
  });

  test("malformed ids are 400 naming the field; well-formed unknown ones 404; a body without its required fields 400 naming each", async () => {
    const { token, ws } = await ownerWithKey(app);
    const unknownJob = `job_${"0".repeat(32)}`;
    for (const bad of ["nope", "job_nope", `job_${"0".repeat(31)}`, `job_${"A".repeat(32)}`]) {
      for (const [method, path] of [["GET", `${base(ws.id)}/jobs/${bad}`], ["POST", `${base(ws.id)}/jobs/${bad}/cancel`]] as const) {
        const r = await app.call(method, path, { token });
        expect([path, r.status, r.body.error.code, fields(r)]).toEqual([path, 400, "VALIDATION_ERROR", ["id"]]);
      }
    }
    for (const [method, path] of [["GET", `${base(ws.id)}/jobs/${unknownJob}`], ["POST", `${base(ws.id)}/jobs/${unknownJob}/cancel`]] as const) {
      const r = await app.call(method, path, { token });
      expect([path, r.status, r.body.error.code]).toEqual([path, 404, "NOT_FOUND"]);
    }
    const unknownWs = "00000000-0000-7000-8000-000000000000";
    for (const [method, path, body] of [
      ["GET", "/jobs", undefined],
      ["POST", "/jobs", jobBody()],
      ["GET", `/jobs/${unknownJob}`, undefined],
      ["POST", `/jobs/${unknownJob}/cancel`, undefined],
      ["GET", "/extraction-settings", undefined],
      ["PUT", "/extraction-settings", { monthly_credit_limit: 5 }],
      ["GET", "/usage", undefined],
    ] as const) {
      const bad = await app.call(method, `${base("not-a-workspace")}${path}`, { token, body });
      expect([method, path, bad.status, fields(bad)]).toEqual([method, path, 400, ["workspace_id"]]);
      const unknown = await app.call(method, `${base(unknownWs)}${path}`, { token, body });
      expect([method, path, unknown.status]).toEqual([method, path, 404]);
    }
    for (const [missing, body] of [["json_schema", { description: "x" }], ["description", { json_schema: PRODUCT_SCHEMA }]] as const) {
      const r = await post(token, ws.id, body);
      expect([missing, r.status, r.body.error.code, fields(r)]).toEqual([missing, 400, "VALIDATION_ERROR", [missing]]);
    }
    const empty = await post(token, ws.id, {});
    expect(empty.status).toBe(400);
    expect(fields(empty)).toContain("description");
    const noLimit = await app.call("PUT", `${base(ws.id)}/extraction-settings`, { token, body: {} });
    expect(noLimit.status).toBe(400);
    expect(noLimit.body.error.details).toEqual([{ field: "monthly_credit_limit", reason: "required" }]);
  });

  test("another workspace's job is 404 everywhere; without the service 403", async () => {
    const a = await ownerWithKey(app);
    const b = await ownerWithKey(app);
    const job = await createJob(app, a.token, a.ws.id);
    expect((await app.call("GET", `${base(b.ws.id)}/jobs/${job.id}`, { token: b.token })).status).toBe(404);
    expect((await app.call("POST", `${base(b.ws.id)}/jobs/${job.id}/cancel`, { token: b.token })).status).toBe(404);
    expect((await app.call("GET", `${base(a.ws.id)}/jobs/${job.id}`, { token: b.token })).status).toBe(404);
    expect((await app.call("GET", `${base(a.ws.id)}/jobs`)).status).toBe(401);
    expect((await app.call("DELETE", `/platform/v1/workspaces/${a.ws.slug}/services/trawl`, { token: a.session })).status).toBe(200);
    const off = await app.call("GET", `${base(a.ws.id)}/jobs`, { token: a.token });
    expect(off.status).toBe(403);
    expect(off.body.error.code).toBe("SERVICE_NOT_ENABLED");
  });
});

describe("legacy webhook record (extraction-job service)", () => {
  test("exactly the spec's fields; signing_secret only on create and rotate", async () => {
    const { token, ws } = await ownerWithKey(app);
    const SPEC = ["id", "workspace_id", "url", "active", "failure_count", "last_status_code", "last_attempt_at", "auto_disabled_at", "first_failure_at", "created_at"].sort();
    const created = await app.call("POST", `${base(ws.id)}/webhooks`, { token, body: { url: "https://hooks.example/a" } });
    expect(created.status).toBe(201);
    expect(Object.keys(created.body).sort()).toEqual([...SPEC, "signing_secret"].sort());
    const one = await app.call("GET", `${base(ws.id)}/webhooks/${created.body.id}`, { token });
    expect(Object.keys(one.body).sort()).toEqual(SPEC);
    const list = await app.call("GET", `${base(ws.id)}/webhooks`, { token });
    expect(list.body.data.map((h: any) => Object.keys(h).sort())).toEqual([SPEC]);
    const patched = await app.call("PATCH", `${base(ws.id)}/webhooks/${created.body.id}`, { token, body: { active: false } });
    expect(Object.keys(patched.body).sort()).toEqual(SPEC);
    const rotated = await app.call("POST", `${base(ws.id)}/webhooks/${created.body.id}/rotate-secret`, { token });
    expect(rotated.status).toBe(201);
    expect(Object.keys(rotated.body).sort()).toEqual([...SPEC, "signing_secret"].sort());
  });
});
