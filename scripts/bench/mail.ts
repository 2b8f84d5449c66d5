/**
 * `npm run bench -- mail`: issue 13 "Speed", against a real Bunker server (subprocess,
 * SQLite), everything on 127.0.0.1:
 *
 * (a) accepting sends: POST /mail/v1/workspaces/{id}/templates/{name}/send under wrk (fixed
 *     body: one recipient, one variable), interleaved with a bare Bun.serve hello-world
 *     (same run, same wrk settings) for the ratio. Two loads: wrk -c<BENCH_CONNECTIONS> (64:
 *     the throughput) and wrk -t1 -c<BENCH_MAIL_LATENCY_CONNECTIONS> (4: the latency of a
 *     send when the server is not saturated; in a closed loop at -c64 the p50 is just
 *     64 / throughput). Targets: >= 2,000 accepted sends/s, p50 < 5 ms.
 *     Every accepted send queues a message: the delivery worker keeps rendering, signing
 *     and handing them to the sink in the background while wrk runs, on the same cores.
 * (b) end to end: N messages (BENCH_MAIL_MESSAGES, default 3,000) queued with send-batch
 *     (100 rows a request, one request after another) while the sink counts; messages/s =
 *     N / (first request sent -> last message received by the sink), and queue -> arrival
 *     latency per message (request sent -> DATA ended at the sink, matched by Message-ID).
 *     Target >= 300 messages/s. Same-run baseline: raw nodemailer sends from this process to
 *     the same sink, DKIM-signed with a 2048-bit RSA key like Bunker's, the same rendered
 *     body (read back through GET /messages/{id}/body), one connection per message and 20 in
 *     flight like the worker (CLAIM_BATCH): the SMTP ceiling of this machine for that shape.
 *     Runs alternate (baseline, Bunker) BENCH_MAIL_RUNS times (default 3: the first Bunker run also warms the JIT and the template caches); medians.
 *
 * The SMTP sink runs in its own process: it counts messages and notes each Message-ID's
 * arrival time, without parsing the message. BENCH_MAIL_SINK=raw (default): a minimal SMTP
 * server on Bun.listen that answers at once. BENCH_MAIL_SINK=smtp-server: the smtp-server
 * package, which waits 100 ms before greeting each connection; with one connection per
 * message and 20 in flight, that alone caps any client at about 20 / 0.1 s = 190 messages/s. The DNS server
 * (test/helpers/dns-server.ts) runs in this process; it serves the domain's records for its
 * verification. (b) runs before (a) so that it starts with an empty queue.
 *
 * Environment: BENCH_SECONDS (5), BENCH_WARMUP (1), BENCH_ROUNDS (3), BENCH_THREADS /
 * BENCH_CONNECTIONS (wrk, 2 / 64), BENCH_MAIL_LATENCY_CONNECTIONS (4), BENCH_MAIL_MESSAGES
 * (3000), BENCH_MAIL_RUNS (3), BENCH_MAIL_SINK (raw | smtp-server). Report only; exits 0 whether targets are met or not.
 */
import { generateKeyPairSync } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createTransport } from "nodemailer";
import { startDnsServer } from "../../test/helpers/dns-server";
import {
  api,
  benchOwner,
  benchPrelude,
  envNumber,
  fmtNum,
  vsBunServe,
  median,
  medians,
  nowAbs,
  percentile,
  procCpuSeconds,
  sleep,
  startBaseline,
  startBunker,
  table,
  tempDir,
  wrkFootnote,
  wrkRun,
  wrkSettings,
  wrkTable,
  type LoadResult,
  type LocalTarget,
  type RequestSpec,
} from "./lib";

// --- the SMTP sink (own process) ------------------------------------------------------------

/** The control side of both sinks: counts, arrivals (Message-ID -> time DATA ended), reset. */
const SINK_CONTROL = `
const control = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch(req) {
  const p = new URL(req.url).pathname;
  if (p === "/reset") { count = 0; arrivals = []; return new Response("ok"); }
  if (p === "/arrivals") return Response.json(arrivals);
  return Response.json({ count });
}});
await Bun.write(process.env.PORT_FILE, JSON.stringify({ smtp: smtpPort, control: control.port }));
`;
const SINK_HEAD = `
const now = () => performance.timeOrigin + performance.now();
let count = 0;
let arrivals = [];
const arrived = (head) => {
  count++;
  const m = /\\nMessage-ID:\\s*<([^@>]+)@/i.exec("\\n" + head);
  arrivals.push([m ? m[1] : "", now()]);
};
`;

/**
 * "raw" (default): a minimal SMTP server on Bun.listen that answers at once (greeting, EHLO,
 * MAIL, RCPT, DATA, QUIT) and only looks for the end of DATA and the Message-ID: the ceiling
 * is the client's. "smtp-server": the smtp-server package, which waits 100 ms before its
 * greeting on every connection (early-talker detection; not configurable), like a relay that
 * is slow to greet.
 */
const SINK_SCRIPT = (kind: "raw" | "smtp-server", smtpServer: string) =>
  SINK_HEAD +
  (kind === "smtp-server"
    ? `
import { SMTPServer } from ${JSON.stringify(smtpServer)};
const server = new SMTPServer({
  secure: false, disabledCommands: ["STARTTLS"], authOptional: true, disableReverseLookup: true, logger: false, closeTimeout: 1000,
  onData(stream, session, cb) {
    let head = "";
    stream.on("data", (c) => { if (head.length < 8192) head += c.toString("latin1"); });
    stream.on("end", () => { arrived(head); cb(); });
  },
});
await new Promise((r) => server.listen(0, "127.0.0.1", r));
const smtpPort = server.server.address().port;
`
    : `
const dec = new TextDecoder("latin1");
const listener = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: {
  open(s) { s.data = { buf: "", inData: false, head: "", tail: "" }; s.write("220 sink ESMTP\\r\\n"); },
  data(s, chunk) {
    const st = s.data;
    let str = dec.decode(chunk);
    while (str.length) {
      if (st.inData) {
        const all = st.tail + str;
        if (st.head.length < 8192) st.head += str;
        const i = all.indexOf("\\r\\n.\\r\\n");
        if (i < 0) { st.tail = all.slice(-4); return; }
        arrived(st.head);
        st.inData = false; st.head = ""; st.tail = "";
        s.write("250 2.0.0 queued\\r\\n");
        str = all.slice(i + 5);
        continue;
      }
      st.buf += str; str = "";
      let j;
      while (!st.inData && (j = st.buf.indexOf("\\r\\n")) >= 0) {
        const cmd = st.buf.slice(0, 4).toUpperCase();
        st.buf = st.buf.slice(j + 2);
        if (cmd === "EHLO") s.write("250-sink\\r\\n250-8BITMIME\\r\\n250 SMTPUTF8\\r\\n");
        else if (cmd === "DATA") { s.write("354 go ahead\\r\\n"); st.inData = true; st.tail = "\\r\\n"; str = st.buf; st.buf = ""; }
        else if (cmd === "QUIT") { s.write("221 bye\\r\\n"); s.end(); return; }
        else s.write("250 OK\\r\\n");
      }
    }
  },
}});
const smtpPort = listener.port;
`) +
  SINK_CONTROL;

interface Sink {
  port: number;
  control: string;
  pid: number;
  count(): Promise<number>;
  arrivals(): Promise<[string, number][]>;
  reset(): Promise<void>;
  stop(): void;
}

async function startSink(kind: "raw" | "smtp-server"): Promise<Sink> {
  const dir = tempDir("bunker-bench-sink-");
  const script = join(dir, "sink.ts");
  const portFile = join(dir, "ports.json");
  writeFileSync(script, SINK_SCRIPT(kind, require.resolve("smtp-server")));
  const proc = Bun.spawn([process.execPath, script], { env: { ...process.env, PORT_FILE: portFile }, stdin: "ignore", stdout: "inherit", stderr: "inherit" });
  const stop = () => {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill("SIGKILL");
  };
  process.on("exit", stop);
  const deadline = performance.now() + 15_000;
  while (performance.now() < deadline) {
    try {
      const { smtp, control } = JSON.parse(readFileSync(portFile, "utf8"));
      const c = `http://127.0.0.1:${control}`;
      return {
        port: smtp,
        control: c,
        pid: proc.pid,
        count: async () => ((await (await fetch(`${c}/stats`)).json()) as { count: number }).count,
        arrivals: async () => (await (await fetch(`${c}/arrivals`)).json()) as [string, number][],
        reset: async () => void (await (await fetch(`${c}/reset`)).text()),
        stop,
      };
    } catch {}
    if (proc.exitCode !== null) break;
    await sleep(50);
  }
  throw new Error("SMTP sink did not start");
}

// --- setup over HTTP --------------------------------------------------------------------------

const TEMPLATE = {
  name: "welcome",
  subject: "Welcome to Acme, {{name}}",
  body_html:
    "<html><head><style>body { font-family: Helvetica, Arial, sans-serif; color: #222; } .btn { background: #1a73e8; color: #fff; padding: 10px 16px; border-radius: 4px; text-decoration: none; } p { line-height: 1.5; }</style></head>" +
    "<body><h1>Welcome, {{name}}!</h1><p>Thanks for signing up to Acme. Your workspace is ready, and your first project is waiting for you.</p>" +
    '<p><a class="btn" href="https://acme.example/start?u={{name}}">Open your workspace</a></p>' +
    "<p>If you did not create this account, you can ignore this email: nothing happens until you confirm it.</p><p>The Acme team</p></body></html>",
  variables_schema: { version: 1, vars: { name: { type: "string", required: true } } },
};

const txtStrings = (value: string): string[] => (value.startsWith('"') ? [...value.matchAll(/"([^"]*)"/g)].map((m) => m[1]!) : [value]);

async function setup(url: string, dns: Awaited<ReturnType<typeof startDnsServer>>) {
  const { session, workspaceId } = await benchOwner(url, "bench-mail");
  const k = await api(url, "POST", `/platform/v1/workspaces/bench-mail/api-keys`, {
    token: session,
    body: { name: "bench", policy: [{ effect: "allow", actions: ["mail.*"], resources: ["*"] }] },
  });
  if (k.status !== 201) throw new Error(`API key: ${k.status} ${JSON.stringify(k.body).slice(0, 300)}`);
  const token: string = k.body.key;
  const base = `/mail/v1/workspaces/${workspaceId}`;
  const fqdn = "mail.bench.example";
  const d = await api(url, "POST", `${base}/domains`, { token, body: { fqdn } });
  if (d.status !== 201) throw new Error(`domain: ${d.status} ${JSON.stringify(d.body).slice(0, 300)}`);
  for (const ins of d.body.dns_instructions) {
    if (ins.type === "MX") dns.add(ins.host, { type: "MX", exchange: ins.value, priority: ins.priority });
    else dns.add(ins.host, { type: "TXT", data: txtStrings(ins.value) });
  }
  let status = "";
  for (let i = 0; i < 20 && status !== "active"; i++) {
    const v = await api(url, "POST", `${base}/domains/${d.body.id}/verify`, { token });
    if (v.status !== 200) throw new Error(`verify: ${v.status} ${JSON.stringify(v.body).slice(0, 300)}`);
    status = v.body.status;
    if (status !== "active") await sleep(250);
  }
  if (status !== "active") throw new Error(`domain did not become active (status ${status})`);
  const t = await api(url, "POST", `${base}/templates`, { token, body: TEMPLATE });
  if (t.status !== 201) throw new Error(`template: ${t.status} ${JSON.stringify(t.body).slice(0, 300)}`);
  const s = await api(url, "PATCH", `${base}/sending/settings`, { token, body: { rate_limit_per_second: 10_000 } });
  if (s.status !== 200) throw new Error(`settings: ${s.status} ${JSON.stringify(s.body).slice(0, 300)}`);
  return { token, base, fqdn, from: `Acme <hello@${fqdn}>` };
}

// --- (b) end to end ---------------------------------------------------------------------------

interface E2E {
  name: string;
  messages: number;
  received: number;
  seconds: number;
  queueSeconds: number;
  rate: number;
  p50: number;
  p99: number;
  timedOut: boolean;
  serverCores: number | null;
  sinkCores: number | null;
}

async function waitCount(sink: Sink, n: number, timeoutMs: number): Promise<{ count: number; timedOut: boolean }> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const count = await sink.count();
    if (count >= n) return { count, timedOut: false };
    if (performance.now() > deadline) return { count, timedOut: true };
    await sleep(20);
  }
}

function summarize(name: string, n: number, t0: number, sent: Map<string, number>, arr: [string, number][], queueEnd: number, timedOut: boolean, cpu: { server: number | null; sink: number | null }): E2E {
  const last = arr.reduce((m, [, t]) => Math.max(m, t), t0);
  const lat = arr.map(([id, t]) => t - (sent.get(id) ?? t0)).sort((a, b) => a - b);
  const seconds = (last - t0) / 1000;
  return {
    name,
    messages: n,
    received: arr.length,
    seconds,
    queueSeconds: (queueEnd - t0) / 1000,
    rate: arr.length / seconds,
    p50: percentile(lat, 50),
    p99: percentile(lat, 99),
    timedOut,
    serverCores: cpu.server === null ? null : cpu.server / seconds,
    sinkCores: cpu.sink === null ? null : cpu.sink / seconds,
  };
}

async function bunkerE2E(url: string, serverPid: number, sink: Sink, fx: Awaited<ReturnType<typeof setup>>, n: number, runNo: number): Promise<E2E> {
  await sink.reset();
  const sent = new Map<string, number>();
  const s0 = procCpuSeconds(serverPid);
  const k0 = procCpuSeconds(sink.pid);
  const t0 = nowAbs();
  for (let b = 0; b * 100 < n; b++) {
    const rows = Array.from({ length: Math.min(100, n - b * 100) }, (_, i) => ({ to: `user${runNo}-${b * 100 + i}@example.com`, data: { name: `User ${b * 100 + i}` } }));
    const at = nowAbs();
    const r = await api(url, "POST", `${fx.base}/templates/welcome/send-batch`, { token: fx.token, body: { from: fx.from, messages: rows } });
    if (r.status !== 202 || r.body.accepted !== rows.length) throw new Error(`send-batch: ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
    for (const row of r.body.data) sent.set(row.message_id, at);
  }
  const queueEnd = nowAbs();
  const w = await waitCount(sink, n, 120_000);
  const cpu = { server: s0 === null ? null : procCpuSeconds(serverPid)! - s0, sink: k0 === null ? null : procCpuSeconds(sink.pid)! - k0 };
  return summarize("Bunker: send-batch -> render, DKIM, SMTP", n, t0, sent, await sink.arrivals(), queueEnd, w.timedOut, cpu);
}

async function nodemailerE2E(sink: Sink, body: { html: string; text: string; subject: string }, dkim: { domainName: string; keySelector: string; privateKey: string }, n: number, concurrency: number): Promise<E2E> {
  await sink.reset();
  const sent = new Map<string, number>();
  const k0 = procCpuSeconds(sink.pid);
  let next = 0;
  const t0 = nowAbs();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < n) {
        const i = next++;
        const id = `base-${i}`;
        sent.set(id, nowAbs());
        const transport = createTransport({ host: "127.0.0.1", port: sink.port, secure: false, name: "bench.local", dkim } as Parameters<typeof createTransport>[0]);
        try {
          await transport.sendMail({
            messageId: `<${id}@${dkim.domainName}>`,
            envelope: { from: `bounces+${id}@${dkim.domainName}`, to: [`user${i}@example.com`] },
            from: `Acme <hello@${dkim.domainName}>`,
            to: `user${i}@example.com`,
            subject: body.subject,
            text: body.text,
            html: body.html,
          });
        } finally {
          transport.close();
        }
      }
    }),
  );
  const queueEnd = nowAbs();
  const w = await waitCount(sink, n, 60_000);
  const cpu = { server: null, sink: k0 === null ? null : procCpuSeconds(sink.pid)! - k0 };
  return summarize("baseline: raw nodemailer, DKIM", n, t0, sent, await sink.arrivals(), queueEnd, w.timedOut, cpu);
}

// --- main -------------------------------------------------------------------------------------

export default async function mailBench(_args: string[]) {
  const ws = wrkSettings();
  const latConns = Math.floor(envNumber("BENCH_MAIL_LATENCY_CONNECTIONS", 4, 1));
  const N = Math.floor(envNumber("BENCH_MAIL_MESSAGES", 3000, 100));
  const RUNS = Math.floor(envNumber("BENCH_MAIL_RUNS", 3, 1));
  const { seconds, warmup, m } = benchPrelude("mail", 120 + RUNS * 2 * 60, ws.rounds * 3);

  const dns = await startDnsServer();
  const sinkKind = (process.env.BENCH_MAIL_SINK || "raw") as "raw" | "smtp-server";
  if (sinkKind !== "raw" && sinkKind !== "smtp-server") throw new Error(`BENCH_MAIL_SINK must be "raw" or "smtp-server" (got "${sinkKind}")`);
  const sink = await startSink(sinkKind);
  const baseline = await startBaseline();
  const bunker = await startBunker({ env: { DNS_SERVERS: dns.server, SMTP_RELAY_URL: `smtp://127.0.0.1:${sink.port}`, ALLOW_PRIVATE_TARGETS: "true", MAIL_HOSTNAME: "bench.local" } });
  try {
    console.log(`bunker pid ${bunker.pid} (SQLite), baseline pid ${baseline.pid}, SMTP sink (${sinkKind}) pid ${sink.pid} (port ${sink.port}), DNS ${dns.server}`);
    const fx = await setup(bunker.url, dns);

    // A first send: checks the whole path and gives the rendered body for the baseline.
    const first = await api(bunker.url, "POST", `${fx.base}/templates/welcome/send`, { token: fx.token, body: { from: fx.from, to: "ada@example.com", data: { name: "Ada" } } });
    if (first.status !== 202) throw new Error(`send: ${first.status} ${JSON.stringify(first.body).slice(0, 300)}`);
    if ((await waitCount(sink, 1, 15_000)).timedOut) throw new Error(`the first message did not reach the sink:\n${bunker.logTail()}`);
    const b = await api(bunker.url, "GET", `${fx.base}/messages/${first.body.message_ids[0]}/body`, { token: fx.token });
    if (b.status !== 200) throw new Error(`body: ${b.status} ${JSON.stringify(b.body).slice(0, 300)}`);
    const rendered = { html: b.body.body_html as string, text: b.body.body_text as string, subject: b.body.subject as string };
    const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048, privateKeyEncoding: { type: "pkcs8", format: "pem" }, publicKeyEncoding: { type: "spki", format: "pem" } });
    const dkim = { domainName: fx.fqdn, keySelector: "bench", privateKey };
    console.log(`setup done: domain ${fx.fqdn} active, template "welcome" (${rendered.html.length} bytes of HTML after inlining), rate limit 10,000/s\n`);

    // ---- (b) end to end
    console.log(`(b) end to end: ${fmtNum(N)} messages, send-batch of 100, ${RUNS} run(s) each, alternating`);
    await nodemailerE2E(sink, rendered, dkim, 200, 20); // warm-up
    await bunkerE2E(bunker.url, bunker.pid, sink, fx, 200, 0);
    const base: E2E[] = [];
    const ours: E2E[] = [];
    for (let i = 0; i < RUNS; i++) {
      process.stdout.write(`run ${i + 1}/${RUNS}: baseline ... `);
      base.push(await nodemailerE2E(sink, rendered, dkim, N, 20));
      process.stdout.write(`${fmtNum(base.at(-1)!.rate)}/s, bunker ... `);
      ours.push(await bunkerE2E(bunker.url, bunker.pid, sink, fx, N, i + 1));
      console.log(`${fmtNum(ours.at(-1)!.rate)}/s`);
    }
    const med = (rs: E2E[]) => [...rs].sort((a, b) => a.rate - b.rate)[Math.floor((rs.length - 1) / 2)]!;
    const bm = med(base);
    const om = med(ours);
    const e2eRows = [bm, om].map((r) => [
      r.name,
      fmtNum(r.received) + (r.timedOut ? ` of ${fmtNum(r.messages)} (TIMED OUT)` : ""),
      r.seconds.toFixed(2),
      r.queueSeconds.toFixed(2),
      fmtNum(r.rate),
      fmtNum(r.p50),
      fmtNum(r.p99),
      r.serverCores === null ? "-" : r.serverCores.toFixed(2),
      r.sinkCores === null ? "-" : r.sinkCores.toFixed(2),
      (r.rate / bm.rate).toFixed(2),
    ]);
    console.log(
      "\n" +
        table(["(b) median run", "received", "seconds", "queue s", "messages/s", "p50 ms", "p99 ms", "srv cores", "sink cores", "vs baseline"], e2eRows, [false, true, true, true, true, true, true, true, true, true]),
    );
    console.log(`  runs: baseline ${base.map((r) => fmtNum(r.rate)).join(", ")}/s; bunker ${ours.map((r) => fmtNum(r.rate)).join(", ")}/s`);
    console.log(`  "queue s": first request -> last send-batch answered (baseline: last message handed over); latency: request sent -> DATA ended at the sink.\n`);

    // ---- (a) accepting sends under wrk
    const send: RequestSpec = {
      method: "POST",
      path: `${fx.base}/templates/welcome/send`,
      headers: { authorization: `Bearer ${fx.token}`, "content-type": "application/json" },
      body: JSON.stringify({ from: fx.from, to: "ada@example.com", data: { name: "Ada" } }),
    };
    const lowConc: LocalTarget = {
      name: `send -c${latConns}`,
      run: (durationSec: number): Promise<LoadResult> => wrkRun({ baseUrl: bunker.url, spec: send, threads: 1, connections: latConns, durationSec, serverPid: bunker.pid }),
    };
    console.log(`(a) POST ${fx.base.replace(/ws_\w+|[0-9a-f-]{20,}/, "{id}")}/templates/welcome/send under wrk; the worker delivers in the background`);
    const res = await vsBunServe(baseline, [{ name: `send -c${ws.connections}`, baseUrl: bunker.url, spec: send, serverPid: bunker.pid }, lowConc], ws, seconds, warmup);
    console.log("\n" + wrkTable(res.baseline, res.targets.map((r) => ({ result: r, what: r.name, target: null }))));
    console.log("\n" + wrkFootnote(ws, seconds, warmup, m));
    console.log(`  "send -c${latConns}": wrk -t1 -c${latConns} (latency below saturation); it counts towards nothing but p50.`);
    const sat = res.targets[0]!;
    const lat = res.targets[1]!;
    const accepted = median(sat.runs.map((r) => (r.completed - r.errors) / r.seconds));
    const p50 = medians(lat).p50;
    const delivered = await sink.count();

    const pass = (ok: boolean) => (ok ? "PASS" : "BELOW");
    console.log(`
Speed (issue 13), ${m.cores} cores (${m.cpuModel}), bun ${m.bun}:
  (a) accepted sends/s (wrk -c${ws.connections}):  ${fmtNum(accepted)}/s   target >= 2,000/s  ${pass(accepted >= 2000)}   (${median(sat.ratios).toFixed(2)} of bare Bun.serve)
      send p50 at -c${latConns}:                  ${p50.toFixed(2)} ms   target < 5 ms      ${pass(p50 < 5)}   (at -c${ws.connections}: p50 ${medians(sat).p50.toFixed(2)} ms, p99 ${medians(sat).p99.toFixed(2)} ms)
  (b) end to end messages/s:           ${fmtNum(om.rate)}/s   target >= 300/s    ${pass(om.rate >= 300)}   (${(om.rate / bm.rate).toFixed(2)} of raw nodemailer, ${fmtNum(bm.rate)}/s)
  During (a) the delivery worker kept sending the queued messages to the sink (${fmtNum(delivered)} received by the end of (a)),
  on the same ${m.cores} cores as the server, wrk and the sink.`);
  } finally {
    await bunker.stop();
    await baseline.stop();
    sink.stop();
    await dns.stop();
  }
}
