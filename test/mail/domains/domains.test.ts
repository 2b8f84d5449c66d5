/**
 * Mail domains end to end over the app's HTTP pipeline, with a real DNS server on loopback
 * (dns2) as DNS_SERVERS: create and its dns_instructions, FQDN validation edges, cross-workspace
 * 404s, verify (pending -> active), the scheduled check (pending -> active, pending -> failed
 * after 72 h on the injected clock, active records vanishing), DKIM rotation, delete with the
 * in-use port, PATCH dns_provider, the member role's reads, and the domain.* events.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createPublicKey, createSign, createVerify } from "node:crypto";
import { SERVICE_MODULES } from "../../../src/app";
import { defineService } from "../../../src/kernel/module";
import { DAY, HOUR, MINUTE } from "../../../src/core/clock";
import type { MailParts } from "../../../src/services/mail/part";
import { DNS_CHECK_JOB, type DomainService } from "../../../src/services/mail/domains/part";
import { ownerWithKey, startTestApp, type TestApp } from "../../helpers/app";
import { startDnsServer, type TestDnsServer } from "../../helpers/dns-server";
import { addMember, BUILTIN } from "../../helpers/members";
import { inProcess, ON_BINARY } from "../../helpers/target";

const MAIL_HOST = "mx.bunker.test";
let app: TestApp;
let dns: TestDnsServer;
let domains: DomainService;
/** Domains a module after mail says are in use (through the mail.domain-in-use port). */
const blocked = new Set<string>();
const domainUser = defineService({
  name: "domainuser",
  description: "Uses mail domains (this test only)",
  create: () => ({}),
  provides: { "mail.domain-in-use": () => async (_t, dom) => (blocked.has(dom.id) ? "the mailbox support@ uses it" : null) },
});

beforeAll(async () => {
  dns = await startDnsServer();
  const env = { DNS_SERVERS: dns.server, MAIL_HOSTNAME: MAIL_HOST };
  if (ON_BINARY) {
    // Only the environment reaches the process: the tests that use the domain service are source-only.
    app = await startTestApp(env);
    return;
  }
  // The mail module as the app mounts it, with its parts kept for the lookups the later parts
  // use, and a module after it that provides an in-use check.
  const modules = [...SERVICE_MODULES.map((m) =>
    m.name !== "mail"
      ? m
      : {
          ...m,
          create: (d: any) => {
            const parts = m.create(d) as MailParts;
            domains = parts.domains as DomainService;
            return parts;
          },
        },
  ), domainUser];
  app = await startTestApp(env, undefined, { modules });
  app.webhooks.options.autoKick = false;
});
afterAll(async () => {
  await app.stop();
  await dns.stop();
});

const base = (wsId: string) => `/mail/v1/workspaces/${wsId}/domains`;
let n = 0;
const fresh = (prefix = "mail") => `${prefix}${++n}.acme${Date.now() % 100000}.example`;

async function create(token: string, wsId: string, body: Record<string, unknown>) {
  const r = await app.call("POST", base(wsId), { token, body });
  if (r.status !== 201) throw new Error(`domain create failed: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body as Record<string, any> & { id: string; fqdn: string };
}

/** The character-strings of an instruction's TXT value ("a" "b" zone-file form, or one plain string). */
const txtStrings = (value: string): string[] => (value.startsWith('"') ? [...value.matchAll(/"([^"]*)"/g)].map((m) => m[1]!) : [value]);

/** Publishes the records of dns_instructions on the loopback DNS server (all, or these purposes). */
function publish(domain: Record<string, any>, purposes?: string[]) {
  for (const ins of domain.dns_instructions) {
    if (purposes && !purposes.includes(ins.purpose)) continue;
    if (ins.type === "MX") dns.add(ins.host, { type: "MX", exchange: ins.value, priority: ins.priority });
    else dns.add(ins.host, { type: "TXT", data: txtStrings(ins.value) });
  }
}

const events = async (wsId: string, type: string) =>
  (await app.ctx.db.all<{ data: string }>("SELECT data FROM core_events WHERE scope = ? AND type = ? ORDER BY id", `webhook:mail:${wsId}`, type)).map((e) => JSON.parse(e.data));

const runCheck = () => app.ctx.scheduler.runNow(DNS_CHECK_JOB);

describe("create", () => {
  inProcess("compares created_at with the frozen injected clock and reads the stored key and the events through app.ctx.db")("201 pending with a DKIM key, tokens, test address, seq_id per workspace, and the send records", async () => {
    const { token, ws } = await ownerWithKey(app);
    const fqdn = fresh();
    const d = await create(token, ws.id, { fqdn });
    expect(d).toMatchObject({
      seq_id: "1",
      workspace_id: ws.id,
      fqdn,
      intent: "send",
      status: "pending",
      test_received_at: null,
      dkim_selector: "bk202611",
      dkim_previous_selector: null,
      dns_provider: null,
      dns_check_results: {},
      last_dns_check_at: null,
      verified_at: null,
      created_at: "2026-11-21T12:00:00.000Z",
    });
    expect(d.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(d.owner_account_id).toEqual(expect.any(String));
    expect(d.verification_token).toMatch(/^[0-9a-f]{32}$/);
    expect(d.test_address).toBe(`bunker-test-${d.test_token}@${fqdn}`);
    expect(d.dkim_public_key).toStartWith("-----BEGIN PUBLIC KEY-----");
    expect(createPublicKey(d.dkim_public_key).asymmetricKeyDetails?.modulusLength).toBe(2048);

    const byPurpose = Object.fromEntries(d.dns_instructions.map((i: any) => [i.purpose, i]));
    expect(d.dns_instructions.map((i: any) => i.purpose)).toEqual(["ownership", "spf", "dkim", "dmarc"]);
    expect(byPurpose.ownership).toMatchObject({ type: "TXT", host: `_bunker-verification.${fqdn}`, value: `bunker-verification=${d.verification_token}`, ttl: 3600, priority: 0, required: true });
    expect(byPurpose.spf).toMatchObject({ type: "TXT", host: fqdn, value: `v=spf1 a:${MAIL_HOST} ~all`, required: true });
    expect(byPurpose.dmarc).toMatchObject({ type: "TXT", host: `_dmarc.${fqdn}`, value: "v=DMARC1; p=none;", required: false });
    expect(byPurpose.dmarc.note).toContain("p=none");
    // DKIM: split into strings of at most 255 bytes that join to the record.
    expect(byPurpose.dkim).toMatchObject({ type: "TXT", host: `bk202611._domainkey.${fqdn}`, required: true });
    const strings = txtStrings(byPurpose.dkim.value);
    expect(strings.length).toBe(2);
    expect(Buffer.byteLength(strings[0]!)).toBe(255);
    expect(strings.every((s) => Buffer.byteLength(s) <= 255)).toBe(true);
    const pem = d.dkim_public_key.replace(/-----[^-]+-----/g, "").replace(/\s+/g, "");
    expect(strings.join("")).toBe(`v=DKIM1; k=rsa; p=${pem}`);

    // The private key is stored encrypted.
    const row = await app.ctx.db.get<{ dkim_private_key: string }>("SELECT dkim_private_key FROM mail_domains WHERE id = ?", d.id);
    expect(row!.dkim_private_key).toStartWith("v1.");
    expect(row!.dkim_private_key).not.toContain("PRIVATE KEY");

    const second = await create(token, ws.id, { fqdn: fresh() });
    expect(second.seq_id).toBe("2");
    // Another workspace starts at 1.
    const other = await ownerWithKey(app);
    expect((await create(other.token, other.ws.id, { fqdn })).seq_id).toBe("1");

    const list = await app.call("GET", base(ws.id), { token });
    expect(list.status).toBe(200);
    expect(list.body.data.map((x: any) => x.seq_id)).toEqual(["1", "2"]);
    expect((await app.call("GET", `${base(ws.id)}/${d.id}`, { token })).body).toEqual(d);

    const [created] = await events(ws.id, "domain.created");
    expect(created).toMatchObject({ id: d.id, seq_id: "1", workspace_id: ws.id, fqdn, intent: "send", status: "pending" });
  });

  test("receive and send_receive intents list the MX record (priority 10, MAIL_HOSTNAME)", async () => {
    const { token, ws } = await ownerWithKey(app);
    const r = await create(token, ws.id, { fqdn: fresh(), intent: "receive" });
    expect(r.dns_instructions.map((i: any) => i.purpose)).toEqual(["ownership", "mx"]);
    expect(r.dns_instructions[1]).toMatchObject({ type: "MX", host: r.fqdn, value: MAIL_HOST, priority: 10, ttl: 3600, required: true });
    const sr = await create(token, ws.id, { fqdn: fresh(), intent: "send_receive" });
    expect(sr.dns_instructions.map((i: any) => i.purpose)).toEqual(["ownership", "spf", "dkim", "dmarc", "mx"]);
  });

  test("fqdn validation: IDNA, case, trailing dot, IP literals, label and length limits; intent", async () => {
    const { token, ws } = await ownerWithKey(app);
    const bad = async (fqdn: unknown, field = "fqdn") => {
      const r = await app.call("POST", base(ws.id), { token, body: { fqdn } });
      expect([r.status, r.body.error.code, r.body.error.details?.[0]?.field]).toEqual([400, "VALIDATION_ERROR", field]);
    };
    for (const f of ["", "   ", "localhost", "1.2.3.4", "1.2.3.4.", "[::1]", "::1", "2001:db8::1", "a..example", "-a.example", "a-.example", "a_b.example", "*.example.com", "a.example/x", "user@a.example", "a.example:25", "a.123", "0x7f.0x1"]) {
      await bad(f);
    }
    // A label of 63 is fine, 64 is not.
    const l63 = "a".repeat(63);
    expect((await app.call("POST", base(ws.id), { token, body: { fqdn: `${l63}.example` } })).status).toBe(201);
    await bad(`${"a".repeat(64)}.example`);
    // 253 characters in ASCII form are fine, 254 are not.
    const name = (len: number) => {
      const labels: string[] = [];
      let left = len - ".example".length;
      while (left > 0) {
        const take = Math.min(63, left - (labels.length ? 0 : 0));
        labels.push("b".repeat(Math.min(take, left)));
        left -= Math.min(take, left) + 1;
      }
      return labels.join(".") + ".example";
    };
    const n253 = name(253);
    const n254 = name(254);
    expect([n253.length, n254.length]).toEqual([253, 254]);
    expect((await app.call("POST", base(ws.id), { token, body: { fqdn: n253 } })).status).toBe(201);
    await bad(n254);

    // IDNA: stored in ASCII form; upper case and a trailing dot are the same name.
    const idn = await create(token, ws.id, { fqdn: "Bücher.Example." });
    expect(idn.fqdn).toBe("xn--bcher-kva.example");
    for (const dup of ["xn--bcher-kva.example", "bücher.example", "BÜCHER.EXAMPLE."]) {
      const r = await app.call("POST", base(ws.id), { token, body: { fqdn: dup } });
      expect([r.status, r.body.error.code]).toEqual([409, "DOMAIN_EXISTS"]);
    }
    // Intent: one of three, default send.
    const r = await app.call("POST", base(ws.id), { token, body: { fqdn: fresh(), intent: "bulk" } });
    expect([r.status, r.body.error.details[0].field]).toEqual([400, "intent"]);
    expect((await app.call("POST", base(ws.id), { token, body: {} })).status).toBe(400);
  });
});

describe("access", () => {
  test("another workspace's domain is 404 on every route; a malformed id is 400 naming domain_id", async () => {
    const a = await ownerWithKey(app);
    const b = await ownerWithKey(app);
    const d = await create(a.token, a.ws.id, { fqdn: fresh() });
    const p = `${base(b.ws.id)}/${d.id}`;
    for (const [method, path, body] of [
      ["GET", p],
      ["PATCH", p, { dns_provider: "x" }],
      ["DELETE", p],
      ["POST", `${p}/verify`],
      ["POST", `${p}/dkim/rotate`],
    ] as [string, string, unknown?][]) {
      const r = await app.call(method, path, { token: b.token, body });
      expect([method, path, r.status, r.body?.error?.code]).toEqual([method, path, 404, "NOT_FOUND"]);
    }
    const malformed = await app.call("GET", `${base(a.ws.id)}/not-a-uuid`, { token: a.token });
    expect([malformed.status, malformed.body.error.code, malformed.body.error.details.map((d: { field: string }) => d.field)]).toEqual([400, "VALIDATION_ERROR", ["domain_id"]]);
    // b's key on a's workspace: the workspace itself is not visible.
    expect((await app.call("GET", `${base(a.ws.id)}/${d.id}`, { token: b.token })).status).toBeOneOf([403, 404]);
    expect((await app.call("GET", `${base(a.ws.id)}/${d.id}`, { token: a.token })).status).toBe(200);
  });

  inProcess("invites the member through the in-process system mailer's outbox (addMember) and reads the role's policy through app.ctx.db")("the member role reads domains but cannot add them", async () => {
    const { session, ws } = await ownerWithKey(app);
    await create(session, ws.id, { fqdn: fresh() });
    const member = await addMember(app, session, ws.slug, BUILTIN.member);
    const list = await app.call("GET", base(ws.id), { token: member.token });
    expect([list.status, list.body.data.length]).toEqual([200, 1]);
    expect((await app.call("POST", base(ws.id), { token: member.token, body: { fqdn: fresh() } })).status).toBe(403);
    const role = await app.ctx.db.get<{ policy: string }>("SELECT policy FROM platform_roles WHERE id = ?", BUILTIN.member);
    const actions = JSON.parse(role!.policy)[0].actions as string[];
    expect(actions).toEqual(expect.arrayContaining(["mail.domain.read", "mail.brand.read", "mail.template.read", "mail.message.read", "social.read"]));
    expect(actions).not.toContain("mail.message.body.read");
  });
});

describe("verification", () => {
  inProcess("compares timestamps with the injected clock, moves it, reads events through app.ctx.db and calls the domain service")("verify: pending while records are missing, active once they appear (multi-string DKIM record)", async () => {
    const { token, ws } = await ownerWithKey(app);
    const d = await create(token, ws.id, { fqdn: fresh() });
    const v1 = await app.call("POST", `${base(ws.id)}/${d.id}/verify`, { token });
    expect(v1.status).toBe(200);
    expect(v1.body.status).toBe("pending");
    expect(v1.body.last_dns_check_at).toBe(app.clock.iso());
    expect(v1.body.dns_check_results.dkim).toMatchObject({ found: false, observed: [], required: true, host: `bk202611._domainkey.${d.fqdn}` });
    expect(Object.keys(v1.body.dns_check_results).sort()).toEqual(["dkim", "dmarc", "ownership", "spf"]);

    // Some of the records: still pending, the found ones say so.
    publish(d, ["ownership", "spf"]);
    const v2 = await app.call("POST", `${base(ws.id)}/${d.id}/verify`, { token });
    expect(v2.body.status).toBe("pending");
    expect(v2.body.dns_check_results.ownership).toMatchObject({ found: true, observed: [`bunker-verification=${d.verification_token}`] });
    expect(v2.body.dns_check_results.spf.found).toBe(true);
    expect(await events(ws.id, "domain.updated")).toEqual([]);

    // DKIM (two strings in one record) but no DMARC: DMARC is not required.
    publish(d, ["dkim"]);
    app.clock.advance(MINUTE);
    const v3 = await app.call("POST", `${base(ws.id)}/${d.id}/verify`, { token });
    expect(v3.body).toMatchObject({ status: "active", verified_at: app.clock.iso() });
    expect(v3.body.dns_check_results.dkim.found).toBe(true);
    expect(v3.body.dns_check_results.dkim.observed[0]).toStartWith("v=DKIM1; k=rsa; p=MII");
    expect(v3.body.dns_check_results.dmarc).toMatchObject({ found: false, required: false });
    const [updated] = await events(ws.id, "domain.updated");
    expect(updated).toMatchObject({ id: d.id, status: "active", previous_status: "pending", failed_checks: [] });

    // The sending part's lookup: active and send-capable, with the decrypted key.
    const send = await domains.activeSendDomain(app.ctx.db, ws.id, d.fqdn.toUpperCase() + ".");
    expect(send).toMatchObject({ id: d.id, fqdn: d.fqdn, dkim_selector: "bk202611" });
    expect(send!.dkim_private_key_pem).toStartWith("-----BEGIN PRIVATE KEY-----");
    const sig = createSign("sha256").update("x").sign(send!.dkim_private_key_pem);
    expect(createVerify("sha256").update("x").verify(d.dkim_public_key, sig)).toBe(true);
    expect(await domains.activeSendDomain(app.ctx.db, "ws_other", d.fqdn)).toBeNull();
    expect((await domains.domainById(app.ctx.db, ws.id, d.id))?.status).toBe("active");
    expect(await domains.domainById(app.ctx.db, "ws_other", d.id)).toBeNull();
  });

  inProcess("asks the in-process domain service whether the domain can send")("receive intent: MX at MAIL_HOSTNAME activates; not a send domain", async () => {
    const { token, ws } = await ownerWithKey(app);
    const d = await create(token, ws.id, { fqdn: fresh(), intent: "receive" });
    dns.add(d.fqdn, { type: "MX", exchange: "other.example", priority: 5 });
    publish(d);
    const v = await app.call("POST", `${base(ws.id)}/${d.id}/verify`, { token });
    expect(v.body.status).toBe("active");
    expect(v.body.dns_check_results.mx).toMatchObject({ found: true, observed: ["5 other.example", `10 ${MAIL_HOST}`] });
    expect(await domains.activeSendDomain(app.ctx.db, ws.id, d.fqdn)).toBeNull();
  });

  inProcess("runs the DNS check job by hand on the injected clock")("scheduled check: pending -> active when the records appear; checks pending domains every 10 minutes", async () => {
    const { token, ws } = await ownerWithKey(app);
    const d = await create(token, ws.id, { fqdn: fresh() });
    await runCheck();
    const first = (await app.call("GET", `${base(ws.id)}/${d.id}`, { token })).body;
    expect(first).toMatchObject({ status: "pending", last_dns_check_at: app.clock.iso() });

    publish(d);
    // Not due yet: 9 minutes later it is not checked again.
    app.clock.advance(9 * MINUTE);
    await runCheck();
    expect((await app.call("GET", `${base(ws.id)}/${d.id}`, { token })).body.status).toBe("pending");
    app.clock.advance(MINUTE);
    await runCheck();
    const after = (await app.call("GET", `${base(ws.id)}/${d.id}`, { token })).body;
    expect(after).toMatchObject({ status: "active", verified_at: app.clock.iso(), last_dns_check_at: app.clock.iso() });
    expect((await events(ws.id, "domain.updated")).map((e) => e.status)).toEqual(["active"]);
  });

  inProcess("runs the DNS check job by hand on the injected clock")("scheduled check: pending for 72 h without the records -> failed (domain.updated lists the missing ones)", async () => {
    const { token, ws } = await ownerWithKey(app);
    const d = await create(token, ws.id, { fqdn: fresh() });
    publish(d, ["ownership"]);
    await runCheck();
    app.clock.advance(72 * HOUR - MINUTE);
    await runCheck();
    expect((await app.call("GET", `${base(ws.id)}/${d.id}`, { token })).body.status).toBe("pending");
    app.clock.advance(11 * MINUTE);
    await runCheck();
    const failed = (await app.call("GET", `${base(ws.id)}/${d.id}`, { token })).body;
    expect(failed).toMatchObject({ status: "failed", failed_at: app.clock.iso(), verified_at: null });
    const [ev] = await events(ws.id, "domain.updated");
    expect(ev).toMatchObject({ id: d.id, status: "failed", previous_status: "pending" });
    expect(ev.failed_checks.map((c: any) => c.purpose)).toEqual(["dkim", "spf"]);

    // No more scheduled checks of a failed domain; a manual verify with the records activates it.
    const checkedAt = failed.last_dns_check_at;
    app.clock.advance(DAY);
    await runCheck();
    expect((await app.call("GET", `${base(ws.id)}/${d.id}`, { token })).body.last_dns_check_at).toBe(checkedAt);
    publish(d, ["spf", "dkim"]);
    const v = await app.call("POST", `${base(ws.id)}/${d.id}/verify`, { token });
    expect(v.body).toMatchObject({ status: "active", failed_at: null });
  });

  inProcess("runs the DNS check job by hand on the injected clock")("active domain whose records vanish: stays active, reported, domain.updated once per change", async () => {
    const { token, ws } = await ownerWithKey(app);
    const d = await create(token, ws.id, { fqdn: fresh() });
    publish(d);
    expect((await app.call("POST", `${base(ws.id)}/${d.id}/verify`, { token })).body.status).toBe("active");
    const dkimHost = `${d.dkim_selector}._domainkey.${d.fqdn}`;
    dns.remove(dkimHost);
    app.clock.advance(23 * HOUR);
    await runCheck(); // not due (active: daily)
    expect((await app.call("GET", `${base(ws.id)}/${d.id}`, { token })).body.dns_check_results.dkim.found).toBe(true);
    app.clock.advance(HOUR);
    await runCheck();
    const got = (await app.call("GET", `${base(ws.id)}/${d.id}`, { token })).body;
    expect(got.status).toBe("active");
    expect(got.dns_check_results.dkim).toMatchObject({ found: false, observed: [] });
    let updates = await events(ws.id, "domain.updated");
    expect(updates.length).toBe(2);
    expect(updates[1]).toMatchObject({ status: "active", previous_status: "active", failed_checks: [{ purpose: "dkim", type: "TXT", host: dkimHost }] });

    app.clock.advance(DAY);
    await runCheck(); // still missing: no new event
    expect((await events(ws.id, "domain.updated")).length).toBe(2);
    publish(d, ["dkim"]);
    app.clock.advance(DAY);
    await runCheck(); // back: one more event
    updates = await events(ws.id, "domain.updated");
    expect(updates.length).toBe(3);
    expect(updates[2]).toMatchObject({ status: "active", failed_checks: [] });
  });
});

describe("DKIM rotation", () => {
  inProcess("reads the signing key through the in-process domain service and the database")("active: new selector, the old one keeps signing until the new record is seen, then retires", async () => {
    const { token, ws } = await ownerWithKey(app);
    const d = await create(token, ws.id, { fqdn: fresh() });
    publish(d);
    await app.call("POST", `${base(ws.id)}/${d.id}/verify`, { token });
    const r = await app.call("POST", `${base(ws.id)}/${d.id}/dkim/rotate`, { token });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ status: "active", dkim_selector: "bk202611b", dkim_previous_selector: "bk202611" });
    expect(r.body.dkim_public_key).not.toBe(d.dkim_public_key);
    const dkimIns = r.body.dns_instructions.find((i: any) => i.purpose === "dkim");
    expect(dkimIns.host).toBe(`bk202611b._domainkey.${d.fqdn}`);
    expect((await domains.activeSendDomain(app.ctx.db, ws.id, d.fqdn))!.dkim_selector).toBe("bk202611");

    // A check before the new record exists: still active (the old record still signs), nothing retired.
    const v1 = await app.call("POST", `${base(ws.id)}/${d.id}/verify`, { token });
    expect(v1.body).toMatchObject({ status: "active", dkim_previous_selector: "bk202611" });
    expect(v1.body.dns_check_results.dkim_previous.found).toBe(true);
    expect((await events(ws.id, "domain.updated")).length).toBe(1);

    // A second rotation before the first is seen: the old selector still signs.
    const r2 = await app.call("POST", `${base(ws.id)}/${d.id}/dkim/rotate`, { token });
    expect(r2.body).toMatchObject({ dkim_selector: "bk202611c", dkim_previous_selector: "bk202611" });

    publish(r2.body, ["dkim"]);
    const v2 = await app.call("POST", `${base(ws.id)}/${d.id}/verify`, { token });
    expect(v2.body).toMatchObject({ status: "active", dkim_selector: "bk202611c", dkim_previous_selector: null });
    const send = (await domains.activeSendDomain(app.ctx.db, ws.id, d.fqdn))!;
    expect(send.dkim_selector).toBe("bk202611c");
    const sig = createSign("sha256").update("x").sign(send.dkim_private_key_pem);
    expect(createVerify("sha256").update("x").verify(r2.body.dkim_public_key, sig)).toBe(true);
    const row = await app.ctx.db.get<{ dkim_prev_private_key: string | null }>("SELECT dkim_prev_private_key FROM mail_domains WHERE id = ?", d.id);
    expect(row!.dkim_prev_private_key).toBeNull();
  });

  test("pending: the key is replaced, nothing keeps the old one", async () => {
    const { token, ws } = await ownerWithKey(app);
    const d = await create(token, ws.id, { fqdn: fresh() });
    const r = await app.call("POST", `${base(ws.id)}/${d.id}/dkim/rotate`, { token });
    expect(r.body).toMatchObject({ status: "pending", dkim_selector: "bk202611b", dkim_previous_selector: null });
  });
});

describe("update and delete", () => {
  test("PATCH dns_provider: trimmed, 100 characters at most, null clears", async () => {
    const { token, ws } = await ownerWithKey(app);
    const d = await create(token, ws.id, { fqdn: fresh() });
    const p = `${base(ws.id)}/${d.id}`;
    expect((await app.call("PATCH", p, { token, body: { dns_provider: "  Cloudflare " } })).body.dns_provider).toBe("Cloudflare");
    expect((await app.call("PATCH", p, { token, body: { dns_provider: "x".repeat(100) } })).status).toBe(200);
    const long = await app.call("PATCH", p, { token, body: { dns_provider: "x".repeat(101) } });
    expect([long.status, long.body.error.details[0].field]).toEqual([400, "dns_provider"]);
    expect((await app.call("PATCH", p, { token, body: { dns_provider: "   " } })).status).toBe(400);
    expect((await app.call("PATCH", p, { token, body: { dns_provider: null } })).body.dns_provider).toBeNull();
  });

  inProcess("reads events through app.ctx.db and mounts a module that provides an in-use check")("DELETE: 204, gone, domain.deleted; seq_id not reused; 409 DOMAIN_IN_USE from a provided check", async () => {
    const { token, ws } = await ownerWithKey(app);
    const d = await create(token, ws.id, { fqdn: fresh() });
    const del = await app.call("DELETE", `${base(ws.id)}/${d.id}`, { token });
    expect(del.status).toBe(204);
    expect((await app.call("GET", `${base(ws.id)}/${d.id}`, { token })).status).toBe(404);
    expect((await app.call("DELETE", `${base(ws.id)}/${d.id}`, { token })).status).toBe(404);
    expect(await events(ws.id, "domain.deleted")).toEqual([expect.objectContaining({ id: d.id, fqdn: d.fqdn, deleted_at: app.clock.iso() })]);
    const again = await create(token, ws.id, { fqdn: d.fqdn });
    expect(again.seq_id).toBe("2");

    blocked.add(again.id);
    const r = await app.call("DELETE", `${base(ws.id)}/${again.id}`, { token });
    expect([r.status, r.body.error.code]).toEqual([409, "DOMAIN_IN_USE"]);
    expect(r.body.error.message).toContain("mailbox");
    expect((await app.call("GET", `${base(ws.id)}/${again.id}`, { token })).status).toBe(200);
    blocked.clear();
    expect((await app.call("DELETE", `${base(ws.id)}/${again.id}`, { token })).status).toBe(204);
  });
});
