// source-only: queues through the in-process app, delivers from an in-process child app (fixtures/deliver-child.ts) and runs the delivery job by hand after the restart
/**
 * Crash safety of sending: a Bunker process is SIGKILLed while it hands queued messages to
 * a slow relay, then an app of the same node (NODE_ID) starts again on the same data (SQLite
 * file, or the same PostgreSQL database on the test:pg run). Every queued message must end
 * up sent, at least once (a message whose hand-over was cut off may go twice; none may be
 * lost or stuck), and the interrupted ones go at once: the restarted node takes its previous
 * process's claims back instead of waiting out their 5-minute lease.
 */
import { afterAll, expect, test } from "bun:test";
import { join } from "node:path";
import { DELIVER_JOB } from "../../../src/services/mail/sending/part";
import { startTestApp, type TestApp } from "../../helpers/app";
import { createTemplate, startSendingApp, workspaceWithDomain } from "../../helpers/mail-sending";
import { startSmtpSink } from "../../helpers/smtp-sink";

const CHILD = join(import.meta.dir, "fixtures", "deliver-child.ts");
const N = 30;
const cleanups: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c().catch(() => {});
});

const messageIdOf = (raw: string) => /^Message-ID: <([^@>]+)@/im.exec(raw)?.[1] ?? null;

const NODE_ID = "crash-node";
const metric = async (app: TestApp, name: string) => Number(new RegExp(`^${name}(?:\\{\\})? (\\d+)$`, "m").exec((await app.call("GET", "/metrics")).body)?.[1] ?? 0);

test("SIGKILL mid-delivery, restart of the same node on the same data: the interrupted messages are sent at once, none lost", async () => {
  const sink = await startSmtpSink({ dataDelayMs: 40 }); // messages stay in flight a while
  cleanups.push(() => sink.stop());

  // 1. Queue N messages through the API (the delivery job does not run here).
  const e = await startSendingApp({ SMTP_RELAY_URL: sink.url });
  e.sending.autoKick = false;
  const w = await workspaceWithDomain(e);
  await createTemplate(e, w, { name: "note", subject: "Note {{n}}", body_html: "<p>Note {{n}}</p>" });
  const to = Array.from({ length: N }, (_, i) => `crash${i}@example.test`);
  const sent = await e.app.call("POST", `${w.base}/templates/note/send`, { token: w.token, body: { from: `hello@${w.fqdn}`, to, data: { n: 1 } } });
  expect(sent.status).toBe(202);
  const ids: string[] = sent.body.message_ids;
  expect(ids).toHaveLength(N);
  const dir = e.app.dir;
  const databaseUrl = e.app.ctx.config.databaseUrl;
  await e.stop();

  // 2. A separate process delivers them and is killed half way.
  const child = Bun.spawn([process.execPath, CHILD], {
    env: { ...process.env, DATA_DIR: dir, NODE_ID, SMTP_RELAY_URL: sink.url, ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}) },
    stdout: "ignore",
    stderr: "inherit",
  });
  const deadline = Date.now() + 30_000;
  // Killed while a message is in DATA (its 250 not yet sent): the kill always cuts a hand-over off.
  while ((sink.messages.length < 8 || sink.inData === 0) && Date.now() < deadline) await Bun.sleep(1);
  child.kill("SIGKILL");
  await child.exited;
  expect(child.signalCode).toBe("SIGKILL");
  const atKill = sink.messages.length;
  expect(atKill).toBeGreaterThanOrEqual(8);
  expect(atKill).toBeLessThan(N); // it really died half way

  // 3. Restart the node on the same data. Its clock is not moved: the dead process's leases
  // (taken on the wall clock, days after this app's clock) have not run out, so the messages
  // it was sending go now only because the node takes its own claims back.
  const again: TestApp = await startTestApp({ NODE_ID, SMTP_RELAY_URL: sink.url, ALLOW_PRIVATE_TARGETS: "true", ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}) }, dir);
  cleanups.push(() => again.stop());
  const status = async (id: string) => (await again.call("GET", `${w.base}/messages/${id}`, { token: w.token })).body.status as string;
  const before = await Promise.all(ids.map(status));
  expect(before.filter((s) => s === "sending").length).toBeGreaterThan(0); // the kill cut some hand-overs off
  const restartedAt = Date.now();
  for (let round = 0; round < 20; round++) {
    await again.ctx.scheduler.runNow(DELIVER_JOB);
    const statuses = await Promise.all(ids.map(status));
    if (statuses.every((s) => s === "sent")) break;
  }
  expect(await Promise.all(ids.map(status))).toEqual(ids.map(() => "sent"));
  expect(Date.now() - restartedAt).toBeLessThan(10_000);
  const arrived = new Set(sink.messages.map((m) => messageIdOf(m.raw)));
  expect(ids.filter((id) => !arrived.has(id))).toEqual([]);
  // At least once: a message whose hand-over the kill cut off may go again, but only once more.
  const copies = new Map<string, number>();
  for (const m of sink.messages) copies.set(messageIdOf(m.raw)!, (copies.get(messageIdOf(m.raw)!) ?? 0) + 1);
  expect(Math.max(...copies.values())).toBeLessThanOrEqual(2);
  // Every message that went twice had been handed over when the process died, and its retry
  // was counted as a possible duplicate.
  const twice = [...copies.values()].filter((n) => n === 2).length;
  expect(await metric(again, "bunker_mail_resent_after_handover_total")).toBeGreaterThanOrEqual(twice);
}, 90_000);
