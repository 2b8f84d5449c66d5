/** The throwaway cluster helper: finds the binaries or says what to install; leaves nothing behind. */
import { SQL } from "bun";
import { expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { findPgBinDir, PG_PACKAGE, startPgCluster } from "../helpers/pg-cluster";

test("without PostgreSQL binaries the error names the package to install", () => {
  const empty = mkdtempSync(join(tmpdir(), "bunker-nopg-"));
  expect(() => findPgBinDir({ env: {}, candidates: [empty], path: empty })).toThrow(
    `not found (looked at pg_config --bindir, /usr/lib/postgresql/*/bin and PATH). Install the Debian package ${PG_PACKAGE} (apt-get install -y ${PG_PACKAGE}; .ci/run does this), or set PG_BINDIR.`,
  );
  expect(() => findPgBinDir({ env: { PG_BINDIR: empty } })).toThrow(`not found in PG_BINDIR=${empty}. Install the Debian package ${PG_PACKAGE}`);
});

test("this machine has the binaries (CI installs them); a test never skips for want of them", () => {
  const dir = findPgBinDir();
  expect(existsSync(join(dir, "initdb"))).toBe(true);
});

test("a cluster answers on loopback, then stop() ends the server and deletes its folder", async () => {
  const cluster = await startPgCluster();
  const pid = Number(readFileSync(join(cluster.dir, "data", "postmaster.pid"), "utf8").split("\n")[0]);
  expect(cluster.url).toBe(`postgres://bunker@127.0.0.1:${cluster.port}/postgres`);
  const sql = new SQL(cluster.url, { max: 1 });
  const [row] = await sql`SELECT current_user AS who, current_setting('fsync') AS fsync, inet_server_addr()::text AS addr`;
  await sql.close();
  expect(row).toEqual({ who: "bunker", fsync: "off", addr: "127.0.0.1/32" });
  // No socket outside the cluster's own folder.
  expect(existsSync(join(cluster.dir, `.s.PGSQL.${cluster.port}`))).toBe(true);

  await cluster.stop();
  expect(existsSync(cluster.dir)).toBe(false);
  expect(() => process.kill(pid, 0)).toThrow();
  await cluster.stop(); // twice is harmless
}, 30_000);
