/**
 * The worker with the offline heuristic extractor (no LLM_BASE_URL) over the fixture site on
 * loopback: JSON-LD, microdata, OpenGraph/meta, tables, definition lists, JSON, pagination,
 * redirects, robots.txt, the 5 MB cap, content types, SCHEMA_UNSATISFIED, STEP_LIMIT,
 * concurrency, and the events of the final states.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ownerWithKey, startTestApp, type TestApp } from "../helpers/app";
import { ON_BINARY } from "../helpers/target";
import { ARTICLE, LISTING_ITEMS, PRODUCT, SPECS, startFixtureSite, type FixtureSite } from "./fixture-site";
import { base, createJob, runUntilFinal, waitFor } from "./helpers";

let app: TestApp;
let site: FixtureSite;
let owner: Awaited<ReturnType<typeof ownerWithKey>>;
beforeAll(async () => {
  site = startFixtureSite();
  app = await startTestApp({ ALLOW_PRIVATE_TARGETS: "true", TRAWL_CONCURRENCY: "2" });
  if (!ON_BINARY) app.webhooks.options.autoKick = false;
  owner = await ownerWithKey(app);
});
afterAll(async () => {
  await app.stop();
  await site.stop();
});

async function extract(schema: Record<string, unknown>, urls: string[], over: Record<string, unknown> = {}) {
  const job = await createJob(app, owner.token, owner.ws.id, { json_schema: schema, description: "Extract the data of the page", suggested_urls: urls.map((u) => site.url + u), ...over });
  return runUntilFinal(app, owner.token, owner.ws.id, job.id);
}

const obj = (properties: Record<string, unknown>, required: string[] = []) => ({ type: "object", properties, required });
const str = { type: "string" };
const num = { type: "number" };

describe("heuristic extractor", () => {
  test("product page: JSON-LD (nested offers, brand object) mapped by name and type", async () => {
    const job = await extract(obj({ name: str, price: num, currency: str, sku: str, brand: str, in_stock: { type: "boolean" } }, ["name", "price"]), ["/product"]);
    expect(job.status).toBe("succeeded");
    expect(job.result).toEqual({ name: PRODUCT.name, price: PRODUCT.price, currency: PRODUCT.currency, sku: PRODUCT.sku, brand: PRODUCT.brand, in_stock: true });
    expect(job.result_meta.extractor).toBe("heuristic");
    expect(job.result_meta.sources.price).toContain("json-ld");
    expect(job.result_meta.pages).toEqual([{ url: `${site.url}/product`, status: 200, extracted: true }]);
    expect(job.attempts).toBe(1);
    expect(job.usage).toMatchObject({ steps: 1, pages_fetched: 1, llm_tokens_in: 0, llm_tokens_out: 0 });
    expect(job.usage.bytes).toBeGreaterThan(500);
    expect(job.started_at).not.toBeNull();
    expect(job.completed_at).not.toBeNull();
    expect(job.error).toBeNull();
  });

  test("paginated listing: header tables become records, rel=next followed, arrays concatenated", async () => {
    const schema = obj({ items: { type: "array", items: obj({ name: str, price: num }) } }, ["items"]);
    const job = await extract(schema, ["/listing?page=1"]);
    expect(job.status).toBe("succeeded");
    expect(job.result.items).toEqual(LISTING_ITEMS);
    expect(job.result_meta.pages.map((p: any) => p.url)).toEqual([1, 2, 3].map((n) => `${site.url}/listing?page=${n}`));
    expect(job.usage.pages_fetched).toBe(3);
  });

  test("article: OpenGraph and meta tags", async () => {
    const job = await extract(obj({ headline: str, author: str, published_at: { type: "string", format: "date-time" }, description: str }, ["headline", "author"]), ["/article"]);
    expect(job.status).toBe("succeeded");
    expect(job.result).toEqual({ headline: ARTICLE.headline, author: ARTICLE.author, published_at: ARTICLE.published, description: "A story about one file." });
  });

  test("spec sheet: definition list and key/value table, coerced to integer, number and boolean", async () => {
    const job = await extract(obj({ weight_grams: { type: "integer" }, drop_mm: num, waterproof: { type: "boolean" }, color: { type: "string", enum: ["Black", "White"] } }, ["weight_grams"]), ["/specs"]);
    expect(job.status).toBe("succeeded");
    expect(job.result).toEqual(SPECS);
  });

  test("microdata, and a JSON response", async () => {
    const micro = await extract(obj({ name: str, sku: str, price: num, currency: str }, ["name", "price"]), ["/micro"]);
    expect(micro.result).toEqual({ name: "Summit Pack 30", sku: "SP-30", price: 149, currency: "USD" });
    const json = await extract(obj({ name: str, sku: str, price: num }, ["price"]), ["/api/product"]);
    expect(json.result).toEqual({ name: PRODUCT.name, sku: PRODUCT.sku, price: PRODUCT.price });
  });

  test("merge across pages: scalars keep the first value, a later page fills what is missing; a redirect is followed", async () => {
    const job = await extract(obj({ name: str, price: num, weight_grams: { type: "integer" } }, ["name", "price", "weight_grams"]), ["/moved", "/specs"]);
    expect(job.status).toBe("succeeded");
    expect(job.result).toEqual({ name: PRODUCT.name, price: PRODUCT.price, weight_grams: 280 });
    expect(job.result_meta.pages[0].url).toBe(`${site.url}/product`);
  });

  test("links matching the description are followed while a required property is empty", async () => {
    const job = await createJob(app, owner.token, owner.ws.id, {
      json_schema: obj({ name: str, weight_grams: { type: "integer" } }, ["name", "weight_grams"]),
      description: "Find the shoe specs: weight",
      suggested_urls: [`${site.url}/product`],
    });
    const done = await runUntilFinal(app, owner.token, owner.ws.id, job.id);
    expect(done.status).toBe("succeeded");
    expect(done.result).toEqual({ name: PRODUCT.name, weight_grams: 280 });
    expect(done.result_meta.pages.map((p: any) => p.url)).toEqual([`${site.url}/product`, `${site.url}/specs`]);
  });
});

describe("failures", () => {
  test("SCHEMA_UNSATISFIED names the required properties that stayed empty", async () => {
    const job = await extract(obj({ name: str, price: num, rating: num }, ["price", "rating"]), ["/empty"]);
    expect(job.status).toBe("failed");
    expect(job.error_code).toBe("SCHEMA_UNSATISFIED");
    expect(job.error).toBe("SCHEMA_UNSATISFIED: required properties stayed empty: price, rating");
    expect(job.result).toBeNull();
    expect(job.result_meta.stopped_by).toBe("done");
  });

  test("STEP_LIMIT when max_steps ends the job with pages left and the schema unsatisfied", async () => {
    const schema = obj({ items: { type: "array", items: obj({ name: str, price: num }), minItems: 5 } }, ["items"]);
    const job = await extract(schema, ["/listing?page=1"], { max_steps: 1 });
    expect(job.error_code).toBe("STEP_LIMIT");
    expect(job.usage.steps).toBe(1);
    const enough = await extract(schema, ["/listing?page=1"], { max_steps: 2 });
    expect(enough.status).toBe("succeeded");
    expect(enough.result.items.length).toBe(6);
    expect(enough.result_meta.stopped_by).toBe("max_steps");
  });

  test("FETCH_FAILED: 404, unsupported content type, more than 5 MB, disallowed by robots.txt", async () => {
    const schema = obj({ name: str }, ["name"]);
    for (const [path, text] of [
      ["/nope", "HTTP 404"],
      ["/image.png", "unsupported content type image/png"],
      ["/huge", "larger than 5 MB"],
      ["/private-area", "disallowed by robots.txt"],
    ]) {
      const job = await extract(schema, [path]);
      expect(job.status).toBe("failed");
      expect(job.error_code).toBe("FETCH_FAILED");
      expect(job.error).toContain(text);
    }
    expect(site.requests).not.toContain("/private-area");
    expect(site.requests).toContain("/robots.txt");
  });

  test("no suggested_urls: nothing to read, SCHEMA_UNSATISFIED", async () => {
    const job = await extract(obj({ name: str }, ["name"]), []);
    expect(job.error_code).toBe("SCHEMA_UNSATISFIED");
  });
});

describe("worker", () => {
  test("TRAWL_CONCURRENCY bounds the jobs running at once; cancel aborts the in-flight fetch", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await createJob(app, owner.token, owner.ws.id, { json_schema: obj({ name: str }), description: "slow", suggested_urls: [`${site.url}/slow?n=${i}`] })).id);
    if (!ON_BINARY) await app.ctx.scheduler.runNow("trawl.worker");
    await site.waitFor("/slow?n=0");
    await site.waitFor("/slow?n=1");
    if (!ON_BINARY) await app.ctx.scheduler.runNow("trawl.worker");
    await Bun.sleep(100);
    expect(site.requests.filter((p) => p.startsWith("/slow")).length).toBe(2);
    const states = await Promise.all(ids.map((id) => app.call("GET", `${base(owner.ws.id)}/jobs/${id}`, { token: owner.token })));
    expect(states.map((s) => s.body.status)).toEqual(["running", "running", "queued"]);
    expect(states[0].body.attempts).toBe(1);

    const c = await app.call("POST", `${base(owner.ws.id)}/jobs/${ids[0]}/cancel`, { token: owner.token });
    expect(c.status).toBe(200);
    expect(c.body.status).toBe("cancelled");
    const until = Date.now() + 5000;
    while (!site.aborted.includes("/slow?n=0") && Date.now() < until) await Bun.sleep(10);
    expect(site.aborted).toContain("/slow?n=0");
    // The freed slot takes the queued job.
    if (!ON_BINARY) await app.ctx.scheduler.runNow("trawl.worker");
    await site.waitFor("/slow?n=2");
    for (const id of ids.slice(1)) await app.call("POST", `${base(owner.ws.id)}/jobs/${id}/cancel`, { token: owner.token });
    for (const id of ids) await waitFor(app, owner.token, owner.ws.id, id, (j) => j.status === "cancelled");
    await Bun.sleep(50);
    const first = await app.call("GET", `${base(owner.ws.id)}/jobs/${ids[0]}`, { token: owner.token });
    expect(first.body.status).toBe("cancelled");
    expect(first.body.usage.steps).toBe(1);
  });

  test("events: job.queued, job.running, then job.succeeded or job.failed, each with the job", async () => {
    const ok = await extract(obj({ name: str }, ["name"]), ["/product"]);
    const bad = await extract(obj({ rating: num }, ["rating"]), ["/empty"]);
    // In-process the test moves the outbox into the log; on the binary its engine does, right after each commit.
    const typesOf = async (id: string) => {
      if (!ON_BINARY) await app.webhooks.dispatchPending();
      const log = await app.call("GET", `${base(owner.ws.id)}/webhooks/events?limit=100`, { token: owner.token });
      expect(log.status).toBe(200);
      const out: string[] = [];
      for (const e of log.body.data) {
        const one = await app.call("GET", `${base(owner.ws.id)}/webhooks/events/${e.id}`, { token: owner.token });
        const body = typeof one.body.payload === "string" ? JSON.parse(one.body.payload) : (one.body.payload ?? one.body);
        if (JSON.stringify(body).includes(id)) out.push(e.type);
      }
      return out.sort();
    };
    const settled = async (id: string, n: number) => {
      const deadline = Date.now() + 10_000;
      for (;;) {
        const types = await typesOf(id);
        if (types.length >= n || Date.now() > deadline) return types;
        await Bun.sleep(100);
      }
    };
    expect(await settled(ok.id, 3)).toEqual(["job.queued", "job.running", "job.succeeded"]);
    expect(await settled(bad.id, 3)).toEqual(["job.failed", "job.queued", "job.running"]);
  });
});
