// MAIL_INBOUND_THREADS=2 (issue 32): received mail parsed and authenticated on worker threads
// is stored as on the event loop, over real SMTP; on the binary this also proves the worker's
// entry point is embedded in the executable.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createMailbox, receiveWorkspace, sendMail, startInbound, type InboundEnv, type ReceiveWorkspace } from "../../helpers/mail-inbound";

let e: InboundEnv;
let w: ReceiveWorkspace;
beforeAll(async () => {
  e = await startInbound({ MAIL_INBOUND_THREADS: "2" });
  w = await receiveWorkspace(e);
  e.dns.set("threads.example", [{ type: "TXT", data: "v=spf1 ip4:127.0.0.1 -all" }]);
  e.dns.set("_dmarc.threads.example", [{ type: "TXT", data: "v=DMARC1; p=reject" }]);
});
afterAll(() => e.stop());

describe("checks on worker threads", () => {
  test("messages are stored with their fields, attachment manifest, SPF/DMARC results and spam verdict", async () => {
    const box = await createMailbox(e, w, { local_part: "threads" });
    const sends = Array.from({ length: 6 }, (_, i) =>
      sendMail(e, {
        from: `"Ada ${i}" <ada@threads.example>`,
        to: box.address,
        subject: `On a worker ${i}`,
        text: `Hello ${i}`,
        attachments: i === 0 ? [{ filename: "tool.exe", content: Buffer.from([0x4d, 0x5a]) }] : [],
      }),
    );
    await Promise.all(sends);
    const list = await e.app.call("GET", `${w.base}/mailboxes/${box.id}/messages?limit=10`, { token: w.token });
    expect(list.status).toBe(200);
    const rows = list.body.data as Record<string, any>[];
    expect(rows.map((m) => m.subject).sort()).toEqual(Array.from({ length: 6 }, (_, i) => `On a worker ${i}`));
    for (const m of rows) expect(m).toMatchObject({ from_address: "ada@threads.example", spf_result: "pass", dkim_result: "none", dmarc_result: "pass" });
    const exe = rows.find((m) => m.subject === "On a worker 0")!;
    expect(exe).toMatchObject({ spam_verdict: "spam", quarantined: true });
    const one = await e.app.call("GET", `${w.base}/mailboxes/${box.id}/messages/${exe.id}`, { token: w.token });
    expect(one.body.attachments).toMatchObject([{ position: 0, filename: "tool.exe", size_bytes: 2 }]);
    const plain = rows.find((m) => m.subject === "On a worker 3")!;
    expect(plain).toMatchObject({ spam_verdict: "clean", quarantined: false, body_preview: "Hello 3\n" });
  });

  test("a domain's test address is recorded (the parse only)", async () => {
    await sendMail(e, { from: "ada@threads.example", to: w.testAddress, subject: "test", text: "t" });
    const d = await e.app.call("GET", `${w.base}/domains/${w.domainId}`, { token: w.token });
    expect(d.body.test_received_at).not.toBeNull();
  });
});
