// source-only: listens from an in-process child app (fixtures/listen-child.ts) and reads the store through app.ctx after the restart
/**
 * Durability of received mail (issue 14): the SMTP reply is sent only after the message is
 * stored. A Bunker process is SIGKILLed while clients deliver to it; an app started again on
 * the same data must hold every message a client got 250 for (with its raw object), and
 * nothing half-stored. Messages the kill cut off got no 250: their senders retry.
 */
import { afterAll, expect, test } from "bun:test";
import { join } from "node:path";
import { createTransport } from "nodemailer";
import { startTestApp } from "../../helpers/app";
import { startDnsServer } from "../../helpers/dns-server";
import { createMailbox, receiveWorkspace, startInbound } from "../../helpers/mail-inbound";

const CHILD = join(import.meta.dir, "fixtures", "listen-child.ts");
const cleanups: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c().catch(() => {});
});

test("SIGKILL while mail arrives: every message answered 250 is stored after a restart", async () => {
  const dns = await startDnsServer();
  cleanups.push(() => dns.stop());
  // 1. A workspace with an active receiving domain and a mailbox (then the app stops).
  const e = await startInbound({ DNS_SERVERS: dns.server });
  const w = await receiveWorkspace({ ...e, dns });
  const box = await createMailbox(e, w);
  const dir = e.app.dir;
  const databaseUrl = e.app.ctx.config.databaseUrl;
  await e.stop(); // its own DNS server too; the records the test needs are on `dns`

  // 2. A separate process listens; four clients deliver until it is killed.
  const child = Bun.spawn([process.execPath, CHILD], {
    env: { ...process.env, DATA_DIR: dir, DNS_SERVERS: dns.server, ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}) },
    stdout: "pipe",
    stderr: "inherit",
  });
  const reader = child.stdout.getReader();
  let out = "";
  while (!/port \d+/.test(out)) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`child exited: ${out}`);
    out += new TextDecoder().decode(value);
  }
  const port = Number(/port (\d+)/.exec(out)![1]);
  const accepted: string[] = [];
  let stop = false;
  const worker = async (k: number) => {
    // Generous timeouts: the first message loads the parser and the authentication libraries,
    // which takes seconds on a loaded machine; a kill resets the connection at once anyway.
    const t = createTransport({ host: "127.0.0.1", port, secure: false, ignoreTLS: true, connectionTimeout: 30_000, greetingTimeout: 30_000, socketTimeout: 30_000 } as never);
    for (let i = 0; !stop; i++) {
      const id = `<crash-${k}-${i}@sender.example>`;
      try {
        await t.sendMail({ from: "a@sender.example", to: box.address, subject: `crash ${k} ${i}`, text: "x".repeat(2000), messageId: id } as never);
        accepted.push(id);
      } catch {
        break; // the server went away
      }
    }
    t.close();
  };
  const workers = [0, 1, 2, 3].map(worker);
  const deadline = Date.now() + 30_000;
  while (accepted.length < 20 && Date.now() < deadline) await Bun.sleep(5);
  child.kill("SIGKILL");
  await child.exited;
  stop = true;
  await Promise.all(workers);
  expect(child.signalCode).toBe("SIGKILL");
  expect(accepted.length).toBeGreaterThanOrEqual(20);

  // 3. Restart on the same data.
  const again = await startTestApp({ DNS_SERVERS: dns.server, ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}) }, dir);
  cleanups.push(() => again.stop());
  const rows = await again.ctx.db.all<{ rfc822_message_id: string; raw_object_key: string }>("SELECT rfc822_message_id, raw_object_key FROM mail_received WHERE mailbox_id = ?", box.id);
  const stored = new Set(rows.map((r) => r.rfc822_message_id));
  expect(accepted.filter((id) => !stored.has(id))).toEqual([]);
  for (const r of rows) expect(await again.ctx.objects.exists(r.raw_object_key)).toBe(true);
  const seqs = await again.ctx.db.all<{ seq: number }>("SELECT seq FROM mail_received WHERE mailbox_id = ? ORDER BY seq", box.id);
  expect(seqs.map((s) => Number(s.seq))).toEqual(seqs.map((_, i) => i + 1));
}, 90_000);
