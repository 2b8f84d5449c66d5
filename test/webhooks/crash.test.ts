/**
 * Crash safety: a Bunker process is SIGKILLed while webhook deliveries are in flight and
 * restarted on the same data directory. Every emitted event must reach the receiver at least
 * once (receivers dedupe on webhook-id): nothing is lost, whatever was half done.
 */
import { afterAll, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startReceiver } from "../helpers/http-receiver";

const FIXTURE = join(import.meta.dir, "fixtures", "crash-child.ts");
const N = 200;
const dir = mkdtempSync(join(tmpdir(), "bunker-crash-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function spawnChild(mode: "first" | "second", receiverUrl: string) {
  return Bun.spawn([process.execPath, FIXTURE], {
    env: { ...process.env, DATA_DIR: dir, MODE: mode, N: String(N), RECEIVER_URL: receiverUrl, LEASE_MS: "1500" },
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

    const second = spawnChild("second", `${rx.url}/hook`);
    const code = await second.exited;
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
