#!/usr/bin/env bun
/**
 * Bunker CLI. `bunker` (or `bunker serve`) runs the server; `migrate`, `backup`,
 * `restore` and `version` are the maintenance commands. Problems an operator must fix
 * (bad configuration, unusable DATA_DIR, DATA_DIR in use by another process, wrong master
 * key, port in use) end the process with one line on stderr, never a stack trace.
 */
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { ConfigError, loadConfig, type Config } from "./config";
import { settingsOf } from "./kernel/module";
import type { Settings } from "./settings";
import { listenCommand } from "./cli/listen";
import { createBackup, restoreBackup } from "./core/backup";
import { lockDataDir } from "./core/data-dir-lock";
import { openDatabase } from "./core/db";
import { createLogger } from "./core/log";
import { raiseOpenFileLimit } from "./core/open-files";
import { SmtpListener } from "./core/smtp-listener";
import { ensureWritableDir, reason, StartupError } from "./core/startup";
import { VERSION } from "./version";

const USAGE = `Usage: bunker [command]

Commands:
  serve                                      Run the server (default)
  migrate                                    Apply pending database migrations and exit
  backup <dir> [--force] [--include-key]     Write a restorable backup (database snapshot, objects;
                                             the master key only with --include-key) to the new
                                             directory <dir>; --force replaces an existing one
  restore <backup> [--force]                 Restore a backup into an empty DATA_DIR; --force
                                             replaces what DATA_DIR holds (stop the server first)
  version                                    Print the version
  healthcheck                                GET /healthz of the local server; exit 0 when healthy, 1 otherwise
  listen --secret whsec_... [--port 9000]    For development: receive webhooks on loopback, verify their
         [--host 127.0.0.1] [--count N]      signatures and print them (bunker listen --help)
`;

function fail(message: string, code = 1): never {
  console.error(message);
  process.exit(code);
}

/**
 * The configuration, or exit 2 with every problem. `modules`: the service modules' settings
 * declarations (serve passes them all); without them only the kernel's settings are read, so
 * the commands that do not load the app stay fast and a module's setting is not theirs to refuse.
 */
function config(modules: Readonly<Record<string, Settings>> = {}): Config {
  try {
    return loadConfig(process.env, modules);
  } catch (e) {
    if (e instanceof ConfigError) fail(e.message, 2);
    throw e;
  }
}

/** Runs a start-up step; a StartupError becomes its one-line message and exit 1, a ConfigError exit 2. */
async function startup<T>(step: () => T | Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (e) {
    if (e instanceof StartupError) fail(e.message);
    // e.g. DEFAULT_SERVICES names, checked by createApp against the service modules.
    if (e instanceof ConfigError) fail(e.message, 2);
    throw e;
  }
}

const cannotListen = (what: string, host: string, port: number, setting: string, e: unknown) =>
  (e as { code?: string })?.code === "EADDRINUSE"
    ? `cannot listen for ${what} on ${host}:${port}: the port is already in use (another Bunker?). Stop it, or set ${setting}`
    : `cannot listen for ${what} on ${host}:${port}: ${reason(e)} (set ${setting})`;

/** What the HTTP port answers while the app is being built (database, migrations, master key). */
function starting(): Response {
  return Response.json(
    { error: { code: "SERVICE_UNAVAILABLE", message: "Bunker is starting; retry in a moment" } },
    // Connection: close, so no client keeps a connection to this placeholder past the swap.
    { status: 503, headers: { "retry-after": "1", connection: "close" } },
  );
}

async function serve() {
  // The app (every service and the libraries they use) is loaded only by the commands that
  // serve it: version, backup, restore, healthcheck and listen start without it. Serve loads it
  // first, so its modules' settings are checked with the kernel's, in one list.
  const { createApp, SERVICE_MODULES } = await import("./app");
  const cfg = config(settingsOf(SERVICE_MODULES));
  const log = createLogger(cfg.logLevel);
  // Before any socket: every connection is a file handle.
  const files = raiseOpenFileLimit();

  let tls: { cert: Buffer; key: Buffer } | null = null;
  if (cfg.smtpPort !== null && cfg.smtpTlsCert && cfg.smtpTlsKey) {
    try {
      tls = { cert: readFileSync(cfg.smtpTlsCert), key: readFileSync(cfg.smtpTlsKey) };
    } catch (e) {
      fail(`Cannot read SMTP_TLS_CERT / SMTP_TLS_KEY: ${(e as Error).message}`);
    }
  }

  // Both ports are bound before DATA_DIR is touched: an instance refused for a taken port
  // leaves no database, master key or lock file behind (an operator who mistyped PORT
  // must not find a fresh, empty bunker.db where they meant to point at their real one).
  // reusePort off, as in bunker.listen: a taken port must fail to bind, not be shared.
  let held: ReturnType<typeof Bun.serve>;
  try {
    held = Bun.serve({ port: cfg.port, hostname: cfg.host, reusePort: false, fetch: starting });
  } catch (e) {
    fail(cannotListen("HTTP", cfg.host, cfg.port, "PORT", e));
  }

  // Inbound SMTP (MX). Until the mail service registers its handler, every RCPT gets 550.
  let smtp: SmtpListener | null = null;
  if (cfg.smtpPort === null) {
    log.info("inbound SMTP is off (SMTP_PORT=off)");
  } else {
    smtp = new SmtpListener({
      port: cfg.smtpPort,
      host: cfg.host,
      log: log.child({ component: "smtp" }),
      name: cfg.mailHostname,
      maxBytes: cfg.smtpMaxMessageBytes,
      maxConnectionsPerIp: cfg.smtpMaxConnectionsPerIp,
      socketTimeoutMs: cfg.smtpIdleTimeoutMs,
      tls,
    });
    try {
      await smtp.start();
    } catch (e) {
      // An MX that silently is not listening loses mail: refuse to run half-started.
      await held.stop(true);
      fail(cannotListen("SMTP", cfg.host, cfg.smtpPort, "SMTP_PORT, or SMTP_PORT=off", e));
    }
  }

  // Held for the life of the process: the shutdown handler below keeps the reference (an
  // unreachable lock would be closed by the garbage collector, and the lock freed with it).
  const lock = cfg.databaseUrl ? null : await startup(() => lockDataDir(cfg.dataDir));
  const bunker = await startup(() => createApp(cfg, { log }));
  const { ctx } = bunker;
  if (smtp && bunker.inbound) smtp.setHandler(bunker.inbound);

  // Start-up finishes before the app takes the port: until then the placeholder answers
  // /healthz with 503, so a 200 means the BUNKER_ADMIN_* operator exists and jobs run.
  const boot = await bunker.platform.setup.bootstrap();
  if (boot?.created) ctx.log.info("operator account created from BUNKER_ADMIN_EMAIL", { account_id: boot.created });
  if (boot?.warning) ctx.log.warn(boot.warning);
  if (boot?.setupUrl) {
    // Printed plainly as well as logged: this is the one thing a first-time operator must see.
    console.log(`\n  Bunker has no operator account yet. Create it here (valid until it is used or the server restarts):\n\n    ${boot.setupUrl}\n\n  (API: POST ${cfg.publicUrl}/platform/v1/auth/setup with the token after #setup=)\n`);
    ctx.log.info("setup link issued", { setup_url: boot.setupUrl });
  }
  ctx.scheduler.start();

  // The placeholder gives way to the app. Elysia's listen (behind bunker.listen) creates its
  // own Bun.serve, and Bun cannot hand a bound socket to another server: reload() swaps the
  // handler but keeps maxRequestBodySize, and bypassing listen would skip Elysia's native
  // routes and the server that handlers read client addresses from. So the placeholder is
  // closed and the app bound right after, in one synchronous step: the port is free only
  // while listen compiles the router (tens of milliseconds; connections are refused then,
  // as before any start), not for the whole start-up. Should another process take the port
  // in that instant, this one refuses as for any taken port.
  const port = held.port ?? cfg.port;
  // Start-up is mostly synchronous (SQLite), so requests that came in meanwhile are still
  // waiting: one turn of the event loop lets the placeholder answer them (503, Retry-After)
  // instead of their connections being cut.
  await new Promise((done) => setImmediate(done));
  const placeholderClosed = held.stop(true); // the socket is closed now; connections follow
  let server: ReturnType<typeof bunker.listen>;
  try {
    server = bunker.listen(port, cfg.host);
  } catch (e) {
    await smtp?.stop();
    await bunker.stop();
    fail(cannotListen("HTTP", cfg.host, port, "PORT", e));
  }
  await placeholderClosed;

  ctx.metrics.startLoopMonitor();
  ctx.log.info("bunker listening", { url: `http://${cfg.host}:${server.port}`, public_url: cfg.publicUrl, data_dir: cfg.dataDir, database: ctx.db.location, version: VERSION, open_files: files?.limit ?? null });
  if (files && files.limit < 4096) ctx.log.warn("the open-file limit is low: each connection takes one (raise LimitNOFILE or ulimit -n)", { open_files: files.limit });

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    ctx.log.info("shutting down", { signal });
    // Stop accepting; in-flight requests get SHUTDOWN_GRACE_MS (10 s) to finish, then open
    // connections are closed: a client trickling a body, or an idle keep-alive holding an
    // unread one, must not keep the process past an orchestrator's kill timer.
    const drained = server.stop(false);
    const grace = new Promise<void>((done) => setTimeout(done, cfg.shutdownGraceMs).unref());
    await Promise.all([Promise.race([drained, grace.then(() => server.stop(true))]), smtp?.stop()]);
    await bunker.stop();
    lock?.release();
    ctx.log.info("stopped");
    process.exit(0);
  };
  process.on("SIGTERM", () => void shutdown("SIGTERM"));
  process.on("SIGINT", () => void shutdown("SIGINT"));
}

/** Positional arguments and --flags; an unknown flag is a usage error. */
function parseArgs(args: string[], flags: string[]) {
  const positional = args.filter((a) => !a.startsWith("--"));
  const given = new Set(args.filter((a) => a.startsWith("--")));
  for (const f of given) if (!flags.includes(f)) fail(`unknown option ${f}\n\n${USAGE}`, 2);
  return { positional, has: (f: string) => given.has(f) };
}

/**
 * backup/restore copy the SQLite file and the local objects folder. On PostgreSQL the
 * database is the operator's own: its tools make a consistent copy, and pretending to back
 * it up from one node would be wrong.
 */
function refuseOnPostgres(cfg: Config, cmd: "backup" | "restore"): void {
  if (!cfg.databaseUrl) return;
  fail(
    cmd === "backup"
      ? "bunker backup copies the embedded SQLite database; DATABASE_URL is PostgreSQL. Back it up with PostgreSQL's tools:\n" +
          '  pg_dump --format=custom --file=bunker.dump "$DATABASE_URL"\n' +
          "and copy the object store (S3 bucket or DATA_DIR/objects) and the master key (MASTER_KEY) alongside."
      : "bunker restore writes the embedded SQLite database; DATABASE_URL is PostgreSQL. Restore with PostgreSQL's tools, into an empty database created with ENCODING 'UTF8' LOCALE 'C':\n" +
          '  pg_restore --no-owner --dbname="$DATABASE_URL" bunker.dump\n' +
          "then put the object store back and start the nodes with the same MASTER_KEY.",
    2,
  );
}

async function backupCommand(args: string[]) {
  const { positional, has } = parseArgs(args, ["--force", "--include-key"]);
  if (positional.length !== 1) fail("backup needs one target directory: bunker backup <dir> [--force] [--include-key]", 2);
  const cfg = config();
  refuseOnPostgres(cfg, "backup");
  const target = resolve(positional[0]);
  console.log(`backing up ${cfg.dataDir} to ${target}`);
  await startup(() =>
    createBackup(target, cfg, { includeKey: has("--include-key"), force: has("--force"), version: VERSION, now: new Date(), progress: (l) => console.log(`  ${l}`) }),
  );
  console.log(`backup complete: ${target}`);
}

async function restoreCommand(args: string[]) {
  const { positional, has } = parseArgs(args, ["--force"]);
  if (positional.length !== 1) fail("restore needs the backup to restore: bunker restore <backup> [--force]", 2);
  const cfg = config();
  refuseOnPostgres(cfg, "restore");
  const source = resolve(positional[0]);
  // A running server would keep serving (and writing) the database this replaces.
  const lock = await startup(() => lockDataDir(cfg.dataDir, "stop the server first"));
  console.log(`restoring ${source} into ${cfg.dataDir}`);
  const { keyMatches } = await startup(() => restoreBackup(source, cfg, { force: has("--force"), progress: (l) => console.log(`  ${l}`) }));
  lock.release();
  console.log(keyMatches === false ? "restore complete, but the master key does not match: see above" : "restore complete: start the server with this DATA_DIR");
  if (keyMatches === false) process.exit(1);
}

/** For container HEALTHCHECKs (distroless has no curl): GET /healthz on this machine. */
async function healthcheck() {
  const cfg = config();
  const wildcard = ["0.0.0.0", "::", "[::]", ""].includes(cfg.host);
  const host = wildcard ? "127.0.0.1" : cfg.host.includes(":") && !cfg.host.startsWith("[") ? `[${cfg.host}]` : cfg.host;
  const url = `http://${host}:${cfg.port}/healthz`;
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(3000) });
    if (res.ok) {
      console.log(`healthy: ${url}`);
      process.exit(0);
    }
    console.error(`unhealthy: ${url} answered ${res.status}`);
  } catch (e) {
    console.error(`unhealthy: ${url}: ${(e as Error).message}`);
  }
  process.exit(1);
}

async function main(argv: string[]) {
  const [cmd = "serve", ...rest] = argv;
  switch (cmd) {
    case "serve":
      return serve();
    case "migrate": {
      const cfg = config();
      await startup(() => ensureWritableDir(cfg.dataDir));
      // Migrating the SQLite file under a running server would change its schema beneath it.
      const lock = cfg.databaseUrl ? null : await startup(() => lockDataDir(cfg.dataDir, "stop it first"));
      // The schema is what the modules declare: migrate loads the app's module list.
      const { MIGRATIONS } = await import("./app");
      const db = await startup(() => openDatabase(cfg, MIGRATIONS));
      const applied = db.migrated;
      console.log(applied.length ? `applied ${applied.length} migration(s) to ${db.location}: ${applied.join(", ")}` : `database is up to date (${db.location})`);
      await db.close();
      lock?.release();
      return;
    }
    case "backup":
      return backupCommand(rest);
    case "restore":
      return restoreCommand(rest);
    case "healthcheck":
      return healthcheck();
    case "listen":
      return listenCommand(rest);
    case "version":
    case "--version":
      console.log(VERSION);
      return;
    case "help":
    case "--help":
    case "-h":
      console.log(USAGE);
      return;
    default:
      console.error(`unknown command: ${cmd}\n\n${USAGE}`);
      process.exit(2);
  }
}

await main(process.argv.slice(2));
