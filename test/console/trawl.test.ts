/**
 * Console journey, extraction jobs: a schema the API refuses (its details shown next to the
 * schema editor), a job run against a loopback product page to a result shown on the page
 * and held by the API, a job stuck on a page that never answers cancelled from the page,
 * and the usage screen with a credit limit saved.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { journey, overflow, SIGNED_OUT, unexpected } from "../helpers/browser";
import { field, operatorInWorkspace, screen, startConsole, type ConsoleFixture } from "../helpers/console-app";

const T = 60_000;
let f: ConsoleFixture;
let site: ReturnType<typeof Bun.serve>;
const hung: (() => void)[] = [];

const PRODUCT_PAGE = `<!doctype html><html><head><meta charset="utf-8"><title>Trail Runner 2</title>
<script type="application/ld+json">{"@context":"https://schema.org","@type":"Product","name":"Trail Runner 2","sku":"TR-2","offers":{"@type":"Offer","price":"129.50","priceCurrency":"EUR"}}</script>
</head><body><h1>Trail Runner 2</h1><p>129.50 EUR</p></body></html>`;

beforeAll(async () => {
  site = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch: (req) => {
      const path = new URL(req.url).pathname;
      if (path === "/product") return new Response(PRODUCT_PAGE, { headers: { "content-type": "text/html; charset=utf-8" } });
      if (path === "/never") return new Promise<Response>((resolve) => hung.push(() => resolve(new Response("late"))));
      return new Response("not found", { status: 404 });
    },
  });
  f = await startConsole({ ALLOW_PRIVATE_TARGETS: "true" });
}, T);
afterAll(async () => {
  for (const h of hung) h();
  await f?.stop();
  await site?.stop(true);
});

test("console: extraction job refused, run to a result, cancelled", async () => {
  const { cp, page, token, ws } = await operatorInWorkspace(f);
  await journey(cp, "trawl", async () => {
    const base = `/trawl/v1/workspaces/${ws.id}`;
    const siteUrl = `http://127.0.0.1:${site.port}`;

    // A schema whose root is not an object: the API's detail shows under the schema editor.
    await screen(page, "Extraction", "New job");
    await field(page, "What to extract").fill("The product name and price");
    await field(page, "JSON Schema of the result").fill('{"type": "array"}');
    await page.getByRole("button", { name: "Create job" }).click();
    const schemaError = page.locator("#new-job-json_schema-err");
    await schemaError.getByText("json_schema.type").waitFor();
    expect(await field(page, "JSON Schema of the result").getAttribute("aria-invalid")).toBe("true");
    await cp.shot("trawl-schema-error");
    // Not JSON at all: caught on the page, no request.
    await field(page, "JSON Schema of the result").fill("{nope");
    await page.getByRole("button", { name: "Create job" }).click();
    await schemaError.getByText("Not valid JSON").waitFor();
    expect((await f.app.call("GET", `${base}/jobs`, { token })).body.data).toEqual([]);

    // A valid job on the loopback product page: the detail page follows it to its result.
    await field(page, "JSON Schema of the result").fill(JSON.stringify({ type: "object", properties: { name: { type: "string" }, price: { type: "number" } }, required: ["name", "price"] }));
    await field(page, "Seed URLs (one per line)").fill(`${siteUrl}/product`);
    await page.getByRole("button", { name: "Create job" }).click();
    await page.getByTestId("job-result").getByText("Trail Runner 2").waitFor({ timeout: 20_000 });
    await page.getByRole("table", { name: "Pages read" }).getByText(`${siteUrl}/product`).waitFor();
    const [done] = (await f.app.call("GET", `${base}/jobs`, { token })).body.data;
    expect(done.status).toBe("succeeded");
    expect(done.result).toMatchObject({ name: "Trail Runner 2", price: 129.5 });
    await cp.shot("trawl-job-result");
    // At phone width the job page fits the screen: its id, URLs and result wrap or scroll in their own boxes.
    await page.setViewportSize({ width: 390, height: 800 });
    expect(await overflow(page)).toEqual([]);
    await cp.shot("trawl-job-result-390");
    await page.setViewportSize({ width: 1280, height: 860 });

    // A job on a page that never answers: cancelled from its page while it runs.
    const stuck = await f.app.call("POST", `${base}/jobs`, { token, body: { json_schema: { type: "object", properties: { name: { type: "string" } } }, description: "Never answers", suggested_urls: [`${siteUrl}/never`] } });
    expect(stuck.status).toBe(201);
    await screen(page, "Extraction", "Jobs");
    const jobs = page.getByRole("table", { name: "Jobs" });
    await jobs.getByText("succeeded", { exact: true }).waitFor();
    await jobs.getByRole("link", { name: "Never answers" }).click();
    await page.getByRole("region", { name: "Never answers" }).getByText("running", { exact: true }).waitFor({ timeout: 20_000 });
    await page.getByRole("button", { name: "Cancel job" }).click();
    await page.getByRole("button", { name: "Confirm cancel job" }).click();
    await page.getByRole("region", { name: "Never answers" }).getByText("cancelled", { exact: true }).waitFor();
    expect((await f.app.call("GET", `${base}/jobs/${stuck.body.id}`, { token })).body.status).toBe("cancelled");
    await page.getByRole("link", { name: "← All jobs" }).click();
    await jobs.getByText("cancelled", { exact: true }).waitFor();
    await cp.shot("trawl-jobs");

    // Usage: the finished jobs counted; a credit limit saved.
    await screen(page, "Extraction", "Usage");
    await page.getByTestId("usage").getByText("Credits used").waitFor();
    await field(page, "Credits per month (empty: no limit)").fill("500");
    await page.getByRole("button", { name: "Save limit" }).click();
    await page.getByTestId("usage").getByText("of 500").waitFor();
    expect((await f.app.call("GET", `${base}/extraction-settings`, { token })).body.monthly_credit_limit).toBe(500);

    expect(unexpected(cp.errors, [SIGNED_OUT, /status of 400 .*\/trawl\/v1\/workspaces\/[^/]+\/jobs$/])).toEqual([]);
  });
}, T);
