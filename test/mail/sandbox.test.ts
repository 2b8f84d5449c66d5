/**
 * The mail sandbox: a workspace's sandbox domain (no DNS) sends into this instance's own
 * mailboxes through the inbound path and catches everything else in the dev outbox; nothing
 * is relayed (a real MX sink on loopback, reachable through the loopback DNS server, receives
 * nothing from it, while a verified domain's mail to the same address does reach it).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createWorkspace, ownerWithKey, signup } from "../helpers/app";
import { startReceiver, type Receiver } from "../helpers/http-receiver";
import { appMx, sendMail } from "../helpers/mail-inbound";
import { createTemplate, runDelivery, startSendingApp, workspaceWithDomain, type MailWorkspace, type SendingEnv } from "../helpers/mail-sending";
import { addMember } from "../helpers/members";
import { startSmtpSink, type SmtpSink } from "../helpers/smtp-sink";
import { ON_BINARY } from "../helpers/target";
import { until } from "../helpers/until";
import { createWaitlist, join } from "../helpers/waitlist";
import { OUTBOX_KEEP } from "../../src/services/mail/sandbox/service";
import { NOTIFY_JOB } from "../../src/services/waitlist/entries/notify";

let e: SendingEnv;
let mx: SmtpSink;
let receiver: Receiver;

/** A workspace with its sandbox domain, a template and a mailbox "inbox" on the sandbox. */
interface Sandbox extends MailWorkspace {
  inbox: { id: string; address: string };
}

async function sandboxWorkspace(owner?: { token: string; ws: { id: string } }): Promise<Sandbox> {
  const { token, ws } = owner ?? (await ownerWithKey(e.app));
  const base = `/mail/v1/workspaces/${ws.id}`;
  const d = await e.app.call("POST", `${base}/domains/sandbox`, { token });
  expect(d.status).toBe(201);
  const w = { token, wsId: ws.id, fqdn: d.body.fqdn, domainId: d.body.id, selector: d.body.dkim_selector, base };
  e.workspaces.push(w); // runDelivery waits for its queue on the binary
  await createTemplate(e, w, { name: "hello", subject: "Hello {{name}}", body_html: "<p>Hi {{name}}</p>", body_text: "Hi {{name}}" });
  const box = await e.app.call("POST", `${base}/mailboxes`, { token, body: { domain_id: d.body.id, local_part: "inbox" } });
  expect(box.status).toBe(201);
  return { ...w, inbox: { id: box.body.id, address: box.body.address } };
}

const send = (w: MailWorkspace, to: string | string[], name = "Ada", token = w.token) =>
  e.app.call("POST", `${w.base}/templates/hello/send`, { token, body: { from: `Acme <hello@${w.fqdn}>`, to, data: { name } } });

beforeAll(async () => {
  mx = await startSmtpSink();
  receiver = startReceiver();
  e = await startSendingApp({ MAIL_MX_PORT: String(mx.port), ALLOW_PRIVATE_TARGETS: "true", MAIL_HOSTNAME: "localhost" });
  if (!ON_BINARY) e.sending.autoKick = false;
  // Every outside recipient domain here has an MX on loopback: mail relayed out would land in the sink.
  for (const name of ["outside.test", "other.test"]) e.dns.set(name, [{ type: "MX", exchange: "mx.outside.test", priority: 10 }]);
  e.dns.set("mx.outside.test", [{ type: "A", address: "127.0.0.1" }]);
});
afterAll(async () => {
  await e.stop();
  await mx.stop();
  await receiver.stop();
});

describe("the sandbox domain", () => {
  test("201 then 200 with the same domain; active, send_receive, no DNS instructions, <6 hex>.sandbox.<MAIL_HOSTNAME>", async () => {
    const { token, ws } = await ownerWithKey(e.app);
    const base = `/mail/v1/workspaces/${ws.id}`;
    const a = await e.app.call("POST", `${base}/domains/sandbox`, { token });
    expect(a.status).toBe(201);
    expect(a.body).toMatchObject({ sandbox: true, status: "active", intent: "send_receive", dns_instructions: [], workspace_id: ws.id });
    expect(a.body.fqdn).toMatch(/^[0-9a-f]{6}\.sandbox\.localhost$/);
    const b = await e.app.call("POST", `${base}/domains/sandbox`, { token });
    expect(b.status).toBe(200);
    expect(b.body).toEqual(a.body);
    // Listed with sandbox true; every other domain says false.
    await e.app.call("POST", `${base}/domains`, { token, body: { fqdn: `real${Date.now()}.example` } });
    const list = await e.app.call("GET", `${base}/domains`, { token });
    expect(list.body.data.map((d: any) => [d.fqdn, d.sandbox])).toEqual([
      [a.body.fqdn, true],
      [expect.stringMatching(/^real/), false],
    ]);
    // Verify never looks anything up: the domain is returned as it is.
    const before = e.dns.queries.length;
    const v = await e.app.call("POST", `${base}/domains/${a.body.id}/verify`, { token });
    expect(v.status).toBe(200);
    expect(v.body).toMatchObject({ status: "active", sandbox: true, last_dns_check_at: null });
    expect(e.dns.queries.length).toBe(before);
    // No other domain may take a name under sandbox.<MAIL_HOSTNAME>.
    const squat = await e.app.call("POST", `${base}/domains`, { token, body: { fqdn: `abc123.sandbox.localhost` } });
    expect(squat.status).toBe(400);
    expect(squat.body.error.details[0].field).toBe("fqdn");
    // Deleted like any domain; the next create makes a new one.
    expect((await e.app.call("DELETE", `${base}/domains/${a.body.id}`, { token })).status).toBe(204);
    const c = await e.app.call("POST", `${base}/domains/sandbox`, { token });
    expect(c.status).toBe(201);
    expect(c.body.id).not.toBe(a.body.id);
  });

  test("two concurrent creates: one 201, one 200, one domain", async () => {
    const { token, ws } = await ownerWithKey(e.app);
    const base = `/mail/v1/workspaces/${ws.id}`;
    const rs = await Promise.all([1, 2, 3].map(() => e.app.call("POST", `${base}/domains/sandbox`, { token })));
    expect(rs.map((r) => r.status).sort()).toEqual([200, 200, 201]);
    expect(new Set(rs.map((r) => r.body.id)).size).toBe(1);
    expect((await e.app.call("GET", `${base}/domains`, { token })).body.data).toHaveLength(1);
  });

  test("credential, validation, permission, existence", async () => {
    const { token, session, ws } = await ownerWithKey(e.app);
    expect((await e.app.call("POST", `/mail/v1/workspaces/${ws.id}/domains/sandbox`)).status).toBe(401);
    expect((await e.app.call("POST", `/mail/v1/workspaces/not-a-uuid/domains/sandbox`, { token })).status).toBe(400);
    const other = await ownerWithKey(e.app);
    expect((await e.app.call("POST", `/mail/v1/workspaces/${other.ws.id}/domains/sandbox`, { token })).status).toBe(404);
    const ro = await e.app.call("POST", `/platform/v1/workspaces/${ws.slug}/api-keys`, {
      token: session,
      body: { name: "reader", policy: [{ effect: "allow", actions: ["mail.domain.read"], resources: ["*"] }] },
    });
    expect(ro.status).toBe(201);
    const denied = await e.app.call("POST", `/mail/v1/workspaces/${ws.id}/domains/sandbox`, { token: ro.body.key });
    expect(denied.status).toBe(403);
  });
});

describe("sending from the sandbox", () => {
  let w: Sandbox;
  let big: Sandbox;
  beforeAll(async () => {
    w = await sandboxWorkspace();
  });

  test("to a mailbox of this instance: delivered into it through the inbound path (email.received), never relayed", async () => {
    const ep = await e.app.call("POST", `${w.base}/webhooks/endpoints`, { token: w.token, body: { url: `${receiver.url}/hooks`, event_types: ["email.received", "email.delivered"] } });
    expect(ep.status).toBe(201);
    const r = await send(w, w.inbox.address, "Grace");
    expect(r.status).toBe(202);
    await runDelivery(e);
    const m = (await e.app.call("GET", `${w.base}/messages/${r.body.message_ids[0]}`, { token: w.token })).body;
    expect(m).toMatchObject({ status: "delivered", sandbox: true, delivered_to: "mailbox", smtp_transcript: null });
    expect(m.sent_at).toBe(m.delivered_at);
    const got = await e.app.call("GET", `${w.base}/mailboxes/${w.inbox.id}/messages`, { token: w.token });
    expect(got.body.data).toHaveLength(1);
    expect(got.body.data[0]).toMatchObject({ subject: "Hello Grace", from_address: `hello@${w.fqdn}`, envelope_to: w.inbox.address, spam_verdict: "clean", quarantined: false });
    expect(got.body.data[0].body_preview).toContain("Hi Grace");
    expect(got.body.data[0].rfc822_message_id).toBe(`<${m.id}@${w.fqdn}>`);
    // The raw message is the DKIM-signed one the worker built.
    const raw = await e.app.call("GET", `${w.base}/mailboxes/${w.inbox.id}/messages/${got.body.data[0].id}/raw`, { token: w.token });
    expect(String(raw.body)).toMatch(new RegExp(`^DKIM-Signature: v=1; a=rsa-sha256; c=relaxed/relaxed;\\s+d=${w.fqdn.replaceAll(".", "\\.")}; q=dns/txt; s=${w.selector};`));
    if (!ON_BINARY) {
      await e.app.webhooks.dispatchPending();
      await e.app.webhooks.deliverDue();
    }
    await until("email.received and email.delivered at the endpoint", () => {
      const types = receiver.requests.map((q) => JSON.parse(q.body).type);
      return types.includes("email.received") && types.includes("email.delivered") ? types : null;
    });
    const outbox = await e.app.call("GET", `${w.base}/outbox`, { token: w.token });
    expect(outbox.body.data).toEqual([]);
    expect(mx.messages).toEqual([]);
    // A sandbox delivery met no receiver: it says nothing of the workspace's reputation.
    const verdict = await e.app.call("GET", `${w.base}/deliverability`, { token: w.token });
    expect(verdict.body).toMatchObject({ verdict: "no_data", left_queue: 0, confirmed: 0 });
  });

  test("mail from outside over SMTP reaches a sandbox mailbox (the domain is active and receiving)", async () => {
    const smtp = await appMx(e.app);
    try {
      await sendMail({ port: smtp.port } as never, { from: "ada@sender.test", to: w.inbox.address, subject: "Over SMTP", text: "Hello from outside" });
    } finally {
      await smtp.stop();
    }
    const got = await e.app.call("GET", `${w.base}/mailboxes/${w.inbox.id}/messages?subject=Over%20SMTP`, { token: w.token });
    expect(got.body.data.map((m: any) => [m.subject, m.envelope_from])).toEqual([["Over SMTP", "ada@sender.test"]]);
  });

  test("to an outside address: caught in the dev outbox, not at the MX sink; a verified domain's mail to it does reach the sink", async () => {
    const r = await send(w, "ada@outside.test");
    await runDelivery(e);
    const m = (await e.app.call("GET", `${w.base}/messages/${r.body.message_ids[0]}`, { token: w.token })).body;
    expect(m).toMatchObject({ status: "delivered", sandbox: true, delivered_to: "outbox" });
    const list = await e.app.call("GET", `${w.base}/outbox`, { token: w.token });
    expect(list.status).toBe(200);
    expect(list.body.data).toHaveLength(1);
    expect(list.body.data[0]).toMatchObject({ message_id: m.id, domain_id: w.domainId, from: `"Acme" <hello@${w.fqdn}>`, to: "ada@outside.test", subject: "Hello Ada" });
    const one = await e.app.call("GET", `${w.base}/outbox/${list.body.data[0].id}`, { token: w.token });
    expect(one.body).toMatchObject({ html: expect.stringContaining("Hi Ada"), text: expect.stringContaining("Hi Ada"), redacted: false, body_visible: true, headers: {} });
    expect(mx.messages).toEqual([]);
    expect(e.dns.queries.filter((q) => q.startsWith("outside.test"))).toEqual([]);

    // The control: the sink is reachable, so the sandbox's silence above is not an accident.
    const real = await workspaceWithDomain(e);
    await createTemplate(e, real, { name: "hello", subject: "Hello {{name}}", body_html: "<p>Hi {{name}}</p>" });
    await send(real, "ada@outside.test", "Real");
    await runDelivery(e);
    const at = await mx.waitFor((x) => x.to.includes("ada@outside.test"));
    expect(at.subject).toBe("Hello Real");
    expect(mx.messages).toHaveLength(1);
  });

  test("mixed recipients in one send: each to its place", async () => {
    const tagged = `inbox+news@${w.fqdn}`;
    const r = await send(w, [w.inbox.address, "bo@other.test", tagged]);
    expect(r.status).toBe(202);
    await runDelivery(e);
    const ms = await Promise.all(r.body.message_ids.map(async (id: string) => (await e.app.call("GET", `${w.base}/messages/${id}`, { token: w.token })).body));
    expect(ms.map((m) => [m.to_address, m.status, m.delivered_to])).toEqual([
      [w.inbox.address, "delivered", "mailbox"],
      ["bo@other.test", "delivered", "outbox"],
      [tagged, "delivered", "mailbox"],
    ]);
    const outbox = (await e.app.call("GET", `${w.base}/outbox`, { token: w.token })).body.data;
    expect(outbox[0].to).toBe("bo@other.test");
    // test-send goes the same way.
    const t = await e.app.call("POST", `${w.base}/templates/hello/test-send`, { token: w.token, body: { from: `hello@${w.fqdn}`, to: ["cy@other.test", w.inbox.address] } });
    expect(t.status).toBe(202);
    await runDelivery(e);
    const tested = await Promise.all(t.body.message_ids.map(async (id: string) => (await e.app.call("GET", `${w.base}/messages/${id}`, { token: w.token })).body));
    expect(tested.map((m) => [m.subject, m.delivered_to])).toEqual([
      ["[TEST] Hello [name]", "outbox"],
      ["[TEST] Hello [name]", "mailbox"],
    ]);
    expect(mx.messages.filter((x) => x.to.includes("bo@other.test"))).toEqual([]);
  });

  test("limits still apply: send-batch 100 accepted, 101 refused; suppressed recipients refused", async () => {
    // A workspace of its own: the rate limit (100 a second) counts this workspace's earlier sends.
    big = await sandboxWorkspace();
    const w = big;
    const rows = (n: number) => Array.from({ length: n }, (_, i) => ({ to: `r${i}@outside.test`, data: { name: `R${i}` } }));
    const over = await e.app.call("POST", `${w.base}/templates/hello/send-batch`, { token: w.token, body: { from: `hello@${w.fqdn}`, messages: rows(101) } });
    expect(over.status).toBe(400);
    const ok = await e.app.call("POST", `${w.base}/templates/hello/send-batch`, { token: w.token, body: { from: `hello@${w.fqdn}`, messages: rows(100) } });
    expect(ok.status).toBe(202);
    expect(ok.body.accepted).toBe(100);
    await e.app.call("POST", `${w.base}/suppressions`, { token: w.token, body: { email: "gone@outside.test" } });
    const sup = await send(w, "gone@outside.test");
    expect(sup.status).toBe(422);
    expect(sup.body.error.code).toBe("RECIPIENT_SUPPRESSED");
    await runDelivery(e);
  });

  test("outbox pages newest first; a malformed cursor or limit is 400", async () => {
    const w = big;
    const p1 = await e.app.call("GET", `${w.base}/outbox?limit=50`, { token: w.token });
    expect(p1.body.data).toHaveLength(50);
    expect(p1.body.pagination.has_more).toBe(true);
    const p2 = await e.app.call("GET", `${w.base}/outbox?limit=60&cursor=${p1.body.pagination.next_cursor}`, { token: w.token });
    const all = [...p1.body.data, ...p2.body.data];
    expect(all).toHaveLength(100);
    expect(p2.body.pagination).toEqual({ has_more: false, next_cursor: null });
    const keys = all.map((x: any) => `${x.created_at} ${x.id}`);
    expect(keys).toEqual([...keys].sort().reverse());
    expect(new Set(all.map((x: any) => x.id)).size).toBe(100);
    expect((await e.app.call("GET", `${w.base}/outbox?limit=101`, { token: w.token })).status).toBe(400);
    expect((await e.app.call("GET", `${w.base}/outbox?limit=0`, { token: w.token })).status).toBe(400);
    expect((await e.app.call("GET", `${w.base}/outbox?cursor=%25%25`, { token: w.token })).status).toBe(400);
    expect((await e.app.call("GET", `${w.base}/outbox?limit=100`, { token: w.token })).body.data).toHaveLength(100);
  });

  test("another workspace's outbox message and sandbox domain are 404; bodies need mail.message.body.read", async () => {
    const first = (await e.app.call("GET", `${w.base}/outbox?limit=1`, { token: w.token })).body.data[0];
    const other = await sandboxWorkspace();
    expect((await e.app.call("GET", `${other.base}/outbox/${first.id}`, { token: other.token })).status).toBe(404);
    expect((await e.app.call("GET", `${other.base}/domains/${w.domainId}`, { token: other.token })).status).toBe(404);
    expect((await e.app.call("DELETE", `${other.base}/domains/${w.domainId}`, { token: other.token })).status).toBe(404);
    expect((await e.app.call("GET", `${w.base}/outbox/0192f3ff-0a1b-7c2d-8e3f-4a5b6c7d8e9f`, { token: w.token })).status).toBe(404);
    expect((await e.app.call("GET", `${w.base}/outbox/nope`, { token: w.token })).status).toBe(400);
    expect((await e.app.call("GET", `${w.base}/outbox`)).status).toBe(401);
  });
});

describe("outbox retention", () => {
  test(`the newest ${OUTBOX_KEEP} captured messages per workspace are kept`, async () => {
    const w = await sandboxWorkspace();
    expect((await e.app.call("PATCH", `${w.base}/sending/settings`, { token: w.token, body: { rate_limit_per_second: 10_000 } })).status).toBe(200);
    const batches = [...Array.from({ length: OUTBOX_KEEP / 100 }, () => 100), 1];
    let n = 0;
    for (const size of batches) {
      const messages = Array.from({ length: size }, () => ({ to: `k${n++}@outside.test`, data: { name: "K" } }));
      const r = await e.app.call("POST", `${w.base}/templates/hello/send-batch`, { token: w.token, body: { from: `hello@${w.fqdn}`, messages } });
      expect([r.status, r.body.accepted]).toEqual([202, size]);
    }
    // One run of the job takes at most 200 messages (in-process the after-send kick is off): run until none is queued.
    await until("every message handled", async () => {
      await runDelivery(e, 60_000);
      return (await e.app.call("GET", `${w.base}/messages?status=queued&limit=1`, { token: w.token })).body.data.length === 0 || null;
    }, 60_000);
    let kept = 0;
    let cursor = "";
    for (;;) {
      const page = await e.app.call("GET", `${w.base}/outbox?limit=100${cursor ? `&cursor=${cursor}` : ""}`, { token: w.token });
      kept += page.body.data.length;
      if (!page.body.pagination.has_more) break;
      cursor = page.body.pagination.next_cursor;
    }
    expect(n).toBe(OUTBOX_KEEP + 1);
    expect(kept).toBe(OUTBOX_KEEP);
    // Every message was handled; one captured copy went to make room.
    const queued = await e.app.call("GET", `${w.base}/messages?status=delivered&limit=1`, { token: w.token });
    expect(queued.body.data[0]).toMatchObject({ sandbox: true, delivered_to: "outbox" });
  }, 120_000);
});

describe("permissions on the outbox", () => {
  test("mail.message.read lists and reads metadata; bodies only with mail.message.body.read; without read 403", async () => {
    const owner = await signup(e.app);
    const ws = await createWorkspace(e.app, owner.token);
    const w = await sandboxWorkspace({ token: owner.token, ws });
    await send(w, "cy@outside.test", "Cy");
    await runDelivery(e);
    const mint = async (actions: string[]) => {
      const r = await e.app.call("POST", `/platform/v1/workspaces/${ws.slug}/api-keys`, { token: owner.token, body: { name: actions.join(","), policy: [{ effect: "allow", actions, resources: ["*"] }] } });
      expect(r.status).toBe(201);
      return r.body.key as string;
    };
    const reader = await mint(["mail.message.read"]);
    const bodies = await mint(["mail.message.read", "mail.message.body.read"]);
    const none = await mint(["mail.domain.read"]);
    const list = await e.app.call("GET", `${w.base}/outbox`, { token: reader });
    expect(list.status).toBe(200);
    const id = list.body.data[0].id;
    const meta = await e.app.call("GET", `${w.base}/outbox/${id}`, { token: reader });
    expect(meta.body).toMatchObject({ to: "cy@outside.test", subject: "Hello Cy", html: null, text: null, body_visible: false });
    const full = await e.app.call("GET", `${w.base}/outbox/${id}`, { token: bodies });
    expect(full.body).toMatchObject({ html: expect.stringContaining("Hi Cy"), body_visible: true });
    expect((await e.app.call("GET", `${w.base}/outbox`, { token: none })).status).toBe(403);
    expect((await e.app.call("GET", `${w.base}/outbox/${id}`, { token: none })).status).toBe(403);
    // A member (built-in member role: mail.message.read, not bodies) sees no bodies either.
    if (!ON_BINARY) {
      const member = (await addMember(e.app, owner.token, ws.slug)).token;
      expect((await e.app.call("GET", `${w.base}/outbox/${id}`, { token: member })).body).toMatchObject({ html: null, body_visible: false });
    }
    // Redacted bodies are never kept; forgetting the recipient removes the captured message.
    await e.app.call("PATCH", `${w.base}/messages/settings`, { token: owner.token, body: { redact_bodies: true } });
    await send(w, "dee@outside.test", "Dee");
    await runDelivery(e);
    const red = (await e.app.call("GET", `${w.base}/outbox?limit=1`, { token: bodies })).body.data[0];
    expect(red.to).toBe("dee@outside.test");
    expect((await e.app.call("GET", `${w.base}/outbox/${red.id}`, { token: bodies })).body).toMatchObject({ html: null, text: null, redacted: true });
    expect((await e.app.call("DELETE", `${w.base}/messages?recipient=dee@outside.test`, { token: owner.token })).status).toBe(200);
    expect((await e.app.call("GET", `${w.base}/outbox/${red.id}`, { token: bodies })).status).toBe(404);
  });
});

describe("the waitlist sends through the sandbox", () => {
  test("approve -> the approved mail lands in the sandbox mailbox", async () => {
    const owner = await ownerWithKey(e.app);
    const w = await sandboxWorkspace(owner);
    const tpl = (name: string, subject: string) => createTemplate(e, w, { name, subject, body_html: "<p>{{waitlist_brand.name}}: {{entry.name}}</p>" });
    await tpl("wl_welcome", "Welcome {{entry.name}}");
    await tpl("wl_approved", "You are in, {{entry.name}}");
    await tpl("wl_rejected", "Sorry {{entry.name}}");
    const appSlug = `sb-app-${Date.now().toString(36)}`;
    expect((await e.app.call("POST", "/auth/v1/apps", { token: owner.token, body: { workspace_id: owner.ws.id, slug: appSlug, display_name: "Sandbox App" } })).status).toBe(201);
    const settings = await e.app.call("PUT", `/waitlist/v1/workspaces/${owner.ws.id}/waitlist/settings`, {
      token: owner.token,
      body: {
        default_sender_domain_id: w.domainId, default_sender_address: `hello@${w.fqdn}`, default_auth_app_slug: appSlug, brand_name: "Acme Rockets",
        notifications_via_mail: true, welcome_template_name: "wl_welcome", approved_template_name: "wl_approved", rejected_template_name: "wl_rejected",
      },
    });
    expect(settings.status).toBe(200);
    const wl = await createWaitlist(e.app, { owner, settings: { invite_accept_url: "http://localhost:3000/join" } });
    const s = await join(e.app, wl, { email: w.inbox.address, name: "Grace" });
    expect(s.status).toBe(201);
    expect((await e.app.call("POST", `${wl.base}/entries/${s.body.id}/approve`, { token: owner.token })).status).toBe(200);
    const inbox = await until("the approved mail in the sandbox mailbox", async () => {
      if (!ON_BINARY) await e.app.ctx.scheduler.runNow(NOTIFY_JOB);
      await runDelivery(e);
      const r = await e.app.call("GET", `${w.base}/mailboxes/${w.inbox.id}/messages`, { token: owner.token });
      return r.body.data.some((m: any) => m.subject === "You are in, Grace") ? r.body.data : null;
    });
    expect(inbox.map((m: any) => m.subject).sort()).toEqual(["Welcome Grace", "You are in, Grace"]);
    expect(mx.messages.filter((x) => x.to.includes(w.inbox.address))).toEqual([]);
  });
});
