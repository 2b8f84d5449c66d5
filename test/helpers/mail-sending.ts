/**
 * Setup for the mail sending tests: a test app with a loopback DNS server (DNS_SERVERS), a
 * workspace whose sending domain is made active over HTTP (records published on that DNS
 * server, then POST /domains/{id}/verify), a template, and a DKIM verifier (mailauth)
 * that reads the domain's DKIM record from the same DNS server.
 *
 * In-process, the mail module is built with a hook that keeps its sending part, so a test can
 * switch off the worker's after-send kick (`e.sending.autoKick = false`) and run the delivery
 * job by hand (runDelivery). On the binary (npm run test:bin) only the environment reaches
 * the process: its own scheduler delivers (kicked after each send, and every 2 s), `e.sending`
 * is not there, and runDelivery waits over HTTP until the workspaces this env made hold no
 * queued or sending message.
 */
import { dkimVerify } from "mailauth/lib/dkim/verify";
import { SERVICE_MODULES } from "../../src/app";
import { createMailResolver } from "../../src/services/mail/domains/dns";
import type { MailParts } from "../../src/services/mail/part";
import { DELIVER_JOB, type SendService } from "../../src/services/mail/sending/part";
import { ownerWithKey, startTestApp, type TestApp } from "./app";
import { ON_BINARY, inProcessOnly } from "./binary";
import { startDnsServer, type TestDnsServer } from "./dns-server";

export interface SendingEnv {
  app: TestApp;
  dns: TestDnsServer;
  /** The mail module's sending part (in-process only: reading it on the binary throws). */
  sending: SendingService;
  /** Workspaces made by workspaceWithDomain: what runDelivery waits for on the binary. */
  workspaces: MailWorkspace[];
  stop(): Promise<void>;
}
type SendingService = SendService;

let n = 0;

/** A test app whose mail module exposes its sending part (to switch off the after-send kick). */
export async function startSendingApp(env: Record<string, string> = {}): Promise<SendingEnv> {
  const dns = await startDnsServer();
  const appEnv = { DNS_SERVERS: dns.server, MAIL_HOSTNAME: "mx.bunker.test", ...env };
  if (ON_BINARY) {
    const app = await startTestApp(appEnv);
    const e = {
      app,
      dns,
      workspaces: [] as MailWorkspace[],
      async stop() {
        await app.stop();
        await dns.stop();
      },
    };
    return inProcessOnly(e, ["sending"], () => "the sending part lives in the process; the binary's delivery worker is kicked after every send and cannot be switched off") as unknown as SendingEnv;
  }
  let sending!: SendService;
  const modules = SERVICE_MODULES.map((m) =>
    m.name !== "mail"
      ? m
      : {
          ...m,
          create: (d: any) => {
            const parts = m.create(d) as MailParts;
            sending = parts.sending as SendService;
            return parts;
          },
        },
  );
  const app = await startTestApp(appEnv, undefined, { modules });
  app.webhooks.options.autoKick = false;
  return {
    app,
    dns,
    sending,
    workspaces: [],
    async stop() {
      await app.stop();
      await dns.stop();
    },
  };
}

/** The character-strings of an instruction's TXT value ("a" "b" zone-file form, or one plain string). */
const txtStrings = (value: string): string[] => (value.startsWith('"') ? [...value.matchAll(/"([^"]*)"/g)].map((m) => m[1]!) : [value]);

export interface MailWorkspace {
  token: string;
  wsId: string;
  fqdn: string;
  domainId: string;
  selector: string;
  /** "/mail/v1/workspaces/<id>" */
  base: string;
}

/** A workspace owner (API key, or the given owner) with an active sending domain, verified over HTTP against the loopback DNS server. */
export async function workspaceWithDomain(e: SendingEnv, owner?: { token: string; ws: { id: string } }): Promise<MailWorkspace> {
  const { token, ws } = owner ?? (await ownerWithKey(e.app));
  const fqdn = `mail${++n}.send${Date.now() % 100000}.example`;
  const base = `/mail/v1/workspaces/${ws.id}`;
  const d = await activeDomain(e, token, base, { fqdn });
  const w = { token, wsId: ws.id, fqdn, domainId: d.id, selector: d.dkim_selector, base };
  e.workspaces.push(w);
  return w;
}

/** Creates a domain under `base`, publishes its DNS instructions on the loopback DNS server and verifies it over HTTP; the created domain. */
export async function activeDomain(e: { app: TestApp; dns: TestDnsServer }, token: string, base: string, body: { fqdn: string; intent?: string }) {
  const created = await e.app.call("POST", `${base}/domains`, { token, body });
  if (created.status !== 201) throw new Error(`domain create: ${created.status} ${JSON.stringify(created.body)}`);
  for (const ins of created.body.dns_instructions) {
    if (ins.type === "MX") e.dns.add(ins.host, { type: "MX", exchange: ins.value, priority: ins.priority });
    else e.dns.add(ins.host, { type: "TXT", data: txtStrings(ins.value) });
  }
  const v = await e.app.call("POST", `${base}/domains/${created.body.id}/verify`, { token });
  if (v.status !== 200 || v.body.status !== "active") throw new Error(`domain verify: ${v.status} ${JSON.stringify(v.body)}`);
  return created.body;
}

export async function createTemplate(e: SendingEnv, w: MailWorkspace, body: Record<string, unknown>) {
  const r = await e.app.call("POST", `${w.base}/templates`, { token: w.token, body });
  if (r.status !== 201) throw new Error(`template: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

/**
 * Runs the delivery job now (waits for a run in progress, then runs once more). On the binary:
 * waits (polling over HTTP, at most `timeoutMs`) until no workspace of this env has a message
 * queued or sending, i.e. the process's own worker has handed over everything that was due.
 */
export async function runDelivery(e: SendingEnv, timeoutMs = 20_000): Promise<void> {
  if (!ON_BINARY) return e.app.ctx.scheduler.runNow(DELIVER_JOB);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    let busy = 0;
    for (const w of e.workspaces) {
      for (const status of ["queued", "sending"]) {
        const r = await e.app.call("GET", `${w.base}/messages?status=${status}&limit=1`, { token: w.token });
        if (r.status !== 200) throw new Error(`runDelivery: message list answered ${r.status} ${JSON.stringify(r.body)}`);
        busy += r.body.data.length;
      }
    }
    if (busy === 0) return;
    if (Date.now() > deadline) throw new Error(`runDelivery: messages still queued or sending after ${timeoutMs} ms`);
    await Bun.sleep(50);
  }
}

/** mailauth's DKIM verification of a raw message, with the DKIM record read from the loopback DNS server. */
export async function verifyDkim(e: { dns: TestDnsServer }, raw: string) {
  const resolver = createMailResolver([e.dns.server]);
  const dns = async (name: string, rr: string) => {
    if (rr === "TXT") {
      const { records } = await resolver.resolveTxt(name);
      if (records.length) return records.map((r) => [r]);
    }
    throw Object.assign(new Error(`no ${rr} for ${name}`), { code: "ENOTFOUND" });
  };
  return dkimVerify(Buffer.from(raw), { resolver: dns as never });
}
