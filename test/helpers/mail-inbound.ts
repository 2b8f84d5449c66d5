/**
 * Setup for the inbound mail tests (issue 14): a test app with a loopback DNS server
 * (DNS_SERVERS), the real SMTP listener on a loopback port with the app's inbound handler,
 * receiving domains made active over HTTP, mailboxes, and nodemailer as the sending client.
 *
 * On the binary (npm run test:bin) the process's own listener is the MX: `port` is its
 * SMTP port (app.smtpPort) and `smtp` is not there (a listener of the test's own needs the
 * in-process handler, app.inbound).
 */
import { createTransport } from "nodemailer";
import { SmtpListener, type SmtpListenerOptions } from "../../src/core/smtp-listener";
import { ownerWithKey, startTestApp, type TestApp } from "./app";
import { ON_BINARY, inProcessOnly } from "./binary";
import { startDnsServer, type TestDnsServer } from "./dns-server";
import { activeDomain } from "./mail-sending";

export interface InboundEnv {
  app: TestApp;
  dns: TestDnsServer;
  smtp: SmtpListener;
  port: number;
  stop(): Promise<void>;
}

export async function startInbound(env: Record<string, string> = {}, listener: Partial<SmtpListenerOptions> = {}): Promise<InboundEnv> {
  const dns = await startDnsServer();
  const app = await startTestApp({ DNS_SERVERS: dns.server, MAIL_HOSTNAME: "mx.bunker.test", ALLOW_PRIVATE_TARGETS: "true", ...env });
  if (ON_BINARY) {
    if (Object.keys(listener).length) throw new Error("startInbound: listener options need the in-process inbound handler; mark the test source-only");
    if (!app.smtpPort) throw new Error("startInbound: the binary runs without its SMTP listener");
    const e = {
      app,
      dns,
      port: app.smtpPort,
      async stop() {
        await app.stop();
        await dns.stop();
      },
    };
    return inProcessOnly(e, ["smtp"], () => "on the binary the process's own SMTP listener is the MX (e.port); a listener of the test's own needs app.inbound") as unknown as InboundEnv;
  }
  app.webhooks.options.autoKick = false;
  // Messages carry the real date (nodemailer): the app's clock starts at the real time.
  app.clock.set(Date.now());
  const smtp = new SmtpListener({ port: 0, host: "127.0.0.1", log: app.ctx.log, name: "mx.bunker.test", closeTimeoutMs: 500, ...listener });
  smtp.setHandler(app.inbound!);
  const port = await smtp.start();
  return {
    app,
    dns,
    smtp,
    port,
    async stop() {
      await smtp.stop();
      await app.stop();
      await dns.stop();
    },
  };
}

export interface ReceiveWorkspace {
  token: string;
  /** The owner's console token (expires after an hour of clock time) and the workspace slug. */
  session: string;
  slug: string;
  wsId: string;
  fqdn: string;
  domainId: string;
  testAddress: string;
  base: string;
}

let n = 0;
/** A workspace (API key allowing everything) with an active receiving domain. */
export async function receiveWorkspace(e: InboundEnv, intent = "receive", owner?: { token: string; session: string; ws: { id: string; slug: string } }): Promise<ReceiveWorkspace> {
  const { token, session, ws } = owner ?? (await ownerWithKey(e.app));
  const fqdn = `in${++n}.r${Date.now() % 100000}.example`;
  const base = `/mail/v1/workspaces/${ws.id}`;
  const d = await activeDomain(e, token, base, { fqdn, intent });
  return { token, session, slug: ws.slug, wsId: ws.id, fqdn, domainId: d.id, testAddress: d.test_address, base };
}

export async function createMailbox(e: InboundEnv, w: ReceiveWorkspace, body: Record<string, unknown> = {}) {
  const r = await e.app.call("POST", `${w.base}/mailboxes`, { token: w.token, body: { domain_id: w.domainId, local_part: `box${++n}`, ...body } });
  if (r.status !== 201) throw new Error(`mailbox create: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body as { id: string; address: string; local_part: string };
}

/** A nodemailer transport to the listener (plain unless tls is asked for). */
export function client(e: InboundEnv, opts: { requireTLS?: boolean; ignoreTLS?: boolean; pool?: boolean } = {}) {
  return createTransport({
    host: "127.0.0.1",
    port: e.port,
    secure: false,
    ignoreTLS: opts.ignoreTLS ?? !opts.requireTLS,
    requireTLS: opts.requireTLS ?? false,
    tls: { rejectUnauthorized: false },
    name: "client.sender.example",
    pool: opts.pool ?? false,
    connectionTimeout: 5000,
    greetingTimeout: 5000,
    socketTimeout: 10000,
  } as never);
}

/** Sends one message; resolves to nodemailer's info or rejects with its error (responseCode, response). */
export async function sendMail(e: InboundEnv, mail: Record<string, unknown>, opts: Parameters<typeof client>[1] = {}) {
  const t = client(e, opts);
  try {
    return await t.sendMail(mail as never);
  } finally {
    t.close();
  }
}

/** Events of a workspace's mail scope, oldest first. */
export async function mailEvents(app: TestApp, workspaceId: string) {
  const rows = await app.ctx.db.all<{ type: string; data: string }>("SELECT type, data FROM core_events WHERE scope LIKE ? ORDER BY created_at, id", `%mail:${workspaceId}`);
  return rows.map((r) => ({ type: r.type, data: JSON.parse(r.data) }));
}

/**
 * The app's MX as a sending client sees it: on the binary the process's own SMTP listener
 * (app.smtpPort, started by `bunker serve`); in-process a listener on a loopback port wired to
 * the app's inbound handler the way main.ts wires the process's (same config: host name,
 * size and connection limits). Stop it before the app.
 */
export async function appMx(app: TestApp): Promise<{ port: number; stop(): Promise<void> }> {
  if (ON_BINARY) {
    if (!app.smtpPort) throw new Error("appMx: the binary runs without its SMTP listener");
    return { port: app.smtpPort, stop: async () => {} };
  }
  const cfg = app.ctx.config;
  const smtp = new SmtpListener({
    port: 0,
    host: "127.0.0.1",
    log: app.ctx.log,
    name: cfg.mailHostname,
    maxBytes: cfg.smtpMaxMessageBytes,
    maxConnectionsPerIp: cfg.smtpMaxConnectionsPerIp,
    socketTimeoutMs: cfg.smtpIdleTimeoutMs,
    closeTimeoutMs: 500,
  });
  smtp.setHandler(app.inbound!);
  const port = await smtp.start();
  return { port, stop: () => smtp.stop() };
}
