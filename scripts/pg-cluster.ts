/**
 * A throwaway local PostgreSQL for development and CI (test/helpers/pg-cluster.ts), with an
 * empty database `bunker` in it:
 *   bun scripts/pg-cluster.ts                 prints DATABASE_URL, runs until Ctrl-C
 *   bun scripts/pg-cluster.ts CMD ARGS...     runs CMD with DATABASE_URL set, exits with its status
 * Either way the server is stopped and its folder deleted at the end.
 */
import { startPgCluster } from "../test/helpers/pg-cluster";

// Bun drops a `--` after the script name itself; drop one if a wrapper passed it through.
const cmd = process.argv.slice(2);
if (cmd[0] === "--") cmd.shift();

const cluster = await startPgCluster();
const url = await cluster.createDatabase("bunker");

if (cmd.length > 0) {
  const child = Bun.spawn(cmd, { env: { ...process.env, DATABASE_URL: url }, stdio: ["inherit", "inherit", "inherit"] });
  const forward = (sig: NodeJS.Signals) => child.kill(sig);
  process.on("SIGINT", forward);
  process.on("SIGTERM", forward);
  const code = await child.exited;
  await cluster.stop();
  process.exit(code);
} else {
  console.log(`DATABASE_URL=${url}`);
  console.error("PostgreSQL is running; Ctrl-C stops it and deletes its folder.");
  const stop = async () => {
    await cluster.stop();
    process.exit(0);
  };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
}
