// source-only: reads the object store and the message table through app.ctx (a deleted workspace leaves nothing to read over HTTP)
/**
 * Deleting a workspace takes its mail along: message rows by foreign key, and the message
 * bodies in the object store once the deletion has committed.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { bodyKey } from "../../src/services/mail/messages/bodies";
import { createWorkspace, signup } from "../helpers/app";
import { createTemplate, startSendingApp, workspaceWithDomain, type SendingEnv } from "../helpers/mail-sending";

let e: SendingEnv;
beforeAll(async () => {
  e = await startSendingApp();
  e.sending.autoKick = false;
});
afterAll(() => e.stop());

test("a deleted workspace's message bodies leave the object store; another workspace's stay", async () => {
  const owner = await signup(e.app);
  const doomed = await createWorkspace(e.app, owner.token);
  const kept = await createWorkspace(e.app, owner.token);
  const ids: Record<string, string> = {};
  for (const ws of [doomed, kept]) {
    const w = await workspaceWithDomain(e, { token: owner.token, ws });
    await createTemplate(e, w, { name: "hello", subject: "Hello", body_html: "<p>Hello</p>" });
    const sent = await e.app.call("POST", `${w.base}/templates/hello/send`, { token: owner.token, body: { from: `hi@${w.fqdn}`, to: "ada@example.test", data: {} } });
    expect(sent.status).toBe(202);
    ids[ws.id] = sent.body.message_ids[0];
    expect(await e.app.ctx.objects.exists(bodyKey(ws.id, ids[ws.id]!))).toBe(true);
  }
  expect((await e.app.call("DELETE", `/platform/v1/workspaces/${doomed.slug}`, { token: owner.token })).status).toBe(204);
  for (let i = 0; i < 50 && (await e.app.ctx.objects.exists(bodyKey(doomed.id, ids[doomed.id]!))); i++) await Bun.sleep(10);
  expect(await e.app.ctx.objects.exists(bodyKey(doomed.id, ids[doomed.id]!))).toBe(false);
  expect(await e.app.ctx.objects.exists(bodyKey(kept.id, ids[kept.id]!))).toBe(true);
  expect(await e.app.ctx.db.get("SELECT id FROM mail_messages WHERE id = ?", ids[doomed.id]!)).toBeNull();
});
