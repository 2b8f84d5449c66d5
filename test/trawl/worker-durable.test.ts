/**
 * Durability and safety of the worker: a SIGKILLed worker process loses no job (its lease
 * expires and another process runs the job again), at most 3 attempts then WORKER_LOST,
 * the SSRF guard on every redirect hop, the wall-clock timeout, and delivery of job events
 * to the job's legacy webhook verified with the independent `standardwebhooks` package.
 */
import { afterAll, beforeAll, describe, expect, setSystemTime, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Webhook } from "standardwebhooks";
import { tx } from "../../src/core/db";
import { createOutboundHttp } from "../../src/core/outbound-http";
import { runJob, type Progress } from "../../src/services/trawl/worker/pipeline/run";
import { SchemaCompiler } from "../../src/services/trawl/schema";
import * as store from "../../src/services/trawl/jobs/store";
import { LEASE_MS, MAX_ATTEMPTS } from "../../src/services/trawl/worker/worker";
import { ownerWithKey, startTestApp, type TestApp } from "../helpers/app";
import { testDatabaseUrl } from "../helpers/engine";
import { startReceiver, type Receiver } from "../helpers/http-receiver";
import { inProcess, ON_BINARY } from "../helpers/target";
import { until } from "../helpers/until";
import { startFixtureSite, type FixtureSite } from "./fixture-site";
import { base, createJob, runUntilFinal } from "./helpers";

const schema = { type: "object", properties: { name: { type: "string" }, price: { type: "number" } }, required: ["name"] };

let site: FixtureSite;
beforeAll(() => {
  site = startFixtureSite();
});
afterAll(() => site.stop());

describe("lease expiry", () => {
  inProcess("a child process works the job on the same data (kill-child.ts builds the app in-process); moves the injected clock past the lease and runs the worker by hand")("SIGKILL mid-job: the job stays running until its lease expires, then another process runs it (attempt 2)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "bunker-trawl-kill-"));
    const dbUrl = await testDatabaseUrl();
    const env = { ALLOW_PRIVATE_TARGETS: "true", ...(dbUrl ? { DATABASE_URL: dbUrl } : {}) };
    const app = await startTestApp(env, dir);
    try {
      const { token, ws } = await ownerWithKey(app);
      const job = await createJob(app, token, ws.id, { json_schema: schema, description: "product", suggested_urls: [`${site.url}/slow-once?k=1`] });
      const child = Bun.spawn([process.execPath, join(import.meta.dir, "fixtures", "kill-child.ts")], {
        env: { ...process.env, DATA_DIR: dir, ...(dbUrl ? { DATABASE_URL: dbUrl } : {}) },
        stdout: "pipe",
        stderr: "pipe",
      });
      await site.waitFor("/slow-once?k=1", 20_000);
      child.kill("SIGKILL");
      await child.exited;
      expect(child.signalCode).toBe("SIGKILL");

      const mid = await app.call("GET", `${base(ws.id)}/jobs/${job.id}`, { token });
      expect(mid.body).toMatchObject({ status: "running", attempts: 1 });
      // The child leased it on the real clock; this app's clock moves past that lease.
      await app.ctx.scheduler.runNow("trawl.worker");
      expect((await app.call("GET", `${base(ws.id)}/jobs/${job.id}`, { token })).body.attempts).toBe(1);
      app.clock.set(Date.now() + LEASE_MS + 1000);
      const done = await runUntilFinal(app, token, ws.id, job.id);
      expect(done).toMatchObject({ status: "succeeded", attempts: 2, result: { name: "Trail Runner 2", price: 129.5 } });
    } finally {
      await app.stop();
    }
  });

  inProcess("claims the job through the store (app.ctx.db) and moves the injected clock past each lease")(`a job whose worker dies ${MAX_ATTEMPTS} times fails with WORKER_LOST and job.failed`, async () => {
    const app = await startTestApp({ ALLOW_PRIVATE_TARGETS: "true" });
    try {
      const { token, ws } = await ownerWithKey(app);
      const job = await createJob(app, token, ws.id, { json_schema: schema, description: "product", suggested_urls: [`${site.url}/product`] });
      // Three claims by workers that die at once (nothing but the claim happens).
      for (let i = 1; i <= MAX_ATTEMPTS; i++) {
        const now = app.clock.nowMs();
        const rows = await tx(app.ctx.db, (t) => store.claimDue(t, now, now + LEASE_MS, `dead-${i}`, app.clock.iso(), MAX_ATTEMPTS, 10));
        expect(rows.map((r) => [r.id, r.attempts])).toEqual([[job.id, i]]);
        app.clock.advance(LEASE_MS + 1);
      }
      const done = await runUntilFinal(app, token, ws.id, job.id);
      expect(done).toMatchObject({ status: "failed", attempts: MAX_ATTEMPTS, error_code: "WORKER_LOST" });
      expect(site.requests).not.toContain("/product?dead");
    } finally {
      await app.stop();
    }
  });
});

describe("SSRF guard", () => {
  test("ALLOW_PRIVATE_TARGETS off: a loopback URL is refused before any request (BLOCKED_BY_SSRF_GUARD)", async () => {
    const app = await startTestApp({ ALLOW_PRIVATE_TARGETS: "false" });
    try {
      const { token, ws } = await ownerWithKey(app);
      const before = site.requests.length;
      const job = await createJob(app, token, ws.id, { json_schema: schema, description: "product", suggested_urls: [`${site.url}/product?guard=1`] });
      const done = await runUntilFinal(app, token, ws.id, job.id);
      expect(done.status).toBe("failed");
      expect(done.error_code).toBe("BLOCKED_BY_SSRF_GUARD");
      expect(done.error).toContain("127.0.0.1");
      expect(site.requests.length).toBe(before);
    } finally {
      await app.stop();
    }
  });

  test("every redirect hop is re-checked: a public page redirecting to a private target is refused and the target never reached", async () => {
    // The fixture site stands for a public site (a guard that lets only its port through);
    // every other target goes through the production guard (no private targets).
    const internal: Receiver = startReceiver();
    try {
      const open = createOutboundHttp({ allowPrivateTargets: true, requireHttps: false, maxBodyBytes: 6 * 1024 * 1024 });
      const strict = createOutboundHttp({ allowPrivateTargets: false, requireHttps: false });
      const hops: string[] = [];
      const http = {
        request: (url: string, init?: Parameters<typeof open.request>[1]) => {
          hops.push(url);
          return (new URL(url).port === String(site.port) ? open : strict).request(url, init);
        },
      };
      const compiler = new SchemaCompiler();
      const progress: Progress = { steps: 0, pages_fetched: 0, bytes_fetched: 0, tokens_in: 0, tokens_out: 0 };
      for (const target of [`${internal.url}/admin`, "http://169.254.169.254/latest/meta-data/", "http://[::1]:9/x"]) {
        site.redirectTarget = target;
        hops.length = 0;
        const err = await runJob(
          { schema, description: "product", urls: [`${site.url}/redirect-private`], maxSteps: 3, model: null },
          { http, llm: null, validate: compiler.compile(schema), validatePartial: compiler.compile({ type: "object" }), signal: new AbortController().signal, progress },
        ).catch((e) => e);
        expect(err.code).toBe("BLOCKED_BY_SSRF_GUARD");
        expect(err.message).toContain("redirect 1");
        expect(hops).toEqual([`${site.url}/robots.txt`, `${site.url}/redirect-private`, target]);
      }
      expect(internal.requests).toEqual([]);
    } finally {
      site.redirectTarget = "http://169.254.169.254/latest/meta-data/";
      await internal.stop();
    }
  });
});

describe("timeout", () => {
  test("a job still running at timeout_s fails with TIMEOUT and its in-flight fetch is aborted", async () => {
    const app = await startTestApp({ ALLOW_PRIVATE_TARGETS: "true" });
    try {
      const { token, ws } = await ownerWithKey(app);
      const job = await createJob(app, token, ws.id, { json_schema: schema, description: "product", suggested_urls: [`${site.url}/slow?t=1`], timeout_s: 10 });
      const t0 = Date.now();
      const done = await runUntilFinal(app, token, ws.id, job.id, 30_000);
      const took = Date.now() - t0;
      expect(done.status).toBe("failed");
      expect(done.error).toBe("TIMEOUT: the job ran longer than timeout_s (10 s)");
      expect(took).toBeGreaterThanOrEqual(9_500);
      // The site sees the aborted request when its socket closes, which may come just after the job ended.
      await until("the site sees the slow fetch aborted", () => site.aborted.includes("/slow?t=1"), 5_000);
    } finally {
      await app.stop();
    }
  }, 40_000);
});

describe("webhook delivery", () => {
  test("the job's legacy webhook receives job.succeeded, verified with standardwebhooks and the legacy signature", async () => {
    const app = await startTestApp({ ALLOW_PRIVATE_TARGETS: "true" });
    if (!ON_BINARY) app.webhooks.options.autoKick = false;
    const rx = startReceiver();
    try {
      const { token, ws } = await ownerWithKey(app);
      const hook = await app.call("POST", `${base(ws.id)}/webhooks`, { token, body: { url: `${rx.url}/hook` } });
      expect(hook.status).toBe(201);
      const job = await createJob(app, token, ws.id, { json_schema: schema, description: "product", suggested_urls: [`${site.url}/product`], webhook_id: hook.body.id });
      const done = await runUntilFinal(app, token, ws.id, job.id);
      expect(done.status).toBe("succeeded");
      if (ON_BINARY) await rx.waitForRequests(3, 15_000); // the process's own engine delivers
      else {
        await app.webhooks.dispatchPending();
        await app.webhooks.deliverDue();
      }
      const reqs = rx.requests.filter((r) => JSON.parse(r.body).type === "job.succeeded");
      expect(reqs.length).toBe(1);
      const secret = `whsec_${Buffer.from(hook.body.signing_secret).toString("base64")}`;
      setSystemTime(app.clock.now());
      let payload: any;
      try {
        payload = new Webhook(secret).verify(reqs[0].body, {
          "webhook-id": reqs[0].headers["webhook-id"],
          "webhook-timestamp": reqs[0].headers["webhook-timestamp"],
          "webhook-signature": reqs[0].headers["webhook-signature"],
        });
      } finally {
        setSystemTime();
      }
      expect(payload.type).toBe("job.succeeded");
      expect(payload.data).toMatchObject({ id: job.id, status: "succeeded", webhook_id: hook.body.id, result: { name: "Trail Runner 2", price: 129.5 } });
      expect(reqs[0].headers["x-trawl-signature"]).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
      const types = rx.requests.map((r) => JSON.parse(r.body).type).sort();
      expect(types).toEqual(["job.queued", "job.running", "job.succeeded"]);
    } finally {
      await app.stop();
      await rx.stop();
    }
  });
});
