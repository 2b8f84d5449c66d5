/**
 * One attempt to hand one message to the next hop: the relay (SMTP_RELAY_URL) when set,
 * otherwise the recipient domain's MX hosts, lowest preference first (the domain itself
 * when it has no MX, RFC 5321 §5.1). DKIM-signed with the sending domain's key
 * (nodemailer's signer), envelope sender a per-message bounce address (VERP).
 *
 * The outcome is what the message log records:
 * - sent: a hop answered 250 to the DATA (left our hands; not yet "delivered");
 * - bounced: a 5xx answer (permanent: no retry, the recipient is suppressed);
 * - deferred: a 4xx answer, or no hop reachable (retry later with backoff).
 * Each carries the SMTP conversation (commands and replies, never credentials or the body).
 *
 * MX targets are user-influenced (the recipient's domain): their addresses go through the
 * same public-address check as every outbound call (no loopback, private or link-local
 * hosts unless ALLOW_PRIVATE_TARGETS), so the MTA cannot be pointed at internal services.
 */
import { createPrivateKey, type KeyObject } from "node:crypto";
import { isIP } from "node:net";
import type { createTransport } from "nodemailer";
import { lazy } from "../../../core/lazy";
import { isPublicAddress } from "../../../core/outbound-http";

// Loaded by the first message composed, not at start-up (core/lazy.ts).
const nodemailer = lazy(() => require("nodemailer") as typeof import("nodemailer"));
// Read when the first transcript line is formatted: importing util.format loads node's inspect module.
const format = lazy(() => (require("node:util") as typeof import("node:util")).format);

export interface OutboundMail {
  /** Our message id: used for the Message-ID header. */
  id: string;
  /** Envelope sender (MAIL FROM), e.g. bounces+<id>@<domain>. */
  envelopeFrom: string;
  from: string;
  to: string;
  subject: string;
  html: string | null;
  text: string | null;
  /** Extra headers (List-Unsubscribe, ...). */
  headers?: Record<string, string>;
}

export interface DkimKey {
  domainName: string;
  keySelector: string;
  privateKey: string;
}

export type DeliveryOutcome =
  | { kind: "sent"; code: number; response: string; host: string; transcript: string }
  | { kind: "deferred"; code: number | null; detail: string; transcript: string }
  | { kind: "bounced"; code: number; detail: string; transcript: string };

export interface MxRecord {
  exchange: string;
  priority: number;
}

export interface DeliveryOptions {
  /** smtp(s)://user:pass@host:port; null delivers to the recipient's MX hosts. */
  relayUrl: string | null;
  resolveMx(domain: string): Promise<MxRecord[]>;
  /** A and AAAA addresses of a host. */
  resolveAddresses(host: string): Promise<string[]>;
  /** Port of MX hosts: 25 (tests point it at a loopback sink). */
  mxPort: number;
  allowPrivateTargets: boolean;
  /** Refuse hops that do not offer STARTTLS (otherwise TLS is used when offered). */
  requireTls: boolean;
  /** Verify the hop's certificate (MX hosts rarely have one for their name: off by default). */
  verifyTls: boolean;
  /** Extra CA (tests: a self-signed sink certificate). */
  tlsCa?: string;
  /** EHLO name: this server's MAIL_HOSTNAME. */
  heloName: string;
  timeoutMs: number;
}

/** Records the SMTP conversation nodemailer logs at debug level, minus credentials. */
function transcriptLogger() {
  const lines: string[] = [];
  const record = (data: { tnx?: string } | undefined, message: string, ...args: unknown[]) => {
    if (data?.tnx !== "client" && data?.tnx !== "server") return;
    let line = args.length ? format()(message, ...args) : message;
    // AUTH exchanges carry credentials (base64); the body is never logged by nodemailer.
    if (/^(C: )?AUTH\b/i.test(line) || /^C: [A-Za-z0-9+/=]{8,}$/.test(line)) line = line.replace(/(AUTH\s+\S+).*/i, "$1 [redacted]").replace(/^C: [A-Za-z0-9+/=]{8,}$/, "C: [redacted]");
    lines.push(line.length > 500 ? `${line.slice(0, 500)}…` : line);
  };
  const noop = () => {};
  return {
    lines,
    logger: { level: noop, trace: noop, debug: record, info: record, warn: noop, error: noop, fatal: noop },
  };
}

/**
 * Parsed DKIM keys by PEM. nodemailer hands the key to crypto's sign(), which parses a PEM
 * string on every call: a third of an RSA-2048 signature's cost (0.83 ms against 0.58 ms
 * here). A handful of sending domains, so a small map; the oldest entry goes first.
 */
const dkimKeys = new Map<string, KeyObject>();
const DKIM_KEYS_MAX = 256;
function dkimKeyObject(pem: string): KeyObject {
  let k = dkimKeys.get(pem);
  if (!k) {
    k = createPrivateKey(pem);
    if (dkimKeys.size >= DKIM_KEYS_MAX) dkimKeys.delete(dkimKeys.keys().next().value!);
    dkimKeys.set(pem, k);
  }
  return k;
}

interface SmtpError {
  code?: string;
  responseCode?: number;
  response?: string;
  message?: string;
}

const domainOf = (address: string) => address.slice(address.lastIndexOf("@") + 1).toLowerCase();

/** Hops to try, in order: the relay, or the MX hosts (the domain itself without MX). */
async function hops(to: string, o: DeliveryOptions): Promise<{ host: string; port: number; servername: string; secure: boolean; auth?: { user: string; pass: string } }[]> {
  if (o.relayUrl) {
    const u = new URL(o.relayUrl);
    const secure = u.protocol === "smtps:";
    const auth = u.username ? { user: decodeURIComponent(u.username), pass: decodeURIComponent(u.password) } : undefined;
    return [{ host: u.hostname, port: Number(u.port) || (secure ? 465 : 587), servername: u.hostname, secure, auth }];
  }
  const domain = domainOf(to);
  let mx: MxRecord[] = [];
  try {
    mx = await o.resolveMx(domain);
  } catch (e) {
    if ((e as { code?: string }).code !== "ENODATA" && (e as { code?: string }).code !== "ENOTFOUND") throw e;
  }
  // A null MX ("." , RFC 7505) says the domain accepts no mail.
  if (mx.length === 1 && (mx[0]!.exchange === "" || mx[0]!.exchange === ".")) return [];
  const names = mx.length ? [...mx].sort((a, b) => a.priority - b.priority).map((m) => m.exchange.replace(/\.$/, "")) : [domain];
  const out: { host: string; port: number; servername: string; secure: boolean }[] = [];
  for (const name of names) {
    const addresses = isIP(name) ? [name] : await o.resolveAddresses(name).catch(() => [] as string[]);
    for (const ip of addresses) {
      if (!o.allowPrivateTargets && !isPublicAddress(ip)) continue;
      out.push({ host: ip, port: o.mxPort, servername: name, secure: false });
    }
  }
  return out;
}

/** The message as every hop gets it: headers, envelope and bodies (nodemailer builds the MIME). */
function messageOptions(mail: OutboundMail, dkim: DkimKey | null) {
  return {
    messageId: `<${mail.id}@${dkim?.domainName ?? domainOf(mail.from)}>`,
    envelope: { from: mail.envelopeFrom, to: [mail.to] },
    from: mail.from,
    to: mail.to,
    subject: mail.subject,
    ...(mail.text !== null ? { text: mail.text } : {}),
    ...(mail.html !== null ? { html: mail.html } : {}),
    headers: mail.headers ?? {},
  };
}

/**
 * The DKIM-signed RFC 5322 message `deliver` would hand a hop, as bytes, without any network
 * (nodemailer's buffering stream transport): the sandbox domain's mail to a mailbox of this
 * instance goes through the inbound path as this.
 */
export async function compose(mail: OutboundMail, dkim: DkimKey): Promise<Uint8Array> {
  const transport = nodemailer().createTransport({ streamTransport: true, buffer: true, newline: "\r\n", dkim: { ...dkim, privateKey: dkimKeyObject(dkim.privateKey) } } as Parameters<typeof createTransport>[0]);
  const info = await transport.sendMail(messageOptions(mail, dkim));
  return new Uint8Array((info as unknown as { message: Buffer }).message);
}

/** One delivery attempt of `mail`; never throws for SMTP or network trouble (that is an outcome). */
export async function deliver(mail: OutboundMail, dkim: DkimKey | null, o: DeliveryOptions): Promise<DeliveryOutcome> {
  const { lines, logger } = transcriptLogger();
  const transcript = () => lines.join("\n");
  let targets: Awaited<ReturnType<typeof hops>>;
  try {
    targets = await hops(mail.to, o);
  } catch (e) {
    return { kind: "deferred", code: null, detail: `DNS lookup failed: ${(e as Error).message}`.slice(0, 500), transcript: "" };
  }
  if (!targets.length) {
    // No MX and no address, a null MX, or only addresses we may not connect to: nothing will change on retry.
    return { kind: "bounced", code: 550, detail: `no deliverable mail host for ${domainOf(mail.to)}`, transcript: "" };
  }
  let last: { code: number | null; detail: string } = { code: null, detail: "not attempted" };
  for (const t of targets) {
    lines.push(`* connecting to ${t.servername} (${t.host}:${t.port})`);
    const transport = nodemailer().createTransport({
      host: t.host,
      port: t.port,
      secure: t.secure,
      name: o.heloName,
      auth: "auth" in t ? t.auth : undefined,
      requireTLS: o.requireTls,
      tls: { servername: t.servername, rejectUnauthorized: o.verifyTls, ...(o.tlsCa ? { ca: o.tlsCa } : {}) },
      connectionTimeout: o.timeoutMs,
      greetingTimeout: o.timeoutMs,
      socketTimeout: o.timeoutMs,
      logger,
      debug: true,
      ...(dkim ? { dkim: { ...dkim, privateKey: dkimKeyObject(dkim.privateKey) } } : {}),
    } as Parameters<typeof createTransport>[0]);
    try {
      const info = await transport.sendMail({
        ...messageOptions(mail, dkim),
        // Where the hop advertises DSN (RFC 3461), ask for success, failure and delay
        // reports: they come back to the VERP address and feed the message's status (part 2).
        dsn: { id: mail.id, return: "headers", notify: ["success", "failure", "delay"], recipient: mail.to },
      });
      const response = String((info as { response?: string }).response ?? "");
      return { kind: "sent", code: Number(response.slice(0, 3)) || 250, response: response.slice(0, 500), host: t.servername, transcript: transcript() };
    } catch (e) {
      const err = e as SmtpError;
      const detail = (err.response ?? err.message ?? String(e)).slice(0, 500);
      // Permanent only when the hop refused this message or recipient (MAIL FROM, RCPT TO,
      // DATA: nodemailer's EENVELOPE / EMESSAGE). A 5xx to STARTTLS or AUTH is about the hop.
      const refused = err.code === "EENVELOPE" || err.code === "EMESSAGE";
      if (refused && err.responseCode && err.responseCode >= 500 && err.responseCode < 600) {
        return { kind: "bounced", code: err.responseCode, detail, transcript: transcript() };
      }
      // 4xx or no answer: the next MX may take it; otherwise it is deferred.
      last = { code: err.responseCode ?? null, detail: err.code ? `${err.code}: ${detail}` : detail };
      lines.push(`* ${last.detail}`);
    } finally {
      transport.close();
    }
  }
  return { kind: "deferred", code: last.code, detail: last.detail, transcript: transcript() };
}
