/**
 * The shipped program under test: `npm run test:bin` builds dist/bunker once and sets
 * BUNKER_TEST_BINARY to it; the test helpers (app.ts, cli.ts) then start that executable as
 * a real process over loopback instead of building the app in-process. Each process's
 * /metrics is read before it stops, and the route templates it served are appended to
 * BUNKER_TEST_ROUTES, from which scripts/test-bin.ts reports which routes the run reached.
 */
import { appendFileSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** The executable under test, or null on a source run. */
export const BINARY: string | null = process.env.BUNKER_TEST_BINARY || null;

/** True on `npm run test:bin`. */
export const ON_BINARY = BINARY !== null;

export function freePort(): number {
  const s = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = s.port;
  s.stop(true);
  return port;
}

/** The binary, or fail loudly: a binary-only test file run outside `npm run test:bin`. */
export function requireBinary(): string {
  if (!BINARY) throw new Error("this test runs the compiled binary: use `npm run test:bin` (it builds dist/bunker and sets BUNKER_TEST_BINARY)");
  return BINARY;
}

/**
 * Makes `obj[name]` throw a "source-only: ..." error when read: a member that exists only
 * in-process, on an object standing for the binary's process. `why` ends the message.
 */
export function inProcessOnly<T extends object>(obj: T, names: string[], why: (name: string) => string): T {
  for (const name of names) {
    Object.defineProperty(obj, name, {
      get() {
        throw new Error(`source-only: ${why(name)}`);
      },
      enumerable: false,
    });
  }
  return obj;
}

export interface BinaryProcess {
  /** http://127.0.0.1:<port> */
  base: string;
  port: number;
  /** The inbound SMTP port, or null with SMTP_PORT=off. */
  smtpPort: number | null;
  dataDir: string;
  proc: ReturnType<typeof Bun.spawn>;
  /** Everything the process wrote to stdout and stderr so far (capped to the last 256 KiB). */
  output(): string;
  /** Records the routes served, then SIGTERM and waits; resolves with the exit code. */
  stop(): Promise<number>;
  /** SIGKILL, no goodbye (crash tests). */
  kill(): Promise<number>;
}

const KEEP = 256 * 1024;

/**
 * Every process still running: killed when the test runner exits, so a test that threw
 * after its start (a failing beforeAll never reaches its afterAll's stop) leaves nothing behind.
 */
const live = new Set<ReturnType<typeof Bun.spawn>>();
process.on("exit", () => {
  for (const p of live) if (p.exitCode === null) p.kill("SIGKILL");
});

/**
 * Starts `bunker serve` on 127.0.0.1 with a clean environment (nothing of the runner's leaks
 * in) plus `env`; resolves once it logged "bunker listening" and /healthz answers. The HTTP
 * port is the one the process reports (PORT=0 unless given); a taken SMTP port is retried.
 */
export async function startBinary(env: Record<string, string> = {}, opts: { dataDir?: string; cwd?: string } = {}): Promise<BinaryProcess> {
  const bin = requireBinary();
  const dataDir = opts.dataDir ?? env.DATA_DIR ?? mkdtempSync(join(tmpdir(), "bunker-bin-"));
  for (let attempt = 1; ; attempt++) {
    const smtpPort = env.SMTP_PORT === "off" || env.SMTP_PORT === "0" ? null : Number(env.SMTP_PORT ?? freePort());
    try {
      return await startOnce(bin, dataDir, { ...env, SMTP_PORT: smtpPort === null ? "off" : String(smtpPort) }, smtpPort, opts.cwd ?? dataDir);
    } catch (e) {
      // Only a port clash (another test took the free port in between) is retried.
      if (attempt < 4 && /already in use/.test(String(e)) && !env.SMTP_PORT && !env.PORT) continue;
      throw e;
    }
  }
}

async function startOnce(bin: string, dataDir: string, env: Record<string, string>, smtpPort: number | null, cwd: string): Promise<BinaryProcess> {
  const fullEnv: Record<string, string> = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: dataDir,
    HOST: "127.0.0.1",
    PORT: "0",
    LOG_LEVEL: "info",
    DATA_DIR: dataDir,
    ...env,
  };
  const started = await launchServe([bin, "serve"], fullEnv, cwd);
  if ("exited" in started) throw new Error(`bunker exited with ${started.exited} before listening:\n${(started.stdout + started.stderr).slice(-4000)}`);
  const { proc, port, drained, output } = started;
  const base = `http://127.0.0.1:${port}`;
  let ended: Promise<number> | null = null;
  const end = (signal: "SIGTERM" | "SIGKILL") => {
    ended ??= (async () => {
      if (proc.exitCode === null) proc.kill(signal);
      const code = await proc.exited;
      await drained;
      return code;
    })();
    return ended;
  };
  return {
    base,
    port,
    smtpPort,
    dataDir,
    proc,
    output,
    async stop() {
      if (proc.exitCode === null) await recordRoutes(base, env.METRICS_TOKEN);
      return end("SIGTERM");
    },
    kill: () => end("SIGKILL"),
  };
}

/** The HTTP port a `serve` reported in its "bunker listening" line (it may have been given PORT=0), or 0 before it did. */
export function listeningPort(output: string): number {
  return Number(/"msg":"bunker listening".*?"url":"http:\/\/[^"]*:(\d+)"/.exec(output)?.[1] ?? 0);
}

export interface Launched {
  proc: ReturnType<typeof Bun.spawn>;
  port: number;
  /** Resolves once both output streams ended. */
  drained: Promise<unknown>;
  /** stdout then stderr so far (each capped to its last 256 KiB). */
  output(): string;
}

/**
 * Spawns a `serve` command line (the binary, or bun on the source) and waits until it logged
 * "bunker listening" and /healthz answers on the port it reported (the log line, not /healthz
 * alone: another process may hold a port); or until it exits, with its code and output (the
 * refusal tests read these). The process is killed when the test runner exits.
 */
export async function launchServe(command: string[], env: Record<string, string>, cwd: string): Promise<Launched | { exited: number; stdout: string; stderr: string }> {
  const proc = Bun.spawn(command, { cwd, env, stdout: "pipe", stderr: "pipe" });
  live.add(proc);
  void proc.exited.then(() => live.delete(proc));
  const text = { out: "", err: "" };
  const drain = async (s: ReadableStream<Uint8Array>, key: "out" | "err") => {
    const d = new TextDecoder();
    for await (const c of s) {
      text[key] += d.decode(c, { stream: true });
      if (text[key].length > 2 * KEEP) text[key] = text[key].slice(-KEEP);
    }
  };
  const drained = Promise.all([drain(proc.stdout as ReadableStream<Uint8Array>, "out"), drain(proc.stderr as ReadableStream<Uint8Array>, "err")]);
  // Generous: on a loaded 2-core CI machine a cold `bun src/main.ts` has been seen to take over 20 s.
  const deadline = Date.now() + 45_000;
  for (;;) {
    if (proc.exitCode !== null) {
      await drained;
      return { exited: proc.exitCode, stdout: text.out, stderr: text.err };
    }
    const port = listeningPort(text.out);
    if (port && (await fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.ok, () => false))) {
      return { proc, port, drained, output: () => text.out + text.err };
    }
    if (Date.now() > deadline) {
      proc.kill("SIGKILL");
      throw new Error(`bunker did not start within 45 s:\n${(text.out + text.err).slice(-4000)}`);
    }
    await Bun.sleep(15);
  }
}

/** Appends the (method, route template, status, count) series of a live process to BUNKER_TEST_ROUTES. */
export async function recordRoutes(base: string, metricsToken?: string): Promise<void> {
  const file = process.env.BUNKER_TEST_ROUTES;
  if (!file) return;
  const text = await fetch(`${base}/metrics`, { headers: metricsToken ? { authorization: `Bearer ${metricsToken}` } : {} }).then(
    (r) => (r.ok ? r.text() : ""),
    () => "",
  );
  const lines: string[] = [];
  for (const m of text.matchAll(/^bunker_http_requests_total\{([^}]*)\} (\d+)/gm)) {
    const labels = Object.fromEntries([...m[1].matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((l) => [l[1], l[2]]));
    lines.push(JSON.stringify({ method: labels.method, route: labels.route, status: Number(labels.status), n: Number(m[2]), file: Bun.main }));
  }
  if (lines.length) appendFileSync(file, lines.join("\n") + "\n");
}
