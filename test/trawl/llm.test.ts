/**
 * The LLM path against an OpenAI-compatible stub on loopback: the request (model per tier,
 * response_format json_schema strict, page markdown, key), JSON repair, ajv validation with
 * a corrective follow-up, the plain JSON-mode fallback, merging across paginated pages,
 * LLM_ERROR after retries, and cancel aborting the in-flight call.
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { ownerWithKey, startTestApp, type TestApp } from "../helpers/app";
import { ON_BINARY } from "../helpers/target";
import { PRODUCT, startFixtureSite, type FixtureSite } from "./fixture-site";
import { base, createJob, runUntilFinal, waitFor } from "./helpers";
import { startLlmStub, type LlmStub } from "./llm-stub";

let app: TestApp;
let site: FixtureSite;
let llm: LlmStub;
let owner: Awaited<ReturnType<typeof ownerWithKey>>;
beforeAll(async () => {
  site = startFixtureSite();
  llm = startLlmStub();
  app = await startTestApp({ ALLOW_PRIVATE_TARGETS: "true", LLM_BASE_URL: llm.url, LLM_API_KEY: "sk-test-123", LLM_MODEL: "small-model", LLM_MODEL_PRO: "big-model" });
  owner = await ownerWithKey(app);
});
afterAll(async () => {
  await app.stop();
  await llm.stop();
  await site.stop();
});
afterEach(() => {
  llm.requests.length = 0;
});

const productSchema = { type: "object", properties: { name: { type: "string" }, price: { type: "number" }, currency: { type: "string" } }, required: ["name", "price"] };
const good = JSON.stringify({ name: PRODUCT.name, price: PRODUCT.price, currency: PRODUCT.currency });

async function run(over: Record<string, unknown> = {}) {
  const job = await createJob(app, owner.token, owner.ws.id, { json_schema: productSchema, description: "Extract the product name and price", suggested_urls: [`${site.url}/product`], ...over });
  return runUntilFinal(app, owner.token, owner.ws.id, job.id);
}

describe("LLM extraction", () => {
  test("one call per page with the schema in response_format (strict), the page as markdown, the tier's model and the key", async () => {
    llm.answer = () => ({ content: good });
    const job = await run();
    expect(job.status).toBe("succeeded");
    expect(job.result).toEqual({ name: PRODUCT.name, price: PRODUCT.price, currency: PRODUCT.currency });
    expect(job.result_meta).toMatchObject({ extractor: "llm", model: "small-model", repaired_json: false, stopped_by: "done" });
    expect(job.usage).toMatchObject({ steps: 1, pages_fetched: 1, llm_tokens_in: 100, llm_tokens_out: 20 });
    expect(llm.requests.length).toBe(1);
    const { body, headers } = llm.requests[0];
    expect(headers.authorization).toBe("Bearer sk-test-123");
    expect(body.model).toBe("small-model");
    expect(body.response_format).toEqual({ type: "json_schema", json_schema: { name: "extraction", schema: productSchema, strict: true } });
    const user = body.messages.find((m) => m.role === "user")!.content;
    expect(user).toContain("Extract the product name and price");
    expect(user).toContain(`# ${PRODUCT.name}`);
    expect(user).not.toContain("<script");

    const pro = await run({ model_tier: "pro" });
    expect(pro.result_meta.model).toBe("big-model");
    expect(llm.requests[1].body.model).toBe("big-model");
  });

  test("malformed JSON (code fence, single quotes, trailing comma) is repaired", async () => {
    llm.answer = () => ({ content: "```json\n{'name': 'Trail Runner 2', 'price': 129.5, 'currency': 'EUR',}\n```" });
    const job = await run();
    expect(job.status).toBe("succeeded");
    expect(job.result).toEqual({ name: PRODUCT.name, price: 129.5, currency: "EUR" });
    expect(job.result_meta.repaired_json).toBe(true);
  });

  test("a schema violation gets one corrective follow-up with ajv's errors; nulls count as unknown", async () => {
    llm.answer = (_req, n) => ({ content: n === 1 ? JSON.stringify({ name: PRODUCT.name, price: "cheap", currency: null }) : JSON.stringify({ name: PRODUCT.name, price: 129.5, currency: null }) });
    const job = await run();
    expect(job.status).toBe("succeeded");
    expect(job.result).toEqual({ name: PRODUCT.name, price: 129.5 });
    expect(llm.requests.length).toBe(2);
    const follow = llm.requests[1].body.messages;
    expect(follow.at(-2)!.role).toBe("assistant");
    expect(follow.at(-1)!.content).toContain("/price must be number");
  });

  test("still invalid after the follow-up: the answer is dropped and the job fails SCHEMA_UNSATISFIED with a warning", async () => {
    llm.answer = () => ({ content: JSON.stringify({ name: PRODUCT.name, price: "cheap" }) });
    const job = await run();
    expect(job.status).toBe("failed");
    expect(job.error_code).toBe("SCHEMA_UNSATISFIED");
    expect(job.error).toContain("name, price");
    expect(job.result_meta.warnings[0]).toContain("does not match the schema");
  });

  test("a server without json_schema support is asked again in JSON mode", async () => {
    llm.answer = (req) =>
      req.response_format?.type === "json_schema" ? { status: 400, body: JSON.stringify({ error: { message: "response_format json_schema is not supported" } }) } : { content: good };
    const job = await run();
    expect(job.status).toBe("succeeded");
    expect(llm.requests.map((r) => r.body.response_format?.type)).toEqual(["json_schema", "json_object"]);
  });

  test("answers merge across pages: arrays concatenated without duplicates, pagination followed", async () => {
    const schema = { type: "object", properties: { store: { type: "string" }, items: { type: "array", items: { type: "object", properties: { name: { type: "string" }, price: { type: "number" } } } } }, required: ["items"] };
    llm.answer = (req) => {
      const md = req.messages.find((m) => m.role === "user")!.content;
      const page = Number(/Catalogue, page (\d)/.exec(md)?.[1]);
      const rows = [...md.matchAll(/\| ([A-Z][\w ]+?) \| \$([\d.]+) \|/g)].map((m) => ({ name: m[1], price: Number(m[2]) }));
      // Page 2 repeats the last item of page 1, and names another store.
      const items = page === 2 ? [{ name: "Camp Stove", price: 45 }, ...rows] : rows;
      return { content: JSON.stringify({ store: page === 1 ? "Northpeak" : "Other", items }) };
    };
    const job = await run({ json_schema: schema, suggested_urls: [`${site.url}/listing?page=1`] });
    expect(job.status).toBe("succeeded");
    expect(job.result.store).toBe("Northpeak");
    expect(job.result.items.map((i: any) => i.name)).toEqual(["Alpine Tent", "Bivy Bag", "Camp Stove", "Down Jacket", "Energy Gel", "Fleece", "Gaiters", "Headlamp"]);
    expect(llm.requests.length).toBe(3);
    expect(job.usage.llm_tokens_in).toBe(300);
  });

  test("LLM_ERROR after the server keeps failing (retried twice)", async () => {
    llm.answer = () => ({ status: 503, body: "{}" });
    const job = await run();
    expect(job.status).toBe("failed");
    expect(job.error_code).toBe("LLM_ERROR");
    expect(job.error).toBe("LLM_ERROR: LLM answered HTTP 503");
    expect(llm.requests.length).toBe(3);
  });

  test("cancel while the model is answering aborts the call; the job stays cancelled", async () => {
    llm.answer = () => ({ hang: true });
    const job = await createJob(app, owner.token, owner.ws.id, { json_schema: productSchema, description: "product", suggested_urls: [`${site.url}/product?c=1`] });
    if (!ON_BINARY) await app.ctx.scheduler.runNow("trawl.worker");
    const until = Date.now() + 5000;
    while (llm.requests.length === 0 && Date.now() < until) await Bun.sleep(10);
    expect(llm.requests.length).toBe(1);
    const c = await app.call("POST", `${base(owner.ws.id)}/jobs/${job.id}/cancel`, { token: owner.token });
    expect(c.status).toBe(200);
    while (llm.aborted === 0 && Date.now() < until) await Bun.sleep(10);
    expect(llm.aborted).toBe(1);
    const after = await waitFor(app, owner.token, owner.ws.id, job.id, (j) => j.usage.pages_fetched === 1);
    expect(after).toMatchObject({ status: "cancelled", result: null, error: null });
  });
});
