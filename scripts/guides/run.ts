/**
 * The guide runner: runs the ```sh blocks of README.md and docs/*.md, in order, against a
 * freshly started binary, so that the guides stay true. The rules a guide follows are in
 * docs/README.md ("How the guides are tested"); test/bin/guides.test.ts runs every guide
 * under `npm run test:bin`.
 *
 *   bun scripts/guides/run.ts [files...]     (default: README.md, then the guides docs/README.md lists)
 *
 * The CLI builds the binary once into /tmp/bunker-guides/bunker with scripts/build.ts, or
 * runs BUNKER_TEST_BINARY=<path>, and prints each block, its output and the failing command.
 * GUIDE_TIMEOUT_S bounds one document (default 300).
 *
 * Per document: an empty temp folder (the shell's working directory and HOME, the server's
 * DATA_DIR under it), four free ports for the four example addresses, one bash process in
 * its own process group (killed at the end, with whatever the guide left in the background),
 * and the server, started by the runner when it reaches the `<!-- guide: start -->` block.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";
import { type Block, logicalCommands, parseGuide } from "./blocks";
import { driverScript, markExpectedStatuses, type Ports, rewritePorts } from "./shell";

export const ROOT = resolve(import.meta.dir, "../..");

export interface GuideResult {
  file: string;
  ok: boolean;
  /** Blocks that ran to the end. */
  ran: number;
  notRun: { line: number; reason: string }[];
  /** What failed: "<file>:<line>: <message>", the command and the output around it. */
  failure?: string;
  /** Every block with its output, as the CLI prints it. */
  transcript: string;
}

export interface RunOptions {
  binary: string;
  /** Called with each piece of the transcript as it happens (the CLI prints them). */
  onOutput?: (text: string) => void;
  timeoutMs?: number;
  /** Keep the temp folder of a failed document (its server.log, data and blocks) and say where. */
  keepOnFailure?: boolean;
  /** Called before the server stops, with its base URL and the start block's variables (test:bin reads its /metrics). */
  beforeStop?: (base: string, vars: Record<string, string>) => Promise<void>;
}

/** README.md, then every document linked under "## Guides" in docs/README.md, in its order. */
export function defaultGuides(root = ROOT): string[] {
  const index = readFileSync(join(root, "docs/README.md"), "utf8");
  const section = /^## Guides\s*$([\s\S]*?)(?=^## |(?![\s\S]))/m.exec(index)?.[1] ?? "";
  const linked = [...section.matchAll(/\]\(([\w.-]+\.md)\)/g)].map((m) => `docs/${m[1]}`);
  return ["README.md", ...new Set(linked)];
}

export function freePort(): number {
  const s = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = s.port;
  s.stop(true);
  return port;
}

/** The variables of a start block's one command (`A=1 B='x y' npm start`), read by bash itself. */
export function startVariables(text: string): Record<string, string> {
  const command = logicalCommands(text.trim())
    .map((c) => c.text.trim())
    .filter((c) => c && !c.startsWith("#"));
  if (command.length !== 1) throw new Error("a start block holds exactly one command (variables, then `npm start` or `./bunker serve`)");
  const m = /^((?:\s*[A-Za-z_][A-Za-z0-9_]*=(?:'[^']*'|"(?:[^"\\]|\\.)*"|[^\s'"]+)?)*)\s*(?:npm start|npm run dev|(?:\.\/)?bunker(?: serve)?|bun src\/main\.ts(?: serve)?)\s*&?\s*$/.exec(command[0]);
  if (!m) throw new Error(`the start block's command is not \`VAR=... npm start\` or \`VAR=... ./bunker serve\`: ${command[0]}`);
  const words = spawnSync("bash", ["-c", `printf '%s\\0' ${m[1]}`], { encoding: "utf8" });
  if (words.status !== 0) throw new Error(`bash could not read the start block's variables: ${words.stderr}`);
  const vars: Record<string, string> = {};
  for (const w of words.stdout.split("\0")) {
    const eq = w.indexOf("=");
    if (eq > 0) vars[w.slice(0, eq)] = w.slice(eq + 1);
  }
  return vars;
}

interface Server {
  proc: ReturnType<typeof Bun.spawn>;
  stop(): Promise<void>;
}

async function startServer(binary: string, work: string, ports: Ports, vars: Record<string, string>, deadline: number): Promise<Server> {
  const log = Bun.file(join(work, "server.log"));
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: work,
    LOG_LEVEL: "info",
    PUBLIC_URL: `http://localhost:${ports.http}`,
    // A port nothing listens on: a guide's mail domain checks never reach real DNS (a guide may say otherwise).
    DNS_SERVERS: `127.0.0.1:${freePort()}`,
    ...Object.fromEntries(Object.entries(vars).map(([k, v]) => [k, rewritePorts(v, ports)])),
    // The runner's, whatever the guide says: the document's own data and ports.
    DATA_DIR: join(work, "data"),
    HOST: "127.0.0.1",
    PORT: String(ports.http),
    SMTP_PORT: String(ports.smtp),
  };
  const proc = Bun.spawn([binary, "serve"], { cwd: work, env, stdout: log, stderr: log });
  const base = `http://127.0.0.1:${ports.http}`;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`bunker exited with ${proc.exitCode} before answering /healthz:\n${tail(readFileSync(join(work, "server.log"), "utf8"))}`);
    if (await fetch(`${base}/healthz`).then((r) => r.status === 200, () => false)) break;
    if (Date.now() > deadline) {
      proc.kill("SIGKILL");
      throw new Error(`bunker did not answer /healthz in time:\n${tail(readFileSync(join(work, "server.log"), "utf8"))}`);
    }
    await Bun.sleep(50);
  }
  return {
    proc,
    async stop() {
      if (proc.exitCode !== null) return;
      proc.kill("SIGTERM");
      const timer = setTimeout(() => proc.kill("SIGKILL"), 10_000);
      await proc.exited;
      clearTimeout(timer);
    },
  };
}

const tail = (s: string, n = 4000) => (s.length > n ? `...${s.slice(-n)}` : s);

/** Runs one document; never throws for a failing guide (the result says why). */
export async function runGuide(file: string, opts: RunOptions): Promise<GuideResult> {
  const path = resolve(ROOT, file);
  const name = relative(ROOT, path);
  let transcript = "";
  const say = (text: string) => {
    transcript += text;
    opts.onOutput?.(text);
  };
  const result = (ok: boolean, ran: number, notRun: GuideResult["notRun"], failure?: string): GuideResult => ({ file: name, ok, ran, notRun, failure, transcript });

  if (!existsSync(path)) return result(false, 0, [], `${name}: no such file`);
  const parsed = parseGuide(readFileSync(path, "utf8"));
  const notRun = parsed.blocks.filter((b) => b.kind === "not-run").map((b) => ({ line: b.line, reason: b.reason ?? "" }));
  const problems = [...parsed.problems.map((p) => `${name}: ${p}`)];
  const ports: Ports = { http: freePort(), smtp: freePort(), listen: freePort(), model: freePort() };
  const prepared = new Map<Block, string>();
  for (const b of parsed.blocks) {
    if (b.kind !== "run") continue;
    const marked = markExpectedStatuses(rewritePorts(b.text, ports));
    for (const p of marked.problems) problems.push(`${name}:${b.line + 1 + p.index}: ${p.message}`);
    prepared.set(b, marked.text);
  }
  let vars: Record<string, string> = {};
  const start = parsed.blocks.find((b) => b.kind === "start");
  if (start) {
    try {
      vars = startVariables(start.text);
    } catch (e) {
      problems.push(`${name}:${start.line}: ${(e as Error).message}`);
    }
  }
  for (const b of parsed.blocks.filter((x) => x.kind === "not-run")) say(`${name}:${b.line}: not run: ${b.reason}\n`);
  if (problems.length) return result(false, 0, notRun, problems.join("\n"));

  const work = mkdtempSync(join(tmpdir(), "bunker-guide-"));
  mkdirSync(join(work, "data"));
  const timeoutMs = opts.timeoutMs ?? Number(process.env.GUIDE_TIMEOUT_S ?? 300) * 1000;
  // The server's start-up has its own bound (a loaded machine starts slowly); the document's is for its blocks.
  let deadline = Date.now() + timeoutMs;
  const mark = `__GUIDE_${crypto.randomUUID().replaceAll("-", "")}`;
  const order = parsed.blocks.filter((b) => b.kind !== "not-run");
  order.forEach((b, i) => {
    if (b.kind === "run") writeFileSync(join(work, `block-${i}.sh`), prepared.get(b)! + "\n");
  });

  const shell = Bun.spawn(["bash", "--noprofile", "--norc", "-c", driverScript(mark)], {
    cwd: work,
    detached: true,
    stdin: "pipe",
    stdout: "pipe",
    stderr: "pipe",
    env: {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: work,
      LANG: "C.UTF-8",
      TERM: "dumb",
      DATA_DIR: join(work, "data"),
      // The server's own address, so the CLI finds it as a reader's does on the default ports.
      HOST: "127.0.0.1",
      PORT: String(ports.http),
      SMTP_PORT: String(ports.smtp),
      __GUIDE_BIN: opts.binary,
      __guide_dir: work,
    },
  });
  // The shell's output, split at the markers: each block's own output, then DONE or FAIL.
  let buffer = "";
  let waiting: (() => void) | null = null;
  const events: string[] = [];
  const pump = async (stream: ReadableStream<Uint8Array>) => {
    const decoder = new TextDecoder();
    for await (const chunk of stream) {
      buffer += decoder.decode(chunk, { stream: true });
      for (;;) {
        const at = buffer.indexOf(`\n${mark} `);
        const end = at < 0 ? -1 : buffer.indexOf("\n", at + 1);
        if (at < 0 || end < 0) break;
        say(buffer.slice(0, at + 1));
        events.push(buffer.slice(at + 1 + mark.length + 1, end));
        buffer = buffer.slice(end + 1);
        waiting?.();
      }
      // Hold back only a last line that may be the start of a marker.
      const nl = buffer.lastIndexOf("\n");
      const rest = nl < 0 ? "" : buffer.slice(nl);
      const held = rest && `\n${mark} `.startsWith(rest.slice(0, mark.length + 2)) ? rest : "";
      say(buffer.slice(0, buffer.length - held.length));
      buffer = held;
    }
    say(buffer);
  };
  const stderr = async (stream: ReadableStream<Uint8Array>) => {
    for await (const chunk of stream) say(new TextDecoder().decode(chunk));
  };
  // The driver sends its stderr to stdout; bash's own complaints before that still show.
  const pumped = Promise.all([pump(shell.stdout as ReadableStream<Uint8Array>), stderr(shell.stderr as ReadableStream<Uint8Array>)]);
  const exited = shell.exited.then(() => waiting?.());
  // The guide's background jobs share the shell's process group.
  const killGroup = (sig: "SIGTERM" | "SIGKILL") => {
    try {
      process.kill(-shell.pid, sig);
    } catch {
      // the group is empty
    }
  };
  const nextEvent = async (): Promise<string | null> => {
    for (;;) {
      if (events.length) return events.shift()!;
      if (shell.exitCode !== null) {
        // A job the guide left in the background still holds the output open.
        killGroup("SIGKILL");
        await pumped;
        return events.shift() ?? null;
      }
      const left = deadline - Date.now();
      if (left <= 0) return "timeout";
      let timer: ReturnType<typeof setTimeout> | undefined;
      await new Promise<void>((r) => {
        waiting = r;
        timer = setTimeout(r, left);
      });
      clearTimeout(timer);
      waiting = null;
    }
  };

  let server: Server | null = null;
  let ran = 0;
  let failure: string | undefined;
  try {
    for (const [i, b] of order.entries()) {
      say(`\n── ${name}:${b.line}${b.kind === "start" ? " (the runner starts the server)" : ""}\n${b.text}\n──\n`);
      if (b.kind === "start") {
        const began = Date.now();
        try {
          server = await startServer(opts.binary, work, ports, vars, began + 60_000);
          deadline += Date.now() - began;
        } catch (e) {
          failure = `${name}:${b.line}: the server did not start: ${(e as Error).message}`;
          break;
        }
        say(`bunker is serving http://localhost:${ports.http} (SMTP localhost:${ports.smtp})\n`);
        ran++;
        continue;
      }
      const stdin = shell.stdin as import("bun").FileSink;
      await stdin.write(`${i}\n`);
      await stdin.flush();
      let event = await nextEvent();
      let failedLine: number | null = null;
      if (event?.startsWith("FAIL ")) {
        failedLine = Number(event.slice(5));
        event = await nextEvent();
      }
      if (event === `DONE ${i}`) {
        ran++;
        continue;
      }
      // bash names a line of the failing command (of a multi-line one, its last): report its first.
      const cmd = failedLine === null ? undefined : logicalCommands(b.text).find((c) => c.first <= failedLine! - 1 && failedLine! - 1 <= c.last);
      const why = event === "timeout" ? `timed out after ${timeoutMs / 1000} s` : cmd ? "this command failed" : `the block ended the shell (exit ${shell.exitCode})`;
      failure = `${name}:${cmd ? b.line + 1 + cmd.first : b.line}: ${why}\n  $ ${(cmd?.text ?? b.text).trim()}\n${indent(tail(blockOutput(transcript)))}`;
      break;
    }
  } finally {
    const stdin = shell.stdin as import("bun").FileSink;
    try {
      await stdin.write("end\n");
      await stdin.end();
    } catch {
      // the shell is gone already
    }
    killGroup("SIGTERM");
    await Promise.race([exited, Bun.sleep(2000)]);
    killGroup("SIGKILL");
    await exited;
    await pumped;
    if (server && opts.beforeStop) await opts.beforeStop(`http://127.0.0.1:${ports.http}`, vars).catch(() => {});
    await server?.stop();
  }
  if (failure) {
    const log = existsSync(join(work, "server.log")) ? readFileSync(join(work, "server.log"), "utf8") : "";
    if (log) failure += `\n  the server's log (end):\n${indent(tail(log, 3000))}`;
    if (opts.keepOnFailure) failure += `\n  kept: ${work}`;
  }
  if (!failure || !opts.keepOnFailure) rmSync(work, { recursive: true, force: true });
  return result(!failure, ran, notRun, failure);
}

/** The output of the block the transcript ends in. */
function blockOutput(transcript: string): string {
  const at = transcript.lastIndexOf("\n──\n");
  return at < 0 ? transcript : transcript.slice(at + 4);
}

const indent = (s: string) =>
  s
    .trimEnd()
    .split("\n")
    .map((l) => `    ${l}`)
    .join("\n");

/** The binary to run: BUNKER_TEST_BINARY, or one built now into /tmp/bunker-guides/. */
export function guideBinary(): string {
  if (process.env.BUNKER_TEST_BINARY) return process.env.BUNKER_TEST_BINARY;
  const out = join(tmpdir(), "bunker-guides", "bunker");
  const built = spawnSync(process.execPath, [join(ROOT, "scripts/build.ts"), "--outfile", out], { cwd: ROOT, stdio: ["ignore", "inherit", "inherit"] });
  if (built.status !== 0) throw new Error("the build failed");
  return out;
}

export function requireJq(): void {
  if (spawnSync("jq", ["--version"]).status !== 0) throw new Error("jq is not installed: the guides capture values with it (apt-get install jq, brew install jq)");
}

if (import.meta.main) {
  requireJq();
  const files = process.argv.slice(2);
  const guides = files.length ? files : defaultGuides();
  const binary = guideBinary();
  const results: GuideResult[] = [];
  for (const file of guides) {
    console.log(`\n════ ${file}`);
    const r = await runGuide(file, { binary, keepOnFailure: true, onOutput: (t) => process.stdout.write(t) });
    results.push(r);
    if (r.failure) console.log(`\nFAILED ${r.failure}`);
  }
  console.log("\n════ summary");
  for (const r of results) {
    console.log(`${r.ok ? "pass" : "FAIL"}  ${r.file}: ${r.ran} blocks ran${r.notRun.length ? `, ${r.notRun.length} not run` : ""}`);
    for (const n of r.notRun) console.log(`        not run (line ${n.line}): ${n.reason}`);
  }
  process.exit(results.every((r) => r.ok) ? 0 : 1);
}
