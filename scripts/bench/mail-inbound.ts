/**
 * `npm run bench -- mail-inbound`: issue 14 "Speed". Messages per second Bunker's inbound
 * SMTP listener accepts (and stores: object store + SQLite, parsed, SPF/DKIM/DMARC checked
 * against a loopback DNS server, spam-scored, email.received recorded) from concurrent
 * nodemailer clients, against a same-run baseline: smtp-server (the library Bunker's
 * listener is built on) accepting and discarding, in its own process.
 *
 * The message: ~10 KB (text/plain), DKIM-signed once up front with a 2048-bit RSA key
 * published on the DNS server (every delivery is verified), from a domain with SPF
 * (ip4:127.0.0.1) and DMARC p=none records. Clients: BENCH_INBOUND_CLIENTS (default 16)
 * nodemailer pooled transports of one connection each, sending back to back from this
 * process; a run counts 250 replies in BENCH_SECONDS (default 5) after BENCH_WARMUP (1).
 * Runs alternate baseline, Bunker BENCH_ROUNDS times (default 2); medians.
 * Targets: >= 500 messages/s and >= 60% of the baseline. Report only; exits 0 either way.
 */
import { generateKeyPairSync } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { dkimSign } from "mailauth/lib/dkim/sign";
import { createTransport } from "nodemailer";
import { startDnsServer, type TestDnsServer } from "../../test/helpers/dns-server";
import { api, benchOwner, benchPrelude, envNumber, fmtNum, freePort, median, procCpuSeconds, sleep, startBunker, table, tempDir } from "./lib";

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

export default async function main() {
  const { seconds, warmup, m } = benchPrelude("mail-inbound", 120, 2 * envNumber("BENCH_ROUNDS", 2, 1));
  const rounds = Math.floor(envNumber("BENCH_ROUNDS", 2, 1));
  const clients = Math.floor(envNumber("BENCH_INBOUND_CLIENTS", 16, 1));

  const dns: TestDnsServer = await startDnsServer();
  const smtpPort = freePort();
  const bunker = await startBunker({
    env: { DNS_SERVERS: dns.server, MAIL_HOSTNAME: "mx.bunker.bench", SMTP_PORT: String(smtpPort), SMTP_MAX_CONNECTIONS_PER_IP: "1000" },
  });
  const discard = await startDiscardServer();
  try {
    // A receiving domain made active over HTTP, and one mailbox.
    const { session, workspaceId } = await benchOwner(bunker.url, "inbound-bench");
    const base = `/mail/v1/workspaces/${workspaceId}`;
    const d = await api(bunker.url, "POST", `${base}/domains`, { token: session, body: { fqdn: "in.bench.example", intent: "receive" } });
    if (d.status !== 201) throw new Error(`domain: ${d.status} ${JSON.stringify(d.body)}`);
    for (const ins of d.body.dns_instructions) {
      if (ins.type === "MX") dns.add(ins.host, { type: "MX", exchange: ins.value, priority: ins.priority });
      else dns.add(ins.host, { type: "TXT", data: txtStrings(ins.value) });
    }
    const v = await api(bunker.url, "POST", `${base}/domains/${d.body.id}/verify`, { token: session });
    if (v.body?.status !== "active") throw new Error(`verify: ${v.status} ${JSON.stringify(v.body)}`);
    const box = await api(bunker.url, "POST", `${base}/mailboxes`, { token: session, body: { domain_id: d.body.id, local_part: "inbox", retention_days: 1 } });
    if (box.status !== 201) throw new Error(`mailbox: ${box.status} ${JSON.stringify(box.body)}`);
    const to = box.body.address as string;

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

    const results: { baseline: number[]; bunker: number[]; failed: number; cpu: number[] } = { baseline: [], bunker: [], failed: 0, cpu: [] };
    for (let r = 0; r < rounds; r++) {
      results.baseline.push((await drive(discard.port, raw, to, clients, warmup, seconds)).perSec);
      const cpu0 = procCpuSeconds(bunker.pid);
      const b = await drive(smtpPort, raw, to, clients, warmup, seconds);
      const cpu1 = procCpuSeconds(bunker.pid);
      results.bunker.push(b.perSec);
      results.failed += b.failed;
      if (cpu0 !== null && cpu1 !== null) results.cpu.push((cpu1 - cpu0) / (seconds + warmup));
    }
    const stored = await api(bunker.url, "GET", `${base}/mailboxes/${box.body.id}/messages?limit=1`, { token: session });
    const sample = stored.body.data?.[0];
    const bMed = median(results.bunker);
    const baseMed = median(results.baseline);
    console.log(
      table(
        ["target", "messages/s (median)", "runs", "ratio"],
        [
          ["smtp-server, accept and discard (baseline)", fmtNum(baseMed), results.baseline.map((x) => fmtNum(x)).join(", "), "1.00"],
          ["Bunker: store + parse + SPF/DKIM/DMARC + spam + event", fmtNum(bMed), results.bunker.map((x) => fmtNum(x)).join(", "), fmtNum(bMed / baseMed, 2)],
        ],
        [false, true, false, true],
      ),
    );
    console.log(
      `\nBunker server CPU: ${results.cpu.length ? results.cpu.map((c) => `${fmtNum(c, 2)} cores`).join(", ") : "n/a"}; refused during runs: ${results.failed}; ` +
        `stored sample: spf=${sample?.spf_result} dkim=${sample?.dkim_result} dmarc=${sample?.dmarc_result} verdict=${sample?.spam_verdict}`,
    );
    console.log(`targets: >= 500 messages/s (${bMed >= 500 ? "met" : "not met"}), >= 60% of the baseline (${bMed / baseMed >= 0.6 ? "met" : "not met"}). ${m.cores} cores shared with the client (this process) and the baseline.`);
  } finally {
    discard.stop();
    await bunker.stop();
    await dns.stop();
  }
}
