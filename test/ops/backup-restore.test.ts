/**
 * `bunker backup` and `bunker restore` through the real CLI, against a running server:
 * backup -> restore into a fresh DATA_DIR -> start -> sign in -> the avatar (an object)
 * is served with the same bytes. Plus the refusals: no database, existing target,
 * non-empty DATA_DIR, a backup without its key.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isRunning, runCli, startServer, type ServerProcess } from "../helpers/cli";

const work = mkdtempSync(join(tmpdir(), "bunker-backup-"));
const live = join(work, "live");
const OP = { BUNKER_ADMIN_EMAIL: "op@example.com", BUNKER_ADMIN_PASSWORD: "operator-password" };
const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 73, 72, 68, 82, 1, 2, 3, 4]);
const T = 60_000;

let server: ServerProcess;
let avatarPath = "";

async function json(url: string, init: RequestInit = {}) {
  const r = await fetch(url, init);
  return { status: r.status, body: (await r.json()) as any };
}

async function signIn(url: string) {
  const r = await json(`${url}/platform/v1/auth/signin`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ identifier: OP.BUNKER_ADMIN_EMAIL, password: OP.BUNKER_ADMIN_PASSWORD }),
  });
  expect(r.status).toBe(200);
  return r.body.access_token as string;
}

async function start(dataDir: string, env: Record<string, string> = {}) {
  const s = await startServer({ SMTP_PORT: "off", DATA_DIR: dataDir, ...env });
  if (!isRunning(s)) throw new Error(`server on ${dataDir} did not start (${s.exited}):\n${s.stdout}\n${s.stderr}`);
  return s;
}

beforeAll(async () => {
  server = await start(live, OP);
  const token = await signIn(server.url);
  const auth = { authorization: `Bearer ${token}` };
  const ws = await json(`${server.url}/platform/v1/workspaces`, { method: "POST", headers: { ...auth, "content-type": "application/json" }, body: JSON.stringify({ slug: "acme", display_name: "Acme" }) });
  expect(ws.status).toBe(201);
  const form = new FormData();
  form.append("file", new Blob([PNG], { type: "image/png" }), "logo.png");
  const up = await json(`${server.url}/platform/v1/workspaces/acme/avatar`, { method: "POST", headers: auth, body: form });
  expect(up.status).toBe(200);
  const url = new URL(up.body.avatar_url);
  avatarPath = url.pathname + url.search;
}, T);

afterAll(async () => {
  if (server) await server.stop();
  rmSync(work, { recursive: true, force: true });
});

describe("backup", () => {
  test("a mistyped DATA_DIR is refused, and no database is created there", () => {
    const typo = join(work, "lvie");
    const r = runCli(["backup", join(work, "typo-backup")], { DATA_DIR: typo });
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toBe(`no database at ${typo}/bunker.db: check DATA_DIR (nothing was backed up)`);
    expect(existsSync(typo)).toBe(false);
    expect(existsSync(join(work, "typo-backup"))).toBe(false);
  }, T);

  test("database, objects and (only when asked) the key; a second run to the same path needs --force", () => {
    const target = join(work, "b1");
    const r = runCli(["backup", target], { DATA_DIR: live });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("database: snapshot of");
    expect(r.stdout).toMatch(/objects: 2 files, [\d.]+ MB/); // the avatar and its content-type sidecar
    expect(r.stdout).toContain("key: not included");
    expect(r.stdout).toContain(`backup complete: ${target}`);
    expect(existsSync(join(target, "master.key"))).toBe(false);
    const manifest = JSON.parse(readFileSync(join(target, "manifest.json"), "utf8"));
    expect(manifest).toMatchObject({ format: "bunker-backup", format_version: 1, includes_key: false, objects: { location: "included", files: 2 } });

    const again = runCli(["backup", target], { DATA_DIR: live });
    expect(again.code).toBe(1);
    expect(again.stderr.trim()).toBe(`${target} already exists: choose a new path, or pass --force to replace it`);
    expect(again.stderr).not.toContain("SQLiteError");

    const forced = runCli(["backup", target, "--force", "--include-key"], { DATA_DIR: live });
    expect(forced.code).toBe(0);
    expect(forced.stdout).toContain("key: INCLUDED. Anyone holding this backup can decrypt every stored secret");
    expect(readFileSync(join(target, "master.key"), "utf8")).toBe(readFileSync(join(live, "master.key"), "utf8"));
    expect(statSync(join(target, "master.key")).mode & 0o777).toBe(0o600);
    // Nothing half-written is left beside the target.
    expect(readdirSync(work).filter((f) => f.includes(".partial-"))).toEqual([]);

    expect(runCli(["backup", target, "--frobnicate"], { DATA_DIR: live }).code).toBe(2);
  }, T);
});

describe("restore", () => {
  test("backup -> restore into a fresh DATA_DIR -> start -> sign in -> the avatar is served", async () => {
    const target = join(work, "full");
    expect(runCli(["backup", target, "--include-key"], { DATA_DIR: live }).code).toBe(0);
    const fresh = join(work, "fresh");
    const r = runCli(["restore", target], { DATA_DIR: fresh });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("database: restored to");
    expect(r.stdout).toMatch(/objects: 2 files, [\d.]+ MB restored to/);
    expect(r.stdout).toContain("key: matches the database");

    const restored = await start(fresh);
    try {
      const token = await signIn(restored.url);
      const ws = await json(`${restored.url}/platform/v1/workspaces/acme`, { headers: { authorization: `Bearer ${token}` } });
      expect(ws.status).toBe(200);
      const img = await fetch(`${restored.url}${avatarPath}`);
      expect(img.status).toBe(200);
      expect(img.headers.get("content-type")).toBe("image/png");
      expect(new Uint8Array(await img.arrayBuffer())).toEqual(PNG);
    } finally {
      expect(await restored.stop()).toBe(0);
    }

    // A second restore onto a used DATA_DIR needs --force.
    const twice = runCli(["restore", target], { DATA_DIR: fresh });
    expect(twice.code).toBe(1);
    expect(twice.stderr).toContain("already holds a database or objects: restore into an empty DATA_DIR, or pass --force");
    expect(runCli(["restore", target, "--force"], { DATA_DIR: fresh }).code).toBe(0);
  }, T);

  test("a backup without its key restores, says so, and the server refuses to start until the key is back", async () => {
    const target = join(work, "keyless");
    expect(runCli(["backup", target], { DATA_DIR: live }).code).toBe(0);
    const dir = join(work, "keyless-restore");
    const r = runCli(["restore", target], { DATA_DIR: dir });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("key: NONE. Set MASTER_KEY to the original key, or copy the original master.key");
    const refused = await startServer({ SMTP_PORT: "off", DATA_DIR: dir });
    expect(isRunning(refused)).toBe(false);
    if (!isRunning(refused)) expect(refused.stderr).toContain("no master key");

    // With the original key given as MASTER_KEY it starts.
    const key = readFileSync(join(live, "master.key"), "utf8").trim();
    const ok = await start(dir, { MASTER_KEY: key });
    expect(await ok.stop()).toBe(0);
  }, T);

  test("not a backup, or an empty directory, is refused in one line", () => {
    const empty = join(work, "empty");
    mkdirSync(empty);
    const r = runCli(["restore", empty], { DATA_DIR: join(work, "x") });
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toBe(`${empty} is not a Bunker backup (no readable manifest.json)`);
    expect(runCli(["restore"], { DATA_DIR: join(work, "x") }).code).toBe(2);
  }, T);
});
