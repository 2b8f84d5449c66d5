/**
 * Start-up refusals, through real processes: a port that is taken (HTTP or SMTP), a master
 * key that is not the database's, a DATA_DIR that cannot be written. Each ends with exit 1
 * and one line on stderr, and the running instance is untouched.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { mkdtempSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expectOneLine, freePort, isRunning, mustRefuse, mustStart, runCli, startServer, type ServerProcess } from "../helpers/cli";
import { until } from "../helpers/until";

const work = mkdtempSync(join(tmpdir(), "bunker-refusals-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));
const T = 60_000;

describe("ports", () => {
  test("a second instance on a taken HTTP or SMTP port refuses to start; the first keeps its database", async () => {
    const port = freePort();
    const smtpPort = freePort();
    const first = await mustStart({ PORT: String(port), SMTP_PORT: String(smtpPort), DATA_DIR: join(work, "first"), CONSOLE_SIGNUP: "open" });
    try {
      const http = await mustRefuse({ PORT: String(port), SMTP_PORT: "off", DATA_DIR: join(work, "second") });
      expectOneLine(http, `cannot listen for HTTP on 127.0.0.1:${port}: the port is already in use`);
      const smtp = await mustRefuse({ PORT: String(freePort()), SMTP_PORT: String(smtpPort), DATA_DIR: join(work, "third") });
      expectOneLine(smtp, `cannot listen for SMTP on 127.0.0.1:${smtpPort}: the port is already in use`);
      // Neither refused process printed a setup link: nothing is announced before both ports are bound.
      expect(http.stdout + smtp.stdout).not.toContain("#setup=");

      // Every request reaches the first instance: its session is found on each call.
      const up = await fetch(`${first.url}/platform/v1/auth/signup`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ email: "a@example.com", username: "a", password: "correct horse battery" }) });
      expect(up.status).toBe(200);
      const token = ((await up.json()) as { access_token: string }).access_token;
      for (let i = 0; i < 10; i++) {
        expect((await fetch(`${first.url}/platform/v1/introspect`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
      }
    } finally {
      expect(await first.stop()).toBe(0);
    }
  }, T);

  test("SMTP_PORT=off (or 0) runs without the inbound listener", async () => {
    for (const off of ["off", "0"]) {
      const s = await mustStart({ SMTP_PORT: off, DATA_DIR: join(work, `smtp-${off}`) });
      expect(s.output()).toContain('"msg":"inbound SMTP is off (SMTP_PORT=off)"');
      expect(s.output()).not.toContain('"msg":"smtp listening"');
      expect(await s.stop()).toBe(0);
    }
  }, T);
});

describe("master key", () => {
  test("a wrong MASTER_KEY, or a missing master.key, is refused at start; the right key starts", async () => {
    const dataDir = join(work, "keyed");
    const keyFile = join(dataDir, "master.key");
    const first = await mustStart({ SMTP_PORT: "off", DATA_DIR: dataDir });
    expect(await first.stop()).toBe(0);

    const wrong = await mustRefuse({ SMTP_PORT: "off", DATA_DIR: dataDir, MASTER_KEY: randomBytes(32).toString("hex") });
    expectOneLine(wrong, "MASTER_KEY is not the master key this database was created with; refusing to start");

    renameSync(keyFile, `${keyFile}.moved`); // a restore that forgot the key file
    const missing = await mustRefuse({ SMTP_PORT: "off", DATA_DIR: dataDir });
    expectOneLine(missing, `no master key: MASTER_KEY is unset and ${keyFile} is missing, but this database was created with a key`);

    // A different key file (e.g. from another instance) is refused too.
    writeFileSync(keyFile, randomBytes(32).toString("base64") + "\n", { mode: 0o600 });
    const other = await mustRefuse({ SMTP_PORT: "off", DATA_DIR: dataDir });
    expectOneLine(other, `${keyFile} is not the master key this database was created with`);

    renameSync(`${keyFile}.moved`, keyFile);
    const back = await mustStart({ SMTP_PORT: "off", DATA_DIR: dataDir });
    expect((await fetch(`${back.url}/readyz`)).status).toBe(200);
    expect(await back.stop()).toBe(0);
    // Five starts of the whole server: room for a loaded CI machine.
  }, 3 * T);
});

describe("DATA_DIR", () => {
  test("a DATA_DIR that cannot be created or written is one line, for serve and migrate", async () => {
    const file = join(work, "a-file");
    writeFileSync(file, "not a directory");
    const dataDir = join(file, "data");
    const serve = await mustRefuse({ SMTP_PORT: "off", DATA_DIR: dataDir });
    expectOneLine(serve, `DATA_DIR ${dataDir} is not a writable directory (ENOTDIR`);
    const migrate = runCli(["migrate"], { DATA_DIR: dataDir });
    expect(migrate.code).toBe(1);
    expectOneLine(migrate, `DATA_DIR ${dataDir} is not a writable directory`);
  }, T);
});

describe("shutdown", () => {
  test("SIGTERM closes a connection that holds an unread body after SHUTDOWN_GRACE_MS, then exits 0", async () => {
    const dir = mkdtempSync(join(tmpdir(), "bunker-grace-"));
    const s = await startServer({ DATA_DIR: dir, SMTP_PORT: "off", SHUTDOWN_GRACE_MS: "1000" });
    if ("exited" in s) throw new Error(`server did not start: ${s.stderr}`);
    const { port } = new URL(s.url);
    // A sign-in that announces 1 MB and sends 10 bytes: in flight, waiting for the rest.
    const sock = await Bun.connect({ hostname: "127.0.0.1", port: Number(port), socket: { data() {}, close() {} } });
    sock.write("POST /platform/v1/auth/signin HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 1000000\r\n\r\n0123456789");
    // In flight once the server handles it (on a loaded machine that is not "100 ms later"):
    // the scrape counts itself, so 2 means the sign-in is in.
    await until("the sign-in in flight", async () => /^bunker_http_requests_in_flight ([2-9]|\d\d)/m.test(await (await fetch(`${s.url}/metrics`)).text()), 10_000);
    const t0 = performance.now();
    s.proc.kill("SIGTERM");
    expect(await s.proc.exited).toBe(0);
    const took = performance.now() - t0;
    expect(took).toBeGreaterThanOrEqual(900); // it did wait for the request
    expect(took).toBeLessThan(5000);
    sock.end();
  });
});
