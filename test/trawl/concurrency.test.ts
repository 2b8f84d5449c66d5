/**
 * TRAWL_CONCURRENCY holds exactly under load: with hundreds of queued jobs through the API (and 10,000 through the store) and a page that
 * answers after a delay, the jobs running on the node (the API's status=running list) and the
 * fetches open at the site never exceed it, although finished jobs each start a claim of
 * their own while the scheduler's tick claims too (overlapping claims).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { tx } from "../../src/core/db";
import { prefixedId } from "../../src/core/ids";
import * as store from "../../src/services/trawl/jobs/store";
import { ownerWithKey, startTestApp, type TestApp } from "../helpers/app";
import { inProcess, ON_BINARY } from "../helpers/target";
import { until } from "../helpers/until";
import { startFixtureSite, type FixtureSite } from "./fixture-site";
import { base } from "./helpers";

const CONCURRENCY = 4;
const schema = { type: "object", properties: { name: { type: "string" }, price: { type: "number" } }, required: ["name"] };

let app: TestApp;
let site: FixtureSite;
beforeAll(async () => {
  site = startFixtureSite();
  app = await startTestApp({ ALLOW_PRIVATE_TARGETS: "true", TRAWL_CONCURRENCY: String(CONCURRENCY) });
  if (!ON_BINARY) app.webhooks.options.autoKick = false;
});
afterAll(async () => {
  await app?.stop();
  await site?.stop();
});

/** Creates `n` jobs through the API, a few requests at a time. */
async function createJobs(token: string, wsId: string, n: number, url: (i: number) => string) {
  let next = 0;
  const lane = async () => {
    for (let i = next++; i < n; i = next++) {
      const r = await app.call("POST", `${base(wsId)}/jobs`, { token, body: { json_schema: schema, description: "product", suggested_urls: [url(i)], max_steps: 1 } });
      if (r.status !== 201) throw new Error(`job ${i}: ${r.status} ${JSON.stringify(r.body)}`);
    }
  };
  await Promise.all(Array.from({ length: 4 }, lane));
}

/**
 * Ticks the worker (in-process; the binary's scheduler ticks every second) and samples the
 * jobs running until `done` holds; returns the most seen running at once.
 */
async function drain(token: string, wsId: string, done: (running: number) => Promise<boolean>) {
  const count = async (status: string) => (await app.call("GET", `${base(wsId)}/jobs?status=${status}&limit=100`, { token })).body.data.length as number;
  let maxRunning = 0;
  await until(
    "the jobs to drain",
    async () => {
      // A scheduler tick per sample, overlapping the claims that finished jobs start.
      if (!ON_BINARY) app.ctx.scheduler.runNow("trawl.worker").catch(() => {});
      const running = await count("running");
      maxRunning = Math.max(maxRunning, running);
      return done(running);
    },
    180_000,
  );
  return maxRunning;
}

const jobsRun = async (token: string, wsId: string) => (await app.call("GET", `${base(wsId)}/usage`, { token })).body.jobs as number;

test(`600 queued jobs on a slow page: never more than TRAWL_CONCURRENCY (${CONCURRENCY}) running or fetching at once`, async () => {
  const { token, ws } = await ownerWithKey(app);
  const N = 600;
  await createJobs(token, ws.id, N, (i) => `${site.url}/delay?ms=20&job=${i}`);
  site.maxOpen = 0;
  const maxRunning = await drain(token, ws.id, async (running) => running === 0 && (await jobsRun(token, ws.id)) === N);
  expect(maxRunning).toBeLessThanOrEqual(CONCURRENCY);
  expect(site.maxOpen).toBe(CONCURRENCY); // the limit held, and was used
}, 240_000);

inProcess("queues 10,000 jobs through the store in one transaction (600 through the API is the test above)")("10,000 queued jobs: the limit holds while the first 400 run", async () => {
  const { token, ws } = await ownerWithKey(app);
  const at = app.clock.iso();
  await tx(app.ctx.db, async (t) => {
    for (let i = 0; i < 10_000; i++) {
      const row = { json_schema: JSON.stringify(schema), description: "product", suggested_urls: JSON.stringify([`${site.url}/delay?ms=20&bulk=${i}`]), max_steps: 1, timeout_s: 120, model_tier: "standard", webhook_id: null };
      await store.insertJob(t, { id: prefixedId("job"), workspace_id: ws.id, ...row, enqueued_ms: app.clock.nowMs() + i, enqueued_at: at, created_at: at });
    }
  });
  site.maxOpen = 0;
  const maxRunning = await drain(token, ws.id, async () => (await jobsRun(token, ws.id)) >= 400);
  expect(maxRunning).toBeLessThanOrEqual(CONCURRENCY);
  expect(site.maxOpen).toBe(CONCURRENCY);
}, 240_000);
