/**
 * Access log and metrics: one info line per request (route template, real status),
 * scheduler runs only at debug, /metrics by route and status (a redirect is a 302),
 * process, database, jobs, webhook backlog and attempts, system mail queue; METRICS_TOKEN.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createApp, type BunkerApp } from "../../src/app";
import { ConfigError, loadConfig } from "../../src/config";
import { tx } from "../../src/core/db";
import { prefixedId } from "../../src/core/ids";
import { createLogger } from "../../src/core/log";
import { generateSecret } from "../../src/kernel/webhooks/signing";
import * as endpointsStore from "../../src/kernel/webhooks/store/endpoints";
import { signup, startTestApp, type TestApp } from "../helpers/app";
import { startReceiver } from "../helpers/http-receiver";
import { inProcess } from "../helpers/target";

const stops: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const s of stops) await s();
});

async function loggedApp(env: Record<string, string> = {}) {
  const lines: any[] = [];
  const config = loadConfig({ DATA_DIR: mkdtempSync(join(tmpdir(), "bunker-obs-")), BUNKER_ENV: "test", LOG_LEVEL: "info", CONSOLE_SIGNUP: "open", ...env });
  const app = await createApp(config, { log: createLogger("info", {}, (l) => lines.push(JSON.parse(l))) });
  stops.push(() => app.stop());
  return { app, lines };
}

/** A request, then a pause: Elysia runs afterResponse hooks (log line, metrics) once the response is out. */
async function get(app: BunkerApp | TestApp, path: string, headers: Record<string, string> = {}) {
  const r = await app.handle(new Request(`http://localhost${path}`, { headers }));
  await Bun.sleep(5);
  return r;
}
const metricsText = async (app: BunkerApp | TestApp) => (await get(app, "/metrics")).text();
/** The value of one sample line, e.g. `bunker_db_size_bytes` or `name{label="x"}`. */
function sample(text: string, series: string): number | undefined {
  const line = text.split("\n").find((l) => l.startsWith(series + " "));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe("access log", () => {
  test("one info line per request: method, route template, real status, latency, request id; jobs stay at debug", async () => {
    const { app, lines } = await loggedApp();
    const before = lines.length;
    await get(app, "/", { "x-request-id": "req-redirect-1" });
    await get(app, "/platform/v1/workspaces/acme/members", { "x-request-id": "req-401" });
    await get(app, "/no/such/route");
    await app.ctx.scheduler.runNow("ratelimit.purge");
    const requests = lines.slice(before).filter((l) => l.msg === "request");
    expect(requests).toHaveLength(3);
    expect(requests[0]).toMatchObject({ level: "info", request_id: "req-redirect-1", method: "GET", route: "/", status: 302 });
    expect(requests[0].ms).toBeNumber();
    // The template, not the path: no workspace slugs, ids or tokens in the log.
    expect(requests[1]).toMatchObject({ request_id: "req-401", route: "/platform/v1/workspaces/:workspace_slug/members", status: 401 });
    expect(requests[2]).toMatchObject({ route: "unmatched", status: 404 });
    expect(requests[2].request_id).toBeString();
    expect(lines.slice(before).filter((l) => l.msg !== "request")).toEqual([]); // no scheduler chatter at info
  });
});

describe("request ids, log and metrics over a listening server", () => {
  test("routed, refused-body and unmatched requests: x-request-id on each answer, one log line with the template", async () => {
    const { app, lines } = await loggedApp();
    const server = app.listen(0, "127.0.0.1");
    stops.push(async () => server.stop(true));
    const base = `http://127.0.0.1:${server.port}`;
    const before = lines.length;
    const ok = await fetch(`${base}/healthz`, { headers: { "x-request-id": "req-ok" } });
    expect(ok.headers.get("x-request-id")).toBe("req-ok");
    // Refused by the body reader before any route hook runs: still named by its template.
    const refused = await fetch(`${base}/platform/v1/auth/signin`, { method: "POST", headers: { "content-type": "text/plain" }, body: "x" });
    expect(refused.status).toBe(415);
    expect((await refused.json()).error.code).toBe("UNSUPPORTED_MEDIA_TYPE");
    const refusedId = refused.headers.get("x-request-id");
    expect(refusedId).toMatch(/^[0-9a-f-]{36}$/);
    const missing = await fetch(`${base}/no/such/route`);
    expect(missing.status).toBe(404);
    expect(missing.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
    const requests = lines.slice(before).filter((l) => l.msg === "request");
    expect(requests).toHaveLength(3);
    expect(requests[0]).toMatchObject({ request_id: "req-ok", method: "GET", route: "/healthz", status: 200 });
    expect(requests[1]).toMatchObject({ request_id: refusedId, method: "POST", route: "/platform/v1/auth/signin", status: 415 });
    expect(requests[2]).toMatchObject({ request_id: missing.headers.get("x-request-id"), route: "unmatched", status: 404 });
  });
});

describe("/metrics", () => {
  test("HTTP by route template and status: a redirect is a 302, a returned page a 200", async () => {
    const app = await startTestApp();
    stops.push(() => app.stop());
    await get(app, "/");
    await get(app, "/admin");
    await get(app, "/admin/");
    await app.call("POST", "/platform/v1/auth/password/request-reset", { body: { email: "a@example.com" } });
    await Bun.sleep(5);
    const text = await metricsText(app);
    expect(sample(text, 'bunker_http_requests_total{method="GET",route="/",status="302"}')).toBe(1);
    expect(sample(text, 'bunker_http_requests_total{method="GET",route="/admin/",status="302"}')).toBe(1);
    expect(sample(text, 'bunker_http_requests_total{method="GET",route="/admin/",status="200"}')).toBe(1);
    expect(sample(text, 'bunker_http_requests_total{method="POST",route="/platform/v1/auth/password/request-reset",status="204"}')).toBe(1);
    expect(text).not.toContain('route="/",status="200"');
  });

  inProcess("reads and drives the in-process scheduler, store and webhook engine")("process, database, jobs and the system mail queue, computed at scrape time", async () => {
    const app = await startTestApp();
    stops.push(() => app.stop());
    const u = await signup(app);
    await app.call("POST", "/platform/v1/auth/password/request-reset", { body: { email: u.email } });
    await app.platform.accounts.idle(); // the reset mail is queued after the response
    let text = await metricsText(app);
    expect(sample(text, "bunker_system_mail_queued")).toBe(1);
    expect(sample(text, "bunker_process_resident_memory_bytes")).toBeGreaterThan(1_000_000);
    if (app.ctx.db.engine === "sqlite") {
      expect(sample(text, "bunker_db_size_bytes")).toBeGreaterThan(0);
      expect(sample(text, "bunker_db_wal_size_bytes")).toBeGreaterThan(0);
      // The sign-up and the reset request committed: at least one commit, each carrying one or more transactions.
      const commits = sample(text, "bunker_db_commits")!;
      expect(commits).toBeGreaterThan(0);
      expect(sample(text, "bunker_db_committed_transactions")).toBeGreaterThanOrEqual(commits);
    } else {
      // The file gauges are SQLite's; a PostgreSQL server is watched with its own tooling.
      expect(sample(text, "bunker_db_size_bytes")).toBeUndefined();
    }

    await app.ctx.scheduler.runNow("mail.deliver"); // dev mode: logged, not sent
    text = await metricsText(app);
    expect(sample(text, "bunker_system_mail_queued")).toBe(0);
    expect(sample(text, 'bunker_system_mail_total{outcome="logged"}')).toBe(1);
    expect(sample(text, 'bunker_job_runs_total{job="mail.deliver",outcome="ok"}')).toBe(1);
    expect(sample(text, 'bunker_job_duration_seconds_count{job="mail.deliver"}')).toBe(1);
    expect(sample(text, 'bunker_job_duration_seconds_sum{job="mail.deliver"}')).toBeGreaterThanOrEqual(0);
  });

  inProcess("reads and drives the in-process scheduler, store and webhook engine")("job failures are counted by outcome", async () => {
    const app = await startTestApp();
    stops.push(() => app.stop());
    app.ctx.scheduler.register({ name: "test.boom", schedule: "0 0 1 1 *", run: () => { throw new Error("boom"); } });
    await app.ctx.scheduler.runNow("test.boom").catch(() => {});
    expect(sample(await metricsText(app), 'bunker_job_runs_total{job="test.boom",outcome="error"}')).toBe(1);
  });

  inProcess("reads and drives the in-process scheduler, store and webhook engine")("webhook backlog (outbox, deliveries) and attempts by outcome", async () => {
    const app = await startTestApp({ ALLOW_PRIVATE_TARGETS: "true" });
    app.webhooks.options.autoKick = false;
    const receiver = startReceiver((req) => new Response(null, { status: new URL(req.url).pathname === "/bad" ? 500 : 204 }));
    stops.push(() => app.stop(), () => receiver.stop());
    for (const path of ["/ok", "/bad"]) {
      const now = app.clock.iso();
      await endpointsStore.insertEndpoint(app.ctx.db, {
        id: prefixedId("ep"), product: "tack", scope_id: "ws_1", url: receiver.url + path, description: "", event_types: "[]",
        secret_enc: app.ctx.secretBox.encrypt(generateSecret()), legacy: 0, created_at: now, updated_at: now,
      });
    }
    await tx(app.ctx.db, (t) => app.webhooks.emit(t, { product: "tack", scopeId: "ws_1" }, "card.created", { n: 1 }));
    let text = await metricsText(app);
    expect(sample(text, 'bunker_webhook_backlog{stage="outbox"}')).toBe(1);
    expect(sample(text, 'bunker_webhook_backlog{stage="deliveries"}')).toBe(0);
    await app.webhooks.dispatchPending();
    text = await metricsText(app);
    expect(sample(text, 'bunker_webhook_backlog{stage="outbox"}')).toBe(0);
    expect(sample(text, 'bunker_webhook_backlog{stage="deliveries"}')).toBe(2);
    await app.webhooks.deliverDue();
    text = await metricsText(app);
    expect(sample(text, 'bunker_webhook_attempts_total{outcome="succeeded"}')).toBe(1);
    expect(sample(text, 'bunker_webhook_attempts_total{outcome="failed"}')).toBe(1);
    expect(sample(text, 'bunker_webhook_backlog{stage="deliveries"}')).toBe(1); // the failed one waits for its retry
  });

  inProcess("starts the loop monitor in-process (the binary's server starts it at start)")("event-loop lag is sampled once the monitor runs (the server starts it)", async () => {
    const app = await startTestApp();
    stops.push(() => app.stop());
    expect(await metricsText(app)).not.toContain("bunker_event_loop_lag_seconds");
    app.ctx.metrics.startLoopMonitor();
    stops.push(async () => app.ctx.metrics.stopLoopMonitor());
    await Bun.sleep(30);
    const t = performance.now();
    while (performance.now() - t < 120); // a 120 ms stall
    await Bun.sleep(30);
    expect(sample(await metricsText(app), 'bunker_event_loop_lag_seconds{quantile="1"}')).toBeGreaterThan(0.08);
  });

  test("METRICS_TOKEN: without the bearer token 401 in the error body; with it 200", async () => {
    const token = "m".repeat(16);
    const app = await startTestApp({ METRICS_TOKEN: token });
    stops.push(() => app.stop());
    for (const headers of [{}, { authorization: `Bearer ${token}x` }, { authorization: token }] as Record<string, string>[]) {
      const r = await get(app, "/metrics", headers);
      expect(r.status).toBe(401);
      expect(r.headers.get("www-authenticate")).toBe('Bearer realm="metrics"');
      expect(r.headers.get("x-request-id")).toBeString();
      expect(((await r.json()) as any).error.code).toBe("UNAUTHORIZED");
    }
    const ok = await get(app, "/metrics", { authorization: `Bearer ${token}` });
    expect(ok.status).toBe(200);
    expect(await ok.text()).toContain("bunker_http_requests_total");
    expect(() => loadConfig({ METRICS_TOKEN: "m".repeat(15) })).toThrow(ConfigError);
  });
});
