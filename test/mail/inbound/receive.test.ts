// The listener as MX (issue 14): mail to mailboxes over real SMTP (nodemailer), stored .eml,
// parsed fields, attachments, the message routes and email.received.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { simpleParser } from "mailparser";
import { inProcess } from "../../helpers/target";
import { createMailbox, mailEvents, receiveWorkspace, sendMail, startInbound, type InboundEnv, type ReceiveWorkspace } from "../../helpers/mail-inbound";

let e: InboundEnv;
let w: ReceiveWorkspace;
beforeAll(async () => {
  e = await startInbound();
  w = await receiveWorkspace(e);
  e.dns.set("sender.example", [{ type: "TXT", data: "v=spf1 ip4:127.0.0.1 -all" }]);
});
afterAll(() => e.stop());

const pdf = Buffer.from("%PDF-1.4 fake pdf for the test\n");
const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3, 4]);

describe("receiving into a mailbox", () => {
  inProcess("reads email.received from the outbox through app.ctx.db and compares read_at with the injected clock")("stored, parsed, listed and read back (raw, attachments, read, delete); email.received", async () => {
    const box = await createMailbox(e, w, { local_part: "inbox" });
    const cc = await createMailbox(e, w, { local_part: "copies" });
    const info = await sendMail(e, {
      from: '"Ada Lovelace" <ada@sender.example>',
      to: `Inbox@${w.fqdn}`,
      cc: `copies@${w.fqdn}`,
      subject: "Quarterly report",
      text: "Hello there,\nthe report is attached.\n" + "x".repeat(1000),
      html: "<p>Hello there</p>",
      attachments: [
        { filename: "report.pdf", content: pdf, contentType: "application/pdf" },
        { filename: "logo \"big\".png", content: png, contentType: "image/png", cid: "logo@x" },
      ],
    });
    expect(info.accepted).toEqual([`Inbox@${w.fqdn}`, `copies@${w.fqdn}`]);

    const list = await e.app.call("GET", `${w.base}/mailboxes/${box.id}/messages`, { token: w.token });
    expect(list.status).toBe(200);
    expect(list.body.data).toHaveLength(1);
    const m = list.body.data[0];
    expect(m).toMatchObject({
      mailbox_id: box.id,
      seq_id: "1",
      envelope_from: "ada@sender.example",
      envelope_to: `Inbox@${w.fqdn}`,
      from_address: "ada@sender.example",
      from_local: "ada",
      from_domain: "sender.example",
      to_addresses: [`Inbox@${w.fqdn}`],
      cc_addresses: [`copies@${w.fqdn}`],
      subject: "Quarterly report",
      spf_result: "pass",
      quarantined: false,
      read_at: null,
      deleted_at: null,
    });
    expect(m.rfc822_message_id).toBe(info.messageId);
    expect(Buffer.byteLength(m.body_preview)).toBeLessThanOrEqual(512);
    expect(m.body_preview.startsWith("Hello there,")).toBe(true);
    expect(m.attachments).toBeUndefined();

    const one = await e.app.call("GET", `${w.base}/mailboxes/${box.id}/messages/${m.id}`, { token: w.token });
    expect(one.status).toBe(200);
    // Positions follow the MIME order: the inline image (multipart/related) comes first.
    expect(one.body.attachments).toEqual([
      { position: 0, filename: 'logo "big".png', content_id: "logo@x", content_type: "image/png", size_bytes: png.length, sha256: createHash("sha256").update(png).digest("hex") },
      { position: 1, filename: "report.pdf", content_id: null, content_type: "application/pdf", size_bytes: pdf.length, sha256: createHash("sha256").update(pdf).digest("hex") },
    ]);

    // The copy in the other mailbox shares the raw object; one event per mailbox.
    const copy = (await e.app.call("GET", `${w.base}/mailboxes/${cc.id}/messages`, { token: w.token })).body.data[0];
    expect(copy.raw_object_key).toBe(m.raw_object_key);
    const evs = (await mailEvents(e.app, w.wsId)).filter((x) => x.type === "email.received");
    expect(evs.map((x) => x.data.mailbox_id).sort()).toEqual([box.id, cc.id].sort());
    const ev = evs.find((x) => x.data.mailbox_id === box.id)!.data;
    expect(ev).toMatchObject({ message_id: m.id, from_address: "ada@sender.example", subject: "Quarterly report" });
    expect(JSON.stringify(ev)).not.toContain("Hello there");

    const raw = await e.app.handle(new Request(`http://localhost${w.base}/mailboxes/${box.id}/messages/${m.id}/raw`, { headers: { authorization: `Bearer ${w.token}` } }));
    expect(raw.status).toBe(200);
    expect(raw.headers.get("content-type")).toBe("message/rfc822");
    expect(raw.headers.get("content-disposition")).toStartWith("attachment;");
    const eml = Buffer.from(await raw.arrayBuffer());
    expect(eml.length).toBe(m.size_bytes);
    const reparsed = await simpleParser(eml);
    expect(reparsed.subject).toBe("Quarterly report");
    expect(eml.toString("latin1")).toStartWith("Received: from client.sender.example ([127.0.0.1])");

    const att = await e.app.handle(new Request(`http://localhost${w.base}/mailboxes/${box.id}/messages/${m.id}/attachments/0`, { headers: { authorization: `Bearer ${w.token}` } }));
    expect(att.status).toBe(200);
    expect(att.headers.get("content-type")).toBe("image/png");
    expect(att.headers.get("content-disposition")).toBe(`attachment; filename="logo _big_.png"; filename*=UTF-8''logo%20%22big%22.png`);
    expect(Buffer.from(await att.arrayBuffer()).equals(png)).toBe(true);
    // Beyond the manifest: 404; not a position at all: 400 naming it.
    expect((await e.app.call("GET", `${w.base}/mailboxes/${box.id}/messages/${m.id}/attachments/2`, { token: w.token })).status).toBe(404);
    for (const bad of ["-1", "x", "00000000"]) {
      const r = await e.app.call("GET", `${w.base}/mailboxes/${box.id}/messages/${m.id}/attachments/${bad}`, { token: w.token });
      expect([bad, r.status, r.body.error.details[0].field]).toEqual([bad, 400, "position"]);
    }

    expect((await e.app.call("POST", `${w.base}/mailboxes/${box.id}/messages/${m.id}/read`, { token: w.token })).status).toBe(204);
    const read = await e.app.call("GET", `${w.base}/mailboxes/${box.id}/messages/${m.id}`, { token: w.token });
    expect(read.body.read_at).toBe(e.app.clock.iso());
    expect((await e.app.call("GET", `${w.base}/mailboxes/${box.id}/messages?unread=true`, { token: w.token })).body.data).toHaveLength(0);
    expect((await e.app.call("GET", `${w.base}/mailboxes/${box.id}/messages?unread=false`, { token: w.token })).body.data).toHaveLength(1);
    expect((await e.app.call("GET", `${w.base}/mailboxes/${box.id}/messages?unread=maybe`, { token: w.token })).status).toBe(400);

    expect((await e.app.call("DELETE", `${w.base}/mailboxes/${box.id}/messages/${m.id}`, { token: w.token })).status).toBe(204);
    expect((await e.app.call("GET", `${w.base}/mailboxes/${box.id}/messages/${m.id}`, { token: w.token })).status).toBe(404);
    expect((await e.app.call("GET", `${w.base}/mailboxes/${box.id}/messages`, { token: w.token })).body.data).toHaveLength(0);
    // The copy is untouched and the shared object is still there.
    expect((await e.app.call("GET", `${w.base}/mailboxes/${cc.id}/messages/${copy.id}/raw`, { token: w.token })).status).toBe(200);
  });

  inProcess("sets the injected clock a minute apart for each received message")("filters (from, subject substrings, since/until), paging newest first, seq_id per mailbox", async () => {
    const box = await createMailbox(e, w);
    const t0 = e.app.clock.nowMs();
    for (let i = 0; i < 5; i++) {
      e.app.clock.set(t0 + i * 60_000);
      await sendMail(e, { from: i % 2 ? "Bob <bob@sender.example>" : "carol@sender.example", to: box.address, subject: `Note ${i} 100%_done`, text: `n${i}` });
    }
    const q = (s: string) => e.app.call("GET", `${w.base}/mailboxes/${box.id}/messages${s}`, { token: w.token });
    const all = await q("");
    expect(all.body.data.map((m: any) => m.seq_id)).toEqual(["5", "4", "3", "2", "1"]);
    expect((await q("?from=BOB")).body.data.map((m: any) => m.seq_id)).toEqual(["4", "2"]);
    expect((await q("?subject=note%203")).body.data.map((m: any) => m.seq_id)).toEqual(["4"]);
    expect((await q("?subject=100%25_")).body.data).toHaveLength(5);
    expect((await q("?subject=100__")).body.data).toHaveLength(0);
    const since = new Date(t0 + 60_000).toISOString();
    const until = new Date(t0 + 3 * 60_000).toISOString();
    expect((await q(`?since=${since}&until=${until}`)).body.data.map((m: any) => m.seq_id)).toEqual(["3", "2"]);
    expect((await q("?since=yesterday")).status).toBe(400);
    expect((await q(`?since=${until}&until=${since}`)).status).toBe(400);
    expect((await q(`?subject=${"x".repeat(201)}`)).status).toBe(400);
    const p1 = await q("?limit=2&from=sender");
    expect(p1.body.data.map((m: any) => m.seq_id)).toEqual(["5", "4"]);
    const p2 = await q(`?limit=2&cursor=${p1.body.pagination.next_cursor}`);
    expect(p2.body.data.map((m: any) => m.seq_id)).toEqual(["3", "2"]);
    expect((await q(`?limit=2&from=other&cursor=${p1.body.pagination.next_cursor}`)).status).toBe(400);
  });

  test("body_preview, /raw and attachments need mail.message.body.read", async () => {
    const box = await createMailbox(e, w);
    await sendMail(e, { from: "ada@sender.example", to: box.address, subject: "secret", text: "the body", attachments: [{ filename: "a.txt", content: "abc" }] });
    const key = await e.app.call("POST", `/platform/v1/workspaces/${w.slug}/api-keys`, {
      token: w.session,
      body: { name: "meta", policy: [{ effect: "allow", actions: ["mail.mailbox.read"], resources: ["*"] }] },
    });
    expect(key.status).toBe(201);
    const t = key.body.key;
    const list = await e.app.call("GET", `${w.base}/mailboxes/${box.id}/messages`, { token: t });
    expect(list.status).toBe(200);
    expect(list.body.data[0].body_preview).toBeNull();
    const mid = list.body.data[0].id;
    expect((await e.app.call("GET", `${w.base}/mailboxes/${box.id}/messages/${mid}`, { token: t })).body.body_preview).toBeNull();
    expect((await e.app.call("GET", `${w.base}/mailboxes/${box.id}/messages/${mid}/raw`, { token: t })).status).toBe(403);
    expect((await e.app.call("GET", `${w.base}/mailboxes/${box.id}/messages/${mid}/attachments/0`, { token: t })).status).toBe(403);
    expect((await e.app.call("DELETE", `${w.base}/mailboxes/${box.id}/messages/${mid}`, { token: t })).status).toBe(403);
    expect((await e.app.call("GET", `${w.base}/mailboxes/${box.id}/messages/${mid}`, { token: w.token })).body.body_preview).toBe("the body");
  });

  test("HTML-only mail gets a text preview; odd attachment types are served as octet-stream", async () => {
    const box = await createMailbox(e, w);
    await sendMail(e, {
      from: "ada@sender.example",
      to: box.address,
      subject: "html only",
      html: "<h1>Title</h1><p>Some <b>bold</b> words</p>",
      attachments: [{ filename: "x.bin", content: "abc", contentType: "not a type" }],
    });
    const [m] = (await e.app.call("GET", `${w.base}/mailboxes/${box.id}/messages`, { token: w.token })).body.data;
    expect(m.body_preview).toContain("Some bold words");
    const one = await e.app.call("GET", `${w.base}/mailboxes/${box.id}/messages/${m.id}`, { token: w.token });
    expect(one.body.attachments[0].content_type).toBe("application/octet-stream");
  });

  test("an internationalised domain name in RCPT TO reaches its mailbox", async () => {
    const d = await e.app.call("POST", `${w.base}/domains`, { token: w.token, body: { fqdn: `bücher${Date.now() % 1000}.example`, intent: "receive" } });
    for (const ins of d.body.dns_instructions) {
      if (ins.type === "MX") e.dns.add(ins.host, { type: "MX", exchange: ins.value, priority: ins.priority });
      else e.dns.add(ins.host, { type: "TXT", data: [ins.value] });
    }
    expect((await e.app.call("POST", `${w.base}/domains/${d.body.id}/verify`, { token: w.token })).body.status).toBe("active");
    const box = await e.app.call("POST", `${w.base}/mailboxes`, { token: w.token, body: { domain_id: d.body.id, local_part: "orders" } });
    const unicode = `orders@${d.body.fqdn.startsWith("xn--") ? (await import("node:url")).domainToUnicode(d.body.fqdn) : d.body.fqdn}`;
    expect(unicode).toContain("ü");
    const info = await sendMail(e, { from: "ada@sender.example", to: unicode, subject: "idn", text: "x" });
    expect(info.accepted).toHaveLength(1);
    expect((await e.app.call("GET", `${w.base}/mailboxes/${box.body.id}/messages`, { token: w.token })).body.data).toHaveLength(1);
  });

  inProcess("compares test_received_at with the injected clock")("the domain's test_address sets test_received_at; nothing is stored", async () => {
    const before = await e.app.call("GET", `${w.base}/domains/${w.domainId}`, { token: w.token });
    expect(before.body.test_received_at).toBeNull();
    await sendMail(e, { from: "ada@sender.example", to: w.testAddress.toUpperCase(), subject: "test", text: "t" });
    const after = await e.app.call("GET", `${w.base}/domains/${w.domainId}`, { token: w.token });
    expect(after.body.test_received_at).toBe(e.app.clock.iso());
  });
});
