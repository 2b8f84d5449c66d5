/**
 * Starts a real Bunker app on a fresh temp data dir. Requests go through Elysia's full
 * pipeline in-process (app.handle) or, with listen(), over real loopback HTTP.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createApp, type BunkerApp } from "../../src/app";
import { loadConfig } from "../../src/config";
import { ManualClock } from "../../src/core/clock";
import { testDatabaseUrl } from "./engine";

export interface TestApp extends BunkerApp {
  clock: ManualClock;
  dir: string;
  /** JSON request helper: returns status, parsed body and headers. */
  call(method: string, path: string, opts?: { body?: unknown; token?: string; headers?: Record<string, string> }): Promise<{ status: number; body: any; headers: Headers }>;
}

export async function startTestApp(
  env: Record<string, string> = {},
  dir = mkdtempSync(join(tmpdir(), "bunker-app-")),
  opts: Omit<NonNullable<Parameters<typeof createApp>[1]>, "clock"> = {},
): Promise<TestApp> {
  // Sign-up open (the default is invite_only): most tests create accounts freely.
  // On the PostgreSQL run (npm run test:pg) every app gets a database of its own.
  const databaseUrl = env.DATABASE_URL ?? (await testDatabaseUrl());
  const engineEnv: Record<string, string> = databaseUrl ? { DATABASE_URL: databaseUrl, PG_POOL_SIZE: "4" } : {};
  const config = loadConfig({ DATA_DIR: dir, LOG_LEVEL: "silent", BUNKER_ENV: "test", PUBLIC_URL: "http://localhost:8080", CONSOLE_SIGNUP: "open", ...engineEnv, ...env });
  const clock = new ManualClock(Date.parse("2026-11-21T12:00:00.000Z"));
  const bunker = await createApp(config, { ...opts, clock });
  const call: TestApp["call"] = async (method, path, opts = {}) => {
    const headers: Record<string, string> = { ...(opts.headers ?? {}) };
    if (opts.token) headers.authorization = `Bearer ${opts.token}`;
    let body: BodyInit | undefined;
    if (opts.body instanceof FormData) body = opts.body;
    else if (opts.body !== undefined) {
      body = typeof opts.body === "string" ? opts.body : JSON.stringify(opts.body);
      headers["content-type"] ??= "application/json";
    }
    const res = await bunker.handle(new Request(`http://localhost${path}`, { method, headers, body }));
    const text = await res.text();
    let parsed: any = text;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {}
    return { status: res.status, body: parsed, headers: res.headers };
  };
  return Object.assign(bunker, { clock, dir, call });
}

let seq = 0;
/** Signs up a fresh user and returns their tokens and identifiers. */
export async function signup(app: TestApp, over: Partial<{ email: string; username: string; password: string }> = {}) {
  const n = ++seq;
  const user = { email: `user${n}-${Date.now()}@example.com`, username: `user${n}_${Date.now()}`, password: "correct horse battery", ...over };
  const r = await app.call("POST", "/platform/v1/auth/signup", { body: user });
  if (r.status !== 200) throw new Error(`signup failed: ${r.status} ${JSON.stringify(r.body)}`);
  return { ...user, token: r.body.access_token as string, refresh: r.body.refresh_token as string };
}

export async function createWorkspace(app: TestApp, token: string, slug = `ws-${++seq}-${Date.now()}`) {
  const r = await app.call("POST", "/platform/v1/workspaces", { token, body: { slug, display_name: `Workspace ${slug}` } });
  if (r.status !== 201) throw new Error(`workspace create failed: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body as { id: string; slug: string };
}

/**
 * An app whose system mailer relays to a real SMTP sink on loopback, for tests that read
 * mailed codes and links. Register the returned stop with afterAll.
 */
export async function startTestAppWithMail(env: Record<string, string> = {}) {
  const { startSmtpSink } = await import("./smtp-sink");
  const sink = await startSmtpSink();
  const app = await startTestApp({ SMTP_RELAY_URL: sink.url, ...env });
  return {
    app,
    sink,
    async stop() {
      await app.stop();
      await sink.stop();
    },
  };
}

/**
 * A workspace owner plus an API key allowing every action. Tests that move the clock by
 * hours or days use the key: console access tokens expire after an hour.
 */
export async function ownerWithKey(app: TestApp) {
  const user = await signup(app);
  const ws = await createWorkspace(app, user.token);
  const minted = await app.call("POST", `/platform/v1/workspaces/${ws.slug}/api-keys`, {
    token: user.token,
    body: { name: "all", policy: [{ effect: "allow", actions: ["*"], resources: ["*"] }] },
  });
  if (minted.status !== 201) throw new Error(`mint failed: ${minted.status} ${JSON.stringify(minted.body)}`);
  return { token: minted.body.key as string, session: user.token, ws };
}
