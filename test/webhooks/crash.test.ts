// source-only: the Bunker processes here are children built from source (fixtures/crash-child.ts), and the sibling node is an in-process app whose deliveries the test runs and reads by hand
/**
 * Crash safety: a Bunker process is SIGKILLed while webhook deliveries are in flight and
 * restarted on the same data directory (the same node: its name is kept there). Every
 * emitted event must reach the receiver at least once (receivers dedupe on webhook-id):
 * nothing is lost, whatever was half done. The restarted node takes back the leases its
 * previous process died holding, so it finishes at once rather than after the lease.
 */
import { afterAll, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startTestApp } from "../helpers/app";
import { startReceiver } from "../helpers/http-receiver";
import { testDatabaseUrl } from "../helpers/engine";
import { until } from "../helpers/until";

const FIXTURE = join(import.meta.dir, "fixtures", "crash-child.ts");
const N = 200;
/** Far longer than the test: only a restart that takes its leases back can finish in time. */
const LEASE_MS = 10 * 60_000;
const dir = mkdtempSync(join(tmpdir(), "bunker-crash-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function spawnChild(mode: "first" | "second", receiverUrl: string) {
  return Bun.spawn([process.execPath, FIXTURE], {
    env: { ...process.env, DATA_DIR: dir, MODE: mode, N: String(N), RECEIVER_URL: receiverUrl, LEASE_MS: String(LEASE_MS) },
    stdout: "pipe",
    stderr: "pipe",
  });
}

test("SIGKILL mid-delivery, restart on the same data dir: every event arrives at least once", async () => {
  // Slow enough (real network time) that several deliveries are in flight at the kill.
  const rx = startReceiver(async () => {
    await Bun.sleep(15);
    return new Response("ok");
  });
  try {
    const first = spawnChild("first", `${rx.url}/hook`);
    await rx.waitForRequests(60, 30_000);
    first.kill("SIGKILL");
    await first.exited;
    expect(first.signalCode).toBe("SIGKILL");
    const atKill = rx.requests.length;
    expect(atKill).toBeLessThan(N); // it really died half way

    const ids: string[] = JSON.parse(readFileSync(join(dir, "ids.json"), "utf8"));
    expect(ids.length).toBe(N);
    // The state the crash left: work still queued in the outbox and/or deliveries.
    const db = new Database(join(dir, "bunker.db"), { readonly: true });
    const left = db.query<{ undispatched: number; pending: number; leased: number }, []>(
      `SELECT (SELECT COUNT(*) FROM core_events WHERE dispatched_at IS NULL) AS undispatched,
              (SELECT COUNT(*) FROM webhook_deliveries WHERE status = 'pending') AS pending,
              (SELECT COUNT(*) FROM webhook_deliveries WHERE status = 'pending' AND lease_until_ms IS NOT NULL) AS leased`,
    ).get()!;
    db.close();
    expect(left.undispatched + left.pending).toBeGreaterThan(0);
    expect(left.leased).toBeGreaterThan(0); // deliveries in flight at the kill, leased for LEASE_MS

    const restartedAt = Date.now();
    const second = spawnChild("second", `${rx.url}/hook`);
    const code = await second.exited;
    expect(Date.now() - restartedAt).toBeLessThan(20_000);
    const out = await new Response(second.stdout).text();
    const err = await new Response(second.stderr).text();
    expect({ code, err }).toEqual({ code: 0, err: "" });
    expect(out).toContain("done");

    const received = rx.requests.map((r) => r.headers["webhook-id"]);
    const unique = new Set(received);
    expect(ids.filter((id) => !unique.has(id))).toEqual([]); // none lost
    expect(unique.size).toBe(N);
    // At-least-once: a delivery in flight at the kill may arrive twice, never more than that.
    const duplicates = received.length - unique.size;
    expect(duplicates).toBeLessThanOrEqual(8 + left.leased);
    console.log(`crash test: ${atKill} received before the kill (${left.leased} leased, ${left.pending} pending, ${left.undispatched} undispatched), ${received.length} total, ${duplicates} duplicates`);

    const after = new Database(join(dir, "bunker.db"), { readonly: true });
    const statuses = after.query<{ status: string; n: number }, []>("SELECT status, COUNT(*) AS n FROM webhook_deliveries GROUP BY status").all();
    after.close();
    expect(statuses).toEqual([{ status: "delivered", n: N }]);
  } finally {
    await rx.stop();
  }
}, 60_000);

/**
 * A node starting beside a live one on the same database (and the same DATA_DIR, as
 * PostgreSQL nodes may share it for objects) takes none of the live node's leases: with its
 * own NODE_ID, or without one (the second live process on a DATA_DIR gets a name of its own).
 */
for (const sibling of [{ NODE_ID: "node-b" }, {}] as Record<string, string>[]) {
  test(`a sibling node starting ${sibling.NODE_ID ? "with its own NODE_ID" : "on the same DATA_DIR without NODE_ID"} leaves the live node's deliveries alone`, async () => {
    const siblingDir = mkdtempSync(join(tmpdir(), "bunker-sibling-"));
    const databaseUrl = await testDatabaseUrl();
    const release = Promise.withResolvers<void>();
    const rx = startReceiver(async () => {
      await release.promise; // the live node's deliveries stay in flight
      return new Response("ok");
    });
    const live = Bun.spawn([process.execPath, FIXTURE], {
      env: {
        ...process.env,
        DATA_DIR: siblingDir,
        MODE: "first",
        N: "4",
        RECEIVER_URL: `${rx.url}/hook`,
        LEASE_MS: String(LEASE_MS),
        ...(sibling.NODE_ID ? { NODE_ID: "node-a" } : {}),
        ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
      },
      stdout: "ignore",
      stderr: "inherit",
    });
    try {
      await rx.waitForRequests(4, 30_000);
      const b = await startTestApp({ ...sibling, ALLOW_PRIVATE_TARGETS: "true", ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}) }, siblingDir);
      try {
        b.clock.set(Date.now()); // the live node's leases are judged on the same clock it took them on
        const leased = async () =>
          (await b.ctx.db.get<{ n: number }>("SELECT COUNT(*) AS n FROM webhook_deliveries WHERE status = 'pending' AND lease_until_ms IS NOT NULL"))!.n;
        expect(await leased()).toBe(4);
        expect(await b.webhooks.deliverDue()).toEqual({ attempted: 0, delivered: 0, failed: 0 });
        expect(await leased()).toBe(4);
        expect(rx.requests.length).toBe(4);
        release.resolve();
        await until("the live node recording its deliveries", async () => (await leased()) === 0);
        expect(new Set(rx.requests.map((r) => r.headers["webhook-id"])).size).toBe(4);
        expect(rx.requests.length).toBe(4);
      } finally {
        await b.stop();
      }
    } finally {
      release.resolve();
      live.kill("SIGKILL");
      await live.exited;
      await rx.stop();
      rmSync(siblingDir, { recursive: true, force: true });
    }
  }, 60_000);
}
