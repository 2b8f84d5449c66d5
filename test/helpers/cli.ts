/**
 * The real CLI as an operator runs it: `bun src/main.ts <command>` in a child process with
 * a clean environment (nothing from the test runner leaks in), for start-up refusals,
 * backup and restore. On `npm run test:bin` the same commands run the compiled binary.
 */
import { expect } from "bun:test";
import { tmpdir } from "node:os";
import { resolve } from "node:path";
import { BINARY, freePort, launchServe } from "./binary";

export { freePort };

const ROOT = resolve(import.meta.dir, "../..");

/** The command line that runs Bunker: the binary under test, else the source. */
export function bunkerCommand(args: string[]): string[] {
  return BINARY ? [BINARY, ...args] : [process.execPath, "src/main.ts", ...args];
}

/** Where it runs: the binary from a directory with no repository files around it, as on a VM. */
const CWD = BINARY ? tmpdir() : ROOT;

/** Cheap password hashing and loopback only; `over` wins. */
export function cliEnv(over: Record<string, string> = {}): Record<string, string> {
  return { PATH: process.env.PATH ?? "/usr/bin:/bin", HOST: "127.0.0.1", LOG_LEVEL: "info", ARGON2_MEMORY_KIB: "1024", ARGON2_TIME_COST: "1", ...over };
}

/** Runs one command to completion. */
export function runCli(args: string[], env: Record<string, string>) {
  const r = Bun.spawnSync(bunkerCommand(args), { cwd: CWD, env: cliEnv(env), stdout: "pipe", stderr: "pipe", timeout: 30_000 });
  return { code: r.exitCode, stdout: r.stdout.toString(), stderr: r.stderr.toString() };
}

export interface ServerProcess {
  url: string;
  proc: ReturnType<typeof Bun.spawn>;
  output(): string;
  stop(): Promise<number>;
}

/**
 * Starts `serve` and waits until /healthz answers, or until the process exits (then the
 * result has `exited` with its code and output, for refusal tests).
 */
export async function startServer(env: Record<string, string>): Promise<ServerProcess | { exited: number; stdout: string; stderr: string }> {
  // PORT=0 unless a test names one: the process reports the port it got, so no other test
  // can take a "free" port between our choosing it and the process binding it.
  const started = await launchServe(bunkerCommand(["serve"]), cliEnv({ PORT: "0", ...env }), CWD);
  if ("exited" in started) return started;
  const { proc, port, drained, output } = started;
  return {
    url: `http://127.0.0.1:${port}`,
    proc,
    output,
    async stop() {
      proc.kill("SIGTERM");
      const code = await proc.exited;
      await drained;
      return code;
    },
  };
}

/** Exactly one line on stderr, and no stack trace anywhere: how a refused start reads. */
export function expectOneLine(r: { stdout: string; stderr: string }, text: string) {
  expect(r.stderr.trim().split("\n")).toHaveLength(1);
  expect(r.stderr).toContain(text);
  expect(r.stdout + r.stderr).not.toMatch(/^\s+at .+:\d+:\d+\)?$/m);
}

export async function mustStart(env: Record<string, string>): Promise<ServerProcess> {
  const s = await startServer(env);
  if (!isRunning(s)) throw new Error(`expected a start, got exit ${s.exited}:\n${s.stdout}\n${s.stderr}`);
  return s;
}

/** A start that must be refused: exit 1, and its output for the message checks. */
export async function mustRefuse(env: Record<string, string>) {
  const s = await startServer(env);
  if (isRunning(s)) {
    await s.stop();
    throw new Error("expected a refusal, but the server started");
  }
  expect(s.exited).toBe(1);
  return s;
}

export function isRunning(s: Awaited<ReturnType<typeof startServer>>): s is ServerProcess {
  return "proc" in s;
}
