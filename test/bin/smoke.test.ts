/**
 * Smoke test of the shipped artifact: the binary `npm run test:bin` built, copied alone into
 * an empty directory (no repository files around, as on a fresh VM) and driven over real
 * HTTP and SMTP, plus its CLI commands and its signal handling.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { copyFileSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import nodemailer from "nodemailer";
import { freePort, requireBinary } from "../helpers/binary";

const work = mkdtempSync(join(tmpdir(), "bunker-smoke-"));
const vm = join(work, "vm"); // where the binary runs: nothing but the binary and its data
const bin = join(vm, "bunker");
const dataDir = join(vm, "data");

/** A clean environment: nothing from the test runner (LOG_LEVEL=silent, BUNKER_ENV=test) leaks in. */
function env(over: Record<string, string> = {}): Record<string, string> {
  return { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: vm, DATA_DIR: dataDir, HOST: "127.0.0.1", LOG_LEVEL: "info", ...over };
}

function run(args: string[], over: Record<string, string> = {}) {
  const r = Bun.spawnSync([bin, ...args], { cwd: vm, env: env(over), stdout: "pipe", stderr: "pipe", timeout: 30_000 });
  return { code: r.exitCode, stdout: r.stdout.toString(), stderr: r.stderr.toString() };
}

let port = 0;
let smtpPort = 0;
let base = "";
let server: ReturnType<typeof Bun.spawn> | null = null;
let output = "";

async function collect(stream: ReadableStream<Uint8Array>) {
  const decoder = new TextDecoder();
  for await (const chunk of stream) output += decoder.decode(chunk, { stream: true });
}

beforeAll(async () => {
  Bun.spawnSync(["mkdir", "-p", vm]);
  copyFileSync(requireBinary(), bin);
  Bun.spawnSync(["chmod", "755", bin]);

  port = freePort();
  smtpPort = freePort();
  base = `http://127.0.0.1:${port}`;
  server = Bun.spawn([bin, "serve"], {
    cwd: vm,
    env: env({ PORT: String(port), SMTP_PORT: String(smtpPort), PUBLIC_URL: base, CONSOLE_SIGNUP: "open" }),
    stdout: "pipe",
    stderr: "pipe",
  });
  void collect(server.stdout as ReadableStream<Uint8Array>);
  void collect(server.stderr as ReadableStream<Uint8Array>);

  const deadline = Date.now() + 20_000;
  for (;;) {
    if (server.exitCode !== null) throw new Error(`bunker exited with ${server.exitCode} before becoming healthy:\n${output}`);
    const ok = await fetch(`${base}/healthz`).then((r) => r.ok, () => false);
    if (ok) break;
    if (Date.now() > deadline) throw new Error(`bunker did not answer /healthz within 20 s:\n${output}`);
    await Bun.sleep(100);
  }
}, 30_000);

afterAll(() => {
  if (server && server.exitCode === null) server.kill("SIGKILL");
  rmSync(work, { recursive: true, force: true });
});

// bunfig's [test] timeout is not applied by this bun; every test names its own.
const T = 30_000;

describe("compiled binary", () => {
  const user = { email: "smoke@example.com", username: "smoke_user", password: "correct horse battery staple" };
  let token = "";

  test("runs from an empty directory and prints its version", () => {
    const r = run(["version"]);
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
  }, T);

  test("prints the first-start setup link when no account exists", async () => {
    // /healthz answers as soon as the port is bound (what beforeAll waits for); the start-up
    // lines are written a moment later, after the setup link and the scheduler start.
    const until = Date.now() + 10_000;
    while (!output.includes('"msg":"bunker listening"') && Date.now() < until) await Bun.sleep(50);
    expect(output).toContain(`${base}/admin/#setup=`);
    expect(output).toContain('"msg":"bunker listening"');
    expect(output).toContain('"msg":"smtp listening"');
  }, T);

  test("health, readiness, docs, OpenAPI, admin page", async () => {
    const health = await fetch(`${base}/healthz`);
    expect(health.status).toBe(200);
    expect(((await health.json()) as any).status).toBe("ok");

    const ready = await fetch(`${base}/readyz`);
    expect(ready.status).toBe(200);

    const docs = await fetch(`${base}/docs`);
    expect(docs.status).toBe(200);
    expect(docs.headers.get("content-type")).toContain("text/html");
    const page = await docs.text();
    expect(page).toContain("<html");
    // Swagger UI is embedded in the binary: the page loads nothing from outside.
    expect(page).not.toMatch(/https?:\/\//);
    const assets = [...page.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]);
    expect(assets).toContain("/docs/swagger-ui-bundle.js");
    for (const asset of assets) {
      const r = await fetch(`${base}${asset}`);
      expect({ asset, status: r.status }).toEqual({ asset, status: 200 });
      // Scripts, styles and the icon; the top bar's links lead to the guides' pages.
      expect(r.headers.get("content-type")).toMatch(asset.endsWith(".css") ? /^text\/css/ : asset.endsWith(".js") ? /^text\/javascript/ : asset.endsWith(".png") ? /^image\/png/ : /^text\/html/);
      expect((await r.arrayBuffer()).byteLength).toBeGreaterThan(asset.endsWith("bundle.js") ? 1_000_000 : 0);
    }

    const spec = await fetch(`${base}/platform/openapi.json`);
    expect(spec.status).toBe(200);
    const paths = Object.keys(((await spec.json()) as any).paths);
    expect(paths.length).toBeGreaterThan(0);
    for (const p of paths) expect(p.startsWith("/platform/v1")).toBe(true);

    // The admin page is embedded in the binary.
    const admin = await fetch(`${base}/admin/`, { redirect: "manual" });
    expect(admin.status).toBe(200);
    expect(admin.headers.get("content-type")).toContain("text/html");
    expect(admin.headers.get("content-security-policy")).toContain("script-src 'self'");
    // ... and so is the console's script (built from console/ by scripts/build.ts).
    const script = await fetch(`${base}/admin/assets/app.js`);
    expect(script.status).toBe(200);
    expect((await script.text()).length).toBeGreaterThan(10_000);
    const root = await fetch(`${base}/`, { redirect: "manual" });
    expect(root.status).toBe(302);
    expect(root.headers.get("location")).toBe("/admin/");
  }, T);

  test("sign up, sign in, introspect over real HTTP", async () => {
    const up = await fetch(`${base}/platform/v1/auth/signup`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(user) });
    expect(up.status).toBe(200);

    const inRes = await fetch(`${base}/platform/v1/auth/signin`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ identifier: user.email, password: user.password }),
    });
    expect(inRes.status).toBe(200);
    token = ((await inRes.json()) as any).access_token;
    expect(typeof token).toBe("string");
    expect(token.length).toBeGreaterThan(10);

    const me = await fetch(`${base}/platform/v1/introspect`, { headers: { authorization: `Bearer ${token}` } });
    expect(me.status).toBe(200);
    expect(JSON.stringify(await me.json())).toContain(user.email);

    const anon = await fetch(`${base}/platform/v1/introspect`);
    expect(anon.status).toBe(401);
  }, T);

  test("the common-password list is embedded: an Auth App refuses a top-100,000 password", async () => {
    const call = async (method: string, path: string, body: unknown, bearer = token) => {
      const r = await fetch(`${base}${path}`, { method, headers: { "content-type": "application/json", authorization: `Bearer ${bearer}` }, body: JSON.stringify(body) });
      return { status: r.status, body: (await r.json()) as any };
    };
    const ws = await call("POST", "/platform/v1/workspaces", { slug: "smoke-ws", display_name: "Smoke" });
    expect(ws.status).toBe(201);
    const app = await call("POST", "/auth/v1/apps", { workspace_id: ws.body.id, slug: "smoke-app", display_name: "Smoke App" });
    expect(app.status).toBe(201);
    const common = await call("POST", "/auth/smoke-app/v1/auth/signup", { username: "common", email: "common@example.com", password: "Iloveyou1" }, app.body.publishable_key);
    expect(common.status).toBe(400);
    expect(common.body.error.details).toEqual([{ field: "password", reason: expect.stringContaining("most used passwords") }]);
    const fine = await call("POST", "/auth/smoke-app/v1/auth/signup", { username: "fine", email: "fine@example.com", password: user.password }, app.body.publishable_key);
    expect(fine.status).toBe(200);
  }, T);

  test("metrics count HTTP requests", async () => {
    const m = await fetch(`${base}/metrics`);
    expect(m.status).toBe(200);
    expect(await m.text()).toContain("bunker_http_requests_total");
  }, T);

  test("the SMTP listener answers as an MX and refuses unknown mailboxes", async () => {
    const transport = nodemailer.createTransport({ host: "127.0.0.1", port: smtpPort, secure: false, ignoreTLS: true });
    const err: any = await transport
      .sendMail({ from: "alice@example.org", to: "nobody@unknown.invalid", subject: "hi", text: "hello" })
      .then(() => null, (e) => e);
    expect(err?.responseCode).toBe(550);
    expect(err.response).toContain("5.1.1");
    transport.close();
  }, T);

  test("backup of the live database while the server runs", () => {
    const target = join(work, "backups", "bunker-backup");
    const r = run(["backup", target]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("backup complete");
    expect(existsSync(join(target, "manifest.json"))).toBe(true);
    const db = new Database(join(target, "bunker.db"), { readonly: true });
    try {
      expect((db.query("PRAGMA integrity_check").get() as any).integrity_check).toBe("ok");
      const row = db.query("SELECT username FROM platform_accounts WHERE email = ?").get(user.email) as any;
      expect(row?.username).toBe(user.username);
    } finally {
      db.close();
    }
  }, T);

  test("healthcheck command reports the running server", () => {
    const ok = run(["healthcheck"], { PORT: String(port) });
    expect(ok.code).toBe(0);
    const down = run(["healthcheck"], { PORT: String(freePort()) });
    expect(down.code).toBe(1);
    expect(down.stderr).toContain("unhealthy");
  }, T);

  test("a bad configuration stops start-up with a clear message", () => {
    const r = run(["serve"], { PORT: "abc", DATA_DIR: join(work, "bad-data") });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain("Invalid configuration");
    expect(r.stderr).toContain('PORT must be an integer from 0 to 65535 (got "abc")');
  }, T);

  test("an unknown command exits non-zero with usage", () => {
    const r = run(["frobnicate"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("Usage: bunker");
  }, T);

  test("SIGTERM shuts down gracefully with exit code 0", async () => {
    expect(server).not.toBeNull();
    // An SMTP client that connected and went quiet must not hold the shutdown hostage.
    let smtpReplies = "";
    const idle = await Bun.connect({ hostname: "127.0.0.1", port: smtpPort, socket: { data(_s, d) { smtpReplies += Buffer.from(d).toString(); } } });
    while (!smtpReplies.startsWith("220 ")) await Bun.sleep(20);
    const t0 = performance.now();
    server!.kill("SIGTERM");
    const code = await Promise.race([server!.exited, Bun.sleep(10_000).then(() => "timeout" as const)]);
    expect(code).toBe(0);
    expect(performance.now() - t0).toBeLessThan(10_000);
    expect(smtpReplies).toContain("421 ");
    idle.end();
    await Bun.sleep(50); // let the last log lines drain
    expect(output).toContain('"msg":"shutting down"');
    expect(output).toContain('"msg":"stopped"');
    // Both ports are released.
    expect(await fetch(`${base}/healthz`).then(() => true, () => false)).toBe(false);
    // The WAL was checkpointed into the main file on the way out.
    const db = new Database(join(dataDir, "bunker.db"), { readonly: true });
    try {
      expect((db.query("SELECT COUNT(*) AS n FROM platform_accounts").get() as any).n).toBe(1);
    } finally {
      db.close();
    }
  }, T);
});
