/**
 * Starts a real Bunker app on a fresh temp data dir. Requests go through Elysia's full
 * pipeline in-process (app.handle) or, with listen(), over real loopback HTTP.
 *
 * On `npm run test:bin` (BUNKER_TEST_BINARY set) the same call starts the compiled binary as
 * a process instead, and `call` goes over loopback HTTP to it. What only exists in-process
 * (the injected clock's advance/set, ctx, the services' objects) then throws a clear error:
 * a test that needs it is marked source-only (test/helpers/target.ts) with its reason.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createApp, type BunkerApp } from "../../src/app";
import { loadConfig } from "../../src/config";
import { ManualClock } from "../../src/core/clock";
import { SQLITE_FILE } from "../../src/core/db";
import { seedSqlite, testDatabaseUrl } from "./engine";
import { type BinaryProcess, inProcessOnly, ON_BINARY, startBinary } from "./binary";

export interface TestApp extends BunkerApp {
  clock: ManualClock;
  dir: string;
  /** On `npm run test:bin`: the binary's process (its base URL, SMTP port, output). */
  process?: BinaryProcess;
  /** On `npm run test:bin`: http://127.0.0.1:<port> of the process, and its inbound SMTP port. */
  base?: string;
  smtpPort?: number | null;
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
  if (ON_BINARY) {
    if (Object.keys(opts).length) throw new Error(`startTestApp: in-process options (${Object.keys(opts).join(", ")}) cannot reach the binary; mark the test source-only`);
    return startBinaryTestApp({ BUNKER_ENV: "test", PUBLIC_URL: "http://localhost:8080", CONSOLE_SIGNUP: "open", ...TEST_COSTS, ...UNLIMITED_STRANGERS, ...env }, dir);
  }
  const databaseUrl = env.DATABASE_URL ?? (await testDatabaseUrl());
  // A module list of the test's own may need another schema: it migrates from nothing.
  if (!databaseUrl && !opts.modules) seedSqlite(join(dir, SQLITE_FILE));
  const engineEnv: Record<string, string> = databaseUrl ? { DATABASE_URL: databaseUrl, PG_POOL_SIZE: "4" } : {};
  const config = loadConfig({ DATA_DIR: dir, LOG_LEVEL: "silent", BUNKER_ENV: "test", PUBLIC_URL: "http://localhost:8080", CONSOLE_SIGNUP: "open", ...UNLIMITED_STRANGERS, ...engineEnv, ...env });
  const clock = new ManualClock(Date.parse("2026-11-21T12:00:00.000Z"));
  const bunker = await createApp(config, { ...opts, clock });
  const call = caller((req) => bunker.handle(req), "http://localhost");
  return Object.assign(bunker, { clock, dir, call });
}

/**
 * Tests sign up many accounts from one address (in-process requests have none at all, so
 * they share one budget): the sign-up and mail-request limits are off unless a test sets
 * them. The per-recipient mail limit stays on (its tests rely on the default).
 */
const UNLIMITED_STRANGERS = { SIGNUPS_PER_ADDRESS_PER_HOUR: "0", SIGNUPS_PER_APP_PER_HOUR: "0", MAIL_PER_ADDRESS_PER_HOUR: "0" };

/** The config the in-process apps get from BUNKER_ENV=test that a process needs spelled out. */
const TEST_COSTS = { ARGON2_MEMORY_KIB: "1024", ARGON2_TIME_COST: "1" };

/** TestApp.call over any request handler: app.handle in-process, fetch to a process. */
function caller(send: (req: Request) => Promise<Response>, origin: string): TestApp["call"] {
  return async (method, path, opts = {}) => {
    const headers: Record<string, string> = { ...(opts.headers ?? {}) };
    if (opts.token) headers.authorization = `Bearer ${opts.token}`;
    let body: BodyInit | undefined;
    if (opts.body instanceof FormData) body = opts.body;
    else if (opts.body !== undefined) {
      body = typeof opts.body === "string" ? opts.body : JSON.stringify(opts.body);
      headers["content-type"] ??= "application/json";
    }
    const res = await send(new Request(`${origin}${path}`, { method, headers, body, redirect: "manual" }));
    const text = await res.text();
    let parsed: any = text;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {}
    return { status: res.status, body: parsed, headers: res.headers };
  };
}

/** A clock that reads real time; moving it is only possible in-process. */
class ProcessClock extends ManualClock {
  override now() {
    return new Date();
  }
  override nowMs() {
    return Date.now();
  }
  override iso() {
    return new Date().toISOString();
  }
  override advance(): never {
    throw new Error("source-only: the binary runs on the real clock; app.clock.advance needs the in-process app");
  }
  override set(): never {
    throw new Error("source-only: the binary runs on the real clock; app.clock.set needs the in-process app");
  }
}

async function startBinaryTestApp(env: Record<string, string>, dir: string): Promise<TestApp> {
  const proc = await startBinary(env, { dataDir: dir });

  const app = {
    clock: new ProcessClock(),
    dir,
    process: proc,
    base: proc.base,
    smtpPort: proc.smtpPort,
    call: caller((req) => fetch(req), proc.base),
    handle: (req: Request) => {
      const { pathname, search } = new URL(req.url);
      return fetch(new Request(proc.base + pathname + search, req), { redirect: "manual" });
    },
    /** The process already listens: hand out its port (tests read `.port` and `.url`). */
    listen: () => ({ port: proc.port, url: new URL(proc.base + "/"), hostname: "127.0.0.1", stop: async () => {} }),
    stop: async () => {
      await proc.stop();
    },
  };
  return inProcessOnly(app, ["app", "ctx", "platform", "auth", "webhooks", "webhookApi", "inbound"], (name) => `app.${name} is the in-process app's; the binary is reached over HTTP only`) as unknown as TestApp;
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
