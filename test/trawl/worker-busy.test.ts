// source-only: builds the app with a log it reads (createApp's log option), runs the scheduler's job by hand (app.ctx.scheduler) and shortens SQLite's busy wait on the in-process writer
/**
 * The worker while another connection holds the database (SQLite: a long write by another
 * process; PostgreSQL: the jobs table locked and the waiting connections cut): scheduler ticks
 * warn once instead of failing every second, a run that finishes meanwhile keeps its outcome
 * and writes it once the database is back (the job is not run again).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createLogger } from "../../src/core/log";
import type { SqliteDb } from "../../src/core/store/sqlite";
import { ownerWithKey, startTestApp, type TestApp } from "../helpers/app";
import { testDatabaseUrl } from "../helpers/engine";
import { until } from "../helpers/until";
import { holdDatabase } from "../core/write-behind-hold";
import { startFixtureSite, type FixtureSite } from "./fixture-site";
import { base, createJob, runUntilFinal } from "./helpers";

const schema = { type: "object", properties: { name: { type: "string" }, price: { type: "number" } }, required: ["name"] };

let app: TestApp;
let site: FixtureSite;
let dbUrl: string | null;
const lines: { level: string; msg: string; job?: string }[] = [];
beforeAll(async () => {
  site = startFixtureSite();
  dbUrl = await testDatabaseUrl();
  const log = createLogger("info", {}, (l) => lines.push(JSON.parse(l)));
  app = await startTestApp({ ALLOW_PRIVATE_TARGETS: "true", ...(dbUrl ? { DATABASE_URL: dbUrl } : {}) }, undefined, { log });
  app.webhooks.options.autoKick = false;
  // A refused write answers after 200 ms instead of SQLite's 5 s busy wait (the behaviour is the same).
  if (!dbUrl) (app.ctx.db as SqliteDb).writer.exec("PRAGMA busy_timeout = 200");
});
afterAll(async () => {
  await app?.stop();
  await site?.stop();
});

test(
  "database held: ticks warn once and fail nothing; a run finished meanwhile writes its outcome once it is released",
  async () => {
    const { token, ws } = await ownerWithKey(app);
    const running = await createJob(app, token, ws.id, { json_schema: schema, description: "product", suggested_urls: [`${site.url}/delay?ms=300&busy=1`] });
    await app.ctx.scheduler.runNow("trawl.worker");
    await site.waitFor("/delay?ms=300&busy=1");
    const release = await holdDatabase(app, dbUrl, "trawl_jobs");
    const from = lines.length;
    // Ticks while the database is held resolve (the scheduler logs no failure), and the slow
    // page answers meanwhile: its run must keep the outcome until it can be written.
    // runNow rejects with the refusal (its caller asked for that run); scheduled ticks only warn.
    for (let i = 0; i < 3; i++) await expect(app.ctx.scheduler.runNow("trawl.worker")).rejects.toThrow();
    await until("the run's outcome to be refused", () => lines.slice(from).some((l) => l.msg.startsWith("extraction job: the database is busy")));
    await release();

    const done = await runUntilFinal(app, token, ws.id, running.id);
    expect(done).toMatchObject({ status: "succeeded", attempts: 1, result: { name: "Trail Runner 2", price: 129.5 } });
    const during = lines.slice(from);
    expect(during.filter((l) => l.level === "error")).toEqual([]);
    const about = (l: { msg: string; job?: string }) => l.job === "trawl.worker";
    expect(during.filter((l) => about(l) && l.level === "warn")).toHaveLength(1);
    expect(during.find((l) => about(l) && l.level === "warn")!.msg).toStartWith("job waits for the database");
    expect(during.some((l) => about(l) && l.msg === "job runs again: the database is back")).toBe(true);
    const list = await app.call("GET", `${base(ws.id)}/jobs?status=running`, { token });
    expect(list.body.data).toEqual([]);
  },
  60_000,
);
