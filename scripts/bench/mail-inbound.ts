/**
 * `npm run bench -- mail-inbound`: issues 14 and 32. Messages per second Bunker's inbound
 * SMTP listener accepts (and stores: object store + SQLite, parsed, SPF/DKIM/DMARC checked
 * against a loopback DNS server, spam-scored, email.received recorded) from concurrent
 * nodemailer clients, against two same-run baselines:
 * - the ceiling: mailparser + mailauth alone on the same bytes (the message with a Received
 *   header like Bunker's), with Bunker's options, against the same DNS server through the
 *   same cached resolver, on one Bun Worker per core (CHECK_THREADS, at most four), 8
 *   messages in flight on each, in this process. "Both cores" means that: every core busy
 *   with parse + authenticate and nothing else, no SMTP, no client, no storage; Bunker's row
 *   shares the same cores with its SMTP clients. Bunker checks on its event loop unless
 *   MAIL_INBOUND_THREADS (passed through to the server) gives it worker threads.
 * - smtp-server (the library Bunker's listener is built on) accepting and discarding, in its
 *   own process: the cost of SMTP alone.
 * Server CPU per stored message is the Bunker process's CPU (every thread, /proc) over the
 * measured window; the ceiling's is this process's over its window.
 *
 * The message: ~10 KB (text/plain), DKIM-signed once up front with a 2048-bit RSA key
 * published on the DNS server (every delivery is verified), from a domain with SPF
 * (ip4:127.0.0.1) and DMARC p=none records. Clients: BENCH_INBOUND_CLIENTS (default 16)
 * nodemailer pooled transports of one connection each, sending back to back from this
 * process; a run counts 250 replies in BENCH_SECONDS (default 5) after BENCH_WARMUP (1).
 * Runs alternate discard, ceiling, Bunker BENCH_ROUNDS times (default 2); medians (the ratio
 * is the median of the rounds' ratios). BENCH_INBOUND_BEFORE=<dir>: another checkout of
 * Bunker (e.g. `git worktree add <dir> <rev>`) is measured too, in the same rounds (before and after). Targets: >= 500 messages/s and >= 0.6 of the
 * ceiling. Report only; exits 0 either way.
 */
import { generateKeyPairSync } from "node:crypto";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { dkimSign } from "mailauth/lib/dkim/sign";
import { createTransport } from "nodemailer";
import { startDnsServer, type TestDnsServer } from "../../test/helpers/dns-server";
import { CHECK_THREADS } from "../../src/services/mail/inbound/checks";
import type { CeilingJob } from "./mail-inbound-ceiling";
import { api, benchOwner, benchPrelude, envNumber, fmtNum, freePort, median, procCpuSeconds, sleep, startBunker, table, tempDir, type ServerProc } from "./lib";

const txtStrings = (value: string): string[] => (value.startsWith('"') ? [...value.matchAll(/"([^"]*)"/g)].map((m) => m[1]!) : [value]);

async function startDiscardServer(): Promise<{ port: number; pid: number; stop(): void }> {
  const dir = tempDir("bunker-bench-discard-");
  const script = join(dir, "discard.ts");
  const portFile = join(dir, "port");
  writeFileSync(
    script,
    `import { SMTPServer } from ${JSON.stringify(require.resolve("smtp-server"))};
const server = new SMTPServer({ secure: false, disabledCommands: ["AUTH", "STARTTLS"], authOptional: true, logger: false, size: 25 * 1024 * 1024,
  onData(stream, session, cb) { stream.on("data", () => {}); stream.on("end", () => cb()); } });
await new Promise((r) => server.listen(0, "127.0.0.1", r));
await Bun.write(${JSON.stringify(portFile)}, String(server.server.address().port));
`,
  );
  const proc = Bun.spawn([process.execPath, script], { stdin: "ignore", stdout: "inherit", stderr: "inherit" });
  const stop = () => {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill("SIGKILL");
  };
  process.on("exit", stop);
  for (let i = 0; i < 300; i++) {
    try {
      const port = Number(readFileSync(portFile, "utf8"));
      if (port) return { port, pid: proc.pid, stop };
    } catch {}
    await sleep(50);
  }
  stop();
  throw new Error("discard server did not start");
}

/** Sends `raw` to port from `clients` pooled one-connection transports for warmup + seconds; accepted per second. */
async function drive(port: number, raw: string, to: string, clients: number, warmupSec: number, seconds: number) {
  const transports = Array.from({ length: clients }, () =>
    createTransport({ host: "127.0.0.1", port, secure: false, ignoreTLS: true, pool: true, maxConnections: 1, maxMessages: Infinity, name: "bench.sender.example" } as never),
  );
  let counting = false;
  let accepted = 0;
  let failed = 0;
  let stop = false;
  const loops = transports.map(async (t) => {
    while (!stop) {
      try {
        await t.sendMail({ envelope: { from: "bench@sender.example", to: [to] }, raw } as never);
        if (counting) accepted++;
      } catch {
        if (counting) failed++;
        await sleep(10);
      }
    }
  });
  await sleep(warmupSec * 1000);
  counting = true;
  const t0 = performance.now();
  await sleep(seconds * 1000);
  counting = false;
  const elapsed = (performance.now() - t0) / 1000;
  stop = true;
  await Promise.all(loops);
  for (const t of transports) t.close();
  return { perSec: accepted / elapsed, accepted, failed };
}

/** Messages/s of mailparser + mailauth alone on `threads` Workers, and this process's CPU per message (µs). */
async function ceiling(job: Omit<CeilingJob, "warmupMs" | "ms">, threads: number, warmupSec: number, seconds: number) {
  const workers = Array.from({ length: threads }, () => new Worker(new URL("./mail-inbound-ceiling.ts", import.meta.url)));
  try {
    let warm = 0;
    let cpu0: number | null = null;
    const counts = await Promise.all(
      workers.map(
        (w) =>
          new Promise<number>((resolve, reject) => {
            w.onerror = (e) => reject(new Error(e.message));
            w.onmessage = (ev: MessageEvent<{ warm?: true; n?: number }>) => {
              if (ev.data.warm && ++warm === threads) cpu0 = procCpuSeconds(process.pid);
              if (ev.data.n !== undefined) resolve(ev.data.n);
            };
            w.postMessage({ ...job, warmupMs: warmupSec * 1000, ms: seconds * 1000 } satisfies CeilingJob);
          }),
      ),
    );
    const cpu1 = procCpuSeconds(process.pid);
    const n = counts.reduce((a, b) => a + b, 0);
    return { perSec: n / seconds, cpuUs: cpu0 !== null && cpu1 !== null && n ? ((cpu1 - cpu0) * 1e6) / n : NaN };
  } finally {
    for (const w of workers) w.terminate();
  }
}

/**
 * CPU seconds of a process's threads so far, by kind (from /proc/<pid>/task): the event loop
 * (the main thread), the check workers ("Worker"), JavaScriptCore's compilers and collector,
 * and the rest (allocator, I/O pool, SQLite). Empty off Linux.
 */
function threadCpu(pid: number): Map<string, number> {
  const by = new Map<string, number>();
  let tasks: string[] = [];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return by;
  }
  for (const t of tasks) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${t}/stat`, "utf8");
      const name = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
      const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      const kind = t === String(pid) ? "event loop" : name === "Worker" ? "check workers" : /JIT|JSC|Heap|Collector/i.test(name) ? "JIT and GC" : "other";
      by.set(kind, (by.get(kind) ?? 0) + (Number(f[11]) + Number(f[12])) / 100);
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return by;
}

/** A receiving domain made active over HTTP on the bench's DNS server, and one mailbox: its address. */
async function mailbox(bunker: ServerProc, dns: TestDnsServer, fqdn: string): Promise<{ to: string; messages: () => Promise<any> }> {
  const { session, workspaceId } = await benchOwner(bunker.url, "inbound-bench");
  const base = `/mail/v1/workspaces/${workspaceId}`;
  const d = await api(bunker.url, "POST", `${base}/domains`, { token: session, body: { fqdn, intent: "receive" } });
  if (d.status !== 201) throw new Error(`domain: ${d.status} ${JSON.stringify(d.body)}`);
  for (const ins of d.body.dns_instructions) {
    if (ins.type === "MX") dns.add(ins.host, { type: "MX", exchange: ins.value, priority: ins.priority });
    else dns.add(ins.host, { type: "TXT", data: txtStrings(ins.value) });
  }
  const v = await api(bunker.url, "POST", `${base}/domains/${d.body.id}/verify`, { token: session });
  if (v.body?.status !== "active") throw new Error(`verify: ${v.status} ${JSON.stringify(v.body)}`);
  const box = await api(bunker.url, "POST", `${base}/mailboxes`, { token: session, body: { domain_id: d.body.id, local_part: "inbox", retention_days: 1 } });
  if (box.status !== 201) throw new Error(`mailbox: ${box.status} ${JSON.stringify(box.body)}`);
  return { to: box.body.address, messages: async () => (await api(bunker.url, "GET", `${base}/mailboxes/${box.body.id}/messages?limit=1`, { token: session })).body };
}

/** Stored messages/s from `clients` connections, and the server's CPU (cores, µs per message) after the warm-up. */
async function stored(bunker: ServerProc, port: number, raw: string, to: string, clients: number, warmup: number, seconds: number) {
  let cpu0: number | null = null;
  let threads0 = new Map<string, number>();
  const at = setTimeout(() => {
    cpu0 = procCpuSeconds(bunker.pid);
    threads0 = threadCpu(bunker.pid);
  }, warmup * 1000);
  const b = await drive(port, raw, to, clients, warmup, seconds);
  clearTimeout(at);
  const cpu1 = procCpuSeconds(bunker.pid);
  const threads = new Map([...threadCpu(bunker.pid)].map(([k, v]) => [k, b.accepted ? ((v - (threads0.get(k) ?? 0)) * 1e6) / b.accepted : NaN]));
  const cpu = cpu0 !== null && cpu1 !== null ? cpu1 - cpu0 : null;
  return { ...b, cores: cpu === null ? NaN : cpu / seconds, cpuUs: cpu === null || !b.accepted ? NaN : (cpu * 1e6) / b.accepted, threads };
}

export default async function main() {
  const { seconds, warmup, m } = benchPrelude("mail-inbound", 120, (process.env.BENCH_INBOUND_BEFORE ? 4 : 3) * envNumber("BENCH_ROUNDS", 2, 1));
  const rounds = Math.floor(envNumber("BENCH_ROUNDS", 2, 1));
  const clients = Math.floor(envNumber("BENCH_INBOUND_CLIENTS", 16, 1));

  const dns: TestDnsServer = await startDnsServer();
  const env = (smtpPort: number) => ({ DNS_SERVERS: dns.server, MAIL_HOSTNAME: "mx.bunker.bench", SMTP_PORT: String(smtpPort), SMTP_MAX_CONNECTIONS_PER_IP: "1000" });
  const smtpPort = freePort();
  const bunker = await startBunker({ env: env(smtpPort) });
  const beforeRoot = process.env.BENCH_INBOUND_BEFORE;
  const beforePort = freePort();
  const before = beforeRoot ? await startBunker({ env: env(beforePort), root: beforeRoot }) : null;
  const discard = await startDiscardServer();
  try {
    const here = await mailbox(bunker, dns, "in.bench.example");
    const there = before ? await mailbox(before, dns, "in2.bench.example") : null;
    const to = here.to;

    // The sender's records and one DKIM-signed ~10 KB message.
    const { publicKey, privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048, publicKeyEncoding: { type: "spki", format: "pem" }, privateKeyEncoding: { type: "pkcs8", format: "pem" } });
    const p = publicKey.replace(/-----[^-]+-----/g, "").replace(/\s+/g, "");
    dns.set("sender.example", [{ type: "TXT", data: "v=spf1 ip4:127.0.0.1 -all" }]);
    dns.set("_dmarc.sender.example", [{ type: "TXT", data: "v=DMARC1; p=none" }]);
    dns.set("s1._domainkey.sender.example", [{ type: "TXT", data: `v=DKIM1; k=rsa; p=${p}`.match(/.{1,255}/g)! }]);
    const line = "The quick brown fox jumps over the lazy dog, again and again, for the benchmark.\r\n";
    const body = line.repeat(Math.ceil(10_000 / line.length));
    const unsigned = [
      "From: Bench <bench@sender.example>",
      `To: ${to}`,
      "Subject: Inbound benchmark",
      `Date: ${new Date().toUTCString()}`,
      "Message-ID: <bench-1@sender.example>",
      "MIME-Version: 1.0",
      "Content-Type: text/plain; charset=utf-8",
      "",
      body,
    ].join("\r\n");
    const signed = (await dkimSign(unsigned, { signatureData: [{ signingDomain: "sender.example", selector: "s1", privateKey }] } as never)) as { signatures: string };
    const raw = signed.signatures + unsigned;
    console.log(`message: ${fmtNum(Buffer.byteLength(raw) / 1024, 1)} KB, DKIM-signed (RSA 2048); ${clients} client connections from this process\n`);
    // What Bunker's checks read: the message behind a Received header of the same shape as the listener's.
    const received = `Received: from bench.sender.example ([127.0.0.1])\r\n\tby mx.bunker.bench (Bunker) with ESMTP id 0123456789ab\r\n\tfor <${to}>;\r\n\t${new Date().toUTCString().replace(/GMT$/, "+0000")}\r\n`;
    const ceilingJob = { raw: new Uint8Array(Buffer.from(received + raw)), dns: dns.server, ip: "127.0.0.1", helo: "bench.sender.example", sender: "bench@sender.example", mta: "mx.bunker.bench", inFlight: 8 };

    type Row = { perSec: number[]; cpuUs: number[]; cores: number[]; ratio: number[]; threads: Map<string, number>[] };
    const row = (): Row => ({ perSec: [], cpuUs: [], cores: [], ratio: [], threads: [] });
    const results = { baseline: [] as number[], ceiling: row(), bunker: row(), before: row(), failed: 0 };
    const add = (r: Row, b: { perSec: number; cpuUs: number; cores: number; threads?: Map<string, number> }, ceil: number) => {
      if (b.threads) r.threads.push(b.threads);
      r.perSec.push(b.perSec);
      r.cpuUs.push(b.cpuUs);
      r.cores.push(b.cores);
      r.ratio.push(b.perSec / ceil);
    };
    for (let r = 0; r < rounds; r++) {
      results.baseline.push((await drive(discard.port, raw, to, clients, warmup, seconds)).perSec);
      const c = await ceiling(ceilingJob, CHECK_THREADS, warmup, seconds);
      add(results.ceiling, { ...c, cores: NaN }, c.perSec);
      const b = await stored(bunker, smtpPort, raw, to, clients, warmup, seconds);
      add(results.bunker, b, c.perSec);
      results.failed += b.failed;
      if (before && there) {
        const o = await stored(before, beforePort, raw, there.to, clients, warmup, seconds);
        add(results.before, o, c.perSec);
        results.failed += o.failed;
      }
    }
    const sample = (await here.messages()).data?.[0];
    const bMed = median(results.bunker.perSec);
    const ratio = median(results.bunker.ratio);
    const runs = (xs: number[], d = 0) => xs.map((x) => fmtNum(x, d)).join(", ");
    const rowCells = (name: string, r: Row) => [name, fmtNum(median(r.perSec)), runs(r.perSec), fmtNum(median(r.cpuUs)), `${fmtNum(median(r.ratio), 2)} (${runs(r.ratio, 2)})`];
    console.log(
      table(
        ["target", "messages/s (median)", "runs", "CPU µs/message", "of the ceiling"],
        [
          ["smtp-server, accept and discard", fmtNum(median(results.baseline)), runs(results.baseline), "", ""],
          rowCells(`ceiling: mailparser + mailauth alone, ${CHECK_THREADS} Worker${CHECK_THREADS > 1 ? "s" : ""}`, results.ceiling),
          rowCells("Bunker: store + parse + SPF/DKIM/DMARC + spam + event", results.bunker),
          ...(before ? [rowCells(`the same, Bunker at ${beforeRoot}`, results.before)] : []),
        ],
        [false, true, false, true, true],
      ),
    );
    const byThread = (r: Row) => ["event loop", "check workers", "JIT and GC", "other"].map((k) => `${k} ${fmtNum(median(r.threads.map((t) => t.get(k) ?? 0)))}`).join(", ");
    console.log(`\nBunker CPU µs per stored message by thread (medians): ${byThread(results.bunker)}${before ? `; at ${beforeRoot}: ${byThread(results.before)}` : ""}`);
    console.log(
      `Bunker server CPU: ${runs(results.bunker.cores, 2)} cores${before ? ` (at ${beforeRoot}: ${runs(results.before.cores, 2)})` : ""}; refused during runs: ${results.failed}; ` +
        `stored sample: spf=${sample?.spf_result} dkim=${sample?.dkim_result} dmarc=${sample?.dmarc_result} verdict=${sample?.spam_verdict}`,
    );
    console.log(
      `targets: >= 500 messages/s (${bMed >= 500 ? "met" : "not met"}), >= 0.6 of the ceiling (${ratio >= 0.6 ? "met" : "not met"}). ` +
        `${m.cores} cores; Bunker (MAIL_INBOUND_THREADS=${process.env.MAIL_INBOUND_THREADS ?? "0"}: its check threads beside the event loop) shares them with its SMTP clients (this process).`,
    );
  } finally {
    discard.stop();
    await before?.stop();
    await bunker.stop();
    await dns.stop();
  }
}
