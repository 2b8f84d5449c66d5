/**
 * A throwaway PostgreSQL cluster for tests and CI: `initdb` into a temp folder, `postgres`
 * on a free loopback port with its unix socket in that folder, trust auth for one throwaway
 * superuser and fsync off. Nothing is installed as a service and nothing outlives stop():
 * the server is shut down and the folder deleted.
 *
 * initdb refuses to run as root, so under root (CI containers) the cluster belongs to an
 * unprivileged OS user (`postgres`, which Debian's package creates, else `nobody`) and both
 * programs run through `runuser`.
 */
import { SQL } from "bun";
import { spawnSync } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** What a machine without PostgreSQL must install (CI does it in .ci/run). */
export const PG_PACKAGE = "postgresql-15";
const USER = "bunker";
const START_TIMEOUT_MS = 15_000;

export interface PgCluster {
  /** DATABASE_URL of the cluster's default database (`postgres`). */
  url: string;
  port: number;
  dir: string;
  /** A new empty database (UTF-8, C collation, as Bunker requires); returns its URL. With `template`, a copy of that database. */
  createDatabase(name: string, template?: string): Promise<string>;
  /** Stops the server and deletes the folder. Safe to call twice. */
  stop(): Promise<void>;
}

export interface PgBinSearch {
  /** PG_BINDIR, when set, is the only place looked at (a wrong value is an error, not a fallback). */
  env?: Record<string, string | undefined>;
  /** Folders tried after `pg_config --bindir`; the newest /usr/lib/postgresql/<v>/bin by default. */
  candidates?: string[];
  /** PATH to search for initdb last. */
  path?: string;
}

/** The folder holding initdb and postgres, or an error naming the package to install. */
export function findPgBinDir(search: PgBinSearch = {}): string {
  const env = search.env ?? process.env;
  const has = (dir: string) => existsSync(join(dir, "initdb")) && existsSync(join(dir, "postgres"));
  const missing = (where: string) =>
    new Error(
      `PostgreSQL server binaries (initdb, postgres) not found ${where}. ` +
        `Install the Debian package ${PG_PACKAGE} (apt-get install -y ${PG_PACKAGE}; .ci/run does this), or set PG_BINDIR.`,
    );
  if (env.PG_BINDIR) {
    if (has(env.PG_BINDIR)) return env.PG_BINDIR;
    throw missing(`in PG_BINDIR=${env.PG_BINDIR}`);
  }
  const candidates = search.candidates ?? [pgConfigBinDir(), ...debianBinDirs()].filter((d): d is string => !!d);
  for (const dir of candidates) if (has(dir)) return dir;
  for (const dir of (search.path ?? env.PATH ?? "").split(":")) if (dir && has(dir)) return dir;
  throw missing("(looked at pg_config --bindir, /usr/lib/postgresql/*/bin and PATH)");
}

function pgConfigBinDir(): string | null {
  const r = spawnSync("pg_config", ["--bindir"], { encoding: "utf8" });
  return r.status === 0 ? r.stdout.trim() : null;
}

function debianBinDirs(): string[] {
  const root = "/usr/lib/postgresql";
  if (!existsSync(root)) return [];
  return readdirSync(root)
    .filter((v) => /^\d+$/.test(v))
    .sort((a, b) => Number(b) - Number(a))
    .map((v) => join(root, v, "bin"));
}

/** The OS user the cluster runs as when we are root; null when we are not. */
function clusterOsUser(): { name: string; uid: number; gid: number } | null {
  if (process.getuid?.() !== 0) return null;
  for (const name of ["postgres", "nobody"]) {
    const uid = spawnSync("id", ["-u", name], { encoding: "utf8" });
    const gid = spawnSync("id", ["-g", name], { encoding: "utf8" });
    if (uid.status === 0 && gid.status === 0) return { name, uid: Number(uid.stdout), gid: Number(gid.stdout) };
  }
  throw new Error("running as root and no unprivileged OS user (postgres, nobody) to own the PostgreSQL cluster");
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

export async function startPgCluster(): Promise<PgCluster> {
  const bin = findPgBinDir();
  const osUser = clusterOsUser();
  const dir = mkdtempSync(join(tmpdir(), "bunker-pg-"));
  const data = join(dir, "data");
  if (osUser) chownSync(dir, osUser.uid, osUser.gid);
  const asUser = (cmd: string[]) => (osUser ? ["runuser", "-u", osUser.name, "--", ...cmd] : cmd);

  let server: ReturnType<typeof Bun.spawn> | null = null;
  let watchdog: ReturnType<typeof Bun.spawn> | null = null;
  let stopped = false;
  // A test runner that exits without stop() (uncaught error) must not leave a server behind
  // (exit handlers run synchronously: immediate shutdown, a busy wait for it, then the folder).
  const killOnExit = () => {
    const pid = postmasterPid(data);
    signal(pid, "SIGQUIT");
    const deadline = Date.now() + 3_000;
    while (pid && isAlive(pid) && Date.now() < deadline) Bun.sleepSync(10);
    rmSync(dir, { recursive: true, force: true });
  };
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    process.off("exit", killOnExit);
    watchdog?.kill();
    const pid = postmasterPid(data);
    if (pid) {
      signal(pid, "SIGINT"); // fast shutdown: open sessions are aborted
      const deadline = Date.now() + 10_000;
      while (isAlive(pid) && Date.now() < deadline) await Bun.sleep(20);
      signal(pid, "SIGKILL");
    }
    await server?.exited;
    rmSync(dir, { recursive: true, force: true });
  };

  try {
    // -N: initdb need not fsync what we delete in a minute. C collation: Bunker's text
    // ordering is byte order, as in SQLite (src/core/store/migrate-pg.ts refuses anything else).
    const [initCmd, ...initArgs] = asUser([join(bin, "initdb"), "-D", data, "-U", USER, "--auth=trust", "-E", "UTF8", "--locale=C", "-N"]);
    const init = spawnSync(initCmd!, initArgs, { encoding: "utf8" });
    if (init.status !== 0) throw new Error(`initdb failed (${init.status}): ${init.stderr || init.stdout}`);

    // The free port may be taken between probe and bind; try a few.
    for (let attempt = 1; ; attempt++) {
      const port = await freePort();
      const settings = {
        port: String(port),
        listen_addresses: "127.0.0.1",
        unix_socket_directories: dir,
        fsync: "off",
        synchronous_commit: "off",
        full_page_writes: "off",
        max_connections: "400",
        log_min_messages: "warning",
      };
      const args = Object.entries(settings).flatMap(([k, v]) => ["-c", `${k}=${v}`]);
      // The server's log goes to a file (a pipe nobody drains would block it when full).
      const log = join(dir, `server-${attempt}.log`);
      server = Bun.spawn(asUser([join(bin, "postgres"), "-D", data, ...args]), { stdout: "ignore", stderr: Bun.file(log) });
      process.on("exit", killOnExit);
      const ready = await waitReady(data, server, log);
      if (ready === true) {
        watchdog = startWatchdog(dir, data);
        const url = `postgres://${USER}@127.0.0.1:${port}/postgres`;
        const createDatabase = async (name: string, template = "template0") => {
          if (!/^[a-z_][a-z0-9_]*$/.test(name) || !/^[a-z_][a-z0-9_]*$/.test(template)) throw new Error(`invalid database name ${name}`);
          const sql = new SQL(url, { max: 1 });
          try {
            await sql.unsafe(`CREATE DATABASE ${name} TEMPLATE ${template} ENCODING 'UTF8' LOCALE 'C'`);
          } finally {
            await sql.close();
          }
          return `postgres://${USER}@127.0.0.1:${port}/${name}`;
        };
        return { url, port, dir, createDatabase, stop };
      }
      process.off("exit", killOnExit);
      await server.exited;
      if (attempt >= 3 || !/could not (bind|create).*socket|address already in use/i.test(ready)) {
        throw new Error(`postgres did not start: ${ready}`);
      }
    }
  } catch (err) {
    await stop();
    throw err;
  }
}

/**
 * A shell that outlives this process and stops the cluster once it is gone. bun test (1.4.5)
 * runs no "exit" handlers, so a run that never calls stop() (the suite's shared cluster)
 * would leave a postmaster and its folder behind; a SIGKILLed runner would too.
 */
function startWatchdog(dir: string, data: string): ReturnType<typeof Bun.spawn> {
  const script = `while kill -0 ${process.pid} 2>/dev/null; do sleep 1; done
pid=$(head -n 1 "${data}/postmaster.pid" 2>/dev/null)
if [ -n "$pid" ]; then kill -QUIT "$pid" 2>/dev/null; for i in 1 2 3 4 5 6 7 8 9 10; do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done; kill -KILL "$pid" 2>/dev/null; fi
rm -rf "${dir}"`;
  const w = Bun.spawn(["sh", "-c", script], { stdio: ["ignore", "ignore", "ignore"] });
  w.unref();
  return w;
}

/** true once postmaster.pid says "ready"; the server's stderr when it exited or timed out. */
async function waitReady(data: string, server: ReturnType<typeof Bun.spawn>, log: string): Promise<true | string> {
  let exited = false;
  void server.exited.then(() => (exited = true));
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (!exited && Date.now() < deadline) {
    // Line 8 of postmaster.pid is the postmaster's status (PostgreSQL >= 10).
    const status = readLines(join(data, "postmaster.pid"))[7]?.trim();
    if (status === "ready") return true;
    await Bun.sleep(25);
  }
  if (!exited) {
    // Under runuser the spawned process is runuser, not the postmaster: stop both.
    signal(postmasterPid(data), "SIGKILL");
    server.kill("SIGKILL");
  }
  const stderr = readLines(log).join("\n");
  return exited ? stderr.trim() || "exited without a message" : `not ready after ${START_TIMEOUT_MS} ms: ${stderr.trim()}`;
}

function postmasterPid(data: string): number | null {
  const pid = Number(readLines(join(data, "postmaster.pid"))[0]);
  return pid > 0 ? pid : null;
}

function readLines(path: string): string[] {
  try {
    return readFileSync(path, "utf8").split("\n");
  } catch {
    return [];
  }
}

/** Sends sig when pid is set and still there (it may have exited since its pid file was read). */
function signal(pid: number | null, sig: NodeJS.Signals) {
  if (pid && isAlive(pid)) {
    try {
      process.kill(pid, sig);
    } catch {
      // exited in between
    }
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
