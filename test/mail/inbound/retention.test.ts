// source-only: runs the purge job by hand on the injected clock and reads rows and objects through app.ctx
// The daily retention purge (issue 14) on the injected clock: rows and raw objects of
// messages older than their mailbox's retention_days; soft-deleted mailboxes emptied and
// dropped once their retention has passed; a shared raw object stays while a copy needs it.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { DAY, HOUR } from "../../../src/core/clock";
import { PURGE_JOB } from "../../../src/services/mail/inbound/part";
import { createMailbox, receiveWorkspace, sendMail, startInbound, type InboundEnv, type ReceiveWorkspace } from "../../helpers/mail-inbound";

let e: InboundEnv;
let w: ReceiveWorkspace;
beforeAll(async () => {
  e = await startInbound();
  w = await receiveWorkspace(e);
});
afterAll(() => e.stop());

const list = async (boxId: string) => (await e.app.call("GET", `${w.base}/mailboxes/${boxId}/messages`, { token: w.token })).body.data as any[];
const purge = () => e.app.ctx.scheduler.runNow(PURGE_JOB);

describe("retention purge", () => {
  test("per-mailbox retention_days; shared objects stay while a copy refers to them; soft-deleted mailboxes go once empty", async () => {
    const short = await createMailbox(e, w, { retention_days: 1 });
    const long = await createMailbox(e, w, { retention_days: 30 });
    const gone = await createMailbox(e, w, { retention_days: 2 });
    await sendMail(e, { from: "a@sender.example", to: [short.address, long.address], subject: "both", text: "x" });
    await sendMail(e, { from: "a@sender.example", to: gone.address, subject: "to a mailbox that will be deleted", text: "x" });
    const [s1] = await list(short.id);
    const [l1] = await list(long.id);
    const [g1] = await list(gone.id);
    expect(s1.raw_object_key).toBe(l1.raw_object_key);
    expect((await e.app.call("DELETE", `${w.base}/mailboxes/${gone.id}`, { token: w.token })).status).toBe(204);

    // Just under a day: nothing goes.
    e.app.clock.advance(DAY - HOUR);
    await purge();
    expect(await list(short.id)).toHaveLength(1);

    // Past a day: the 1-day copy goes, the object stays for the 30-day copy.
    e.app.clock.advance(2 * HOUR);
    await purge();
    expect(await list(short.id)).toHaveLength(0);
    expect(await list(long.id)).toHaveLength(1);
    expect(await e.app.ctx.objects.exists(l1.raw_object_key)).toBe(true);
    const deletedBoxRows = await e.app.ctx.db.all<{ id: string }>("SELECT id FROM mail_received WHERE mailbox_id = ?", gone.id);
    expect(deletedBoxRows).toHaveLength(1);

    // Past two days: the deleted mailbox's message and then the mailbox row go.
    e.app.clock.advance(DAY + HOUR);
    await purge();
    expect(await e.app.ctx.db.all("SELECT id FROM mail_received WHERE mailbox_id = ?", gone.id)).toHaveLength(0);
    expect(await e.app.ctx.objects.exists(g1.raw_object_key)).toBe(false);
    expect(await e.app.ctx.db.all("SELECT id FROM mail_mailboxes WHERE id = ?", gone.id)).toHaveLength(0);

    // Soft-deleted messages are purged with the same retention.
    await e.app.call("DELETE", `${w.base}/mailboxes/${long.id}/messages/${l1.id}`, { token: w.token });
    e.app.clock.advance(30 * DAY);
    await purge();
    expect(await e.app.ctx.db.all("SELECT id FROM mail_received WHERE mailbox_id = ?", long.id)).toHaveLength(0);
    expect(await e.app.ctx.objects.exists(l1.raw_object_key)).toBe(false);
  });

  test("a shorter retention_days applies to stored messages at the next purge", async () => {
    const box = await createMailbox(e, w, { retention_days: 30 });
    await sendMail(e, { from: "a@sender.example", to: box.address, subject: "keep?", text: "x" });
    e.app.clock.advance(3 * DAY);
    await purge();
    expect(await list(box.id)).toHaveLength(1);
    await e.app.call("PATCH", `${w.base}/mailboxes/${box.id}`, { token: w.token, body: { retention_days: 2 } });
    await purge();
    expect(await list(box.id)).toHaveLength(0);
  });

  test("a deleted workspace takes its raw objects with it", async () => {
    const w2 = await receiveWorkspace(e);
    const box = await createMailbox(e, w2);
    await sendMail(e, { from: "a@sender.example", to: box.address, subject: "bye", text: "x" });
    const [m] = (await e.app.call("GET", `${w2.base}/mailboxes/${box.id}/messages`, { token: w2.token })).body.data;
    expect(await e.app.ctx.objects.exists(m.raw_object_key)).toBe(true);
    expect((await e.app.call("DELETE", `/platform/v1/workspaces/${w2.slug}`, { token: w2.session })).status).toBe(204);
    // Objects go after the deleting transaction commits.
    for (let i = 0; i < 50 && (await e.app.ctx.objects.exists(m.raw_object_key)); i++) await Bun.sleep(10);
    expect(await e.app.ctx.objects.exists(m.raw_object_key)).toBe(false);
  });
});
