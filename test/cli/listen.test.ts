/**
 * `bunker listen` against real deliveries: a server process (source, or the binary on
 * `npm run test:bin`) with ALLOW_PRIVATE_TARGETS=true delivers to the listener process over
 * loopback; forged, stale and wrongly keyed deliveries come from the independent
 * standardwebhooks library. Both processes run on the real clock, as a developer's would;
 * on `npm run test:pg` the server runs on PostgreSQL.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Webhook } from "standardwebhooks";
import { parseListenArgs } from "../../src/cli/listen";
import { BINARY } from "../helpers/binary";
import { bunkerCommand, cliEnv, mustStart, runCli, type ServerProcess } from "../helpers/cli";
import { testDatabaseUrl } from "../helpers/engine";
import { until } from "../helpers/until";

let server: ServerProcess;
let token = "";
let hooks = "";

async function api(method: string, path: string, body?: unknown) {
  const res = await fetch(server.url + path, {
    method,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

async function ok(method: string, path: string, body?: unknown) {
  const r = await api(method, path, body);
  if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

/** A `bunker listen` process; `port` is the one it printed (started with --port 0). */
interface ListenProcess {
  port: number;
  url: string;
  proc: ReturnType<typeof Bun.spawn>;
  output(): string;
  /** Waits until the output holds `n` lines matching `re`. */
  lines(re: RegExp, n: number): Promise<string[]>;
}

const started: ListenProcess[] = [];

async function listen(args: string[]): Promise<ListenProcess> {
  // The binary runs where no repository is; the source from the repository.
  const cwd = BINARY ? tmpdir() : resolve(import.meta.dir, "../..");
  const proc = Bun.spawn(bunkerCommand(["listen", "--port", "0", ...args]), { cwd, env: cliEnv(), stdout: "pipe", stderr: "pipe" });
  let text = "";
  void (async () => {
    const d = new TextDecoder();
    for await (const c of proc.stdout as ReadableStream<Uint8Array>) text += d.decode(c, { stream: true });
  })();
  const port = Number(
    await until("listening line", async () => {
      if (proc.exitCode !== null) throw new Error(`bunker listen exited with ${proc.exitCode}: ${await new Response(proc.stderr as ReadableStream).text()}`);
      return /^listening on http:\/\/127\.0\.0\.1:(\d+) \(Ctrl-C to stop\)$/m.exec(text)?.[1];
    }, 45_000),
  );
  const p: ListenProcess = {
    port,
    url: `http://127.0.0.1:${port}`,
    proc,
    output: () => text,
    lines: (re, n) => until(`${n} lines like ${re}`, () => {
      const found = text.split("\n").filter((l) => re.test(l));
      return found.length >= n ? found : null;
    }),
  };
  started.push(p);
  return p;
}

/** A mail webhook endpoint pointing at `url`; resolves with its id and secret. */
async function endpoint(url: string, event_types: string[] = []) {
  const ep = await ok("POST", `${hooks}/endpoints`, { url, event_types });
  return { id: ep.id as string, secret: ep.signing_secret as string };
}

beforeAll(async () => {
  // On `npm run test:pg` the server's events and deliveries go through PostgreSQL.
  const databaseUrl = await testDatabaseUrl();
  server = await mustStart({
    DATA_DIR: mkdtempSync(join(tmpdir(), "bunker-listen-")),
    SMTP_PORT: "off",
    CONSOLE_SIGNUP: "open",
    ALLOW_PRIVATE_TARGETS: "true",
    ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
  });
  const signup = await fetch(`${server.url}/platform/v1/auth/signup`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email: "ada@example.com", username: "ada", password: "correct horse battery" }),
  });
  token = ((await signup.json()) as { access_token: string }).access_token;
  const ws = await ok("POST", "/platform/v1/workspaces", { slug: "acme", display_name: "Acme" });
  hooks = `/mail/v1/workspaces/${ws.id}/webhooks`;
});

afterAll(async () => {
  for (const p of started) if (p.proc.exitCode === null) p.proc.kill("SIGTERM");
  await Promise.all(started.map((p) => p.proc.exited));
  await server?.stop();
});

describe("bunker listen", () => {
  test("verifies the server's deliveries (test route, a real event, a replay marked repeat) and exits 0 at --count", async () => {
    // The endpoint is made first (its secret is what the listener needs), then pointed at the listener's port.
    const ep = await endpoint("http://127.0.0.1:9/unused", ["email.sent", "domain.created"]);
    const l = await listen(["--secret", ep.secret, "--count", "3"]);
    await ok("PATCH", `${hooks}/endpoints/${ep.id}`, { url: `${l.url}/hook` });

    const tried = await ok("POST", `${hooks}/endpoints/${ep.id}/test`, { event_type: "email.sent" });
    expect(tried).toMatchObject({ succeeded: true, status_code: 200, response_body: "signature ok\n" });
    const [first] = await l.lines(/signature ok/, 1);
    expect(first).toMatch(new RegExp(`^\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ ${tried.event_id} email\\.sent signature ok$`));

    // A real event: adding a mail domain emits domain.created, delivered by the server's scheduler.
    await ok("POST", `/mail/v1/workspaces/${hooks.split("/")[4]}/domains`, { fqdn: "mail.acme.example", intent: "send" });
    const [, real] = await l.lines(/signature ok/, 2);
    const eventId = /^\S+ (evt_[0-9a-f]{32}) domain\.created signature ok$/.exec(real)?.[1];
    expect(eventId).toBeDefined();
    // The pretty body follows its line.
    expect(l.output()).toContain(`  "type": "domain.created",\n`);
    expect(l.output()).toContain(`"fqdn": "mail.acme.example"`);

    const replayed = await ok("POST", `${hooks}/events/${eventId}/replay?endpoint_id=${ep.id}`);
    expect(replayed.data[0]).toMatchObject({ succeeded: true, status_code: 200 });
    expect(await l.lines(/signature ok \(repeat\)$/, 1)).toEqual([expect.stringContaining(`${eventId} domain.created signature ok (repeat)`)]);

    // The third verified delivery was the last asked for.
    expect(await l.proc.exited).toBe(0);
    expect(l.output()).not.toContain("BAD SIGNATURE");
  });

  test("answers 401 BAD SIGNATURE to a forged signature, a stale timestamp, missing headers and a rotated-away secret", async () => {
    const ep = await endpoint("http://127.0.0.1:9/unused", ["email.sent"]);
    const l = await listen(["--secret", ep.secret]);
    const body = JSON.stringify({ id: "evt_forged", type: "email.sent", created_at: new Date().toISOString(), data: {} });
    const post = (headers: Record<string, string>) => fetch(`${l.url}/hook`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body });
    const signed = (secret: string, at: Date) => ({ "webhook-id": "evt_forged", "webhook-timestamp": String(Math.floor(at.getTime() / 1000)), "webhook-signature": new Webhook(secret).sign("evt_forged", at, body) });

    const forged = await post(signed("whsec_" + Buffer.from("not the endpoint's key").toString("base64"), new Date()));
    expect(forged.status).toBe(401);
    expect(await forged.text()).toBe("bad signature: no signature matches the secret given\n");
    // Signed with the right key, but 6 minutes old: the tolerance is 5.
    const stale = await post(signed(ep.secret, new Date(Date.now() - 6 * 60_000)));
    expect(stale.status).toBe(401);
    expect(await stale.text()).toMatch(/^bad signature: webhook-timestamp is 3[6-9]\d s from this machine's clock \(tolerance 300 s\)\n$/);
    const bare = await post({});
    expect(bare.status).toBe(401);
    // A body of 1 MiB is read (and judged); one byte more is refused unread.
    const sized = (n: number) => fetch(`${l.url}/hook`, { method: "POST", body: "x".repeat(n) }).then((r) => r.status);
    expect(await sized(1024 * 1024)).toBe(401);
    expect(await sized(1024 * 1024 + 1)).toBe(413);
    // Just inside the tolerance, the right key verifies.
    const fresh = await post(signed(ep.secret, new Date(Date.now() - 4 * 60_000)));
    expect(fresh.status).toBe(200);

    // The server signs with a new secret at once (grace 0); the listener still holds the old one.
    await ok("PATCH", `${hooks}/endpoints/${ep.id}`, { url: `${l.url}/hook` });
    const rotated = await ok("POST", `${hooks}/endpoints/${ep.id}/rotate-secret`, { grace_hours: 0 });
    const tried = await ok("POST", `${hooks}/endpoints/${ep.id}/test`, { event_type: "email.sent" });
    expect(tried).toMatchObject({ succeeded: false, status_code: 401, response_body: "bad signature: no signature matches the secret given\n" });

    const bad = await l.lines(/BAD SIGNATURE/, 5);
    expect(bad[0]).toMatch(/^\S+ evt_forged email\.sent BAD SIGNATURE \(no signature matches the secret given\)$/);
    expect(bad[2]).toMatch(/^\S+ - email\.sent BAD SIGNATURE \(missing header webhook-id, webhook-timestamp, webhook-signature\)$/);
    expect(bad[3]).toMatch(/^\S+ - - BAD SIGNATURE/);
    // Of a body that is not JSON, only the start is printed.
    expect(l.output()).toContain(`${"x".repeat(2000)}... (1048576 characters, not JSON)\n`);
    expect(bad[4]).toContain(`${tried.event_id} email.sent BAD SIGNATURE`);

    // Given both secrets (a rotation with a grace period), it verifies either.
    const both = await listen(["--secret", ep.secret, "--secret", rotated.signing_secret, "--count", "1"]);
    await ok("PATCH", `${hooks}/endpoints/${ep.id}`, { url: `${both.url}/hook` });
    expect(await ok("POST", `${hooks}/endpoints/${ep.id}/test`, { event_type: "email.sent" })).toMatchObject({ succeeded: true, status_code: 200 });
    expect(await both.proc.exited).toBe(0);
  });

  test("flags: --secret required and whsec_ base64, --port 0-65535 and --count 1-1000000 at their bounds", () => {
    const secret = "whsec_aGVsbG8=";
    const usage = (args: string[]) => () => parseListenArgs(args);
    expect(parseListenArgs(["--secret", secret])).toEqual({ secrets: [secret], port: 9000, host: "127.0.0.1", count: null });
    expect(parseListenArgs([`--secret=${secret}`, "--secret", "whsec_d29ybGQ=", "--port", "0", "--count", "1", "--host", "::1"])).toEqual({ secrets: [secret, "whsec_d29ybGQ="], port: 0, host: "::1", count: 1 });
    expect(parseListenArgs(["--secret", secret, "--port", "65535", "--count", "1000000"])).toMatchObject({ port: 65535, count: 1_000_000 });
    expect(usage([])).toThrow("--secret is required: the endpoint's signing_secret (whsec_...)");
    expect(usage(["--secret", "hunter2"])).toThrow(`--secret must be the endpoint's signing secret (whsec_...), got "hunter2..."`);
    expect(usage(["--secret", "whsec_"])).toThrow("--secret: the part after whsec_ must be base64");
    expect(usage(["--secret", "whsec_!!"])).toThrow("--secret: the part after whsec_ must be base64");
    expect(usage(["--secret", secret, "--port", "65536"])).toThrow(`--port must be a whole number from 0 to 65535, got "65536"`);
    expect(usage(["--secret", secret, "--port=-1"])).toThrow(`--port must be a whole number from 0 to 65535, got "-1"`);
    expect(usage(["--secret", secret, "--count", "0"])).toThrow(`--count must be a whole number from 1 to 1000000, got "0"`);
    expect(usage(["--secret", secret, "--count", "1000001"])).toThrow(`--count must be a whole number from 1 to 1000000, got "1000001"`);
    expect(usage(["--secret", secret, "--verbose"])).toThrow("Unknown option '--verbose'");
    expect(usage(["--secret", secret, "extra"])).toThrow("extra");
  });

  // Each run starts a process that loads the whole program (main.ts): slow on a loaded machine.
  test("the command: a usage error exits 2 with the reason and the usage, a taken port exits 1 in one line", () => {
    const none = runCli(["listen"], {});
    expect(none.code).toBe(2);
    expect(none.stderr).toStartWith("--secret is required: the endpoint's signing_secret (whsec_...)\n\nUsage: bunker listen");

    const port = new URL(server.url).port;
    const taken = runCli(["listen", "--secret", "whsec_aGVsbG8=", "--port", port], {});
    expect(taken.code).toBe(1);
    expect(taken.stderr).toBe(`cannot listen on 127.0.0.1:${port}: the port is already in use (another bunker listen?): pick another --port\n`);
  }, 120_000);
});
