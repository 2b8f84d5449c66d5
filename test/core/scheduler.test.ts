import { afterEach, expect, test } from "bun:test";
import { ManualClock } from "../../src/core/clock";
import { createLogger } from "../../src/core/log";
import { Metrics } from "../../src/core/metrics";
import { Scheduler } from "../../src/core/scheduler";
import { claimTick, tickClaims } from "../../src/core/store/job-ticks";
import { freshDb } from "../helpers/db";

const schedulers: Scheduler[] = [];
afterEach(async () => {
  await Promise.all(schedulers.splice(0).map((s) => s.stop()));
});

function setup() {
  const lines: Record<string, unknown>[] = [];
  const log = createLogger("debug", {}, (l) => lines.push(JSON.parse(l)));
  const metrics = new Metrics();
  const clock = new ManualClock(Date.parse("2030-01-01T00:00:00Z"));
  const scheduler = new Scheduler(log, metrics, clock);
  schedulers.push(scheduler);
  return { scheduler, metrics, lines, clock };
}

/** A gate a job waits on, so the test decides when it finishes. */
function gate() {
  const { promise, resolve } = Promise.withResolvers<void>();
  return { wait: () => promise, open: () => resolve() };
}

test("runNow runs the job, records last run and counts the outcome", async () => {
  const { scheduler, metrics } = setup();
  let runs = 0;
  scheduler.register({ name: "count", schedule: "0 0 * * *", run: () => void runs++ });
  expect(scheduler.list()).toEqual([{ name: "count", schedule: "0 0 * * *", running: false, lastRunAt: null, lastError: null }]);
  await scheduler.runNow("count");
  await scheduler.runNow("count");
  expect(runs).toBe(2);
  expect(scheduler.list()[0]).toMatchObject({ running: false, lastRunAt: "2030-01-01T00:00:00.000Z", lastError: null });
  expect(await metrics.render()).toContain('bunker_job_runs_total{job="count",outcome="ok"} 2');
});

test("a failing job is logged, counted and reported by runNow without breaking the scheduler", async () => {
  const { scheduler, metrics, lines } = setup();
  let fail = true;
  scheduler.register({
    name: "flaky",
    schedule: "0 0 * * *",
    run: async () => {
      if (fail) throw new Error("relay unreachable");
    },
  });
  await expect(scheduler.runNow("flaky")).rejects.toThrow("relay unreachable");
  expect(scheduler.list()[0].lastError).toBe("relay unreachable");
  expect(await metrics.render()).toContain('bunker_job_runs_total{job="flaky",outcome="error"} 1');
  expect(lines.some((l) => l.level === "error" && l.job === "flaky" && l.error === "relay unreachable")).toBe(true);
  fail = false;
  await scheduler.runNow("flaky");
  expect(scheduler.list()[0].lastError).toBeNull();
  expect(await metrics.render()).toContain('bunker_job_runs_total{job="flaky",outcome="ok"} 1');
});

test("a job that meets a busy database warns once per outage, without a stack; the first good run says it is back", async () => {
  const { scheduler, lines } = setup();
  let busy = true;
  scheduler.register({
    name: "pump",
    schedule: "0 0 * * *",
    run: async () => {
      if (busy) throw Object.assign(new Error("database is locked"), { code: "SQLITE_BUSY" });
    },
  });
  for (let i = 0; i < 5; i++) await expect(scheduler.runNow("pump")).rejects.toThrow("database is locked");
  const about = () => lines.filter((l) => l.job === "pump" && l.level !== "debug");
  expect(about().map((l) => l.level)).toEqual(["warn"]);
  expect(about()[0].stack).toBeUndefined();
  busy = false;
  await scheduler.runNow("pump");
  expect(about().map((l) => l.level)).toEqual(["warn", "info"]);
  busy = true;
  await expect(scheduler.runNow("pump")).rejects.toThrow();
  expect(about().map((l) => l.level)).toEqual(["warn", "info", "warn"]);
});

test("runNow never overlaps a run in progress: callers during a run share one follow-up run", async () => {
  const { scheduler } = setup();
  let active = 0;
  let maxActive = 0;
  let runs = 0;
  const gates = [gate(), gate()];
  scheduler.register({
    name: "slow",
    schedule: "0 0 * * *",
    run: async () => {
      const g = gates[runs++];
      active++;
      maxActive = Math.max(maxActive, active);
      await g?.wait();
      active--;
    },
  });
  const first = scheduler.runNow("slow");
  expect(scheduler.list()[0].running).toBe(true);
  const second = scheduler.runNow("slow");
  const third = scheduler.runNow("slow");
  await Bun.sleep(10);
  expect(runs).toBe(1); // the follow-up waits for the first run
  gates[0].open();
  await first;
  await Bun.sleep(0);
  expect(runs).toBe(2);
  expect(scheduler.list()[0].running).toBe(true);
  gates[1].open();
  await Promise.all([second, third]);
  expect(runs).toBe(2);
  expect(maxActive).toBe(1);
  expect(scheduler.list()[0].running).toBe(false);
});

test("unknown jobs, duplicate names and bad patterns are refused", async () => {
  const { scheduler } = setup();
  await expect(scheduler.runNow("nope")).rejects.toMatchObject({ status: 404, code: "NOT_FOUND" });
  scheduler.register({ name: "a", schedule: "* * * * *", run: () => {} });
  expect(() => scheduler.register({ name: "a", schedule: "* * * * *", run: () => {} })).toThrow("already registered");
  expect(() => scheduler.register({ name: "b", schedule: "not a cron", run: () => {} })).toThrow("invalid schedule");
  expect(scheduler.list().map((j) => j.name)).toEqual(["a"]);
});

// The one test that waits on real timers: it checks croner actually fires the job and
// that ticks arriving while a run is in progress are skipped, then that stop() waits.
test("scheduled ticks fire, skip while busy, and stop() waits for the run in progress", async () => {
  const { scheduler } = setup();
  const g = gate();
  let starts = 0;
  let finished = false;
  scheduler.register({
    name: "every-second",
    schedule: "* * * * * *",
    run: async () => {
      starts++;
      await g.wait();
      finished = true;
    },
  });
  expect(scheduler.isRunning()).toBe(false);
  scheduler.start();
  expect(scheduler.isRunning()).toBe(true);
  const deadline = Date.now() + 3000;
  while (starts === 0 && Date.now() < deadline) await Bun.sleep(20);
  expect(starts).toBe(1);
  await Bun.sleep(2200); // two more ticks pass while the run is blocked
  expect(starts).toBe(1);
  const stopping = scheduler.stop();
  let stopped = false;
  void stopping.then(() => (stopped = true));
  await Bun.sleep(20);
  expect(stopped).toBe(false); // still waiting for the blocked run
  g.open();
  await stopping;
  expect(finished).toBe(true);
  expect(scheduler.isRunning()).toBe(false);
  await Bun.sleep(1100);
  expect(starts).toBe(1); // no tick after stop
});

// Real timers too: two nodes (schedulers) sharing one database, as on PostgreSQL.
test("with shared ticks, each scheduled tick runs on one node only; runNow is not claimed", async () => {
  const { db } = await freshDb();
  const won: { node: string; tickAt: string }[] = [];
  let lost = 0;
  const runs: string[] = [];
  const nodes = ["n1", "n2"].map((node) => {
    const { scheduler } = setup();
    scheduler.shareTicks(async (job, tickAt) => {
      const mine = await claimTick(db, job, tickAt, node, new Date().toISOString());
      if (mine) won.push({ node, tickAt });
      else lost++;
      return mine;
    });
    scheduler.register({ name: "sweep", schedule: "* * * * * *", run: () => void runs.push(node) });
    return scheduler;
  });
  for (const s of nodes) s.start();
  await Bun.sleep(2600);
  for (const s of nodes) await s.stop();
  await Bun.sleep(100); // a claim in flight at stop() settles (and does not run)
  expect(won.length).toBeGreaterThanOrEqual(2);
  expect(lost).toBeGreaterThanOrEqual(1); // both nodes asked for the same ticks ...
  const ticks = won.map((w) => w.tickAt);
  expect(new Set(ticks).size).toBe(ticks.length); // ... and each tick went to one of them
  expect(runs.length).toBeGreaterThanOrEqual(2);
  expect(runs.length).toBeLessThanOrEqual(won.length); // no run without a claim
  const [claim] = await tickClaims(db, "sweep");
  expect(claim).toEqual({ tick_at: ticks.sort().at(-1)!, node: won.find((w) => w.tickAt === ticks.at(-1))!.node });

  const before = runs.length;
  await nodes[0]!.runNow("sweep");
  await nodes[1]!.runNow("sweep");
  expect(runs.length).toBe(before + 2);
  await db.close();
});
