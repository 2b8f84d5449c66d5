// Outbound mail asks for delivery status notifications (issue 14): NOTIFY=SUCCESS,FAILURE,DELAY
// and RET=HDRS when the hop advertises DSN, so reports come back to the VERP address.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { SMTPServer } from "smtp-server";
import { createTemplate, runDelivery, startSendingApp, workspaceWithDomain, type SendingEnv } from "../../helpers/mail-sending";

const seen: { mailFrom: string; dsn: unknown; rcpt: { address: string; dsn?: unknown }[] }[] = [];
const relay = new SMTPServer({
  secure: false,
  disabledCommands: ["STARTTLS"],
  authOptional: true,
  hideDSN: false, // advertise DSN (smtp-server hides it by default)
  logger: false,
  onData(stream, session, cb) {
    stream.on("data", () => {});
    stream.on("end", () => {
      const env = session.envelope as any;
      seen.push({ mailFrom: env.mailFrom.address, dsn: env.dsn, rcpt: env.rcptTo.map((r: any) => ({ address: r.address, dsn: r.dsn })) });
      cb();
    });
  },
});
let e: SendingEnv;
beforeAll(async () => {
  await new Promise<void>((r) => relay.listen(0, "127.0.0.1", () => r()));
  e = await startSendingApp({ SMTP_RELAY_URL: `smtp://127.0.0.1:${(relay.server.address() as { port: number }).port}` });
});
afterAll(async () => {
  await e.stop();
  await new Promise<void>((r) => relay.close(() => r()));
});

test("the relay sees NOTIFY=SUCCESS,FAILURE,DELAY, RET=HDRS and the VERP envelope sender", async () => {
  const w = await workspaceWithDomain(e);
  await createTemplate(e, w, { name: "dsn", subject: "Hello", body_html: "<p>Hello</p>" });
  const sent = await e.app.call("POST", `${w.base}/templates/dsn/send`, { token: w.token, body: { from: `hello@${w.fqdn}`, to: "ada@remote.example", data: {} } });
  expect(sent.status).toBe(202);
  await runDelivery(e);
  const id = sent.body.message_ids[0];
  const m = seen.find((x) => x.mailFrom === `bounces+${id}@${w.fqdn}`)!;
  expect(m).toBeDefined();
  expect(m.dsn).toMatchObject({ ret: "HDRS", envid: id });
  expect(m.rcpt[0]!.dsn).toMatchObject({ notify: ["SUCCESS", "FAILURE", "DELAY"] });
});
