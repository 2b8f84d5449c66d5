/**
 * `npm run bench -- crash-duplicates [runs] [sqlite,pg]`: how often a crash makes Bunker send
 * something twice. Each run kills (SIGKILL) a Bunker process in the middle of handing work
 * over, starts one again on the same data and waits until everything is out, then counts
 * what the receiver got more than once:
 *
 *   mail      200 messages queued, a child process (test/mail/sending/fixtures/deliver-child.ts)
 *             delivers them to a loopback SMTP sink that answers each DATA after 20 ms and is
 *             killed once 60 have arrived; an in-process app on the same data finishes the
 *             job. Duplicates: Message-IDs the sink received twice.
 *   webhooks  200 events, a child (test/webhooks/fixtures/crash-child.ts) delivers them to a
 *             receiver that answers after 15 ms and is killed once 60 arrived; a second
 *             child on the same data finishes. Duplicates: webhook-ids received twice.
 *
 * Printed per engine: duplicates per 10,000 messages / events (all runs together), what the
 * kill left behind (claims in flight), and how long the restarted node took to finish. The
 * restarted mail node's clock is moved past the 5-minute lease, so a node that waits the
 * lease out (instead of reclaiming its own claims at start) is not a 5-minute bench.
 * Report only; exits 0 either way.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MINUTE } from "../../src/core/clock";
import { DELIVER_JOB } from "../../src/services/mail/sending/part";
import { startTestApp } from "../../test/helpers/app";
import { startReceiver } from "../../test/helpers/http-receiver";
import { createTemplate, startSendingApp, workspaceWithDomain } from "../../test/helpers/mail-sending";
import { startPgCluster, type PgCluster } from "../../test/helpers/pg-cluster";
import { startSmtpSink } from "../../test/helpers/smtp-sink";
import { fmtNum, REPO_ROOT, table } from "./lib";

const N = 200;
const KILL_AT = 60;
/** The killed process and the restarted app are one node (the app runs in this process, beside others). */
const NODE_ID = "crash-bench";
const MAIL_CHILD = join(REPO_ROOT, "test/mail/sending/fixtures/deliver-child.ts");
const WEBHOOK_CHILD = join(REPO_ROOT, "test/webhooks/fixtures/crash-child.ts");

interface RunResult {
  total: number;
  duplicates: number;
  /** Claims the kill left in flight (mail: sending rows; webhooks: leased pending deliveries). */
  inFlight: number;
  /** Real time from the restart until everything was out. */
  finishMs: number;
}

async function waitFor(what: string, probe: () => boolean | Promise<boolean>, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await Bun.sleep(5);
  }
}

const duplicatesOf = (ids: (string | null | undefined)[]) => ids.length - new Set(ids).size;

async function mailRun(databaseUrl: string | null): Promise<RunResult> {
  const sink = await startSmtpSink({ dataDelayMs: 20 });
  const engine: Record<string, string> = databaseUrl ? { DATABASE_URL: databaseUrl } : {};
  try {
    const e = await startSendingApp({ SMTP_RELAY_URL: sink.url, ...engine });
    e.sending.autoKick = false;
    const w = await workspaceWithDomain(e);
    await createTemplate(e, w, { name: "note", subject: "Note {{n}}", body_html: "<p>Note {{n}}</p>" });
    await e.app.call("PATCH", `${w.base}/sending/settings`, { token: w.token, body: { rate_limit_per_second: 10_000 } });
    for (let i = 0; i < N; i += 50) {
      const to = Array.from({ length: Math.min(50, N - i) }, (_, k) => `crash${i + k}@example.test`);
      const r = await e.app.call("POST", `${w.base}/templates/note/send`, { token: w.token, body: { from: `hello@${w.fqdn}`, to, data: { n: i } } });
      if (r.status !== 202) throw new Error(`send: ${r.status} ${JSON.stringify(r.body)}`);
    }
    const dir = e.app.dir;
    await e.app.stop();

    const child = Bun.spawn([process.execPath, MAIL_CHILD], {
      env: { ...process.env, DATA_DIR: dir, NODE_ID, SMTP_RELAY_URL: sink.url, ...engine },
      stdout: "ignore",
      stderr: "inherit",
    });
    await waitFor("mail before the kill", () => sink.messages.length >= KILL_AT);
    child.kill("SIGKILL");
    await child.exited;

    const started = performance.now();
    const again = await startTestApp({ NODE_ID, SMTP_RELAY_URL: sink.url, ALLOW_PRIVATE_TARGETS: "true", ...engine }, dir);
    try {
      const inFlight = (await again.ctx.db.get<{ n: number }>("SELECT COUNT(*) AS n FROM mail_messages WHERE status = 'sending'"))!.n;
      again.clock.advance(Date.now() + 10 * MINUTE - again.clock.nowMs());
      const unsent = async () => (await again.ctx.db.get<{ n: number }>("SELECT COUNT(*) AS n FROM mail_messages WHERE status <> 'sent'"))!.n;
      for (let round = 0; (await unsent()) > 0; round++) {
        if (round > 200) throw new Error(`mail: ${await unsent()} messages still not sent`);
        await again.ctx.scheduler.runNow(DELIVER_JOB);
      }
      const finishMs = performance.now() - started;
      const ids = sink.messages.map((m) => /^Message-ID: <([^@>]+)@/im.exec(m.raw)?.[1]);
      if (new Set(ids).size !== N) throw new Error(`mail: ${new Set(ids).size} of ${N} messages arrived`);
      return { total: N, duplicates: duplicatesOf(ids), inFlight, finishMs };
    } finally {
      await again.stop();
    }
  } finally {
    await sink.stop();
  }
}

async function webhookRun(databaseUrl: string | null): Promise<RunResult> {
  const dir = mkdtempSync(join(tmpdir(), "bunker-crash-bench-"));
  const rx = startReceiver(async () => {
    await Bun.sleep(15);
    return new Response("ok");
  });
  const spawn = (mode: "first" | "second") =>
    Bun.spawn([process.execPath, WEBHOOK_CHILD], {
      env: { ...process.env, DATA_DIR: dir, MODE: mode, N: String(N), RECEIVER_URL: `${rx.url}/hook`, LEASE_MS: "1500", ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}) },
      stdout: "ignore",
      stderr: "inherit",
    });
  try {
    const first = spawn("first");
    await rx.waitForRequests(KILL_AT, 60_000);
    first.kill("SIGKILL");
    await first.exited;
    const atKill = rx.requests.length;
    const started = performance.now();
    const second = spawn("second");
    if ((await second.exited) !== 0) throw new Error("webhooks: the second run failed");
    const finishMs = performance.now() - started;
    const ids = rx.requests.map((r) => r.headers["webhook-id"]);
    if (new Set(ids).size !== N) throw new Error(`webhooks: ${new Set(ids).size} of ${N} events arrived`);
    // What was in flight at the kill is not readable afterwards on every engine; the requests
    // that arrived between the kill and the second run's first one are a lower bound.
    return { total: N, duplicates: duplicatesOf(ids), inFlight: atKill, finishMs };
  } finally {
    await rx.stop();
  }
}

export default async function crashDuplicates(args: string[]) {
  const runs = Number(args[0] ?? 5);
  const engines = (args[1] ?? "sqlite,pg").split(",");
  let cluster: PgCluster | null = null;
  const rows: string[][] = [];
  let db = 0;
  try {
    for (const engine of engines) {
      if (engine === "pg") cluster ??= await startPgCluster();
      const url = async () => (cluster && engine === "pg" ? cluster.createDatabase(`crash${++db}`) : null);
      for (const [kind, run] of [["mail", mailRun], ["webhooks", webhookRun]] as const) {
        const results: RunResult[] = [];
        for (let i = 0; i < runs; i++) {
          const r = await run(await url());
          results.push(r);
          console.error(`${engine} ${kind} run ${i + 1}: ${r.duplicates} duplicates of ${r.total} (${kind === "mail" ? `${r.inFlight} sending at the kill` : `${r.inFlight} received at the kill`}), finished in ${fmtNum(r.finishMs)} ms`);
        }
        const total = results.reduce((s, r) => s + r.total, 0);
        const dups = results.reduce((s, r) => s + r.duplicates, 0);
        const finish = results.map((r) => r.finishMs).sort((a, b) => a - b)[Math.floor(results.length / 2)]!;
        rows.push([engine, kind, String(runs), String(dups), fmtNum((dups / total) * 10_000, 1), results.map((r) => r.duplicates).join(" "), fmtNum(finish)]);
      }
    }
  } finally {
    await cluster?.stop();
  }
  console.log(`\ncrash-duplicates: ${N} messages / events per run, SIGKILL once ${KILL_AT} arrived, restart on the same data\n`);
  console.log(table(["engine", "what", "runs", "duplicates", "per 10,000", "per run", "restart to done (ms, median)"], rows, [false, false, true, true, true, false, true]));
}
