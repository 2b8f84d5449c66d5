/** Shared setup of the extraction-job tests: an owner with an all-actions key, job calls, waiting for a final state. */
import { afterAll, beforeAll } from "bun:test";
import { startTestApp, type TestApp } from "../helpers/app";
import { ON_BINARY } from "../helpers/binary";
import { startFixtureSite, type FixtureSite } from "./fixture-site";

export const base = (wsId: string) => `/trawl/v1/workspaces/${wsId}`;

export const PRODUCT_SCHEMA = {
  type: "object",
  properties: { name: { type: "string" }, price: { type: "number" }, currency: { type: "string" }, sku: { type: "string" } },
  required: ["name", "price"],
};

export function jobBody(over: Record<string, unknown> = {}) {
  return { json_schema: PRODUCT_SCHEMA, description: "Extract the product name and price", suggested_urls: ["https://shop.example/p/1"], ...over };
}

export async function createJob(app: TestApp, token: string, wsId: string, body: Record<string, unknown> = jobBody(), headers: Record<string, string> = {}) {
  const r = await app.call("POST", `${base(wsId)}/jobs`, { token, body, headers });
  if (r.status !== 201) throw new Error(`job create failed: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body as Record<string, any> & { id: string };
}

const FINAL = new Set(["succeeded", "failed", "cancelled"]);

/**
 * Runs the worker tick and polls the job until it is final (real time; the worker runs in the
 * background). On the binary its own scheduler runs the worker (every second): only poll.
 */
export async function runUntilFinal(app: TestApp, token: string, wsId: string, id: string, timeoutMs = 20_000) {
  const until = Date.now() + timeoutMs;
  for (;;) {
    if (!ON_BINARY) await app.ctx.scheduler.runNow("trawl.worker");
    const r = await app.call("GET", `${base(wsId)}/jobs/${id}`, { token });
    if (FINAL.has(r.body.status)) return r.body as Record<string, any>;
    if (Date.now() > until) throw new Error(`job ${id} still ${r.body.status} after ${timeoutMs} ms`);
    await Bun.sleep(20);
  }
}

/** Polls a job until `pred` holds. */
export async function waitFor(app: TestApp, token: string, wsId: string, id: string, pred: (j: any) => boolean, timeoutMs = 10_000) {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const r = await app.call("GET", `${base(wsId)}/jobs/${id}`, { token });
    if (pred(r.body)) return r.body;
    if (Date.now() > until) throw new Error(`job ${id}: condition not met after ${timeoutMs} ms (status ${r.body.status})`);
    await Bun.sleep(20);
  }
}

/**
 * The app and fixture site most extraction test files share, started before the file's tests
 * and stopped after: private targets allowed (the site is on loopback); in-process, webhook
 * deliveries wait for the test to pump them.
 */
export function useSiteAndApp(): { readonly app: TestApp; readonly site: FixtureSite } {
  const shared = {} as { app: TestApp; site: FixtureSite };
  beforeAll(async () => {
    shared.site = startFixtureSite();
    shared.app = await startTestApp({ ALLOW_PRIVATE_TARGETS: "true" });
    if (!ON_BINARY) shared.app.webhooks.options.autoKick = false;
  });
  afterAll(async () => {
    await shared.app?.stop();
    await shared.site?.stop();
  });
  return shared;
}
