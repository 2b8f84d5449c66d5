/**
 * Start-up is done before the port answers 200: /healthz (and /readyz) say "ok" only once
 * the BUNKER_ADMIN_* operator exists and the scheduler runs, so an orchestrator or a script
 * that waits for /healthz can sign in at once. The process reports the open-file limit it
 * runs with (every connection takes one).
 */
import { afterAll, expect, test } from "bun:test";
import { readFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bunkerCommand, cliEnv, freePort } from "../helpers/cli";
import { BINARY } from "../helpers/binary";

const work = mkdtempSync(join(tmpdir(), "bunker-ready-"));
const procs: ReturnType<typeof Bun.spawn>[] = [];
afterAll(async () => {
  for (const p of procs) p.kill("SIGKILL");
  await Promise.all(procs.map((p) => p.exited));
  rmSync(work, { recursive: true, force: true });
});

test("the first 200 from /healthz comes after the BUNKER_ADMIN_* operator exists: signing in right then works; the log names the open-file limit", async () => {
  const port = freePort();
  const output: string[] = [];
  // A realistic password hash (64 MiB, t=3) makes start-up's operator creation take a while,
  // so a server that answered before it was done would be caught in that window.
  const env = cliEnv({ PORT: String(port), SMTP_PORT: "off", DATA_DIR: join(work, "d"), BUNKER_ADMIN_EMAIL: "ops@example.com", BUNKER_ADMIN_PASSWORD: "correct horse battery", ARGON2_MEMORY_KIB: "65536", ARGON2_TIME_COST: "3" });
  const proc = Bun.spawn(bunkerCommand(["serve"]), { cwd: BINARY ? tmpdir() : join(import.meta.dir, "../.."), env, stdout: "pipe", stderr: "pipe" });
  procs.push(proc);
  void (async () => {
    for await (const c of proc.stdout as ReadableStream<Uint8Array>) output.push(new TextDecoder().decode(c));
  })();

  const deadline = Date.now() + 45_000;
  let healthy = false;
  while (!healthy) {
    if (Date.now() > deadline || proc.exitCode !== null) throw new Error(`no healthy start:\n${output.join("")}`);
    healthy = await fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.status === 200, () => false);
    if (!healthy) await Bun.sleep(5);
  }
  const signin = await fetch(`http://127.0.0.1:${port}/platform/v1/auth/signin`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ identifier: "ops@example.com", password: "correct horse battery" }),
  });
  expect(signin.status).toBe(200);
  expect((await fetch(`http://127.0.0.1:${port}/readyz`)).status).toBe(200);

  const listening = output.join("").split("\n").map((l) => (l.startsWith("{") ? JSON.parse(l) : null)).find((l) => l?.msg === "bunker listening");
  const soft = Number(/^Max open files\s+(\d+)/m.exec(readFileSync(`/proc/${proc.pid}/limits`, "utf8"))![1]);
  expect(listening.open_files).toBe(soft);
  expect(soft).toBeGreaterThanOrEqual(1024);
}, 60_000);
