#!/usr/bin/env bun
/**
 * Bunker CLI. `bunker` (or `bunker serve`) runs the server; `migrate`, `backup <file>`
 * and `version` are the maintenance commands.
 */
import { join, resolve } from "node:path";
import { VERSION, createApp } from "./app";
import { ConfigError, loadConfig, type Config } from "./config";
import { backup, migrate, openDb } from "./core/db";
import { SmtpListener } from "./core/smtp-listener";

const USAGE = `Usage: bunker [command]

Commands:
  serve            Run the server (default)
  migrate          Apply pending database migrations and exit
  backup <file>    Write a consistent copy of the live database to <file>
  version          Print the version
  healthcheck      GET /healthz of the local server; exit 0 when healthy, 1 otherwise
`;

/** A configuration problem ends the process with its message, no stack trace. */
function exitOnConfigError(e: unknown): never {
  if (e instanceof ConfigError) {
    console.error(e.message);
    process.exit(2);
  }
  throw e;
}

function config(): Config {
  try {
    return loadConfig();
  } catch (e) {
    return exitOnConfigError(e);
  }
}

async function serve() {
  const cfg = config();
  // DEFAULT_SERVICES names are checked against the service modules here.
  const bunker = await createApp(cfg).catch(exitOnConfigError);
  const { ctx } = bunker;
  const boot = await bunker.platform.setup.bootstrap();
  if (boot?.created) ctx.log.info("operator account created from BUNKER_ADMIN_EMAIL", { account_id: boot.created });
  if (boot?.setupUrl) {
    // Printed plainly as well as logged: this is the one thing a first-time operator must see.
    console.log(`\n  Bunker has no accounts yet. Create the operator account here (valid until it is used):\n\n    ${boot.setupUrl}\n`);
    ctx.log.info("setup link issued", { setup_url: boot.setupUrl });
  }
  const server = bunker.listen(cfg.port, cfg.host);
  ctx.scheduler.start();
  ctx.log.info("bunker listening", { url: `http://${cfg.host}:${server.port}`, public_url: cfg.publicUrl, data_dir: cfg.dataDir, version: VERSION });

  // Inbound SMTP (MX). Until the mail service registers its handler, every RCPT gets 550.
  const smtp = new SmtpListener({ port: cfg.smtpPort, host: cfg.host, log: ctx.log.child({ component: "smtp" }), name: new URL(cfg.publicUrl).hostname });
  if (bunker.inbound) smtp.setHandler(bunker.inbound);
  try {
    await smtp.start();
  } catch (e) {
    // An MX that silently is not listening loses mail: refuse to run half-started.
    ctx.log.error("cannot start the SMTP listener", { port: cfg.smtpPort, error: (e as Error).message });
    console.error(`cannot listen for SMTP on ${cfg.host}:${cfg.smtpPort}: ${(e as Error).message} (set SMTP_PORT)`);
    await server.stop(true);
    await bunker.stop();
    process.exit(1);
  }

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    ctx.log.info("shutting down", { signal });
    // Stop accepting; in-flight requests finish (no force).
    await Promise.all([server.stop(false), smtp.stop()]);
    await bunker.stop();
    ctx.log.info("stopped");
    process.exit(0);
  };
  process.on("SIGTERM", () => void shutdown("SIGTERM"));
  process.on("SIGINT", () => void shutdown("SIGINT"));
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
      const db = openDb(join(cfg.dataDir, "bunker.db"));
      const applied = migrate(db);
      console.log(applied.length ? `applied ${applied.length} migration(s): ${applied.join(", ")}` : "database is up to date");
      db.close();
      return;
    }
    case "backup": {
      if (!rest[0]) {
        console.error("backup needs a target file: bunker backup <file>");
        process.exit(2);
      }
      const cfg = config();
      const db = openDb(join(cfg.dataDir, "bunker.db"));
      const target = resolve(rest[0]);
      console.log(`backing up ${join(cfg.dataDir, "bunker.db")} to ${target} ...`);
      backup(db, target);
      db.close();
      console.log("backup complete");
      return;
    }
    case "healthcheck":
      return healthcheck();
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
