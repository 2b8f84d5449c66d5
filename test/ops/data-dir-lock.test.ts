/**
 * One process per data directory on SQLite, through real processes: a second `serve` on a
 * DATA_DIR in use refuses (one line, exit 1) and the first keeps serving; a SIGKILLed holder
 * leaves no stale lock; `migrate` and `restore` refuse under a running server while `backup`
 * works; a start refused for a taken port leaves DATA_DIR untouched; PostgreSQL nodes share
 * a DATA_DIR without a lock.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { lockDataDir } from "../../src/core/data-dir-lock";
import { expectOneLine, freePort, isRunning, mustRefuse, mustStart, runCli, startServer, type ServerProcess } from "../helpers/cli";
import { startPgCluster } from "../helpers/pg-cluster";

const work = mkdtempSync(join(tmpdir(), "bunker-lock-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));
const T = 60_000;

const inUse = (dir: string) => `DATA_DIR ${dir} is in use by another Bunker process (on SQLite a data directory belongs to one process at a time)`;

describe("SQLite: one process per DATA_DIR", () => {
  test("a second serve on a DATA_DIR in use refuses with one line; the first keeps serving", async () => {
    const dataDir = join(work, "shared");
    const first = await mustStart({ SMTP_PORT: "off", DATA_DIR: dataDir, CONSOLE_SIGNUP: "open" });
    try {
      const second = await mustRefuse({ SMTP_PORT: String(freePort()), DATA_DIR: dataDir });
      expectOneLine(second, `${inUse(dataDir)}: stop it, or set another DATA_DIR`);
      // Refused before anything was announced or bound for good.
      expect(second.stdout).not.toContain("#setup=");
      expect(second.stdout).not.toContain('"msg":"bunker listening"');

      // The lock left nothing beside itself (its journal is kept in memory).
      expect(readdirSync(dataDir).filter((f) => f.startsWith("bunker.lock"))).toEqual(["bunker.lock"]);
      expect((await fetch(`${first.url}/readyz`)).status).toBe(200);
      const up = await fetch(`${first.url}/platform/v1/auth/signup`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ email: "a@example.com", username: "a", password: "correct horse battery" }) });
      expect(up.status).toBe(200);
      // The app took over the port from the start-up placeholder with Elysia's listen, so
      // handlers still see the server: the client address reaches the audit log.
      const auth = { authorization: `Bearer ${((await up.json()) as { access_token: string }).access_token}`, "content-type": "application/json" };
      expect((await fetch(`${first.url}/platform/v1/workspaces`, { method: "POST", headers: auth, body: JSON.stringify({ slug: "lock-test", display_name: "Lock test" }) })).status).toBe(201);
      const log = (await (await fetch(`${first.url}/platform/v1/workspaces/lock-test/audit-log?action=workspace.create`, { headers: auth })).json()) as { data: { ip: string | null }[] };
      expect(log.data.map((e) => e.ip)).toEqual(["127.0.0.1"]);
    } finally {
      expect(await first.stop()).toBe(0);
    }
    // A clean stop frees the directory.
    const again = await mustStart({ SMTP_PORT: "off", DATA_DIR: dataDir });
    expect(await again.stop()).toBe(0);
  }, T);

  test("a holder killed with SIGKILL leaves no stale lock: the next serve starts", async () => {
    const dataDir = join(work, "killed");
    const first = await mustStart({ SMTP_PORT: "off", DATA_DIR: dataDir });
    first.proc.kill("SIGKILL");
    await first.proc.exited;
    expect(existsSync(join(dataDir, "bunker.lock"))).toBe(true); // the file stays; the OS lock went with the process
    const next = await mustStart({ SMTP_PORT: "off", DATA_DIR: dataDir });
    expect((await fetch(`${next.url}/readyz`)).status).toBe(200);
    expect(await next.stop()).toBe(0);
  }, T);

  test("migrate and restore refuse while a server runs; backup of the live server works", async () => {
    const dataDir = join(work, "live");
    const s = await mustStart({ SMTP_PORT: "off", DATA_DIR: dataDir });
    const backup = join(work, "live-backup");
    try {
      const b = runCli(["backup", backup, "--include-key"], { DATA_DIR: dataDir });
      expect(b.code).toBe(0);
      expect(b.stdout).toContain("backup complete");

      const migrate = runCli(["migrate"], { DATA_DIR: dataDir });
      expect(migrate.code).toBe(1);
      expectOneLine(migrate, `${inUse(dataDir)}: stop it first`);

      // --force: the lock, not the "already holds a database" check, is what refuses.
      const restore = runCli(["restore", backup, "--force"], { DATA_DIR: dataDir });
      expect(restore.code).toBe(1);
      expectOneLine(restore, `${inUse(dataDir)}: stop the server first`);
      expect(restore.stdout).not.toContain("database: restored");

      expect((await fetch(`${s.url}/readyz`)).status).toBe(200);
    } finally {
      expect(await s.stop()).toBe(0);
    }
    // Stopped: both run.
    const migrate = runCli(["migrate"], { DATA_DIR: dataDir });
    expect(migrate.code).toBe(0);
    expect(migrate.stdout).toContain("database is up to date");
    const restore = runCli(["restore", backup, "--force"], { DATA_DIR: dataDir });
    expect(restore.code).toBe(0);
    expect(restore.stdout).toContain("restore complete");
  }, T);

  test("a lock held by this process (its handle referenced, after a full GC) refuses other processes until released", () => {
    const dataDir = join(work, "in-process");
    const lock = lockDataDir(dataDir);
    try {
      // Within one process too (SQLite tracks its own locks per file), and closing the
      // refused attempt's descriptor does not drop this process's POSIX lock (checked next).
      expect(() => lockDataDir(dataDir)).toThrow(inUse(dataDir));
      // bun:sqlite closes an unreachable Database on GC, which would free the lock.
      Bun.gc(true);
      const refused = runCli(["migrate"], { DATA_DIR: dataDir });
      expect(refused.code).toBe(1);
      expectOneLine(refused, inUse(dataDir));
    } finally {
      lock.release();
    }
    expect(runCli(["migrate"], { DATA_DIR: dataDir }).code).toBe(0);
    lockDataDir(dataDir).release(); // and again, once the other process has gone
  }, T);
});

describe("a start refused for a taken port leaves DATA_DIR untouched", () => {
  test("HTTP or SMTP port in use: no database, master key or lock file is created", async () => {
    const port = freePort();
    const smtpPort = freePort();
    const first = await mustStart({ PORT: String(port), SMTP_PORT: String(smtpPort), DATA_DIR: join(work, "port-owner") });
    try {
      // A DATA_DIR that does not exist yet is not created...
      const missing = join(work, "never-created");
      const http = await mustRefuse({ PORT: String(port), SMTP_PORT: "off", DATA_DIR: missing });
      expectOneLine(http, `cannot listen for HTTP on 127.0.0.1:${port}: the port is already in use`);
      expect(existsSync(missing)).toBe(false);

      // ...and an existing empty one stays empty.
      const empty = join(work, "stays-empty");
      mkdirSync(empty);
      const smtp = await mustRefuse({ PORT: String(freePort()), SMTP_PORT: String(smtpPort), DATA_DIR: empty });
      expectOneLine(smtp, `cannot listen for SMTP on 127.0.0.1:${smtpPort}: the port is already in use`);
      expect(readdirSync(empty)).toEqual([]);
    } finally {
      expect(await first.stop()).toBe(0);
    }
  }, T);
});

describe("PostgreSQL: no lock", () => {
  test("two nodes with DATABASE_URL share one DATA_DIR (e.g. a shared objects folder)", async () => {
    const cluster = await startPgCluster();
    const nodes: ServerProcess[] = [];
    try {
      const DATABASE_URL = await cluster.createDatabase("lock_test");
      const dataDir = join(work, "pg-shared");
      // One after the other: the first start creates the master key file both then read.
      for (let i = 0; i < 2; i++) nodes.push(await mustStart({ SMTP_PORT: "off", DATA_DIR: dataDir, DATABASE_URL }));
      for (const n of nodes) expect((await fetch(`${n.url}/readyz`)).status).toBe(200);
      expect(existsSync(join(dataDir, "bunker.lock"))).toBe(false);
      expect(existsSync(join(dataDir, "bunker.db"))).toBe(false);
      // migrate on PostgreSQL takes no lock either.
      expect(runCli(["migrate"], { DATA_DIR: dataDir, DATABASE_URL }).code).toBe(0);
    } finally {
      for (const n of nodes) expect(await n.stop()).toBe(0);
      await cluster.stop();
    }
  }, T);
});
