/**
 * `bunker listen`: a signed-webhook receiver for local development, in the manner of
 * `stripe listen` or Svix Play. It listens on loopback, checks each delivery's Standard
 * Webhooks signature against the secrets it was given (the same check a production receiver
 * makes: signing.ts's verifyStandard, with its 5-minute timestamp tolerance and constant-time
 * compare), prints one line per delivery and the pretty JSON body, and answers 200 when the
 * signature verifies, 401 otherwise (so Bunker's delivery log shows the failure and retries).
 *
 * It is a development tool: it keeps nothing, and a webhook-id seen before is marked
 * "(repeat)" (a retry or a replay) but still answered 200, as a receiver that dedupes would.
 */
import { parseArgs } from "node:util";
import { reason } from "../core/startup";
import { SECRET_PREFIX, TIMESTAMP_TOLERANCE_SEC, verifyStandard } from "../kernel/webhooks";

export const LISTEN_USAGE = `Usage: bunker listen --secret whsec_... [--secret whsec_...] [--port 9000] [--host 127.0.0.1] [--count N]

Receives webhook deliveries on http://<host>:<port>/ (any path), verifies their Standard
Webhooks signature with the secret(s) (give the old and the new one during a rotation), and
prints "<time> <webhook-id> <type> signature ok|BAD SIGNATURE" and the JSON body of each.
Answers 200 when the signature verifies, 401 otherwise. --count N exits (status 0) after N
verified deliveries, repeats included.`;

const DEFAULT_PORT = 9000;
/** Webhook bodies are small JSON envelopes; a bigger body is not a delivery. */
const MAX_BODY_BYTES = 1024 * 1024;

export interface ListenOptions {
  secrets: string[];
  port: number;
  host: string;
  /** Exit after this many verified deliveries; null: run until stopped. */
  count: number | null;
}

export class UsageError extends Error {}

function integer(flag: string, raw: string | undefined, min: number, max: number): number | undefined {
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || n < min || n > max) throw new UsageError(`--${flag} must be a whole number from ${min} to ${max}, got "${raw}"`);
  return n;
}

/** A secret as shown by the endpoint API: `whsec_` + base64 of the key. */
function checkSecret(secret: string): string {
  if (!secret.startsWith(SECRET_PREFIX)) throw new UsageError(`--secret must be the endpoint's signing secret (whsec_...), got "${secret.slice(0, 8)}..."`);
  const key = secret.slice(SECRET_PREFIX.length);
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(key) || Buffer.from(key, "base64").length === 0) throw new UsageError("--secret: the part after whsec_ must be base64");
  return secret;
}

export function parseListenArgs(args: string[]): ListenOptions {
  let values;
  try {
    ({ values } = parseArgs({
      args,
      strict: true,
      allowPositionals: false,
      options: {
        secret: { type: "string", multiple: true },
        port: { type: "string" },
        host: { type: "string" },
        count: { type: "string" },
      },
    }));
  } catch (e) {
    throw new UsageError(reason(e));
  }
  if (!values.secret?.length) throw new UsageError("--secret is required: the endpoint's signing_secret (whsec_...)");
  return {
    secrets: values.secret.map(checkSecret),
    port: integer("port", values.port, 0, 65535) ?? DEFAULT_PORT,
    host: values.host ?? "127.0.0.1",
    count: integer("count", values.count, 1, 1_000_000) ?? null,
  };
}

export interface Verdict {
  ok: boolean;
  /** Why a delivery failed, for the printed line and the 401 body. */
  problem?: string;
}

/** The receiver's check of one delivery, with a reason a developer can act on when it fails. */
export function checkDelivery(secrets: string[], headers: Headers, body: string, nowSec: number): Verdict {
  const msgId = headers.get("webhook-id");
  const timestamp = headers.get("webhook-timestamp");
  const signature = headers.get("webhook-signature");
  const missing = [!msgId && "webhook-id", !timestamp && "webhook-timestamp", !signature && "webhook-signature"].filter(Boolean);
  if (missing.length) return { ok: false, problem: `missing header ${missing.join(", ")}` };
  const timestampSec = /^\d{1,11}$/.test(timestamp!) ? Number(timestamp) : NaN;
  if (Number.isNaN(timestampSec)) return { ok: false, problem: "webhook-timestamp is not unix seconds" };
  const skew = Math.abs(nowSec - timestampSec);
  if (skew > TIMESTAMP_TOLERANCE_SEC) return { ok: false, problem: `webhook-timestamp is ${skew} s from this machine's clock (tolerance ${TIMESTAMP_TOLERANCE_SEC} s)` };
  if (!verifyStandard(secrets, { msgId: msgId!, timestampSec, signature: signature! }, body, nowSec)) {
    return { ok: false, problem: `no signature matches the secret${secrets.length > 1 ? "s" : ""} given` };
  }
  return { ok: true };
}

/** A body that is not JSON is no delivery: only its start is worth printing. */
const RAW_SHOWN = 2000;

function pretty(body: string): { type: string; text: string } {
  try {
    const parsed = JSON.parse(body) as unknown;
    const type = parsed && typeof parsed === "object" && typeof (parsed as { type?: unknown }).type === "string" ? (parsed as { type: string }).type : "-";
    return { type, text: JSON.stringify(parsed, null, 2) };
  } catch {
    return { type: "-", text: body.length > RAW_SHOWN ? `${body.slice(0, RAW_SHOWN)}... (${body.length} characters, not JSON)` : body };
  }
}

const stamp = (d: Date) => d.toISOString().replace(/\.\d{3}Z$/, "Z");

export interface Listener {
  port: number;
  /** Resolves when --count is reached (or stop() is called). */
  done: Promise<void>;
  stop(): Promise<void>;
}

/**
 * Starts the receiver. `out` gets every line (the CLI passes stdout). The default host also
 * takes ::1 on the same port when it can: a URL with `localhost` may resolve to either.
 */
export function startListener(o: ListenOptions, out: (line: string) => void): Listener {
  const seen = new Set<string>();
  let verified = 0;
  let finish!: () => void;
  const done = new Promise<void>((r) => (finish = r));

  const fetch = async (req: Request): Promise<Response> => {
    if (req.method !== "POST") return new Response("bunker listen takes webhook deliveries: POST\n", { status: 405, headers: { allow: "POST" } });
    const body = await req.text();
    const at = new Date();
    const verdict = checkDelivery(o.secrets, req.headers, body, Math.floor(at.getTime() / 1000));
    const id = req.headers.get("webhook-id") ?? "-";
    const { type, text } = pretty(body);
    let mark = "";
    if (verdict.ok) {
      if (seen.has(id)) mark = " (repeat)";
      seen.add(id);
      verified++;
    }
    out(`${stamp(at)} ${id} ${type} ${verdict.ok ? "signature ok" : `BAD SIGNATURE (${verdict.problem})`}${mark}\n${text}\n`);
    if (verdict.ok && o.count !== null && verified >= o.count) finish();
    return verdict.ok
      ? new Response("signature ok\n", { status: 200 })
      : new Response(`bad signature: ${verdict.problem}\n`, { status: 401 });
  };

  const serve = (hostname: string, port: number) => Bun.serve({ hostname, port, reusePort: false, maxRequestBodySize: MAX_BODY_BYTES, fetch });
  const main = serve(o.host, o.port);
  const servers = [main];
  if (o.host === "127.0.0.1") {
    try {
      servers.push(serve("::1", main.port!));
    } catch {
      // No IPv6 loopback, or the port is taken there: 127.0.0.1 alone is what was asked for.
    }
  }
  let stopped: Promise<void> | null = null;
  const stop = () =>
    // Graceful: the response to the last delivery goes out before the sockets close.
    (stopped ??= Promise.all(servers.map((s) => s.stop())).then(finish));
  return { port: main.port!, done, stop };
}

/** The CLI command: parses the flags, listens, exits 0 at --count or on Ctrl-C; a usage error exits 2. */
export async function listenCommand(args: string[]): Promise<never> {
  if (args.includes("--help") || args.includes("-h")) {
    console.log(LISTEN_USAGE);
    process.exit(0);
  }
  let o: ListenOptions;
  try {
    o = parseListenArgs(args);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    console.error(`${e.message}\n\n${LISTEN_USAGE}`);
    process.exit(2);
  }
  let listener: Listener;
  try {
    listener = startListener(o, (line) => process.stdout.write(line));
  } catch (e) {
    const inUse = (e as { code?: string })?.code === "EADDRINUSE";
    console.error(`cannot listen on ${o.host}:${o.port}: ${inUse ? "the port is already in use (another bunker listen?): pick another --port" : reason(e)}`);
    process.exit(1);
  }
  const host = o.host.includes(":") ? `[${o.host}]` : o.host;
  process.stdout.write(`listening on http://${host}:${listener.port} (Ctrl-C to stop)\n`);
  const stopOn = (signal: NodeJS.Signals) => process.on(signal, () => void listener.stop());
  stopOn("SIGINT");
  stopOn("SIGTERM");
  await listener.done;
  await listener.stop();
  process.exit(0);
}
