/**
 * Every OpenAPI operation of the extraction-job service, reached over HTTP with a success
 * status along its main flow: the workspace's credit limit set, a legacy job webhook and a
 * shared endpoint registered (test sends, rotated secrets), a job created (Idempotency-Key
 * replayed) that the worker runs by fetching a real fixture website on loopback and asking
 * an OpenAI-compatible stub for the answer, the result and usage read back, a second job
 * cancelled while the worker waits on a slow page, the job events delivered to a real
 * receiver and verified with the independent `standardwebhooks` package (and the legacy
 * X-Trawl-Signature recomputed with node:crypto), the event log read and an event replayed.
 *
 * Runs unchanged in-process (`npx bun test`, SQLite or PostgreSQL) and against the binary
 * (`npm run test:bin`). The worker and the webhook deliveries are the scheduler's: the
 * binary's process runs its own; in-process, the one line below starts the app's scheduler as
 * `bunker serve` does. Either way the test waits for results over HTTP with a deadline.
 * Timestamps are checked for shape and order, not against a clock.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHmac } from "node:crypto";
import { ownerWithKey, startTestApp, type TestApp } from "../helpers/app";
import { startReceiver, type ReceivedRequest, type Receiver } from "../helpers/http-receiver";
import { ON_BINARY } from "../helpers/target";
import { PRODUCT, startFixtureSite, type FixtureSite } from "./fixture-site";
import { startLlmStub, type LlmStub } from "./llm-stub";
import { until, verifyDelivery } from "../helpers/until";

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const schema = { type: "object", properties: { name: { type: "string" }, price: { type: "number" }, currency: { type: "string" } }, required: ["name", "price"] };
const answer = { name: PRODUCT.name, price: PRODUCT.price, currency: PRODUCT.currency };

let app: TestApp;
let receiver: Receiver;
let site: FixtureSite;
let llm: LlmStub;
let token: string;
let T: string;

beforeAll(async () => {
  site = startFixtureSite();
  llm = startLlmStub();
  llm.answer = () => ({ content: JSON.stringify(answer) });
  receiver = startReceiver();
  app = await startTestApp({ ALLOW_PRIVATE_TARGETS: "true", LLM_BASE_URL: llm.url, LLM_API_KEY: "sk-every-route", LLM_MODEL: "stub-small" });
  // The process of `bunker serve` runs its scheduler; the in-process app starts it the same way.
  if (!ON_BINARY) app.ctx.scheduler.start();
  const owner = await ownerWithKey(app);
  token = owner.token;
  T = `/trawl/v1/workspaces/${owner.ws.id}`;
});
afterAll(async () => {
  await app?.stop();
  await receiver?.stop();
  await llm?.stop();
  await site?.stop();
});

const call = (method: string, path: string, body?: unknown, headers?: Record<string, string>) => app.call(method, path, { token, body, headers });


const verify = (secret: string, req: ReceivedRequest) => verifyDelivery(app, secret, req);
/** X-Trawl-Signature, recomputed: `t=<unix>,v1=<hex HMAC-SHA256 of "<t>.<body>" keyed by the secret string>`. */
function legacySigned(secret: string, req: ReceivedRequest) {
  const m = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(req.headers["x-trawl-signature"] ?? "");
  return !!m && m[2] === createHmac("sha256", secret).update(`${m[1]}.${req.body}`).digest("hex");
}
const asWhsec = (legacySecret: string) => "whsec_" + Buffer.from(legacySecret, "utf8").toString("base64");
const at = (path: string) => receiver.requests.filter((r) => r.path === path);
const ofEvent = (path: string, type: string, jobId: string) => at(path).filter((r) => JSON.parse(r.body).type === type && JSON.parse(r.body).data?.id === jobId);

let legacy: { id: string; signing_secret: string };
let endpoint: { id: string; signing_secret: string };
let job: any;

describe("extraction jobs, every route", () => {
  test("credit limit settings: defaults, PUT, read back", async () => {
    const before = await call("GET", `${T}/extraction-settings`);
    expect(before.status).toBe(200);
    expect(before.body).toMatchObject({ monthly_credit_limit: null, updated_at: null });
    const put = await call("PUT", `${T}/extraction-settings`, { monthly_credit_limit: 1000 });
    expect(put.status).toBe(200);
    expect(put.body.monthly_credit_limit).toBe(1000);
    expect(put.body.updated_at).toMatch(ISO);
    expect((await call("GET", `${T}/extraction-settings`)).body).toEqual(put.body);
  });

  test("webhooks: the legacy job webhook and a shared endpoint, test sends, rotated secrets", async () => {
    const created = await call("POST", `${T}/webhooks`, { url: `${receiver.url}/legacy-old` });
    expect(created.status).toBe(201);
    expect(created.headers.get("deprecation")).toBe("true");
    expect(created.body.id).toMatch(/^whk_/);
    expect(created.body).toMatchObject({ url: `${receiver.url}/legacy-old`, active: true, failure_count: 0 });
    expect(created.body.signing_secret).toMatch(/^[0-9a-f]{32}$/);
    legacy = created.body;
    const moved = await call("PATCH", `${T}/webhooks/${legacy.id}`, { url: `${receiver.url}/legacy` });
    expect(moved.status).toBe(200);
    expect(moved.body).toMatchObject({ id: legacy.id, url: `${receiver.url}/legacy`, active: true });
    expect((await call("GET", `${T}/webhooks/${legacy.id}`)).body.url).toBe(`${receiver.url}/legacy`);
    const listed = await call("GET", `${T}/webhooks`);
    expect(listed.status).toBe(200);
    expect(listed.body.data.map((h: any) => h.id)).toEqual([legacy.id]);
    expect(JSON.stringify(listed.body)).not.toContain(legacy.signing_secret);

    const rotated = await call("POST", `${T}/webhooks/${legacy.id}/rotate-secret`);
    expect(rotated.status).toBe(201);
    expect(rotated.body.signing_secret).toMatch(/^[0-9a-f]{32}$/);
    expect(rotated.body.signing_secret).not.toBe(legacy.signing_secret);
    legacy = { ...legacy, signing_secret: rotated.body.signing_secret };

    // The legacy test send is asynchronous (202): it arrives, signed with the new secret, and shows in the deliveries.
    const sent = await call("POST", `${T}/webhooks/${legacy.id}/test`, { event_type: "job.succeeded" });
    expect(sent.status).toBe(202);
    expect(sent.body).toEqual({ accepted: true, event_id: expect.any(String) });
    const testReq = await until("the legacy test send", () => at("/legacy").find((r) => r.headers["webhook-id"] === sent.body.event_id));
    expect(verify(asWhsec(legacy.signing_secret), testReq)).toMatchObject({ id: sent.body.event_id, type: "job.succeeded", data: { test: true } });
    expect(legacySigned(legacy.signing_secret, testReq)).toBe(true);
    const deliveries = await until("the test send in the deliveries", async () => {
      const d = await call("GET", `${T}/webhooks/${legacy.id}/deliveries`);
      expect(d.status).toBe(200);
      return d.body.data.length ? d.body.data : null;
    });
    expect(deliveries[0]).toMatchObject({ event_id: sent.body.event_id, event_type: "job.succeeded", trigger: "test", status_code: 200 });

    const types = await call("GET", `${T}/webhooks/event-types`);
    expect(types.status).toBe(200);
    expect(types.body.data.map((t: any) => t.type)).toEqual(expect.arrayContaining(["job.queued", "job.running", "job.succeeded", "job.failed", "job.cancelled", "credits.low"]));
    const ep = await call("POST", `${T}/webhooks/endpoints`, { url: `${receiver.url}/endpoint`, description: "final states", event_types: ["job.succeeded", "job.failed"] });
    expect(ep.status).toBe(201);
    expect(ep.body.id).toMatch(/^ep_/);
    expect(ep.body).toMatchObject({ enabled: true, status: "enabled", event_types: ["job.succeeded", "job.failed"] });
    endpoint = ep.body;
    const eps = await call("GET", `${T}/webhooks/endpoints`);
    expect(eps.status).toBe(200);
    expect(eps.body.data.map((e: any) => e.id).sort()).toEqual([legacy.id, endpoint.id].sort());
    const patched = await call("PATCH", `${T}/webhooks/endpoints/${endpoint.id}`, { event_types: ["job.succeeded", "job.failed", "job.cancelled"] });
    expect(patched.status).toBe(200);
    expect((await call("GET", `${T}/webhooks/endpoints/${endpoint.id}`)).body.event_types).toEqual(["job.succeeded", "job.failed", "job.cancelled"]);
    const rot = await call("POST", `${T}/webhooks/endpoints/${endpoint.id}/rotate-secret`, { grace_hours: 0 });
    expect(rot.status).toBe(200);
    expect(rot.body.signing_secret).toMatch(/^whsec_/);
    endpoint = { ...endpoint, signing_secret: rot.body.signing_secret };
    const probe = await call("POST", `${T}/webhooks/endpoints/${endpoint.id}/test`, { event_type: "job.failed" });
    expect(probe.status).toBe(200);
    expect(probe.body).toMatchObject({ succeeded: true, status_code: 200, trigger: "test" });
    const probeReq = at("/endpoint").find((r) => r.headers["webhook-id"] === probe.body.event_id)!;
    expect(verify(endpoint.signing_secret, probeReq)).toMatchObject({ type: "job.failed", data: { test: true } });
  });

  test("a job: created (Idempotency-Key replayed), run by the worker against the fixture site and the LLM stub, result and usage read back", async () => {
    const body = { json_schema: schema, description: "Extract the product name, price and currency", suggested_urls: [`${site.url}/product`], webhook_id: legacy.id, max_steps: 3, timeout_s: 60 };
    const created = await call("POST", `${T}/jobs`, body, { "idempotency-key": "every-route:job-1" });
    expect(created.status).toBe(201);
    expect(created.body.id).toMatch(/^job_/);
    expect(created.body).toMatchObject({ status: "queued", description: body.description, webhook_id: legacy.id, max_steps: 3, timeout_s: 60, model_tier: "standard", result: null });
    expect(created.body.created_at).toMatch(ISO);
    const replay = await call("POST", `${T}/jobs`, body, { "idempotency-key": "every-route:job-1" });
    expect(replay.status).toBe(201);
    expect(replay.headers.get("idempotent-replay")).toBe("true");
    expect(replay.body.id).toBe(created.body.id);

    job = await until("the job to succeed", async () => {
      const r = await call("GET", `${T}/jobs/${created.body.id}`);
      expect(r.status).toBe(200);
      expect(["queued", "running", "succeeded"]).toContain(r.body.status);
      return r.body.status === "succeeded" ? r.body : null;
    });
    expect(job.result).toEqual(answer);
    expect(job.result_meta).toMatchObject({ extractor: "llm", model: "stub-small" });
    expect(job.usage).toMatchObject({ steps: 1, pages_fetched: 1, llm_tokens_in: 100, llm_tokens_out: 20 });
    expect(job.attempts).toBe(1);
    for (const k of ["enqueued_at", "started_at", "completed_at"]) expect(job[k]).toMatch(ISO);
    expect(job.started_at <= job.completed_at).toBe(true);
    expect(site.requests).toContain("/product");
    expect(llm.requests).toHaveLength(1);
    expect(llm.requests[0].headers.authorization).toBe("Bearer sk-every-route");
    expect(llm.requests[0].body.response_format?.json_schema?.schema).toEqual(schema);
    expect(llm.requests[0].body.messages.find((m) => m.role === "user")!.content).toContain(PRODUCT.name);

    const succeeded = await call("GET", `${T}/jobs?status=succeeded`);
    expect(succeeded.status).toBe(200);
    expect(succeeded.body.data.map((j: any) => j.id)).toEqual([job.id]);

    const usage = await call("GET", `${T}/usage`);
    expect(usage.status).toBe(200);
    expect(usage.body).toMatchObject({ jobs: 1, steps: 1, pages_fetched: 1, llm_tokens_in: 100, llm_tokens_out: 20, credits_used: 2, monthly_credit_limit: 1000 });
    expect(usage.body.month).toMatch(/^\d{4}-\d{2}$/);
  });

  test("a job cancelled while the worker waits on a slow page", async () => {
    const created = await call("POST", `${T}/jobs`, { json_schema: schema, description: "slow product", suggested_urls: [`${site.url}/slow?every-route=1`] });
    expect(created.status).toBe(201);
    await site.waitFor("/slow?every-route=1", 20_000);
    const running = await call("GET", `${T}/jobs/${created.body.id}`);
    expect(running.body.status).toBe("running");
    const cancelled = await call("POST", `${T}/jobs/${created.body.id}/cancel`);
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toMatchObject({ id: created.body.id, status: "cancelled", result: null });
    expect(cancelled.body.completed_at).toMatch(ISO);
    await until("the slow fetch to be aborted", () => site.aborted.includes("/slow?every-route=1"));
    const all = await call("GET", `${T}/jobs`);
    expect(all.status).toBe(200);
    // Newest first.
    expect(all.body.data.map((j: any) => [j.id, j.status])).toEqual([[created.body.id, "cancelled"], [job.id, "succeeded"]]);
    expect(all.body.pagination).toEqual({ next_cursor: null, has_more: false });
  });

  test("the job events reach both webhooks signed; the event log, one event's attempts and a replay", async () => {
    const [done] = await until("job.succeeded at the shared endpoint", () => {
      const got = ofEvent("/endpoint", "job.succeeded", job.id);
      return got.length ? got : null;
    });
    expect(verify(endpoint.signing_secret, done!)).toMatchObject({ type: "job.succeeded", data: { id: job.id, status: "succeeded", result: answer } });
    expect(done!.headers["x-trawl-signature"]).toBeUndefined();
    await until("the legacy webhook's job events", () => ["job.queued", "job.running", "job.succeeded"].every((t) => ofEvent("/legacy", t, job.id).length > 0));
    for (const r of ["job.queued", "job.running", "job.succeeded"].map((t) => ofEvent("/legacy", t, job.id)[0]!)) {
      expect(verify(asWhsec(legacy.signing_secret), r).data.id).toBe(job.id);
      expect(legacySigned(legacy.signing_secret, r)).toBe(true);
    }
    await until("job.cancelled at the shared endpoint", () => at("/endpoint").some((r) => JSON.parse(r.body).type === "job.cancelled"));

    const log = await call("GET", `${T}/webhooks/events?type=job.succeeded`);
    expect(log.status).toBe(200);
    const real = log.body.data.filter((e: any) => !e.is_test);
    expect(real).toHaveLength(1);
    expect(real[0].deliveries.map((d: any) => d.endpoint_id).sort()).toEqual([legacy.id, endpoint.id].sort());
    expect(real[0].deliveries.every((d: any) => d.status === "delivered")).toBe(true);
    const detail = await call("GET", `${T}/webhooks/events/${real[0].id}`);
    expect(detail.status).toBe(200);
    expect(detail.body.payload).toMatchObject({ id: real[0].id, type: "job.succeeded", data: { id: job.id } });
    expect(detail.body.attempts.length).toBeGreaterThanOrEqual(2);

    const before = at("/endpoint").length;
    const replay = await call("POST", `${T}/webhooks/events/${real[0].id}/replay?endpoint_id=${endpoint.id}`);
    expect(replay.status).toBe(200);
    expect(replay.body.data).toEqual([expect.objectContaining({ endpoint_id: endpoint.id, succeeded: true, status_code: 200, trigger: "replay" })]);
    const again = at("/endpoint").slice(before);
    expect(again).toHaveLength(1);
    expect(again[0]!.body).toBe(done!.body);
    expect(again[0]!.headers["webhook-id"]).toBe(real[0].id);

    const legacyLog = await call("GET", `${T}/webhooks/${legacy.id}/deliveries`);
    expect(legacyLog.body.data.filter((a: any) => a.trigger === "scheduled").map((a: any) => a.event_type)).toEqual(expect.arrayContaining(["job.queued", "job.running", "job.succeeded"]));
  });

  test("the webhooks removed", async () => {
    expect((await call("DELETE", `${T}/webhooks/endpoints/${endpoint.id}`)).status).toBe(204);
    expect((await call("GET", `${T}/webhooks/endpoints/${endpoint.id}`)).status).toBe(404);
    const gone = await call("DELETE", `${T}/webhooks/${legacy.id}`);
    expect(gone.status).toBe(204);
    expect(gone.headers.get("deprecation")).toBe("true");
    expect((await call("GET", `${T}/webhooks`)).body.data).toEqual([]);
  });
});
