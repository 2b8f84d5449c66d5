/**
 * A job succeeds only on pages it read: when no page could be read it fails with the fetch
 * error (FETCH_FAILED, BLOCKED_BY_SSRF_GUARD) naming the URL and the reason, even when an
 * empty result would satisfy its schema (no required properties); it costs no credit and
 * emits job.failed. One page read and a later link gone still succeeds.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { ownerWithKey, startTestApp, type TestApp } from "../helpers/app";
import { ON_BINARY } from "../helpers/target";
import { until } from "../helpers/until";
import { LISTING_ITEMS, type FixtureSite } from "./fixture-site";
import { base, createJob, runUntilFinal, useSiteAndApp } from "./helpers";

const shared = useSiteAndApp();
let app: TestApp;
let site: FixtureSite;
beforeAll(() => void ({ app, site } = shared));

/** No required property: `{}` validates, so only the outcome rule keeps such a job from succeeding on nothing. */
const OPTIONAL = { type: "object", properties: { name: { type: "string" }, price: { type: "number" } } };

async function run(a: TestApp, o: Awaited<ReturnType<typeof ownerWithKey>>, urls: string[], schema: Record<string, unknown> = OPTIONAL) {
  const job = await createJob(a, o.token, o.ws.id, { json_schema: schema, description: "Extract the data of the page", suggested_urls: urls });
  return runUntilFinal(a, o.token, o.ws.id, job.id);
}

/** The job.failed event of the job, from the workspace's event log (in-process the test moves the outbox into the log). */
function failedEvent(a: TestApp, o: Awaited<ReturnType<typeof ownerWithKey>>, jobId: string) {
  return until(`job.failed of ${jobId}`, async () => {
    if (!ON_BINARY) await a.webhooks.dispatchPending();
    const log = await a.call("GET", `${base(o.ws.id)}/webhooks/events?type=job.failed&limit=100`, { token: o.token });
    for (const e of log.body.data) {
      const one = await a.call("GET", `${base(o.ws.id)}/webhooks/events/${e.id}`, { token: o.token });
      if (one.body.payload.data.id === jobId) return one.body.payload.data;
    }
    return null;
  });
}

describe("a job that read no page fails", () => {
  test("the only page answers 404: failed FETCH_FAILED naming the URL and the status; no credit used; job.failed", async () => {
    const o = await ownerWithKey(app);
    const url = `${site.url}/nope?only=1`;
    const job = await run(app, o, [url]);
    expect(job).toMatchObject({ status: "failed", error_code: "FETCH_FAILED", result: null });
    expect(job.error).toBe(`FETCH_FAILED: no page could be read: ${url}: HTTP 404`);
    expect(job.result_meta).toMatchObject({ stopped_by: "error", pages: [{ url, status: null, extracted: false, error: `FETCH_FAILED: ${url}: HTTP 404` }] });
    expect(job.usage).toMatchObject({ steps: 1, pages_fetched: 0, llm_tokens_in: 0, llm_tokens_out: 0 });
    const usage = await app.call("GET", `${base(o.ws.id)}/usage`, { token: o.token });
    expect(usage.body).toMatchObject({ jobs: 1, pages_fetched: 0, credits_used: 0 });
    expect(await failedEvent(app, o, job.id)).toMatchObject({ id: job.id, status: "failed", error_code: "FETCH_FAILED", error: job.error, result: null });
  });

  test("several unreadable pages: FETCH_FAILED names the first and counts the others", async () => {
    const o = await ownerWithKey(app);
    const job = await run(app, o, [`${site.url}/nope?n=1`, `${site.url}/image.png`, `${site.url}/private-area`]);
    expect(job.error_code).toBe("FETCH_FAILED");
    expect(job.error).toBe(`FETCH_FAILED: no page could be read: ${site.url}/nope?n=1: HTTP 404 (and 2 more unreadable pages: see result_meta.pages)`);
    expect(job.result_meta.pages.map((p: any) => p.error.split(": ").slice(0, 2).join(": "))).toEqual([
      `FETCH_FAILED: ${site.url}/nope?n=1`,
      `FETCH_FAILED: ${site.url}/image.png`,
      `FETCH_FAILED: ${site.url}/private-area`,
    ]);
  });

  test("ALLOW_PRIVATE_TARGETS off: a loopback URL ends failed BLOCKED_BY_SSRF_GUARD naming the URL; nothing is requested", async () => {
    const guarded = await startTestApp({ ALLOW_PRIVATE_TARGETS: "false" });
    try {
      if (!ON_BINARY) guarded.webhooks.options.autoKick = false;
      const o = await ownerWithKey(guarded);
      const url = `${site.url}/product?guarded=1`;
      const before = site.requests.length;
      const job = await run(guarded, o, [url]);
      expect(job).toMatchObject({ status: "failed", error_code: "BLOCKED_BY_SSRF_GUARD", result: null });
      expect(job.error).toStartWith(`BLOCKED_BY_SSRF_GUARD: no page could be read: ${url}: `);
      expect(job.result_meta.pages).toEqual([{ url, status: null, extracted: false, error: expect.stringContaining("BLOCKED_BY_SSRF_GUARD") }]);
      expect(site.requests.length).toBe(before);
      expect((await guarded.call("GET", `${base(o.ws.id)}/usage`, { token: o.token })).body).toMatchObject({ jobs: 1, credits_used: 0 });
      expect(await failedEvent(guarded, o, job.id)).toMatchObject({ id: job.id, error_code: "BLOCKED_BY_SSRF_GUARD" });
    } finally {
      await guarded.stop();
    }
  });
});

describe("a job that read a page", () => {
  test("succeeds when a later link is gone: the 404 is listed in result_meta.pages", async () => {
    const o = await ownerWithKey(app);
    const schema = { type: "object", properties: { items: { type: "array", items: { type: "object", properties: { name: { type: "string" }, price: { type: "number" } } } } } };
    const job = await run(app, o, [`${site.url}/listing-dead-end`], schema);
    expect(job.status).toBe("succeeded");
    expect(job.result).toEqual({ items: LISTING_ITEMS.slice(0, 3) });
    expect(job.result_meta.pages).toEqual([
      { url: `${site.url}/listing-dead-end`, status: 200, extracted: true },
      { url: `${site.url}/listing-gone`, status: null, extracted: false, error: `FETCH_FAILED: ${site.url}/listing-gone: HTTP 404` },
    ]);
    expect(job.usage).toMatchObject({ steps: 2, pages_fetched: 1 });
    expect((await app.call("GET", `${base(o.ws.id)}/usage`, { token: o.token })).body).toMatchObject({ jobs: 1, credits_used: 1 });
  });
});
